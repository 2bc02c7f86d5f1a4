import DockDrivers
import Foundation
import Testing

@Suite struct DriverTableTests {
    func make(_ name: String, _ texts: [String: String]) throws -> any StandDriver {
        try DriverTable.definition(name).make(texts: texts, heartbeatTimeoutMs: 500)
    }

    @Test func makesDriversFromTheirDeclaredOptions() throws {
        let v = try make("visca", ["profile": Fixtures.profiles + "/sony-brc-h700.json", "address": "2", "transport": "ip",
                                   "poll_hz": "25", "name": "stage-left"])
        let visca = try #require(v as? VISCADriver)
        #expect(visca.address == 2 && visca.transport == .ip && visca.serialName == "stage-left" && visca.profile.pan.nibbles == 5)
        let m = try DriverTable.definition("mavlink").make(["system_id": .integer(5), "max_speed": .integer(3)], heartbeatTimeoutMs: 500)
        #expect((m as? MAVLinkGimbalDriver)?.settings.systemID == 5)
        #expect((m as? MAVLinkGimbalDriver)?.settings.maxSpeed == 3, "a whole number is a number")
        let tcp = try make("visca", ["transport": "raw-tcp", "profile": Fixtures.profiles + "/generic-ptzoptics.json"])
        var t = try #require(tcp as? VISCADriver)
        #expect(Array(t.start(at: 0).prefix(5)) == VISCA.ifClear(address: 1))  // no AddressSet on a TCP stream
        #expect(DriverTable.named("visca")?.defaultBaud == 9600)
    }

    @Test func defaultsAreWhatTheDefinitionSays() throws {
        let m = try #require(try make("mavlink", [:]) as? MAVLinkGimbalDriver)
        #expect(m.settings.componentID == 191 && m.settings.targetComponent == 154 && m.settings.feedbackHz == 50)
    }

    @Test func refusesUnknownDriversOptionsAndValuesNamingTheKey() {
        func failure(_ body: () throws -> Any) -> String {
            do { _ = try body(); return "" } catch { return "\(error)" }
        }
        #expect(failure { try DriverTable.definition("bgc") }.contains("not one of native, visca, mavlink"))
        #expect(failure { try make("mavlink", ["baud": "9600"]) }.contains("unknown option baud (the mavlink driver takes system_id"))
        #expect(failure { try make("visca", ["address": "9"]) } == "address must be an integer in 1...7, not 9")
        #expect(failure { try make("visca", ["address": "two"]) } == "address must be an integer in 1...7, not two")
        #expect(failure { try make("visca", ["transport": "carrier-pigeon"]) }.contains("must be one of serial, ip, raw-udp, raw-tcp"))
        #expect(failure { try make("native", ["address": "1"]) } == "the native driver takes no options (address given)")
        #expect(failure { try make("visca", ["profile": "no-such-camera"]) }.contains("no-such-camera"))
    }

    @Test func everyDefinitionIsWholeAndItsDefaultsAreValuesItTakes() throws {
        #expect(Set(DriverTable.names).count == DriverTable.all.count, "one name, one driver")
        for definition in DriverTable.all {
            #expect(!definition.summary.isEmpty && !definition.links.isEmpty, "\(definition.name)")
            #expect(Set(definition.options.map(\.key)).count == definition.options.count, "\(definition.name): an option declared twice")
            for option in definition.options {
                #expect(!option.doc.isEmpty, "\(definition.name).\(option.key) has no doc")
                if let value = option.defaultValue {
                    #expect(throws: Never.self, "\(definition.name).\(option.key)'s default") {
                        _ = try definition.make([option.key: value], heartbeatTimeoutMs: 500)
                    }
                }
            }
        }
    }

    /// The OpenRPC document's driver enums are the table, not a list restated by hand.
    @Test func theAPIDocumentNamesExactlyTheTablesDrivers() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../protocol/dockd.openrpc.json")
        let document = try JSONSerialization.jsonObject(with: try Data(contentsOf: url))
        var enums: [[String]] = []
        func walk(_ node: Any) {
            if let object = node as? [String: Any] {
                if let list = object["enum"] as? [Any], list.contains(where: { $0 as? String == "native" }) {
                    enums.append(list.compactMap { $0 as? String })
                }
                object.values.forEach(walk)
            } else if let array = node as? [Any] {
                array.forEach(walk)
            }
        }
        walk(document)
        #expect(!enums.isEmpty)
        for list in enums { #expect(list == DriverTable.names) }
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("the protocol driver: \(DriverTable.names.joined(separator: ", "))"))
    }
}
