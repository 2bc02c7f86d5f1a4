@testable import dock_driver_probe
import DockDrivers
import DockJSON
import DockProtocol
import DockSim
import VirtualTime
import Testing

/// dock-driver-probe's run (`ProbeSession`) on the virtual link, the host that runs dockd's engine
/// in `VirtualHost`, against each driver's peer (VirtualPeers.swift): what the probe does on a real
/// link, in virtual time.
@Suite struct ProbeUnderTheVirtualLinkTests {
    /// What the probe saw: its report lines, how it ended, and whether the peer was steered left.
    struct Outcome: Sendable {
        var reports: [String]
        var status: Int32?
        var linkLost: String?
        var steered: Bool
    }

    static let runs: [String: @Sendable (_ unplugAfter: Double?) throws -> Outcome] = [
        "native": { try probe("native", peer: SimulatedStand(), unplugAfter: $0) { ($0.truth(.yaw)?.outputPosition ?? 0) > 0.05 } },
        "visca": { try probe("visca", peer: VISCACameraPeer(), unplugAfter: $0) { $0.camera.panUnits < 0 } },
        "mavlink": { unplugAfter in
            let information = try #require(try Fixtures.entries("mavlink_frames.json").first { $0["name"] as? String == "gimbal_device_information" })
            return try probe("mavlink", peer: MAVLinkGimbalPeer(information: Fixtures.hex(information["hex"] as! String)), unplugAfter: unplugAfter) { $0.yaw < -0.05 }
        },
        "v4l2": { try probe("v4l2", peer: V4L2CameraPeer(), unplugAfter: $0) { ($0.values[V4L2CameraPeer.pan] ?? 0) < 0 } },
        "onvif": { try probe("onvif", peer: EmulatedONVIFCamera(), unplugAfter: $0) { $0.yaw > 0.05 } },
        "pelco-d": { try probe("pelco-d", peer: PelcoDUnitPeer(), unplugAfter: $0) { $0.pan < 0 } },
        "feetech": { try probe("feetech", peer: FeetechServosPeer(), unplugAfter: $0) { $0.steps(1) > 2048 + 20 } },
    ]

    /// `--velocity yaw=0.2 --velocity-seconds V --seconds 2` (V 1 unless given) through the driver
    /// `name` against `peer`; the link pulled `unplugAfter` s in, when given. `ended` sees the peer as
    /// the run ended.
    static func probe<Peer: VirtualPeer>(_ name: String, peer: Peer, unplugAfter: Double?, velocitySeconds: Double = 1,
                                         ended: (Peer) -> Void = { _ in }, steered: (Peer) -> Bool) throws -> Outcome {
        let driver = try DriverTable.definition(name).make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        let script = Script(velocity: [.yaw: 0.2], velocitySeconds: velocitySeconds, target: nil, gain: 3, position: nil, duration: 1,
                            orient: nil, orientDuration: 1.5)
        var link = VirtualLink(session: ProbeSession(driver: driver, script: script, trace: false, deadline: 2), peer: peer)
        link.open()
        var reports: [String] = []
        var wasSteered = false
        while link.session.status == nil && link.now < 1000 + 5 {
            link.step()
            wasSteered = wasSteered || steered(link.peer)
            if let at = unplugAfter, link.now >= 1000 + at, link.linkOpen { link.unplug() }
            var outputs: [ProbeSession.Output] = []
            link.takeOutputs(into: &outputs)
            for output in outputs {
                for line in output.lines { if case .string(let kind)? = line["report"] { reports.append(kind) } }
            }
        }
        ended(link.peer)
        return Outcome(reports: reports, status: link.session.status, linkLost: link.session.linkLost, steered: wasSteered)
    }

    @Test func everyDriverOfTheTableHasAPeerHere() {
        #expect(DriverTable.names.filter { Self.runs[$0] == nil } == [])
    }

    @Test(arguments: DriverTable.names)
    func theProbeDrivesTheDriverAndEndsAtItsSeconds(_ name: String) throws {
        let run = try #require(Self.runs[name])
        let outcome = try run(nil)
        #expect(outcome.reports.first == "ready", "\(name): \(outcome.reports.prefix(5))")
        #expect(outcome.reports.contains("feedback"), "\(name) fed back")
        #expect(!outcome.reports.contains("fatal"), "\(name): \(outcome.reports)")
        #expect(outcome.steered, "\(name): the peer was steered to the left")
        #expect(outcome.status == 0 && outcome.linkLost == nil, "\(name) ended at its --seconds")
    }

    /// `--velocity-seconds` longer than `--seconds`: the run still ends with the camera stopped (it
    /// left a VISCA camera's PanTiltDrive running to its end stop).
    @Test func aRunEndingWhileTheStandMovesStopsItFirst() throws {
        var panRateAtTheEnd: Double?
        let outcome = try Self.probe("visca", peer: VISCACameraPeer(), unplugAfter: nil, velocitySeconds: 10,
                                ended: { panRateAtTheEnd = $0.camera.panRate }) { $0.camera.panUnits < 0 }
        #expect(outcome.steered && outcome.status == 0)
        #expect(panRateAtTheEnd == 0)
    }

    @Test(arguments: DriverTable.names)
    func theProbeEndsWithStatus2WhenTheLinkIsPulled(_ name: String) throws {
        let run = try #require(Self.runs[name])
        let outcome = try run(0.5)
        #expect(outcome.status == 2, "\(name)")
        #expect(outcome.linkLost == "the stand closed the link (EOF or hangup)", "\(name)")
    }
}
