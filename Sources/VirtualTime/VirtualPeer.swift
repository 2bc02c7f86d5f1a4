import DockSim

/// What is at the other end of a driver's link in virtual time: a simulated stand or camera that
/// takes the host's bytes, runs on its own clock, and answers with bytes. The simulated stand
/// speaks the native protocol; a test's emulated VISCA camera or V4L2 device adapter speaks its
/// driver's. Times are µs on the peer's clock, which starts at 0 when the host does.
public protocol VirtualPeer {
    /// Bytes from the host, at `micros`; returns what the peer answers at once.
    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8]
    /// Runs the peer to `micros`; returns what it sent meanwhile.
    mutating func advance(toMicros micros: UInt64) -> [UInt8]
    /// The link is gone (the host hung up or the cable was pulled).
    mutating func endSession(atMicros micros: UInt64)
}

extension SimulatedStand: VirtualPeer {}
