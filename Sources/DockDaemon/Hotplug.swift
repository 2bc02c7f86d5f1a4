import CUdev
import DockDrivers
import DockIO
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Stands appearing and disappearing, from libudev. A device is a driver's when it matches the
/// driver's declared `HotplugMatch` (DriverTable: the property our udev rule sets, or USB ids), or,
/// for a native stand, when its `ID_SERIAL` matches the configured pattern.
enum Hotplug {
    struct Event: Sendable, Equatable {
        enum Action: String, Sendable { case add, remove }
        var action: Action
        var devnode: String
        var serial: String?
        /// The driver whose device it is (an add's, nil when no driver's match takes it: then it
        /// only matters to a stand kept on that node; nil for a remove, released by node).
        var driver: String?
    }

    struct Matcher: Sendable {
        /// fnmatch(3) pattern on ID_SERIAL, e.g. "Dock_Stand_*": native stands besides those the rule marks.
        var serialPattern: String?

        /// The udev subsystems some driver's devices appear in.
        static var subsystems: [String] { Array(Set(DriverTable.all.compactMap { $0.hotplug?.subsystem })).sorted() }

        /// The driver whose device this is, nil when it is none's. `uvcControls`: a video device's
        /// camera controls from its USB descriptors, read only if a driver asks.
        func driver(_ property: (String) -> String?, uvcControls: () -> UVCCameraControls? = { nil }) -> DriverDefinition? {
            if let driver = DriverTable.all.first(where: { $0.hotplug?.matches(property, uvcControls: uvcControls) == true }) { return driver }
            if let pattern = serialPattern, let serial = property("ID_SERIAL"), fnmatch(pattern, serial, 0) == 0 {
                return NativeDriver.definition
            }
            return nil
        }
    }

    /// Stands present now (the scan before READY=1).
    static func present(_ matcher: Matcher) -> [Event] {
        guard let udev = udev_new() else { return [] }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else { return [] }
        defer { udev_enumerate_unref(enumerate) }
        for subsystem in Matcher.subsystems { udev_enumerate_add_match_subsystem(enumerate, subsystem) }
        udev_enumerate_scan_devices(enumerate)
        var events: [Event] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let e = entry {
            if let path = udev_list_entry_get_name(e), let device = udev_device_new_from_syspath(udev, path) {
                if let event = event(.add, device, matcher), event.driver != nil { events.append(event) }
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(e)
        }
        return events
    }

    /// Adds and removes as they happen, until the stream's consumer stops. libudev's monitor is read
    /// on a thread of its own (a blocking C API that owns no Swift state), which sleeps in poll(2)
    /// until udev or the consumer's end wakes it: no periodic wake-ups.
    static func changes(_ matcher: Matcher) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
        // Signalled by the consumer's end, polled by the monitor thread beside udev's socket.
        guard let stop = WakePipe() else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in stop.signal() }
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        thread.submit { _ in
            watch(matcher, continuation, stop)
            stop.close()
        }
        return stream
    }

    private static func watch(_ matcher: Matcher, _ continuation: AsyncStream<Event>.Continuation, _ stop: WakePipe) {
        defer { continuation.finish() }
        guard let udev = udev_new() else { return }
        defer { udev_unref(udev) }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else { return }
        defer { udev_monitor_unref(monitor) }
        for subsystem in Matcher.subsystems { udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil) }
        guard udev_monitor_enable_receiving(monitor) >= 0 else { return }
        var fds = [pollfd(fd: udev_monitor_get_fd(monitor), events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stop.descriptor, events: Int16(POLLIN), revents: 0)]
        while !stop.isSignalled {
            guard poll(&fds, 2, -1) > 0, fds[0].revents & Int16(POLLIN) != 0 else { continue }
            guard let device = udev_monitor_receive_device(monitor) else { continue }
            defer { udev_device_unref(device) }
            let action = udev_device_get_action(device).map { String(cString: $0) }
            guard let kind = action.flatMap(Event.Action.init(rawValue:)), let event = event(kind, device, matcher) else { continue }
            continuation.yield(event)
        }
    }

    private static func event(_ action: Event.Action, _ device: OpaquePointer, _ matcher: Matcher) -> Event? {
        func property(_ name: String) -> String? {
            udev_device_get_property_value(device, name).map { String(cString: $0) }
        }
        // A removed device no longer has its properties everywhere: match on add, release by node.
        guard let node = udev_device_get_devnode(device).map({ String(cString: $0) }) else { return nil }
        let driver = action == .add ? matcher.driver(property, uvcControls: { videoCaptureControls(device) }) : nil
        return Event(action: action, devnode: node, serial: property("ID_SERIAL"), driver: driver?.name)
    }
}

/// The camera controls of a video4linux device that is a camera's capture node (its first node,
/// `index` 0, that captures: a UVC camera also has a metadata node), from its USB descriptors.
private func videoCaptureControls(_ device: OpaquePointer) -> UVCCameraControls? {
    guard udev_device_get_subsystem(device).map({ String(cString: $0) }) == "video4linux",
          udev_device_get_sysattr_value(device, "index").map({ String(cString: $0) }) == "0",
          udev_device_get_property_value(device, "ID_V4L_CAPABILITIES").map({ String(cString: $0).contains(":capture:") }) ?? true,
          let syspath = udev_device_get_syspath(device).map({ String(cString: $0) }) else { return nil }
    return UVCSysfs.controls(syspath: syspath)
}
