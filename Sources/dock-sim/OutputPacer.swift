/// Holds the stand's outgoing bytes and releases them at a serial line's byte rate, like a UART's
/// transmit FIFO. The FIFO is bounded: when the stand produces more than the line carries (100 Hz
/// feedback and IMU on a 9600-baud link), whole frames that do not fit are dropped, as firmware
/// with a full TX buffer would drop them; the host then sees sequence gaps, not an ever-growing
/// delay. Unpaced (`bytesPerSecond == nil`) it passes everything straight through.
struct OutputPacer {
    let bytesPerSecond: Double?
    let capacity: Int
    private var queue: [UInt8] = []
    private var head = 0
    /// Bytes the line could have carried since the last take and has not yet.
    private var credit = 0.0
    private var lastMicros: UInt64?
    /// Frames dropped because the FIFO was full; the engine reports and resets it.
    var droppedFrames = 0

    /// - Parameter baud: 8N1 line rate; a byte takes 10 bit times.
    init(baud: Int?) {
        bytesPerSecond = baud.map { Double($0) / 10 }
        // A tenth of a second of line time, but at least two maximal frames (259 bytes each).
        capacity = bytesPerSecond.map { max(2 * 259, Int($0 / 10)) } ?? Int.max
    }

    var pending: Int { queue.count - head }

    mutating func enqueue(_ bytes: [UInt8]) {
        guard bytesPerSecond != nil else { queue.append(contentsOf: bytes); return }
        // Frames end at 0x00; keep or drop each as a whole so the stream stays decodable.
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = (bytes[start...].firstIndex(of: 0) ?? bytes.endIndex - 1) + 1
            if pending + (end - start) <= capacity {
                queue.append(contentsOf: bytes[start..<end])
            } else {
                droppedFrames += 1
            }
            start = end
        }
    }

    /// The bytes the line has carried by `now` (microseconds).
    mutating func take(atMicros now: UInt64) -> [UInt8] {
        defer { lastMicros = now }
        guard let rate = bytesPerSecond else { return takeAll() }
        let elapsed = lastMicros.map { Double(now &- $0) / 1e6 } ?? 0
        guard pending > 0 else {
            // An idle line banks no time: the next frame starts now and goes at the line rate.
            credit = 0
            return []
        }
        credit += elapsed * rate
        let count = min(pending, Int(credit))
        credit -= Double(count)
        let out = Array(queue[head..<(head + count)])
        head += count
        if head == queue.count {
            queue.removeAll(keepingCapacity: true); head = 0
        } else if head > 4096 {
            queue.removeFirst(head); head = 0
        }
        return out
    }

    /// Forgets everything queued: the link went down, and bytes in a dead FIFO are lost.
    mutating func reset() {
        queue.removeAll(keepingCapacity: true); head = 0; credit = 0
    }

    private mutating func takeAll() -> [UInt8] {
        defer { queue.removeAll(keepingCapacity: true); head = 0 }
        return Array(queue[head...])
    }
}
