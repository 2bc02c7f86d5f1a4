// How the stream targets cut their input into reads, shared so that every decoder is fed the
// same ways: a decoder must not care where one read ends and the next begins.

/// A tiny deterministic generator for chunk sizes, seeded from the control byte.
package struct SplitMix {
    package var state: UInt64
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Splits `stream` into consecutive chunks as chosen by `control`, calling `body` for each.
package func forEachChunk(of stream: ArraySlice<UInt8>, control: UInt8, _ body: (ArraySlice<UInt8>) -> Void) {
    var start = stream.startIndex
    var rng = SplitMix(state: UInt64(control) &* 0x1234_5678_9ABC_DEF1)
    while start < stream.endIndex {
        let size: Int
        switch control & 3 {
        case 0: size = stream.count                          // all at once
        case 1: size = Int(control >> 2) + 1                 // fixed size 1...64
        case 2: size = Int(rng.next() % 300)                 // varying, including empty chunks
        default: size = 1                                    // byte at a time
        }
        let end = min(stream.endIndex, start + size)
        body(stream[start..<end])
        start = end
    }
    if control & 3 == 2 { body(stream[stream.endIndex...]) }  // an empty feed at the end
}
