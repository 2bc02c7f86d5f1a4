import DockDrivers
import FuzzDriverChecks

// libFuzzer target for every driver of DriverTable, read from the table: a driver listed there is
// fuzzed here with no change to this file (the protocol targets beside it check their wires more
// deeply against models of their own). Each driver is made with its options' defaults and fed what
// its link would carry — a stream of bytes for the byte-stream drivers, the private wire of the
// device adapters (ioctl answers, HTTP replies) for the others — and held to what the StandDriver
// contract says of any driver (FuzzDriverChecks): no trap, finite reports and deadlines, one
// `.ready` at most, counters that never go negative.
//
// Input: byte 0 picks the driver (its index in the table, modulo the table's length), byte 1 the
// chunking (Chunking.swift) and the commands sent once the driver is ready; bytes 2... what the
// device sends.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let definition = DriverTable.all[Int(data[0]) % DriverTable.all.count]
    let driver: any StandDriver
    do {
        driver = try definition.make([:], heartbeatTimeoutMs: 500)
    } catch {
        fatalError("DriverFuzz: driver \(definition.name) refuses its own defaults: \(error)")
    }
    exerciseAnyDriver(driver, stream: Array(UnsafeBufferPointer(start: data + 2, count: size - 2))[...], control: data[1])
    return 0
}
