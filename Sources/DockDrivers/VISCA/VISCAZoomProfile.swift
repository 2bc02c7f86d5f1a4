/// A VISCA camera's optical zoom, in a profile: the CAM_ZoomPosInq / CAM_Zoom Direct positions
/// and the magnification at each (1.0 at the wide end), and the zoom's speed at each CAM_Zoom
/// Tele/Wide variable speed. Magnification between two table points is interpolated linearly:
/// the lens's curve is far from linear in position (Sony's tables put 2× at a third of the
/// range), so the table holds a point per whole magnification where one is known.
public struct VISCAZoomProfile: Codable, Sendable, Equatable {
    /// Zoom positions, strictly increasing, from the wide end to the optical tele end.
    public var positions: [Int]
    /// The magnification at each position: 1.0 first, strictly increasing.
    public var magnifications: [Double]
    /// Position units per second at variable speed 0, 1, … 7 (`8x 01 04 07 2p FF`), increasing.
    public var speeds: [Double]
    /// What the controller may assume for the zoom's acceleration (magnification/s²).
    public var maxAccel: Double

    public init(positions: [Int], magnifications: [Double], speeds: [Double], maxAccel: Double) {
        self.positions = positions; self.magnifications = magnifications; self.speeds = speeds; self.maxAccel = maxAccel
    }

    public var maxMagnification: Double { magnifications.last ?? 1 }
    public var widePosition: Int { positions.first ?? 0 }
    public var telePosition: Int { positions.last ?? 0 }

    /// The segment of the table holding `position` (clamped to the ends).
    private func segment(position: Double) -> Int {
        var i = 0
        while i < positions.count - 2 && position > Double(positions[i + 1]) { i += 1 }
        return i
    }

    /// Magnification at a zoom position (clamped to the table's ends).
    public func magnification(position: Int) -> Double {
        let p = min(Double(telePosition), max(Double(widePosition), Double(position)))
        let i = segment(position: p)
        let p0 = Double(positions[i]), p1 = Double(positions[i + 1])
        return magnifications[i] + (magnifications[i + 1] - magnifications[i]) * (p - p0) / (p1 - p0)
    }

    /// The zoom position of a magnification (clamped to 1…the optical tele end), rounded.
    public func position(magnification: Double) -> Int {
        let m = min(maxMagnification, max(1, magnification.isFinite ? magnification : 1))
        var i = 0
        while i < magnifications.count - 2 && m > magnifications[i + 1] { i += 1 }
        let m0 = magnifications[i], m1 = magnifications[i + 1]
        let p0 = Double(positions[i]), p1 = Double(positions[i + 1])
        return Int((p0 + (p1 - p0) * (m - m0) / (m1 - m0)).rounded())
    }

    /// Magnification per position unit at `position` (the table segment's slope; toward the tele
    /// end when `position` is on a table point).
    public func slope(position: Int) -> Double {
        let i = segment(position: Double(position) + 0.5)
        return (magnifications[i + 1] - magnifications[i]) / Double(positions[i + 1] - positions[i])
    }

    /// The fastest the magnification changes: the top speed where the table is steepest.
    public var maxRate: Double {
        let steepest = (0..<(positions.count - 1)).map { slope(position: positions[$0]) }.max() ?? 0
        return (speeds.last ?? 0) * steepest
    }

    /// The variable speed (0…7) nearest `unitsPerSecond`, or nil when stopping is nearer.
    public func nearestSpeed(_ unitsPerSecond: Double) -> UInt8? {
        let wanted = abs(unitsPerSecond)
        guard wanted.isFinite else { return nil }
        var best: UInt8?, bestError = wanted
        for (i, s) in speeds.enumerated() where abs(s - wanted) < bestError {
            best = UInt8(i); bestError = abs(s - wanted)
        }
        return best
    }

    public func validate() throws(VISCAProfileError) {
        guard positions.count >= 2, positions.count == magnifications.count else {
            throw .invalid("zoom.positions and zoom.magnifications must have the same 2 or more entries")
        }
        guard zip(positions, positions.dropFirst()).allSatisfy({ $0 < $1 }), positions[0] >= 0, positions.last! <= 0xFFFF else {
            throw .invalid("zoom.positions must be increasing, within 0…0xFFFF (4 nibbles)")
        }
        guard magnifications[0] == 1, zip(magnifications, magnifications.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw .invalid("zoom.magnifications must start at 1 and increase")
        }
        guard speeds.count == 8, zip(speeds, speeds.dropFirst()).allSatisfy({ $0 < $1 }), speeds[0] > 0 else {
            throw .invalid("zoom.speeds must list 8 positive, increasing speeds (variable speed 0…7)")
        }
        guard maxAccel > 0 else { throw .invalid("zoom.maxAccel must be > 0") }
    }
}
