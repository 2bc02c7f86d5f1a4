import DockProtocol

/// Pelco-D's wire (Pelco D Protocol Manual TF-0002 v2.1): seven bytes each way, `FF addr cmd1 cmd2
/// data1 data2 sum`, the sum being bytes 2–6 modulo 256. Pure: messages to bytes and back.
enum PelcoD {
    static let sync: UInt8 = 0xFF
    /// The fastest variable speed of either axis (0x40, pan's "turbo", is not used: its rate is
    /// the unit's own, not on the scale of the others).
    static let topSpeed = 0x3F

    /// Command 2's direction bits; none set is a stop.
    enum Direction: UInt8 {
        case right = 0x02, left = 0x04, up = 0x08, down = 0x10, zoomTele = 0x20, zoomWide = 0x40
    }

    /// Command 2 of the preset commands and the extended position queries and their answers.
    enum Extended: UInt8 {
        case setPreset = 0x03, clearPreset = 0x05, goToPreset = 0x07
        case queryPan = 0x51, queryTilt = 0x53
        case panPosition = 0x59, tiltPosition = 0x5B
    }

    struct Message: Equatable, Sendable {
        var address: UInt8
        var command1: UInt8 = 0
        var command2: UInt8
        var data1: UInt8 = 0
        var data2: UInt8 = 0

        var bytes: [UInt8] {
            let body = [address, command1, command2, data1, data2]
            return [PelcoD.sync] + body + [PelcoD.checksum(body)]
        }

        /// data1–data2 as one big-endian number (a position answer's hundredths of a degree).
        var word: Int { Int(data1) << 8 | Int(data2) }
    }

    static func checksum(_ body: [UInt8]) -> UInt8 { body.reduce(0, &+) }

    /// Pan and tilt at signed speed steps (−0x3F…0x3F): pan > 0 right, tilt > 0 up; both 0 is stop.
    static func drive(address: UInt8, pan: Int, tilt: Int) -> Message {
        var command2: UInt8 = 0
        if pan > 0 { command2 |= Direction.right.rawValue } else if pan < 0 { command2 |= Direction.left.rawValue }
        if tilt > 0 { command2 |= Direction.up.rawValue } else if tilt < 0 { command2 |= Direction.down.rawValue }
        return Message(address: address, command2: command2, data1: UInt8(min(topSpeed, abs(pan))), data2: UInt8(min(topSpeed, abs(tilt))))
    }

    static func stop(address: UInt8) -> Message { Message(address: address, command2: 0) }

    /// Set, clear or go to preset `number` (1–255).
    static func preset(_ command: Extended, number: UInt8, address: UInt8) -> Message {
        Message(address: address, command2: command.rawValue, data2: number)
    }

    static func query(_ command: Extended, address: UInt8) -> Message { Message(address: address, command2: command.rawValue) }

    /// Splits a byte stream into messages: each starts at a sync byte and is whole when its sum
    /// checks. A byte that starts nothing, or a sum that fails, is dropped and the search goes on
    /// from the next byte (an answer is never longer than seven bytes, so the buffer stays small).
    struct Decoder: Sendable {
        private var buffer: [UInt8] = []

        mutating func feed(_ bytes: [UInt8]) -> [Result<Message, FrameError>] {
            buffer += bytes
            var out: [Result<Message, FrameError>] = []
            while !buffer.isEmpty {
                guard buffer[0] == PelcoD.sync else {
                    let skipped = buffer.firstIndex(of: PelcoD.sync) ?? buffer.count
                    buffer.removeFirst(skipped)
                    out.append(.failure(.malformed))
                    continue
                }
                guard buffer.count >= 7 else { break }
                let body = Array(buffer[1...5])
                guard PelcoD.checksum(body) == buffer[6] else {
                    buffer.removeFirst()
                    out.append(.failure(.crc))
                    continue
                }
                buffer.removeFirst(7)
                out.append(.success(Message(address: body[0], command1: body[1], command2: body[2], data1: body[3], data2: body[4])))
            }
            return out
        }
    }
}
