@testable import DockDaemon
import Testing

/// dockd's own TOML parser (Sources/DockDaemon/TOML): what TOML 1.0 writes, read as TOML reads it;
/// everything else refused with its line, column and a reason.
struct TOMLParserTests {
    func parsed(_ text: String) throws -> TOMLTable { try TOMLParser.parse(text) }

    /// "LINE:COLUMN: what" of the refusal, or nil when the text parses.
    func refusal(_ text: String) -> String? {
        do {
            _ = try TOMLParser.parse(text)
            return nil
        } catch {
            return "\(error.place.line):\(error.place.column): \(error.what)"
        }
    }

    func value(_ text: String, _ path: String...) throws -> TOMLValue? {
        var node = try parsed(text)[path[0]]
        for key in path.dropFirst() { node = node?.value.table?[key] }
        return node?.value
    }

    @Test func aWholeConfigurationIsRead() throws {
        let doc = try parsed("""
            # dockd.conf
            [daemon]
            socket = "/run/dockd/dockd.sock"   # a comment
            heartbeat_timeout_ms = 500
            [[device]]
            path = '/dev/ttyACM0'
            baud = 115_200
            [[device]]
            udp = "127.0.0.1:52381"
            driver = "visca"
            [camera]
            horizontal_fov_deg = 70.5
            [hotplug]
            enabled = false
            """)
        #expect(doc["daemon"]?.value.table?["socket"]?.value == .string("/run/dockd/dockd.sock"))
        #expect(doc["daemon"]?.value.table?["heartbeat_timeout_ms"]?.value == .integer(500))
        let devices = doc["device"]?.value.array ?? []
        #expect(devices.count == 2)
        #expect(devices.first?.value.table?["baud"]?.value == .integer(115_200))
        #expect(devices.last?.value.table?["driver"]?.value == .string("visca"))
        #expect(doc["camera"]?.value.table?["horizontal_fov_deg"]?.value == .float(70.5))
        #expect(doc["hotplug"]?.value.table?["enabled"]?.value == .boolean(false))
        #expect(doc.place(of: ["device", "1", "driver"]) == TOMLPlace(line: 10, column: 1))
        #expect(doc.place(of: ["device", "1"]) == TOMLPlace(line: 8, column: 1))
        #expect(doc.place(of: ["device", "2"]) == nil && doc.place(of: ["daemon", "nothing"]) == nil)
    }

    @Test func stringsTakeTheirEscapesAndMultiLineRules() throws {
        #expect(try value(#"a = "tab\there \"q\" \\ \u00E9 \U0001F600""#, "a") == .string("tab\there \"q\" \\ é 😀"))
        #expect(try value(#"a = 'C:\no\escapes'"#, "a") == .string(#"C:\no\escapes"#))
        #expect(try value("a = \"\"\"\nline one\nline two\"\"\"", "a") == .string("line one\nline two"))
        #expect(try value("a = \"\"\"joined \\\n    here\"\"\"", "a") == .string("joined here"))
        #expect(try value("a = \"\"\"two quotes at the end\"\"\"\"\"", "a") == .string("two quotes at the end\"\""))
        #expect(try value("a = '''\n[:not a header\n'''", "a") == .string("[:not a header\n"))
        #expect(try value("a = \"\"\"crlf\r\nkept\"\"\"", "a") == .string("crlf\r\nkept"))
    }

    @Test func numbersAreReadInEveryWayTOMLWritesThem() throws {
        for (text, expected) in [("+1", TOMLValue.integer(1)), ("-17", .integer(-17)), ("0", .integer(0)), ("1_000", .integer(1000)),
                                 ("0xDEAD_beef", .integer(0xDEADBEEF)), ("0o755", .integer(0o755)), ("0b1101", .integer(13)),
                                 ("9223372036854775807", .integer(Int.max)), ("3.25", .float(3.25)), ("-0.5", .float(-0.5)),
                                 ("5e+2", .float(500)), ("1E-2", .float(0.01)), ("6.5e1_0", .float(6.5e10)), ("-inf", .float(-.infinity)),
                                 ("true", .boolean(true)), ("false", .boolean(false))] {
            #expect(try value("a = \(text)", "a") == expected, "\(text)")
        }
        #expect(try value("a = nan", "a")?.float?.isNaN == true)
    }

