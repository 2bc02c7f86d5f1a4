import DockProtocol
#if canImport(Glibc)
import Glibc
#endif
import DockTracking
import DockSim
import VirtualTime
import StandEngine

/// People at fixed directions around the stand (angles in the stand's frame: yaw positive left,
/// pitch positive up), seen through dockd's camera model from where the simulated stand really
/// points: the detections a camera app would send.
struct TestScene {
    struct Person {
        /// Direction of the face centre, rad.
        var yaw: Double
        var pitch: Double = 0.05
        /// Angular height of the body box (head top to hips), rad; the face is a fifth of it.
        var size: Double = 0.3
        /// The body box runs on to the feet (a whole-person detector).
        var fullBody = false
        var confidence = 0.9
        /// The detector finds the body but misses the face in this frame.
        var faceMissed = false
    }

    var people: [Person]
    let camera = EngineSettings().camera

    /// Normalized detections of everyone in view, with the stand at its true angles now (a
    /// continuous yaw's whole turns do not change the view) and its true zoom, if it has one.
    func detections(_ rig: VirtualHost<SimulatedStand>) -> [Detection] {
        let aim = Aim(x: -remainder(rig.angle(.yaw), 2 * .pi), y: -rig.angle(.pitch))
        let camera = rig.stand.truth(.zoom).map { self.camera.zoomed(by: $0.outputPosition) } ?? self.camera
        var result: [Detection] = []
        for p in people {
            let faceHeight = p.size / 5
            let face = Box(centerX: -p.yaw, centerY: -p.pitch, width: faceHeight * 0.75, height: faceHeight)
            let top = face.top - faceHeight * 0.3
            let bodyHeight = p.fullBody ? p.size * 2.6 : p.size
            let body = Box(left: -p.yaw - p.size * 0.2, top: top, width: p.size * 0.4, height: bodyHeight)
            for (kind, box) in [(ObservationKind.face, face), (.body, body)] where kind == .body || !p.faceMissed {
                var rect = camera.normalizedRect(of: box, aim: aim)
                // What the image shows of it; gone when less than a third is inside.
                let visible = NormalizedRect(x: max(0, rect.x), y: max(0, rect.y), width: min(1, rect.maxX) - max(0, rect.x),
                                             height: min(1, rect.maxY) - max(0, rect.y))
                guard visible.width > 0, visible.height > 0, visible.width * visible.height >= rect.width * rect.height / 3 else { continue }
                rect = visible
                result.append(Detection(kind: kind, rect: rect, confidence: p.confidence))
            }
        }
        return result
    }
}

extension VirtualHost<SimulatedStand> {
    /// A camera app streaming what it sees of `scene` at `rate` Hz for `seconds`, each frame
    /// stamped with its capture time, `latency` before it is sent.
    mutating func stream(_ scene: TestScene, for seconds: Double, rate: Double = 15, latency: Double = 0.05,
                         from client: ClientRef = .app, each: (inout VirtualHost<SimulatedStand>, Int) -> Void = { _, _ in }) {
        let end = now + seconds
        var frame = 0
        while now < end {
            let captured = now, detections = scene.detections(self)
            run(for: latency)
            _ = command(.observe(ObservedFrame(detections: detections, captureTime: captured)), from: client)
            each(&self, frame)
            frame += 1
            run(for: 1 / rate - latency)
        }
    }
}
