import DockProtocol

/// Feetech's serial bus servo protocol as the STS/SMS series speak it (Feetech's "SCS" protocol,
/// protocol end 0: words little-endian). Figures from the vendor SDK (PyPI `feetech-servo-sdk`
/// 1.0.0, scservo_sdk: packet layout, checksum, instruction codes, the status error bits) and the
/// STS/SMS control table as LeRobot lists it from Feetech's STS/SMS manual
/// (lerobot/motors/feetech/tables.py: addresses, the sign bit 15 of speeds, model 777 = STS3215).
///   instruction  FF FF id len instr params… sum     len = params + 2
///   status       FF FF id len error params… sum     sum = ~(id + len + … ) & 0xFF
enum Feetech {
    static let header: [UInt8] = [0xFF, 0xFF]
    /// Every servo takes a packet sent to it; none answers (SYNC WRITE).
    static let broadcast: UInt8 = 0xFE

    /// The instructions dockd sends (PING 0x01 and WRITE 0x03 exist too; the SDK and the tests'
    /// emulator use them, dockd does not).
    enum Instruction: UInt8, Sendable {
        case read = 0x02, syncWrite = 0x83
    }

    /// The control table's registers dockd uses (RAM area).
    enum Register: UInt8, Sendable {
        case torqueEnable = 0x28      // 40, 1 byte: 1 holds the goal, 0 lets the shaft turn freely
        case goalPosition = 0x2A      // 42, 2 bytes, then goal time (44, 2) and goal speed (46, 2, steps/s)
        case presentPosition = 0x38   // 56, 2 bytes, then present speed (58, 2, sign in bit 15)
    }

    /// The bits of a status packet's error byte (scservo_sdk's ERRBIT_*).
    static let errorBits: [(bit: UInt8, text: String)] = [
        (0x01, "input voltage"), (0x02, "angle sensor"), (0x04, "overheat"), (0x08, "overcurrent"), (0x20, "overload"),
    ]

    /// What an error byte says, in words ("overheat, overload"); bits the SDK names none for by number.
    static func errorText(_ error: UInt8) -> String {
        var words = errorBits.filter { error & $0.bit != 0 }.map(\.text)
        let unnamed = error & ~errorBits.reduce(0) { $0 | $1.bit }
        if unnamed != 0 { words.append("error bits 0x" + String(unnamed, radix: 16)) }
        return words.joined(separator: ", ")
    }

    static func checksum(_ body: some Sequence<UInt8>) -> UInt8 { ~body.reduce(0, &+) }

    /// One instruction packet to servo `id` (or `broadcast`).
    static func packet(id: UInt8, _ instruction: Instruction, _ parameters: [UInt8] = []) -> [UInt8] {
        let body = [id, UInt8(parameters.count + 2), instruction.rawValue] + parameters
        return header + body + [checksum(body)]
    }

    static func read(id: UInt8, _ register: Register, count: UInt8) -> [UInt8] {
        packet(id: id, .read, [register.rawValue, count])
    }

    /// The same registers written in several servos by one packet, which none answers: the bus
    /// carries no reply to collide with.
    static func syncWrite(_ register: Register, _ values: [(id: UInt8, data: [UInt8])]) -> [UInt8] {
        let count = values.first?.data.count ?? 0
        precondition(values.allSatisfy { $0.data.count == count }, "a SYNC WRITE writes as many bytes in every servo")
        return packet(id: broadcast, .syncWrite, [register.rawValue, UInt8(count)] + values.flatMap { [$0.id] + $0.data })
    }

    /// A goal position (steps) reached at `speed` steps/s: goal position, goal time 0 (unused when
    /// a speed is given), goal speed. Speed 0 is the servo's top speed, not a stop: never sent.
    static func goal(position: Int, speed: Int) -> [UInt8] {
        precondition(speed > 0, "goal speed 0 is the servo's top speed")
        return word(position) + word(0) + word(speed)
    }

    static func word(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }

    /// A little-endian word whose bit `sign` is the sign and the bits below it the magnitude
    /// (LeRobot's "sign-magnitude" encodings: present speed, bit 15).
    static func signMagnitude(_ low: UInt8, _ high: UInt8, sign: Int = 15) -> Int {
        let raw = Int(low) | Int(high) << 8
        let magnitude = raw & ((1 << sign) - 1)
        return raw & (1 << sign) != 0 ? -magnitude : magnitude
    }

    /// A servo's answer.
    struct Status: Sendable, Equatable {
        var id: UInt8
        var error: UInt8
        var parameters: [UInt8]
    }

    /// Splits the bus's bytes into status packets: each starts at FF FF and is whole when its
    /// length's bytes and the sum have come. A byte before a header, a length no status packet has,
    /// or a sum that fails drops a byte and the search goes on.
    struct Decoder: Sendable {
        private var buffer: [UInt8] = []
        /// dockd's reads are answered with 4 bytes (length 6); a length past 16 bytes' worth (18)
        /// is taken for noise rather than waited for: no answer on this bus is that long.
        static let longestLength = 2 + 16

        mutating func feed(_ bytes: [UInt8]) -> [Result<Status, FrameError>] {
            buffer += bytes
            var out: [Result<Status, FrameError>] = []
            while !buffer.isEmpty {
                guard buffer.starts(with: Feetech.header) || buffer == [0xFF] else {
                    let skipped = max(1, buffer.firstIndex(of: 0xFF) ?? buffer.count)
                    buffer.removeFirst(skipped)
                    out.append(.failure(.malformed))
                    continue
                }
                guard buffer.count >= 4 else { break }
                let length = Int(buffer[3])
                guard (2...Self.longestLength).contains(length), buffer[2] < Feetech.broadcast else {
                    buffer.removeFirst()
                    out.append(.failure(.malformed))
                    continue
                }
                guard buffer.count >= 4 + length else { break }
                let body = Array(buffer[2..<(3 + length)])
                guard Feetech.checksum(body) == buffer[3 + length] else {
                    buffer.removeFirst()
                    out.append(.failure(.crc))
                    continue
                }
                buffer.removeFirst(4 + length)
                out.append(.success(Status(id: body[0], error: body[2], parameters: Array(body[3...]))))
            }
            return out
        }
    }
}
