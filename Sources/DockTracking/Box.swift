/// An axis-aligned box in the tracker's measurement space, stored by center and size.
///
/// The space is generic so one tracker serves both uses: in dockd it is angular (radians, x = azimuth
/// growing to the right, y = elevation growing downward, both in the stand's frame, so the stand's own
/// motion never looks like subject motion); for MOT benchmarks it is pixels (x right, y down).
/// Every tracker tolerance is relative to box size or expressed in these units' own terms, which is
/// what lets the same parameters work in both spaces.
public struct Box: Sendable, Hashable {
    public var centerX: Double
    public var centerY: Double
    public var width: Double
    public var height: Double

    public init(centerX: Double, centerY: Double, width: Double, height: Double) {
        self.centerX = centerX
        self.centerY = centerY
        self.width = width
        self.height = height
    }

    /// From the top-left corner and size (the MOTChallenge layout).
    public init(left: Double, top: Double, width: Double, height: Double) {
        self.init(centerX: left + width / 2, centerY: top + height / 2, width: width, height: height)
    }

    public var left: Double { centerX - width / 2 }
    public var right: Double { centerX + width / 2 }
    public var top: Double { centerY - height / 2 }
    public var bottom: Double { centerY + height / 2 }
    public var area: Double { max(width, 0) * max(height, 0) }

    public func contains(x: Double, y: Double) -> Bool {
        x >= left && x <= right && y >= top && y <= bottom
    }

    /// Area of the overlap, 0 when disjoint.
    public func intersectionArea(_ other: Box) -> Double {
        let overlapWidth = min(right, other.right) - max(left, other.left)
        let overlapHeight = min(bottom, other.bottom) - max(top, other.top)
        guard overlapWidth > 0, overlapHeight > 0 else { return 0 }
        return overlapWidth * overlapHeight
    }

    /// Intersection over union, 0 when disjoint.
    public func intersectionOverUnion(_ other: Box) -> Double {
        let intersection = intersectionArea(other)
        guard intersection > 0 else { return 0 }
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// The smallest box holding both.
    public func union(_ other: Box) -> Box {
        let newLeft = min(left, other.left), newRight = max(right, other.right)
        let newTop = min(top, other.top), newBottom = max(bottom, other.bottom)
        return Box(left: newLeft, top: newTop, width: newRight - newLeft, height: newBottom - newTop)
    }
}

/// A rectangle in normalized image coordinates, origin at the upper-left, as DockKit's region of
/// interest and select-at-point use. (Vision's lower-left-origin rects must be flipped by the caller.)
public struct NormalizedRect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let fullFrame = NormalizedRect(x: 0, y: 0, width: 1, height: 1)

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
}