    @Test func arraysInlineTablesAndDottedKeysNest() throws {
        let doc = try parsed("""
            list = [
              [+1, 2], { a = "[:" },  # a comment between elements
              "x",
            ]
            point = { x = 1, y.z = 2 }
            [camera]
              tracking.lost_hold_s = 2
            """)
        #expect(doc["list"]?.value.array?.count == 3)
        #expect(doc["point"]?.value.table?["y"]?.value.table?["z"]?.value == .integer(2))
        #expect(try value("[camera]\ntracking.lost_hold_s = 2\n", "camera", "tracking", "lost_hold_s") == .integer(2))
        // What is inside an inline table is placed at the key that writes the table.
        #expect(doc.place(of: ["point", "y", "z"]) == TOMLPlace(line: 5, column: 1))
        #expect(doc.place(of: ["camera", "tracking"]) == TOMLPlace(line: 7, column: 3))
        #expect(try parsed("[a.b.c]\n[a]\nx = 1\n[a.b]\ny = 2\n")["a"]?.value.table?["b"]?.value.table?.keys.sorted() == ["c", "y"])
    }

    @Test func whatAParserMustNotGuessIsRefusedOnItsLine() {
        #expect(refusal("[daemon]\nlog_level = \"info\"\nsocket = \n") == "3:10: expected a value after '=', saw the end of the line")
        #expect(refusal("a = [1, # c\n}\n") == "2:1: expected a value in the array, saw '}'")
        #expect(refusal("[[:52381\"\n") == "1:3: a table header must start with a key")
        #expect(refusal("[camera]\n[ [a]]\n") == "2:3: a table header must start with a key")
        #expect(refusal("[[\u{18}device]]\n") == "1:3: control character U+0018 is not allowed in TOML")
        #expect(refusal("[daemon]\r\nlog_level = \"info\"\rsocket = \"/x\"\n") == "2:19: control character U+000D is not allowed in TOML")
        #expect(refusal("socket = /run/x\n") == "1:10: expected a value after '=', saw '/'")
        #expect(refusal("socket = run\n") == "1:10: 'run' is not a TOML value (a string is written in quotes)")
        #expect(refusal("a = 1 b = 2\n") == "1:7: expected the end of the line after the value, saw 'b'")
        #expect(refusal("a b = 1\n") == "1:3: expected '=' after the key a, saw 'b'")
        #expect(refusal("= 1\n") == "1:1: expected a key, a [table] header or a comment, saw '='")
        #expect(refusal("[daemon\n") == "1:8: expected ']' to end the table header, saw the end of the line")
        #expect(refusal("[[device]\n") == "1:10: expected ']]' to end the table header, saw the end of the line")
        #expect(refusal("a = [1, 2\n") == "2:1: the array opened on line 1 is not closed")
        #expect(refusal("a = [1 2]\n") == "1:8: expected ',' or ']' after an element of the array, saw '2'")
        #expect(refusal("a = { b = 1,\n c = 2 }\n") == "1:13: expected a key in the inline table, saw the end of the line (an inline table is written on one line)")
        #expect(refusal("a = { b = 1, }\n") == "1:14: an inline table takes no comma after its last value")
        #expect(refusal("when = 1979-05-27T07:32:00Z\n") == "1:8: dates and times are not supported (no key of dockd.conf takes one): 1979-05-27T07:32:00Z")
        #expect(refusal("at = 07:32:00\n") == "1:6: dates and times are not supported (no key of dockd.conf takes one): 07:32:00")
    }

    @Test func numbersTOMLDoesNotWriteAreRefused() {
        #expect(refusal("mode = 0660\n") == "1:8: '0660': a TOML number has no leading zeros (an octal one is written 0o…)")
        #expect(refusal("a = 9223372036854775808\n") == "1:5: '9223372036854775808' is out of the range of a 64-bit integer")
        #expect(refusal("a = -0x10\n") == "1:5: '-0x10': a 0x integer takes no sign")
        for text in ["1__0", "_1", "1_", ".5", "1.", "1e", "1.e5", "0x", "0b102", "1.5.2", "+-1", "infinity"] {
            #expect(refusal("a = \(text)\n")?.hasPrefix("1:5: '\(text)' is not a TOML") == true, "\(text)")
        }
    }

