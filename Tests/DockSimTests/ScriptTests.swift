import Testing
import DockProtocol
@testable import DockSim

@Suite("SimScript and SimAction") struct ScriptTests {
    @Test func aScriptParsesSortedWithCommentsAndBlankLines() throws {
        let script = try SimScript(parsing: """
            # demo
            2.5 undock
            0.5\tpress tracking   # tab-separated

            1 corrupt 0.1 2
            """)
        #expect(script.steps.map(\.time) == [0.5, 1, 2.5])
        #expect(script.steps.map(\.action) == [.press(.trackingButton), .corrupt(fraction: 0.1, seconds: 2), .docked(false)])
    }

    @Test(arguments: [
        ("0 press tracking\n\n1.5 bogus", 3),
        ("0 press tracking\nsoon undock", 2),
        ("inf undock", 1),
        ("# c\n1 zoom\n", 2),
        ("1 stall elbow 2", 1),
    ])
    func parseErrorsNameTheLine(text: String, line: Int) {
        #expect {
            _ = try SimScript(parsing: text)
        } throws: { error in
            (error as? SimAction.ParseError)?.description.hasPrefix("line \(line):") == true
        }
    }

    @Test func actionsParseTheirArguments() throws {
        #expect(try SimAction.parse("zoom 2.0") == .zoom(2))
        #expect(try SimAction.parse("stall pitch 1.5") == .stall(.pitch, seconds: 1.5))
        #expect(try SimAction.parse("unplug 1") == .unplug(seconds: 1))
        #expect(try SimAction.parse("slow 200 3") == .slow(delayMs: 200, seconds: 3))
        #expect(try SimAction.parse("clockjump -30") == .clockJump(seconds: -30))
        #expect(throws: SimAction.ParseError.self) { try SimAction.parse("slow 200") }
        #expect(try SimAction.parse("button 1 release") == .customButton(id: 1, pressed: false))
        #expect(throws: SimAction.ParseError.self) { try SimAction.parse("battery 1.5") }
        #expect(throws: SimAction.ParseError.self) { try SimAction.parse("silent") }
    }
}
