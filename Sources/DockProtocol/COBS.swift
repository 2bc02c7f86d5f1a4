/// Consistent Overhead Byte Stuffing: removes every 0x00 from a packet so that 0x00 can delimit
/// frames on a byte stream (PROTOCOL.md §1).
public enum COBS {
    /// Encodes `input`; the output contains no 0x00 and is at most `input.count + input.count / 254 + 1` long.
    public static func encode(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(input.count + input.count / 254 + 2)
        var codeIndex = 0
        output.append(0)  // placeholder for the first code byte
        var code: UInt8 = 1
        for (offset, byte) in input.enumerated() {
            if byte == 0 {
                output[codeIndex] = code
                codeIndex = output.count
                output.append(0)
                code = 1
            } else {
                output.append(byte)
                code += 1
                // A full block closes; a new one opens only if bytes follow (PROTOCOL.md §1).
                if code == 0xFF && offset + 1 < input.count {
                    output[codeIndex] = code
                    codeIndex = output.count
                    output.append(0)
                    code = 1
                }
            }
        }
        output[codeIndex] = code
        return output
    }

    /// Decodes one COBS block (without its delimiter). Returns nil when a code byte is 0x00 or
    /// points past the end: the block was corrupted or cut.
    public static func decode<C: Collection>(_ input: C) -> [UInt8]? where C.Element == UInt8, C.Index == Int {
        var output = [UInt8]()
        output.reserveCapacity(input.count)
        var index = input.startIndex
        while index < input.endIndex {
            let code = Int(input[index])
            if code == 0 || index + code > input.endIndex { return nil }
            output.append(contentsOf: input[(index + 1)..<(index + code)])
            index += code
            if code < 0xFF && index < input.endIndex { output.append(0) }
        }
        return output
    }
}
