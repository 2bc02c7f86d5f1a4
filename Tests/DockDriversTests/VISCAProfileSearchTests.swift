import DockDrivers
import Testing

/// Where an installed or a source-tree dockd finds its VISCA profiles (issue 13: an installed dockd
/// searched the working directory and /usr/share only, so PREFIX=/usr/local never found them).
struct VISCAProfileSearchTests {
    @Test func anInstalledDaemonLooksNextToItsPrefix() {
        let paths = VISCAProfile.defaultSearchPaths(environment: [:], executable: "/usr/local/bin/dockd")
        #expect(paths.prefix(2) == ["/etc/dockd/profiles/visca", "/usr/local/share/dockd/profiles/visca"])
        #expect(!paths.contains("profiles/visca"), "never the working directory")
        let packaged = VISCAProfile.defaultSearchPaths(environment: [:], executable: "/usr/bin/dockd")
        #expect(packaged.contains("/usr/share/dockd/profiles/visca"))
    }

    @Test func theEnvironmentComesFirstAndASourceTreeBuildFindsItsProfiles() {
        let paths = VISCAProfile.defaultSearchPaths(environment: ["DOCKD_VISCA_PROFILES": "/srv/cams"],
                                                    executable: "/home/me/dockd/.build/debug/dockd")
        #expect(paths.first == "/srv/cams")
        #expect(paths.contains("/home/me/dockd/profiles/visca"))
    }

    @Test func theRunningTestFindsTheRepositorysProfiles() throws {
        let profile = try VISCAProfile.load("generic-ptzoptics")
        #expect(profile.name == "generic-ptzoptics")
    }
}
