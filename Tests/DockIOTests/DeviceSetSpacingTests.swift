@testable import DockIO
import Synchronization
import Testing

/// The command interval kept per camera, not per link: the sets of two links to one device (a link
/// reopened while the old one's thread still finishes a set) are spaced apart from each other.
@Suite struct DeviceSetSpacingTests {
    @Test func twoLinksToOneDeviceSpaceTheirSetsFromEachOther() {
        // A device number no camera has here; each link looks its device up when it opens.
        let old = DeviceSetSpacing.of(device: UInt.max - 7), reopened = DeviceSetSpacing.of(device: UInt.max - 7)
        let starts = Mutex<[Double]>([])
        old.spaced(0.2) { starts.withLock { $0.append(MonotonicClock.now()) } }
        reopened.spaced(0.2) { starts.withLock { $0.append(MonotonicClock.now()) } }
        let both = starts.withLock { $0 }
        #expect(both.count == 2 && both[1] - both[0] >= 0.2, "\(both)")
    }
}
