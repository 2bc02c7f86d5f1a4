import DockCore
import DockProtocol
import DockSim
import DockTracking
import VirtualTime
import StandEngine
import Testing

/// Framing's shot on a stand with an optical zoom (issue 25), and on one without.
@Suite("Engine: zoom")
struct ZoomTests {
    static func zoomAxis(_ configuration: inout StandConfiguration) {
        configuration.axes.append(AxisModel(axis: .zoom, continuous: false, min: 1, max: 10, maxSpeed: 2, maxAccel: 8))
    }

    let scene = TestScene(people: [.init(yaw: 0.2, size: 0.3)])

    /// The face's height in the frame, as the camera at the stand's true zoom sees it.
    func faceHeight(_ rig: VirtualHost<SimulatedStand>) -> Double {
        scene.detections(rig).filter { $0.kind == .face }.map(\.rect.height).first ?? 0
    }

    @Test func theShotZoomsTheStandAndTrackingStillFramesTheSubject() throws {
        var rig = VirtualHost<SimulatedStand>.connected(configure: Self.zoomAxis)
        _ = try rig.send(.framing(nil, shot: .head), from: .app)
        rig.stream(scene, for: 8)
        #expect(rig.angle(.zoom) > 3)
        #expect(abs(faceHeight(rig) / ShotSettings().headFace - 1) < 0.1, "the face fills the head shot's share of the frame")
        #expect(abs(rig.angle(.yaw) - 0.2) < 0.03, "the tracker's angles stayed right while zooming")
    }

    @Test func aClientsZoomLimitsHoldTheShotBack() throws {
        var rig = VirtualHost<SimulatedStand>.connected(configure: Self.zoomAxis)
        _ = try rig.send(.limits([.zoom: LimitRequest(min: 1, max: 2)]), from: .app)
        _ = try rig.send(.framing(nil, shot: .head), from: .app)
        rig.stream(scene, for: 6)
        #expect(rig.angle(.zoom) <= 2.01)
        #expect(rig.angle(.zoom) > 1.8, "as far as the client's limit")
    }

    @Test func losingTheSubjectZoomsOutFully() throws {
        var rig = VirtualHost<SimulatedStand>.connected(configure: Self.zoomAxis)
        _ = try rig.send(.framing(nil, shot: .head), from: .app)
        rig.stream(scene, for: 8)
        #expect(rig.angle(.zoom) > 3)
        rig.stream(TestScene(people: []), for: 6)
        #expect(rig.angle(.zoom) < 1.05)
    }

    @Test func aStandWithoutZoomIsNeverSentOneAndStillTracks() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        _ = try rig.send(.framing(nil, shot: .head), from: .app)
        rig.stream(scene, for: 3)
        let zoomed = rig.sentMessages { message in
            switch message {
            case .velocity(let values): values.contains { $0.axis == .zoom }
            case .position(_, let targets): targets.contains { $0.axis == .zoom }
            case .limits(let limits): limits.contains { $0.axis == .zoom }
            default: false
            }
        }
        #expect(zoomed.isEmpty)
        #expect(abs(rig.angle(.yaw) - 0.2) < 0.03)
    }
}

extension ZoomTests {
    @Test func withoutAShotTrackingLeavesTheZoomWhereAClientPutIt() throws {
        var rig = VirtualHost<SimulatedStand>.connected(configure: Self.zoomAxis)
        _ = try rig.send(.orient([.zoom: 3], relative: false, duration: nil), from: .app)
        rig.run(for: 3)
        #expect(abs(rig.angle(.zoom) - 3) < 0.02)
        rig.stream(TestScene(people: [.init(yaw: 0.15, size: 0.1)]), for: 4)
        #expect(abs(rig.angle(.zoom) - 3) < 0.02)
        #expect(abs(rig.angle(.yaw) - 0.15) < 0.02, "tracking through the zoomed camera")
    }
}
