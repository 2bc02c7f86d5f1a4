@testable import DockDrivers
import DockProtocol

// libFuzzer target for what reads an ONVIF camera's replies (Sources/DockDrivers/ONVIF): the strict
// XML reader, the SOAP body/fault reader and ONVIFCameraDriver.receive through its setup and beyond.
// Built by Fuzz/run.sh through SwiftPM (Package.swift, DOCKD_FUZZ=1) against DockDrivers.
//
// Input: byte 0 bit 0 picks the mode. Even: bytes 1... are one document for XMLReader and
// ONVIFSOAP.body. Odd: bytes 1... are the camera's replies, split at 0x00, each answered with
// HTTP 200 (or 500 where byte 0 bit 1 is set and the reply's index is odd) to whatever the driver
// asked, with a tick between.

func violation(_ what: String) -> Never {
    fatalError("ONVIFFuzz invariant violated: \(what)")
}

/// The requests in a driver's output (it must never write anything else).
func requests(_ bytes: [UInt8]) -> Int {
    guard !bytes.isEmpty else { return 0 }
    var decoder = ONVIFWire.Decoder()
    guard let frames = decoder.feed(bytes) else { violation("the driver wrote something that is not ONVIFWire") }
    for frame in frames { if case .reply = frame { violation("the driver wrote a reply") } }
    return frames.count
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if control & 1 == 0 {
        guard let document = try? XMLReader.parse(input) else { return 0 }
        var depth = 0, level = [document]
        while !level.isEmpty { depth += 1; level = level.flatMap(\.children) }
        if depth > XMLReader.maximumDepth { violation("a document \(depth) deep was read") }
        _ = ONVIFSOAP.body(of: document)
        return 0
    }
    var driver = ONVIFCameraDriver(settings: .init())
    var time = 0.0
    var outstanding = requests(driver.start(at: time))
    if outstanding != 1 { violation("start sent \(outstanding) requests") }
    for (index, reply) in input.split(separator: 0, omittingEmptySubsequences: false).enumerated() {
        let status = control & 2 != 0 && index % 2 == 1 ? 500 : 200
        if outstanding == 1 {
            _ = driver.receive(ONVIFWire.encode(.response(status: status, wallClock: 1_700_000_000, body: Array(reply))), at: time)
            outstanding = 0
        }
        time += 0.05
        outstanding += requests(driver.tick(at: time).bytes)
        if index % 3 == 2 {
            outstanding += requests(driver.send(.velocity([AxisValue(.yaw, Float(reply.count % 7) - 3)]), at: time))
        }
        if outstanding > 1 { violation("\(outstanding) requests in flight") }
    }
    return 0
}
