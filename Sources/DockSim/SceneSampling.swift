extension SceneSimulator {
    /// The ground-truth sample at `t` with the camera at `aim` (world): what the metrics judge. The
    /// tracked subject (the pipeline's primary id and the person it really is) comes from the caller.
    public func sample(at t: Double, aim: SceneAim, faceLine: Double, trackedID: Int?, trackedPerson: Int?) -> SceneSample {
        let truth = self.truth(at: t, aim: aim)
        let intended = scenario.intended(at: t)
        let desired = desiredAim(truth: truth, intended: intended, aim: aim, faceLine: faceLine)
        let image = SceneRect(x: 0, y: 0, width: 1, height: 1), roi = scenario.roi
        var inFrame = true, inRegion = true
        for id in intended {
            guard let p = truth.first(where: { $0.id == id }), p.present else { continue }
            // No projection at all: the person is behind the camera, certainly not in frame.
            guard let face = p.anchorRect else { inFrame = false; inRegion = false; continue }
            if !face.isInside(image) { inFrame = false }
            if !face.isInside(roi) { inRegion = false }
        }
        let primaryTruth = intended.first.flatMap { id in truth.first { $0.id == id } }
        let detectable = primaryTruth.map { $0.present && ($0.faceVisible || $0.bodyVisible) } ?? false
        return SceneSample(time: t, camera: aim, desired: desired, inFrame: inFrame, inRegion: inRegion, primaryDetectable: detectable,
                           trackedID: trackedID, trackedPerson: trackedPerson, intended: intended)
    }

    /// The person whose body holds the image point (cx, cy) seen at `t` from `aim`, the nearest
    /// face (or body) center winning among overlapping people: who a tracked box really is.
    public func person(atImagePoint cx: Double, _ cy: Double, at t: Double, aim: SceneAim) -> Int? {
        var best: (person: Int, distance: Double)?
        for p in truth(at: t, aim: aim) where p.present {
            guard let body = p.bodyRect, cx >= body.x, cx <= body.maxX, cy >= body.y, cy <= body.maxY else { continue }
            let anchor = p.faceRect ?? body
            let distance = ((anchor.centerX - cx) * (anchor.centerX - cx) + (anchor.centerY - cy) * (anchor.centerY - cy)).squareRoot()
            if best == nil || distance < best!.distance { best = (p.id, distance) }
        }
        return best?.person
    }
}
