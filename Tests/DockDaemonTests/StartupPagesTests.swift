@testable import DockDaemon
import Testing

/// An excerpt of a static dockd's /proc/PID/smaps (lld's layout), fields cut to those read.
private let smaps = """
    55d0c0000000-55d0c0400000 r--p 00000000 fe:00 42 /usr/bin/dockd
    Rss:                 812 kB
    Anonymous:             0 kB
    Swap:                  0 kB
    55d0c0400000-55d0c1300000 r-xp 00400000 fe:00 42 /usr/bin/dockd
    Rss:                8400 kB
    Anonymous:             0 kB
    Swap:                  0 kB
    VmFlags: rd ex mr mw me
    55d0c1300000-55d0c1400000 r--p 01300000 fe:00 42 /usr/bin/dockd
    Rss:                 788 kB
    Anonymous:           788 kB
    Swap:                  0 kB
    55d0c1400000-55d0c1500000 rw-p 01400000 fe:00 42 /usr/bin/dockd
    Rss:                 352 kB
    Anonymous:           352 kB
    55d0c2000000-55d0c2100000 r-xp 00000000 fe:00 43 /usr/lib/x86_64-linux-gnu/libc.so.6
    Rss:                1072 kB
    Anonymous:             0 kB
    Swap:                  0 kB
    55d0c3000000-55d0c3100000 r--p 00000000 fe:00 44 /opt/my dockd/dockd
    Anonymous:             0 kB
    Swap:                  0 kB
    7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
    Anonymous:           132 kB
    """

@Test func onlyTheExecutablesReadOnlyMappingsWithoutPrivatePagesAreDropped() {
    #expect(StartupPages.droppable(smaps: smaps, executable: "/usr/bin/dockd") == [
        .init(start: 0x55d0_c000_0000, end: 0x55d0_c040_0000),
        .init(start: 0x55d0_c040_0000, end: 0x55d0_c130_0000),
    ])
}

@Test func anExecutablePathWithSpacesIsMatchedWhole() {
    #expect(StartupPages.droppable(smaps: smaps, executable: "/opt/my dockd/dockd") == [.init(start: 0x55d0_c300_0000, end: 0x55d0_c310_0000)])
    #expect(StartupPages.droppable(smaps: smaps, executable: "/opt/my").isEmpty)
}

/// RELRO data whose relocated pages were all swapped out shows `Anonymous: 0 kB` beside a non-zero
/// `Swap:`: dropped, it would read back from the file unrelocated. A record missing either line
/// (an older kernel, a sandbox's /proc) proves nothing either.
private let swappedAndIncomplete = """
    55d0c1300000-55d0c1400000 r--p 01300000 fe:00 42 /usr/bin/dockd
    Rss:                   0 kB
    Anonymous:             0 kB
    Swap:                788 kB
    55d0c1500000-55d0c1600000 r--p 01500000 fe:00 42 /usr/bin/dockd
    Rss:                  12 kB
    55d0c1600000-55d0c1700000 r--p 01600000 fe:00 42 /usr/bin/dockd
    Anonymous:             0 kB
    55d0c1700000-55d0c1800000 r--p 01700000 fe:00 42 /usr/bin/dockd
    Anonymous:             0 kB
    Swap:                  0 kB
    """

@Test func aMappingWithSwappedCopiesOrWithoutBothCountsIsKept() {
    #expect(StartupPages.droppable(smaps: swappedAndIncomplete, executable: "/usr/bin/dockd") == [.init(start: 0x55d0_c170_0000, end: 0x55d0_c180_0000)])
}
