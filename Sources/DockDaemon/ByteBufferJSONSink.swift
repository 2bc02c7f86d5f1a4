import DockJSON
import NIOCore

/// The daemon writes its replies and notifications straight into NIO's buffers.
extension ByteBuffer: JSONSink {
    @inlinable public mutating func jsonByte(_ byte: UInt8) { writeInteger(byte) }
    @inlinable public mutating func jsonBytes(_ bytes: UnsafeBufferPointer<UInt8>) { writeBytes(UnsafeRawBufferPointer(bytes)) }
}
