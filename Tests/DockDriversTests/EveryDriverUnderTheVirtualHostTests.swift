import DockDrivers
import DockProtocol
import DockSim
import VirtualTime
import StandEngine
import Testing

/// Every driver of the table runs under the one virtual host, as dockd's engine runs it, against a
/// peer speaking its wire in virtual time (VirtualPeers.swift): it connects, takes a client's rates,
/// steers the peer by them and keeps its link. A driver added to the table without a peer here fails the first test.
@Suite struct EveryDriverUnderTheVirtualHostTests {
    /// What the host saw: the stand connected, the rates' reply, the peer steered, the link still up after them.
    struct Outcome: Sendable {
        var connected: Bool
        var reply: Result<CommandResult, EngineError>?
        var steered: Bool
        var connectedAfter: Bool
    }

    static let runs: [String: @Sendable () throws -> Outcome] = [
        "native": { try drive("native", peer: SimulatedStand()) { ($0.truth(.yaw)?.outputPosition ?? 0) > 0.05 } },
        "visca": { try drive("visca", peer: VISCACameraPeer()) { $0.camera.panUnits < 0 } },  // ScriptedCamera: a drive left lowers the pan
        "mavlink": {
            let information = try #require(try Fixtures.entries("mavlink_frames.json").first { $0["name"] as? String == "gimbal_device_information" })
            // FRD yaw grows to the right: a turn to the left is negative.
            return try drive("mavlink", peer: MAVLinkGimbalPeer(information: Fixtures.hex(information["hex"] as! String))) { $0.yaw < -0.05 }
        },
        // Pan grows to the right in arc-seconds.
        "v4l2": { try drive("v4l2", peer: V4L2CameraPeer()) { ($0.values[V4L2CameraPeer.pan] ?? 0) < 0 } },
        "onvif": { try drive("onvif", peer: EmulatedONVIFCamera()) { $0.yaw > 0.05 } },
        // Pelco-D's pan grows to the right.
        "pelco-d": { try drive("pelco-d", peer: PelcoDUnitPeer()) { $0.pan < 0 } },
        // The pan servo's steps grow to the left (pan_direction normal).
        "feetech": { try drive("feetech", peer: FeetechServosPeer()) { $0.steps(1) > 2048 + 20 } },
    ]

    /// The driver `name` made from its table definition, under the virtual host against `peer`;
    /// `steered` says whether the peer was steered to the left.
    static func drive<Peer: VirtualPeer>(_ name: String, peer: Peer, steered: (Peer) -> Bool) throws -> Outcome {
        let driver = try DriverTable.definition(name).make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: peer, name: "virtual:\(name)")
        let connected = host.connect(timeout: 5)
        let reply = host.command(.velocity([.yaw: 0.2])).reply
        host.run(for: 1)
        return Outcome(connected: connected, reply: reply, steered: steered(host.peer), connectedAfter: host.engine.linkState == .connected)
    }

    @Test func everyDriverOfTheTableHasAPeerHere() {
        #expect(DriverTable.names.filter { Self.runs[$0] == nil } == [])
    }

    @Test(arguments: DriverTable.names)
    func theDriverConnectsAndTakesRatesUnderTheVirtualHost(_ name: String) throws {
        let run = try #require(Self.runs[name])
        let outcome = try run()
        #expect(outcome.connected, "\(name) connected")
        #expect(outcome.reply == .success(.ok), "\(name): the rates were taken")
        #expect(outcome.steered, "\(name): the peer was steered to the left")
        #expect(outcome.connectedAfter, "\(name): still connected after a second of them")
    }
}
