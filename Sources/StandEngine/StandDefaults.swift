import DockTracking

/// What a stand does when no client controls it, and returns to when a client's lease ends:
/// DockKit's (system tracking on, automatic framing, the whole frame) unless an administrator
/// stored others (`defaults.set`, kept across restarts by the daemon).
public struct StandDefaults: Sendable, Equatable {
    public var systemTracking = true
    public var framing: FramingMode = .automatic
    public var regionOfInterest: NormalizedRect = .fullFrame

    public init(systemTracking: Bool = true, framing: FramingMode = .automatic, regionOfInterest: NormalizedRect = .fullFrame) {
        self.systemTracking = systemTracking; self.framing = framing; self.regionOfInterest = regionOfInterest
    }
}
