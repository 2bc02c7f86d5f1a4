import DockCore
import DockTracking

/// Every setting of system tracking in one value: what dockd ships, and what `dock-bench scenario`,
/// `dock-bench live` and `dock-mot` run (BENCHMARKS.md names it in each row).
public struct TrackingSettings: Sendable, Equatable {
    public var tracker: TrackerSettings
    public var selection: SelectionSettings
    public var framing: FramingSettings
    public var control: TrackingControlConfiguration
    /// Observations arrive at 10–30 Hz (DockKit's rule); faster or slower streams are refused.
    public var frameRates: ClosedRange<Double> = 10...30

    public init(tracker: TrackerSettings, selection: SelectionSettings, framing: FramingSettings, control: TrackingControlConfiguration) {
        self.tracker = tracker; self.selection = selection; self.framing = framing; self.control = control
    }

    /// dockd's settings.
    public static let shipped: TrackingSettings = {
        var framing = FramingSettings()
        // No lead room: the subject's face stays on the framing point while it walks (API.md).
        framing.leadTime = 0
        framing.maximumLead = 0
        return TrackingSettings(tracker: .shipped, selection: SelectionSettings(), framing: framing, control: .tuned)
    }()
}
