import ArgumentParser
import DockTracking
import DockVersion
import Foundation

/// Runs the DockTracking tracker in pixel mode over a MOTChallenge sequence's public detections and
/// writes MOTChallenge results, so its association logic can be scored against published trackers.
@main
struct DockMOT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-mot",
        abstract: "Track MOTChallenge detections with the dockd tracker, or time one tracking step (--bench).",
        version: DockVersion.string)

    @Option(help: "Sequence directory holding det.txt and seqinfo.ini (det/det.txt is also accepted).")
    var sequence: String?

    @Option(help: "Output file for MOT results (default: standard output).")
    var output: String?

    @Option(help: "Detections at or above this confidence take part in the first association pass.")
    var highConfidence = TrackerSettings.shipped.highConfidence

    @Option(help: "Lowest detection confidence considered at all (second, ByteTrack-style pass).")
    var lowConfidence = TrackerSettings.shipped.lowConfidence

    @Option(help: "Lowest confidence that starts a new track.")
    var newTrackConfidence = TrackerSettings.shipped.newTrackConfidence

    @Option(help: "Minimum IoU between prediction and detection in the first pass.")
    var minimumOverlap = TrackerSettings.shipped.minimumOverlap

    @Option(help: "Consecutive frames that confirm a track.")
    var confirmationHits = TrackerSettings.shipped.confirmationHits

    @Option(help: "Seconds a lost track can be re-acquired with its identity.")
    var maximumLostDuration = TrackerSettings.shipped.maximumLostDuration

    @Option(help: "Kalman measurement noise, fraction of box size.")
    var measurementNoise = TrackerSettings.shipped.kalman.measurementNoise

    @Option(help: "Kalman acceleration noise, fraction of box size per second^1.5.")
    var accelerationNoise = TrackerSettings.shipped.kalman.accelerationNoise

    @Flag(help: "Write the matched detection instead of the Kalman-filtered box (the default, as SORT and ByteTrack do).")
    var measuredBoxes = false

    @Flag(help: "Time tracker + selection + framing per step with 10 synthetic subjects, and exit.")
    var bench = false

    @Option(help: "Steps to time with --bench.")
    var benchSteps = 20_000

    func run() throws {
        if bench {
            Benchmark.run(steps: benchSteps)
            return
        }
        guard let sequence else { throw ValidationError("--sequence is required unless --bench is given") }
        var settings = TrackerSettings.shipped
        settings.highConfidence = highConfidence
        settings.lowConfidence = lowConfidence
        settings.newTrackConfidence = newTrackConfidence
        settings.minimumOverlap = minimumOverlap
        settings.confirmationHits = confirmationHits
        settings.maximumLostDuration = maximumLostDuration
        settings.kalman.measurementNoise = measurementNoise
        settings.kalman.accelerationNoise = accelerationNoise

        let info = try SequenceInfo(directory: sequence)
        let detections = try MOTDetections(directory: sequence)
        var tracker = MultiSubjectTracker(settings: settings, seed: 1)
        var lines: [String] = []
        for frame in 1...max(info.length, detections.lastFrame) {
            let time = Double(frame - 1) / info.frameRate
            let observations = detections.byFrame[frame, default: []].map {
                Observation(kind: .body, box: $0.box, confidence: $0.confidence)
            }
            tracker.update(observations: observations, time: time)
            for track in tracker.observedSubjects {
                let box = measuredBoxes ? track.lastMeasuredBox : track.box
                lines.append("\(frame),\(track.id.number),\(fmt(box.left)),\(fmt(box.top)),\(fmt(box.width)),\(fmt(box.height)),1,-1,-1,-1")
            }
        }
        let text = lines.joined(separator: "\n") + "\n"
        if let output {
            try text.write(toFile: output, atomically: true, encoding: .utf8)
        } else {
            print(text, terminator: "")
        }
    }

    private func fmt(_ value: Double) -> String { String(format: "%.2f", value) }
}