    @Test func badEscapesAndUnterminatedStringsAreRefused() {
        #expect(refusal(#"a = "x\qy""#) == #"1:7: invalid escape \q (TOML's are \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX)"#)
        #expect(refusal(#"a = "\u12""#) == #"1:6: \u takes 4 hexadecimal digits"#)
        #expect(refusal(#"a = "\uD800""#) == #"1:6: \uD800 is not a Unicode scalar value"#)
        #expect(refusal(#"a = "\U00110000""#) == #"1:6: \U00110000 is not a Unicode scalar value"#)
        #expect(refusal("a = \"open\nb = 1\n") == "1:5: the string is not closed on its line (a \" is missing)")
        #expect(refusal("a = 'open\n") == "1:5: the string is not closed on its line (a ' is missing)")
        #expect(refusal("a = \"\"\"open\n\nb = 1\n") == "1:5: the multi-line string is not closed (\"\"\" is missing)")
        #expect(refusal("a = '''open\n") == "1:5: the multi-line string is not closed (''' is missing)")
        #expect(refusal("\"\"\"k\"\"\" = 1\n") == "1:1: a key cannot be a multi-line string")
        #expect(refusal("a = \"\"\"six quotes\"\"\"\"\"\"\n") == "1:23: expected the end of the line after the value, saw '\"'")
    }

    @Test func aKeyOrATableIsDefinedOnce() {
        #expect(refusal("[daemon]\nsocket = \"/a\"\nsocket = \"/b\"\n") == "3:1: duplicate key daemon.socket (first on line 2)")
        #expect(refusal("a = 1\n\"a\" = 2\n") == "2:1: duplicate key a (first on line 1)")
        #expect(refusal("[daemon]\n[camera]\n[daemon]\n") == "3:2: table [daemon] is defined twice (first on line 1)")
        #expect(refusal("[a]\nb.c = 1\n[a.b]\n") == "3:4: [a.b] cannot define a.b: it is already a table defined by dotted keys (line 2)")
        #expect(refusal("[a.b]\nx = 1\n[a]\nb.y = 2\n")
                == "4:1: the dotted key b.y cannot add to a.b: it is already a table defined by its header (line 1)")
        #expect(refusal("a = { b = 1 }\n[a]\n") == "2:2: [a] cannot define a: it is already an inline table (line 1), whole as written")
        #expect(refusal("a = { b = 1 }\na.c = 2\n") == "2:1: the dotted key a.c cannot add to a: it is already an inline table (line 1), whole as written")
        #expect(refusal("a = []\n[[a]]\n") == "2:3: [[a]] cannot append to a: it is already an array (line 1), not an array of tables")
        #expect(refusal("[[a]]\n[a]\n") == "2:2: [a] cannot define a: it is already an array of tables (line 1)")
        #expect(refusal("a = 1\n[a.b]\n") == "2:2: [a.b] cannot add to a: it is already a integer (line 1)")
        #expect(refusal("p = { x = 1, x = 2 }\n") == "1:14: duplicate key p.x (first on line 1)")
        #expect(refusal("[[device]]\npath = \"/a\"\npath = \"/b\"\n") == "3:1: duplicate key device.path (first on line 2)")
        #expect(refusal("\"a\\nb\" = 1\n\"a\\nb\" = 2\n") == "2:1: duplicate key \"a\\nb\" (first on line 1)")
    }

    @Test func hugeInputIsBounded() throws {
        let deep = String(repeating: "[", count: 100_000)
        #expect(refusal("a = \(deep)\n") == "1:37: arrays and inline tables nested more than 32 deep")
        let inline = String(repeating: "{a=", count: 50_000)
        #expect(refusal("b = \(inline)\n")?.hasSuffix("arrays and inline tables nested more than 32 deep") == true)
        let longKey = Array(repeating: "k", count: 40_000).joined(separator: ".")
        #expect(refusal("\(longKey) = 1\n") == "1:65: a key of more than 32 parts")
        #expect(refusal("[\(longKey)]\n") == "1:66: a key of more than 32 parts")
        // Long, flat input is read whole, in time linear in its length.
        let long = String(repeating: "x", count: 1_000_000)
        #expect(try value("a = \"\(long)\"", "a")?.string?.count == 1_000_000)
        let many = (0..<20_000).map { "k\($0) = \($0)" }.joined(separator: "\n")
        #expect(try parsed(many).keys.count == 20_000)
        let headers = String(repeating: "[[device]]\n", count: 50_000)
        #expect(try parsed(headers)["device"]?.value.array?.count == 50_000)
    }
}
