// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "dockd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "dockd", targets: ["dockd"]),
        .executable(name: "dockctl", targets: ["dockctl-main"]),
        .executable(name: "dock-sim", targets: ["dock-sim-main"]),
        .executable(name: "dock-bench", targets: ["dock-bench-main"]),
        .executable(name: "dock-driver-probe", targets: ["dock-driver-probe-main"]),
        .executable(name: "dock-mot", targets: ["dock-mot"]),
        .library(name: "DockProtocol", targets: ["DockProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // System libraries, found through pkg-config (libsystemd-dev, libudev-dev, libbluetooth-dev).
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev",
                       providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez",
                       providers: [.apt(["libbluetooth-dev"])]),
        // V4L2's control ioctls (linux/videodev2.h, from the kernel's headers: linux-libc-dev).
        .systemLibrary(name: "CV4L2"),
        // signalfd(2), for SIGTERM and SIGINT read on dockd's event loop (DockIO.TerminationSignals).
        .systemLibrary(name: "CSignalFD"),
        // timerfd(2), for a link session host's own timer (DockIO.LinkTimer), which can be moved later.
        .systemLibrary(name: "CTimerFD"),

        // Pure core: no I/O, no wall clock. Shared by the daemon, the simulator, tests and benchmarks.
        .target(name: "DockProtocol"),
        .target(name: "DockSim", dependencies: ["DockProtocol"]),
        .target(name: "DockCore", dependencies: ["DockProtocol"]),
        .target(name: "DockTracking"),
        .target(name: "DockDrivers", dependencies: ["DockProtocol"]),
        // The per-stand engine (pure): everything dockd decides about a stand, (event, now) → effects.
        .target(name: "StandEngine", dependencies: ["DockProtocol", "DockCore", "DockTracking", "DockDrivers"]),
        // The virtual link (any link session — the engine, dock-driver-probe's run — against a peer over
        // the wire in virtual time) and the engine's virtual host on it (tests, benchmarks).
        .target(name: "VirtualTime", dependencies: ["StandEngine", "DockSim", "DockDrivers", "DockProtocol", "DockCore", "DockTracking"]),
        // JSON-RPC 2.0 text (pure, no Foundation): values, the strict parser, the writer, requests and
        // errors. dockd's API and its clients share it.
        .target(name: "DockJSON"),
        // The API's methods, each declared once (params, result, errors, lease, motion, notifications).
        .target(name: "DockAPI"),
        // The blocking JSON-RPC client of dockd's API socket (dockctl, dock-bench live).
        .target(name: "DockClient", dependencies: ["DockAPI", "DockJSON"]),
        // The release version, shared by every tool's --version.
        .target(name: "DockVersion"),

        // I/O shell pieces shared by the executables.
        .target(name: "DockIO", dependencies: [
            "DockProtocol", "DockDrivers", "CBluetooth", "CV4L2", "CSignalFD", "CTimerFD",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // The daemon as a library: configuration, stand hosts, the API server, systemd and udev.
        .target(name: "DockDaemon", dependencies: [
            "DockVersion", "DockAPI", "DockJSON", "DockProtocol", "DockCore", "DockTracking", "DockDrivers", "StandEngine", "DockIO", "CSystemd", "CUdev", "CBluetooth",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Each tool's command line as a library, run by its own executable (Sources/Executables, the
        // product of the tool's name) and by dockd's, which is every tool: the package installs that
        // one binary under each name.
        .target(name: "dockctl", dependencies: [
            "DockVersion", "DockAPI", "DockClient", "DockJSON", "DockDrivers",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .target(name: "dock-sim", dependencies: [
            "DockVersion", "DockProtocol", "DockSim", "DockIO",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "dock-bench", dependencies: [
            "DockVersion", "DockProtocol", "DockSim", "DockCore", "DockTracking", "DockAPI", "DockClient", "DockJSON", "StandEngine", "VirtualTime",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .target(name: "dock-driver-probe", dependencies: [
            "DockVersion", "DockDrivers", "DockIO", "DockJSON", "DockProtocol", "DockCore", "StandEngine",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // dockd: its command line, the daemon run in a ServiceGroup, and under a tool's name that tool.
        .executableTarget(name: "dockd", dependencies: [
            "DockDaemon", "DockVersion", "DockIO", "dockctl", "dock-sim", "dock-bench", "dock-driver-probe",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], linkerSettings: [
            // Less to map and touch at every start (BENCHMARKS.md, issue 26: each about 1 MiB resident):
            // the relative relocations packed (DT_RELR, glibc ≥ 2.36; lld writes them, gold cannot), and
            // no dynamic symbol table of our own functions (nothing looks them up; the stripped binary's
            // crash traces lose their names). The functions dockd runs placed together, so that they fill
            // fewer pages (bench/profiles/dockd.order, from `make symbol-order`; names gone since are ignored).
            .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                          "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/bench/profiles/dockd.order",
                          "-Xlinker", "--no-warn-symbol-ordering"],
                         .when(platforms: [.linux])),
        ]),
        .executableTarget(name: "dockctl-main", dependencies: ["dockctl"], path: "Sources/Executables/dockctl"),
        .executableTarget(name: "dock-sim-main", dependencies: ["dock-sim"], path: "Sources/Executables/dock-sim"),
        .executableTarget(name: "dock-bench-main", dependencies: ["dock-bench"], path: "Sources/Executables/dock-bench"),
        .executableTarget(name: "dock-driver-probe-main", dependencies: ["dock-driver-probe"], path: "Sources/Executables/dock-driver-probe"),

        .executableTarget(name: "dock-mot", dependencies: [
            "DockVersion", "DockTracking",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .testTarget(name: "DockTrackingTests", dependencies: ["DockTracking"]),
        .testTarget(name: "DockAPITests", dependencies: ["DockAPI", "DockJSON", "DockIO"]),
        .testTarget(name: "DockDaemonTests", dependencies: ["DockDaemon", "DockJSON", "DockDrivers", "DockIO",
                                                          .product(name: "NIOCore", package: "swift-nio"),
                                                          .product(name: "NIOEmbedded", package: "swift-nio"),
                                                          .product(name: "NIOPosix", package: "swift-nio"),
                                                          .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                                                          .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "DockDriversTests", dependencies: ["DockDrivers", "DockProtocol", "DockSim", "StandEngine", "VirtualTime",
                                                           "DockJSON", "dock-driver-probe"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "DockProtocolTests", dependencies: ["DockProtocol"]),
        .testTarget(name: "DockSimTests", dependencies: ["DockSim", "DockProtocol"]),
        .testTarget(name: "DockCoreTests", dependencies: ["DockCore", "DockSim", "DockProtocol"]),
        .testTarget(name: "StandEngineTests", dependencies: ["StandEngine", "VirtualTime", "DockSim", "DockProtocol", "DockCore", "DockTracking", "DockDrivers"]),
        .testTarget(name: "DockIOTests", dependencies: ["DockIO", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
    ]
)

// The libFuzzer targets (Fuzz/README.md), declared only when DOCKD_FUZZ is set: Fuzz/run.sh builds
// them with -sanitize=fuzzer,address, without which they do not link (libFuzzer runs them).
if Context.environment["DOCKD_FUZZ"] != nil {
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("FrameDecoderFuzz", ["DockProtocol"]),
        ("RoundTripFuzz", ["DockProtocol"]),
        ("JSONRPCFuzz", ["DockJSON"]),
        ("VISCAFuzz", ["DockDrivers", "DockProtocol", "FuzzDriverChecks"]),
        ("MAVLinkFuzz", ["DockDrivers", "DockProtocol", "FuzzDriverChecks"]),
        ("ONVIFFuzz", ["DockDrivers", "DockProtocol"]),
        ("DriverFuzz", ["DockDrivers", "FuzzDriverChecks"]),
        ("ConfigFuzz", ["DockDaemon", "DockDrivers", "DockIO"]),
    ]
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/FuzzSupport"),
        .target(name: "FuzzDriverChecks", dependencies: ["FuzzSupport", "DockDrivers", "DockProtocol"], path: "Fuzz/FuzzDriverChecks"),
    ] + fuzzTargets.map { target in
        .executableTarget(name: target.name, dependencies: ["FuzzSupport"] + target.dependencies, path: "Fuzz/\(target.name)",
                          swiftSettings: [.swiftLanguageMode(.v5)],
                          // (ld.gold fails to link libFuzzer's driver into an executable with a main of its own)
                          linkerSettings: [.unsafeFlags(["-use-ld=lld"])])
    }
}
