import CBluetooth
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// RFCOMM (Bluetooth SPP) links to paired stands, through libbluetooth. The channel comes from the
/// configuration or from an SDP lookup of the stand's Serial Port service.
public enum Bluetooth {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A connected RFCOMM socket. Blocking (connect and SDP can take seconds): run it off the event
    /// loop, e.g. on `NIOThreadPool`.
    public static func connect(address: String, channel: UInt8?) throws(Failure) -> Int32 {
        var target = bdaddr_t()
        guard str2ba(address, &target) == 0, address.split(separator: ":").count == 6 else {
            throw Failure(description: "'\(address)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue), BTPROTO_RFCOMM)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT {
                throw Failure(description: "Bluetooth is not available on this host (the kernel has no AF_BLUETOOTH): cannot reach \(address)")
            }
            throw Failure(description: "cannot create an RFCOMM socket: \(String(cString: strerror(code)))")
        }
        // Pairing-level security: an unauthenticated peer must not steer motors.
        var security = bt_security(level: UInt8(BT_SECURITY_MEDIUM), key_size: 0)
        if setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &security, socklen_t(MemoryLayout<bt_security>.size)) != 0 {
            let text = String(cString: strerror(errno)); close(fd)
            throw Failure(description: "cannot set BT_SECURITY on the RFCOMM socket: \(text)")
        }
        let resolved: UInt8
        if let channel {
            resolved = channel
        } else {
            do throws(Failure) {
                resolved = try serialPortChannel(of: target, address: address)
            } catch {
                close(fd)
                throw error
            }
        }
        var remote = sockaddr_rc(rc_family: sa_family_t(AF_BLUETOOTH), rc_bdaddr: target, rc_channel: resolved)
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_rc>.size)) }
        }
        guard result == 0 else {
            let text = String(cString: strerror(errno)); close(fd)
            throw Failure(description: "cannot connect to \(address) channel \(resolved): \(text) (is the stand paired and in range?)")
        }
        return fd
    }

    /// The RFCOMM channel of the stand's Serial Port Profile service, from its SDP server.
    static func serialPortChannel(of target: bdaddr_t, address: String) throws(Failure) -> UInt8 {
        var any = bdaddr_t()  // BDADDR_ANY
        var remote = target
        guard let session = sdp_connect(&any, &remote, UInt32(SDP_RETRY_IF_BUSY)) else {
            throw Failure(description: "SDP lookup on \(address) failed: \(String(cString: strerror(errno))); set the channel in the configuration")
        }
        defer { sdp_close(session) }
        var serialPort = uuid_t()
        sdp_uuid16_create(&serialPort, UInt16(SERIAL_PORT_SVCLASS_ID))
        var range: UInt32 = 0x0000_FFFF
        let search = sdp_list_append(nil, &serialPort)
        let attributes = sdp_list_append(nil, &range)
        defer { sdp_list_free(search, nil); sdp_list_free(attributes, nil) }
        var records: UnsafeMutablePointer<sdp_list_t>?
        guard sdp_service_search_attr_req(session, search, SDP_ATTR_REQ_RANGE, attributes, &records) == 0 else {
            throw Failure(description: "SDP search on \(address) failed; set the channel in the configuration")
        }
        var node = records
        while let entry = node {
            let record = entry.pointee.data.assumingMemoryBound(to: sdp_record_t.self)
            var protocols: UnsafeMutablePointer<sdp_list_t>?
            if sdp_get_access_protos(record, &protocols) == 0 {
                let channel = sdp_get_proto_port(protocols, Int32(RFCOMM_UUID))
                if channel > 0 { return UInt8(channel) }
            }
            node = entry.pointee.next
        }
        throw Failure(description: "\(address) offers no Serial Port service over RFCOMM")
    }
}
