"""Pure pinhole geometry of a pan/tilt camera looking into a wider, fixed picture: where the virtual
camera's pixels come from in the wide picture, and where a point of the wide picture falls in the
virtual view. Plain Python (no numpy) so the tests run anywhere.

Conventions follow dockd's API: yaw positive turns the camera to the LEFT, pitch positive turns it
UP. Image coordinates: x to the right, y down, z forward (OpenCV's camera frame). Both cameras share
one optical centre (a stand rotates the camera about it, near enough), so the wide picture and the
virtual view are related by a rotation only: H = K_wide · R(yaw, pitch) · K_view⁻¹.
"""
import math


def intrinsics(width, height, horizontal_fov):
    """3×3 intrinsics of a pinhole camera with square pixels and its principal point in the middle."""
    f = (width / 2) / math.tan(horizontal_fov / 2)
    return [[f, 0.0, width / 2], [0.0, f, height / 2], [0.0, 0.0, 1.0]]


def vertical_fov(width, height, horizontal_fov):
    """The vertical field of view of square pixels: 2·atan(tan(h/2)·height/width)."""
    return 2 * math.atan(math.tan(horizontal_fov / 2) * height / width)


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def apply(m, v):
    return [sum(m[i][k] * v[k] for k in range(3)) for i in range(3)]


def inverse_intrinsics(k):
    f, cx, cy = k[0][0], k[0][2], k[1][2]
    fy = k[1][1]
    return [[1 / f, 0.0, -cx / f], [0.0, 1 / fy, -cy / fy], [0.0, 0.0, 1.0]]


def rotation(yaw, pitch):
    """Directions in the camera's frame → directions in the wide picture's frame, the camera turned
    by `yaw` (left positive) after being tilted by `pitch` (up positive): R = R_pan · R_tilt."""
    azimuth, elevation = -yaw, -pitch  # right positive, down positive, in image axes
    ca, sa = math.cos(azimuth), math.sin(azimuth)
    ce, se = math.cos(elevation), math.sin(elevation)
    pan = [[ca, 0.0, sa], [0.0, 1.0, 0.0], [-sa, 0.0, ca]]
    tilt = [[1.0, 0.0, 0.0], [0.0, ce, se], [0.0, -se, ce]]
    return matmul(pan, tilt)


class PanTiltView:
    """A virtual camera of `view_size` pixels and `view_hfov` turned inside a wide picture of
    `wide_size` pixels that spans `wide_hfov` (radians)."""

    def __init__(self, wide_size, wide_hfov, view_size, view_hfov):
        self.wide_size = wide_size
        self.view_size = view_size
        self.wide_k = intrinsics(wide_size[0], wide_size[1], wide_hfov)
        self.view_k = intrinsics(view_size[0], view_size[1], view_hfov)
        self.view_hfov = view_hfov
        self.view_vfov = vertical_fov(view_size[0], view_size[1], view_hfov)

    def view_to_wide(self, yaw, pitch):
        """The homography taking a view pixel to the wide picture's pixel it shows."""
        return matmul(matmul(self.wide_k, rotation(yaw, pitch)), inverse_intrinsics(self.view_k))

    def wide_point_in_view(self, x, y, yaw, pitch):
        """Where the wide picture's pixel (x, y) falls in the view, in view pixels; None when it is
        behind the camera."""
        ray = apply(inverse_intrinsics(self.wide_k), [x, y, 1.0])
        in_camera = apply(transpose(rotation(yaw, pitch)), ray)
        if in_camera[2] <= 1e-9:
            return None
        p = apply(self.view_k, in_camera)
        return p[0] / p[2], p[1] / p[2]

    def wide_point_angles(self, x, y):
        """The (yaw, pitch) that points the view's centre at the wide picture's pixel (x, y)."""
        rx, ry, rz = apply(inverse_intrinsics(self.wide_k), [x, y, 1.0])
        azimuth = math.atan2(rx, rz)
        elevation = math.atan2(ry, math.hypot(rx, rz))
        return -azimuth, -elevation
