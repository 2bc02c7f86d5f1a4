#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the camera pointed when a frame was captured, in the stand's angular frame
/// (x = azimuth to the right, y = elevation downward, radians; the caller maps motor signs to this).
public struct Aim: Sendable, Hashable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A pinhole camera, enough to turn normalized image positions into angles in the stand's frame and
/// back. Pan and tilt are composed additively, which is exact on the optical axis and within a small
/// fraction of a degree across a phone camera's field at the tilts a stand uses; the tracker only needs
/// consistency between frames, not survey accuracy.
public struct CameraModel: Sendable, Hashable {
    /// Full horizontal and vertical fields of view, radians.
    public let horizontalFieldOfView: Double
    public let verticalFieldOfView: Double
    /// tan(field of view / 2), kept because every conversion needs it.
    private let horizontalHalfTangent: Double
    private let verticalHalfTangent: Double

    public init(horizontalFieldOfView: Double, verticalFieldOfView: Double) {
        self.horizontalFieldOfView = horizontalFieldOfView
        self.verticalFieldOfView = verticalFieldOfView
        horizontalHalfTangent = tan(horizontalFieldOfView / 2)
        verticalHalfTangent = tan(verticalFieldOfView / 2)
    }

    /// From 3×3 intrinsics (focal lengths in pixels) and the reference image size they refer to.
    public init(focalLengthX: Double, focalLengthY: Double, imageWidth: Double, imageHeight: Double) {
        self.init(horizontalFieldOfView: 2 * atan(imageWidth / (2 * focalLengthX)),
                  verticalFieldOfView: 2 * atan(imageHeight / (2 * focalLengthY)))
    }

    /// The same camera zoomed by `factor` (an optical zoom or a crop): a factor of 2 doubles every
    /// subject's size in the image, i.e. halves tan(fov/2).
    public func zoomed(by factor: Double) -> CameraModel {
        CameraModel(horizontalFieldOfView: 2 * atan(horizontalHalfTangent / factor),
                    verticalFieldOfView: 2 * atan(verticalHalfTangent / factor))
    }

    /// Angle off the optical axis of a normalized coordinate (0…1 across the field).
    private func angle(normalized: Double, halfTangent: Double) -> Double {
        atan((normalized - 0.5) * 2 * halfTangent)
    }

    /// Beyond ±90° off the axis a point is behind the camera and tan() would fold it back in front:
    /// such points are placed at the edge of what can be seen (far outside the image, same side).
    private func normalized(angle: Double, halfTangent: Double) -> Double {
        let limit = Double.pi / 2 - 0.01
        return 0.5 + tan(min(max(angle, -limit), limit)) / (2 * halfTangent)
    }

    /// The angular position in the stand's frame of a normalized image point (upper-left origin).
    public func angularPoint(normalizedX: Double, normalizedY: Double, aim: Aim) -> (x: Double, y: Double) {
        (aim.x + angle(normalized: normalizedX, halfTangent: horizontalHalfTangent),
         aim.y + angle(normalized: normalizedY, halfTangent: verticalHalfTangent))
    }

    /// The angular box of a normalized detection rect seen with the camera at `aim`.
    public func angularBox(of rect: NormalizedRect, aim: Aim) -> Box {
        let leftX = aim.x + angle(normalized: rect.x, halfTangent: horizontalHalfTangent)
        let rightX = aim.x + angle(normalized: rect.maxX, halfTangent: horizontalHalfTangent)
        let topY = aim.y + angle(normalized: rect.y, halfTangent: verticalHalfTangent)
        let bottomY = aim.y + angle(normalized: rect.maxY, halfTangent: verticalHalfTangent)
        return Box(left: leftX, top: topY, width: rightX - leftX, height: bottomY - topY)
    }

    /// Where an angular box falls in the image when the camera is at `aim`.
    public func normalizedRect(of box: Box, aim: Aim) -> NormalizedRect {
        let leftX = normalized(angle: box.left - aim.x, halfTangent: horizontalHalfTangent)
        let rightX = normalized(angle: box.right - aim.x, halfTangent: horizontalHalfTangent)
        let topY = normalized(angle: box.top - aim.y, halfTangent: verticalHalfTangent)
        let bottomY = normalized(angle: box.bottom - aim.y, halfTangent: verticalHalfTangent)
        return NormalizedRect(x: leftX, y: topY, width: rightX - leftX, height: bottomY - topY)
    }

    /// The aim that puts the angular point (x, y) at the normalized image position (u, v).
    public func aim(placing x: Double, _ y: Double, atNormalizedX u: Double, normalizedY v: Double) -> Aim {
        Aim(x: x - angle(normalized: u, halfTangent: horizontalHalfTangent),
            y: y - angle(normalized: v, halfTangent: verticalHalfTangent))
    }
}
