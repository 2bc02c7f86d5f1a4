@testable import DockDaemon
import DockIO
import Testing

/// dockd.conf as people write it: every mistake named on its line, numbers as TOML writes them.
struct ConfigurationTests {
    func refusal(_ text: String) -> [String] {
        do {
            _ = try Configuration.parse(text, source: "t.conf")
            return []
        } catch {
            return error.description.split(separator: "\n").map(String.init)
        }
    }

    @Test func unknownKeysAndSectionsAreRefusedOnTheirLines() {
        let lines = refusal("[daemon]\nlog_levle = \"info\"\n\n[trackin]\nlost_hold_s = 1\n[[device]]\npath = \"/dev/x\"\ndriver = \"visca\"\npol_hz = 2\n")
        #expect(lines == [
            "t.conf:2:1: unknown key daemon.log_levle (did you mean log_level?)",
            "t.conf:4:1: unknown section trackin (did you mean tracking?)",
            "t.conf:9:1: unknown key device[0].pol_hz (did you mean poll_hz?)",
        ])
    }

    @Test func anotherDriversOptionIsNamedAsSuchAndAValueIsCheckedAsItsDriverDeclares() {
        #expect(refusal("[[device]]\npath = \"/dev/x\"\npoll_hz = 2\n")
                == ["t.conf:3:1: device[0].poll_hz: is an option of the visca driver; the native driver takes none"])
        #expect(refusal("[[device]]\nudp = \"127.0.0.1:1\"\ndriver = \"visca\"\naddress = 9\ntransport = \"ipx\"\n") == [
            "t.conf:4:1: device[0].address: must be 1…7, not 9",
            "t.conf:5:1: device[0].transport: must be one of \"serial\", \"ip\", \"raw-udp\", \"raw-tcp\", not \"ipx\"",
        ])
        #expect(refusal("[[device]]\nunix = \"/run/cam.sock\"\ndriver = \"visca\"\n")
                == ["t.conf:2:1: device[0].unix: the visca driver runs over path, udp, tcp, not unix"])
    }

    @Test func aTopLevelKeyADottedKeyAndAnInlineTableArePlaced() {
        #expect(refusal("debug = true\n") == ["t.conf:1:1: unknown key debug (known: camera, daemon, device, hotplug, sweep, tracking)"])
        #expect(refusal("[camera]\n  tracking.lost_hold_s = 2\n").first?.hasPrefix("t.conf:2:3: unknown section camera.tracking") == true)
        #expect(refusal("daemon = { socket = \"/x\", sockett = 1 }\n").first?.hasPrefix("t.conf:1:1: unknown key daemon.sockett") == true)
        #expect(refusal("[[device]]\npath = \"/a\"\n[[device]]\npath = \"/b\"\nbogus = 1\n")
                == ["t.conf:5:1: unknown key device[1].bogus (known: baud, bluetooth, channel, driver, onvif, path, tcp, udp, unix, video)"])
    }

    @Test func everyMistakeIsListedInTheFilesOrder() {
        let lines = refusal("[camera]\nvertical_fov_deg = \"x\"\n[daemon]\nheartbeat_timeout_ms = 20\nlog_level = \"verbose\"\n")
        #expect(lines.count == 3)
        #expect(lines[0] == "t.conf:2:1: camera.vertical_fov_deg: must be a number, not string")
        #expect(lines[1] == "t.conf:4:1: daemon.heartbeat_timeout_ms: must be 100…5000, not 20")
        #expect(lines[2].hasPrefix("t.conf:5:1: daemon.log_level: 'verbose' is not one of trace,"))
    }

    @Test func integerKeysTakeWholeFloatsAndNumberKeysTakeIntegers() throws {
        let c = try Configuration.parse("""
            [daemon]
            heartbeat_timeout_ms = 600.0
            [camera]
            horizontal_fov_deg = 60
            vertical_fov_deg = 40.5
            [tracking]
            lost_hold_s = 2
            [hotplug]
            baud = 9600.0
            [[device]]
            udp = "127.0.0.1:52381"
            driver = "visca"
            poll_hz = 20
            address = 2.0
            """, source: "t.conf")
        #expect(c.heartbeatTimeoutMs == 600 && c.camera.horizontalFOVDegrees == 60 && c.camera.verticalFOVDegrees == 40.5)
        #expect(c.tracking.lostHold == 2 && c.hotplug.baud == 9600)
        #expect(c.devices.first?.options == ["poll_hz": .number(20), "address": .integer(2)])
        #expect(refusal("[daemon]\nheartbeat_timeout_ms = 600.5\n") == ["t.conf:2:1: daemon.heartbeat_timeout_ms: must be a whole number, not 600.5"])
    }

    @Test func aSweepSectionNamesItsButtonAndEndsInDegrees() throws {
        let c = try Configuration.parse("[sweep]\nbutton = 2\nfrom_deg = -90\nto_deg = 90\nrate_deg_s = 10\n", source: "t.conf")
        let sweep = try #require(c.engineSettings.buttonSweep)
        #expect(sweep.button == 2 && abs(sweep.sweep.from + .pi / 2) < 1e-12 && abs(sweep.sweep.rate - .pi / 18) < 1e-12 && sweep.sweep.repeats)
        #expect(refusal("[sweep]\nbutton = 1\nfrom_deg = 10\n") == ["t.conf:1:1: sweep: a [sweep] names its button, from_deg and to_deg"])
        #expect(refusal("[sweep]\nbutton = 1\nfrom_deg = 10\nto_deg = 10\n") == ["t.conf:4:1: sweep.to_deg: must differ from from_deg"])
        #expect(refusal("[sweep]\nbutton = 1\nfrom_deg = 0\nto_deg = 10\nrate_deg_s = 0\n") == ["t.conf:5:1: sweep.rate_deg_s: must be in [0.1, 500], not 0"])
        // Each engine takes its button's sweep when it is made: a reload names the change as needing a restart.
        let changes = Configuration().changes(to: c)
        #expect(changes.map(\.key) == ["sweep"] && changes[0].needsRestart && changes[0].after == "button 2: -90.0° → 90.0° at 10.0°/s, repeating")
    }

    @Test func oneRuleForTheLogLevel() {
        #expect(Configuration.logLevelProblem("debug") == nil)
        #expect(Configuration.logLevelProblem("verbose") != nil)
        #expect(refusal("[daemon]\nlog_level = \"verbose\"\n").count == 1)
    }

    @Test func changesBetweenLoadsSayWhatNeedsARestart() throws {
        let before = try Configuration.parse("""
            [daemon]
            log_level = "info"
            [[device]]
            path = "/dev/a"
            [[device]]
            udp = "127.0.0.1:5000"
            driver = "mavlink"
            """, source: "a")
        let after = try Configuration.parse("""
            [daemon]
            log_level = "debug"
            socket = "/run/other.sock"
            [[device]]
            udp = "127.0.0.1:5000"
            driver = "mavlink"
            system_id = 2
            [[device]]
            path = "/dev/b"
            [camera]
            horizontal_fov_deg = 60
            """, source: "b")
        let changes = before.changes(to: after)
        #expect(changes.map(\.key) == ["daemon.socket", "daemon.log_level", "device serial:/dev/a@115200",
                                       "device udp:127.0.0.1:5000", "device serial:/dev/b@115200", "camera.horizontal_fov_deg"])
        #expect(changes.filter(\.needsRestart).map(\.key) == ["daemon.socket"])
        #expect(changes[2].after == "(none)" && changes[3].after == "mavlink system_id=2")
        #expect(before.changes(to: before).isEmpty)
    }

    @Test func theCommandLineIsAppliedAgainOverAReloadedFile() throws {
        // What `--device /tmp/stand --socket /tmp/d.sock --socket-group "" --state-directory /tmp/s`
        // sets (the command line's parsing is dockd's, tested through the binary in tests/integration).
        let overrides = ConfigurationOverrides(socket: "/tmp/d.sock", socketGroup: .some(nil), socketMode: nil, stateDirectory: "/tmp/s",
                                               logLevel: nil, noHotplug: false, devices: [StandEndpoint(parsing: "/tmp/stand")])
        let file = "[daemon]\nstate_directory = \"/srv/dockd\"\n[[device]]\npath = \"/dev/a\"\n"
        let reloaded = overrides.applied(to: try Configuration.parse(file, source: "c"))
        #expect(reloaded.devices.map(\.endpoint) == [.serial(path: "/dev/a", baud: 115_200), .serial(path: "/tmp/stand", baud: 115_200)])
        #expect(reloaded.socketPath == "/tmp/d.sock" && reloaded.socketGroup == nil)
        #expect(reloaded.stateDirectory == "/tmp/s")
    }

    @Test func theAddressFilterNoteKnowsLoopbackAndPrivateRanges() {
        for host in ["127.0.0.1", "10.1.2.3", "172.16.0.9", "192.168.1.20", "169.254.3.3", "::1", "fe80::1", "fd00::5"] {
            #expect(ConfigurationCheck.isAllowed(host), "\(host)")
        }
        for host in ["192.0.2.10", "172.32.0.1", "8.8.8.8", "2001:db8::1", "camera.local"] {
            #expect(!ConfigurationCheck.isAllowed(host), "\(host)")
        }
    }
}
