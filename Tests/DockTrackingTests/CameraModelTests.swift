import Foundation
import Testing
@testable import DockTracking

@Suite struct CameraModelTests {
    let camera = Fixture.camera

    @Test func normalizedAndAngularBoxesRoundTrip() {
        let aim = Aim(x: 0.3, y: -0.1)
        let rect = NormalizedRect(x: 0.62, y: 0.18, width: 0.2, height: 0.5)
        let back = camera.normalizedRect(of: camera.angularBox(of: rect, aim: aim), aim: aim)
        #expect(abs(back.x - rect.x) < 1e-12 && abs(back.y - rect.y) < 1e-12)
        #expect(abs(back.width - rect.width) < 1e-12 && abs(back.height - rect.height) < 1e-12)
        // The image center is the aim; the right edge is half the field to the right.
        let center = camera.angularPoint(normalizedX: 0.5, normalizedY: 0.5, aim: aim)
        #expect(abs(center.x - 0.3) < 1e-12 && abs(center.y + 0.1) < 1e-12)
        let edge = camera.angularPoint(normalizedX: 1, normalizedY: 0.5, aim: aim)
        #expect(abs(edge.x - (0.3 + camera.horizontalFieldOfView / 2)) < 1e-12)
    }

    @Test func zoomHalvesTheHalfTangentAndAnOffsetsAngle() {
        // 90° across: the right edge is 45° off axis; zoomed 2×, the same image point is atan(0.5) off.
        let wide = CameraModel(horizontalFieldOfView: .pi / 2, verticalFieldOfView: .pi / 3)
        let tele = wide.zoomed(by: 2)
        #expect(abs(tan(tele.horizontalFieldOfView / 2) - 0.5) < 1e-12)
        #expect(abs(tan(tele.verticalFieldOfView / 2) - tan(Double.pi / 6) / 2) < 1e-12)
        let edge = tele.angularPoint(normalizedX: 1, normalizedY: 0.5, aim: Aim(x: 0, y: 0))
        #expect(abs(edge.x - atan(0.5)) < 1e-12)
        // Zooming back out restores the camera.
        #expect(abs(tele.zoomed(by: 0.5).horizontalFieldOfView - .pi / 2) < 1e-12)
    }

    @Test func intrinsicsGiveTheFieldOfView() {
        // A 1000-pixel-wide image with a 500-pixel focal length sees 2·atan(1) = 90°.
        let fromIntrinsics = CameraModel(focalLengthX: 500, focalLengthY: 500, imageWidth: 1000, imageHeight: 500)
        #expect(abs(fromIntrinsics.horizontalFieldOfView - .pi / 2) < 1e-12)
        #expect(fromIntrinsics.verticalFieldOfView < fromIntrinsics.horizontalFieldOfView)
    }

    /// Angles, not pixels: a still person seen while the stand pans moves across the image, but
    /// in the stand's frame the track stays put and has no velocity.
    @Test func standMotionIsNotSubjectMotion() {
        var tracker = MultiSubjectTracker(seed: 21)
        let person = Box(centerX: 0.1, centerY: 0, width: 0.15, height: 0.4)
        var imageXs: [Double] = []
        for frame in 0..<30 {
            let aim = Aim(x: 0.01 * Double(frame), y: 0)  // panning at 0.3 rad/s
            let seen = camera.normalizedRect(of: person, aim: aim)
            imageXs.append(seen.x)
            tracker.update(observations: [Observation(kind: .body, box: camera.angularBox(of: seen, aim: aim))],
                           time: Double(frame) * Fixture.frameInterval)
        }
        #expect(imageXs.first! - imageXs.last! > 0.2, "the person slides across the image")
        let track = tracker.subjects[0]
        #expect(abs(track.box.centerX - 0.1) < 1e-6)
        #expect(abs(track.velocity.x) < 1e-6)
    }
}
