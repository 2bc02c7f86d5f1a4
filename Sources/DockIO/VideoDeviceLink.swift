import CV4L2
import DockDrivers
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 device (a PTZ webcam's /dev/videoN) as a byte link: its control ioctls run on a thread of
/// their own, one request at a time (a UVC camera can take most of a second to answer one, and must
/// never block a stand's event loop), answering `V4L2Wire` lines over a socketpair whose other end
/// the stand's host reads like any link. A set waits, if it must, until its `spacing` (the driver's
/// command interval) has passed since the device's last set's ioctl started (`DeviceSetSpacing`):
/// the driver spaces its sets when it sends them, and only the threads know when they reach the
/// camera. Opening it for controls takes no stream: another program (dock-camera, a browser) may
/// capture from the same device at the same time. The host closing the link closes the device, after
/// setting back the extension-unit controls the driver asked to have put back (the camera's own
/// tracking, as it was); a device unplugged answers ENODEV and the link closes.
public enum VideoDeviceLink {
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens the device and starts its thread; returns the descriptor of the link's host end.
    public static func open(path: String) throws(OpenError) -> Int32 {
        let device = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard device >= 0 else { throw OpenError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        var capability = v4l2_capability()
        guard dockd_v4l2_querycap(device, &capability) == 0 else {
            let text = String(cString: strerror(errno))
            close(device)
            throw OpenError(description: "\(path) is not a V4L2 device: \(text)")
        }
        var ends: [Int32] = [-1, -1]
        guard dockd_stream_socketpair(&ends) == 0 else {
            let text = String(cString: strerror(errno))
            close(device)
            throw OpenError(description: "cannot make the link of \(path): \(text)")
        }
        let card = withUnsafeBytes(of: capability.card) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var status = stat()
        let number = fstat(device, &status) == 0 ? UInt(status.st_rdev) : 0
        let server = Server(device: device, socket: ends[1], card: card, descriptors: USBDescriptors.of(devicePath: path),
                            spacing: DeviceSetSpacing.of(device: number))
        guard DetachedThread.start({ server.serve() }) else {
            for fd in [device, ends[0], ends[1]] { close(fd) }
            throw OpenError(description: "cannot start the thread of \(path)")
        }
        return ends[0]
    }

    /// Answers requests until the host's end closes or the device is gone; then closes both.
    private struct Server: Sendable {
        let device: Int32
        let socket: Int32
        let card: String
        /// The USB camera's descriptors, where its extension units' ids are (nil: not a USB camera).
        let descriptors: [UInt8]?
        /// When the device's sets may go, shared with any other link to it.
        let spacing: DeviceSetSpacing

        func serve() {
            /// What to set when the link closes: (unit, selector, bytes), first asked first set.
            var restores: [(unit: UInt8, selector: UInt8, bytes: [UInt8])] = []
            defer {
                // Best effort: an unplugged camera fails these with ENODEV, and that is all.
                for restore in restores {
                    var bytes = restore.bytes
                    _ = dockd_uvc_xu_query(device, restore.unit, restore.selector, dockd_uvc_set_cur, UInt16(bytes.count), &bytes)
                }
                close(device)
                close(socket)
            }
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(socket, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                pending += chunk[0..<count]
                // A host speaks one short line at a time; a peer that never ends a line is cut off.
                if pending.count > 65_536 { return }
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    let request = V4L2Wire.request(Substring(line))
                    let replies: [V4L2Wire.Reply]
                    if case .set(_, let interval)? = request {
                        replies = spacing.spaced(interval) { answer(request) }
                    } else {
                        replies = answer(request)
                    }
                    if case .extensionUnit(_, _, let selector, _, let restore?)? = request, case .unit(let unit)? = replies.last,
                       !restores.contains(where: { $0.unit == unit && $0.selector == selector }) {
                        restores.append((unit, selector, restore))
                    }
                    guard DetachedThread.writeAll(socket, replies.flatMap(V4L2Wire.encode)) else { return }
                    if case .failure(ENODEV, _)? = replies.last { return }
                }
            }
        }

        private func answer(_ request: V4L2Wire.Request?) -> [V4L2Wire.Reply] {
            switch request {
            case nil:
                return [.failure(errno: EINVAL, text: "not a request")]
            case .query:
                var replies: [V4L2Wire.Reply] = []
                var query = v4l2_query_ext_ctrl()
                query.id = dockd_v4l2_camera_class | dockd_v4l2_next_ctrl
                while dockd_v4l2_query_ext_ctrl(device, &query) == 0, query.id & 0x0fff_0000 == dockd_v4l2_camera_class {
                    replies.append(.control(V4L2Wire.ControlInfo(id: query.id, minimum: query.minimum, maximum: query.maximum,
                                                                 step: query.step, defaultValue: query.default_value, flags: query.flags)))
                    query.id |= dockd_v4l2_next_ctrl
                }
                if errno == ENODEV { return [failure()] }
                return replies + [.card(card)]
            case .get(let ids):
                var values: [(UInt32, Int32)] = []
                for id in ids {
                    var value: Int32 = 0
                    guard dockd_v4l2_get_ctrl(device, id, &value) == 0 else { return [failure()] }
                    values.append((id, value))
                }
                return [.values(values)]
            case .set(let values, _):
                let ids = values.map(\.0), settings = values.map(\.1)
                guard dockd_v4l2_set_ext_ctrls(device, ids, settings, UInt32(values.count)) == 0 else { return [failure()] }
                return [.values(values)]
            case .extensionUnit(let guid, let fallback, let selector, let data, _):
                let unit = descriptors.flatMap { UVCCameraControls.extensionUnit(guid, in: $0) } ?? fallback
                // The control's length first: a payload of another length would be cut or refused.
                guard let size = length(unit, selector) else { return [failure()] }
                guard size == data.count else {
                    return [.failure(errno: EINVAL, text: "unit \(unit) selector \(selector) is \(size) bytes long, not \(data.count)")]
                }
                var bytes = data
                guard dockd_uvc_xu_query(device, unit, selector, dockd_uvc_set_cur, UInt16(size), &bytes) == 0 else { return [failure()] }
                return [.unit(unit)]
            case .extensionUnitRead(let guid, let fallback, let selector):
                let unit = descriptors.flatMap { UVCCameraControls.extensionUnit(guid, in: $0) } ?? fallback
                guard let size = length(unit, selector) else { return [failure()] }
                var bytes = [UInt8](repeating: 0, count: size)
                guard dockd_uvc_xu_query(device, unit, selector, dockd_uvc_get_cur, UInt16(size), &bytes) == 0 else { return [failure()] }
                return [.unitRead(unit, bytes)]
            }
        }

        /// An extension-unit control's length (UVC GET_LEN), nil with errno set when it cannot be had.
        private func length(_ unit: UInt8, _ selector: UInt8) -> Int? {
            var length: [UInt8] = [0, 0]
            guard dockd_uvc_xu_query(device, unit, selector, dockd_uvc_get_len, 2, &length) == 0 else { return nil }
            return Int(length[0]) | Int(length[1]) << 8
        }

        private func failure() -> V4L2Wire.Reply {
            let code = errno
            return .failure(errno: code, text: String(cString: strerror(code)))
        }
    }
}
