"""Where frames come from: a V4L2 device, a video file played at its own rate, or a virtual pan/tilt
camera cut out of a wide video at the angle the stand reports. Each `read()` returns the next Frame
(None at the end of a file that does not loop)."""
import math
import os
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from .geometry import PanTiltView


@dataclass
class Frame:
    image: np.ndarray      # BGR, the detector's size
    capture_time: float    # CLOCK_MONOTONIC seconds of the capture
    index: int             # frames delivered so far
    dropped: int = 0       # frames the camera produced that were skipped to keep up (so far)
    view: dict = field(default_factory=dict)  # virtual source only: yaw, pitch, video_frame
    full: np.ndarray = None  # V4L2: the frame as captured, when `image` was scaled (what --relay writes)


class SourceError(Exception):
    pass


def parse_size(text):
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SourceError(f"size {text!r} is not WIDTHxHEIGHT") from None
    if width < 64 or height < 64:
        raise SourceError(f"size {text!r} is too small (at least 64x64)")
    return width, height


class V4L2Source:
    """A /dev/videoN device through OpenCV's V4L2 backend: asks for the pixel format (MJPG or YUYV),
    size and rate, and reports what the driver granted. The capture time is the V4L2 buffer's
    timestamp (CLOCK_MONOTONIC for drivers that set V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, which OpenCV
    exposes as CAP_PROP_POS_MSEC); a timestamp that is not a recent monotonic time is replaced by
    the time the frame was dequeued."""

    def __init__(self, device, size, fps, pixel_format, buffers=1):
        if not os.path.exists(device):
            raise SourceError(f"{device}: no such device")
        self.capture = cv2.VideoCapture(device, cv2.CAP_V4L2)
        if not self.capture.isOpened():
            raise SourceError(f"{device}: cannot open it as a V4L2 capture device")
        self.capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*pixel_format))
        self.capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
        self.capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        self.capture.set(cv2.CAP_PROP_FPS, fps)
        # the newest frame, not a queue of old ones; the relay, which takes every frame as it comes,
        # asks for a few so that a frame arriving while it converts the last is queued, not dropped
        self.capture.set(cv2.CAP_PROP_BUFFERSIZE, buffers)
        fourcc = int(self.capture.get(cv2.CAP_PROP_FOURCC))
        granted = "".join(chr((fourcc >> (8 * i)) & 0xFF) for i in range(4))
        self.size = size
        self.fps = self.capture.get(cv2.CAP_PROP_FPS) or None
        self.description = (f"{device}: {granted} {int(self.capture.get(cv2.CAP_PROP_FRAME_WIDTH))}x"
                            f"{int(self.capture.get(cv2.CAP_PROP_FRAME_HEIGHT))} at "
                            f"{self.capture.get(cv2.CAP_PROP_FPS):g} fps")
        self.index = 0

    def read(self):
        if not self.capture.grab():
            raise SourceError("the V4L2 device stopped delivering frames")
        dequeued = time.monotonic()
        ok, image = self.capture.retrieve()
        if not ok:
            raise SourceError("the V4L2 device delivered a frame that could not be decoded")
        stamp = self.capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        capture_time = stamp if dequeued - 1.0 < stamp <= dequeued else dequeued
        full = None
        if image.shape[1] != self.size[0] or image.shape[0] != self.size[1]:
            full = image
            image = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        self.index += 1
        return Frame(image, capture_time, self.index, full=full)

    def close(self):
        self.capture.release()


class FileSource:
    """A video file delivered at its own frame rate, as a camera would (frames the loop is too slow
    to take are skipped, like a camera's). The capture time is when the frame is due."""

    def __init__(self, path, size, loop):
        self.path = path
        self.size = size
        self.loop = loop
        self.capture = self._open()
        fps = self.capture.get(cv2.CAP_PROP_FPS)
        self.fps = fps if fps and 1 <= fps <= 240 else 25.0
        self.description = (f"{path}: {int(self.capture.get(cv2.CAP_PROP_FRAME_WIDTH))}x"
                            f"{int(self.capture.get(cv2.CAP_PROP_FRAME_HEIGHT))} at {self.fps:g} fps, scaled to "
                            f"{size[0]}x{size[1]}")
        self.start = None
        self.decoded = 0   # frames decoded since the start (across loops)
        self.index = 0
        self.dropped = 0

    def _open(self):
        capture = cv2.VideoCapture(self.path)
        if not capture.isOpened():
            raise SourceError(f"{self.path}: cannot open it as a video")
        return capture

    def _decode(self):
        ok, image = self.capture.read()
        if not ok and self.loop and self.decoded > 0:
            self.capture.release()
            self.capture = self._open()
            ok, image = self.capture.read()
        if not ok:
            return None
        self.decoded += 1
        return image

    def read(self):
        now = time.monotonic()
        if self.start is None:
            self.start = now
        due = self.start + self.decoded / self.fps
        while due + 1 / self.fps < now:  # late: skip what the camera already replaced
            if self._decode() is None:
                return None
            self.dropped += 1
            due = self.start + self.decoded / self.fps
        if due > now:
            time.sleep(due - now)
        image = self._decode()
        if image is None:
            return None
        self.index += 1
        image = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        return Frame(image, due, self.index, self.dropped)

    def close(self):
        self.capture.release()


class VirtualPanTiltSource:
    """A pan/tilt camera inside a wide video: each frame is the view of a pinhole camera of
    `view_hfov` turned to where the stand pointed at the frame's capture time (from dockd's
    motion stream: `pose.at(t)`), cut out of the video frame of that time, which spans `wide_hfov`.
    Outside the video the view is black. A frame captured at t is delivered at t + latency, as a real
    camera's pipeline delivers it late; it carries t as its capture time."""

    def __init__(self, path, size, fps, view_hfov, wide_hfov, latency, pose, loop=True):
        self.video = FileSource(path, size, loop)  # only for decoding; paced here
        width = int(self.video.capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(self.video.capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        if wide_hfov <= view_hfov:
            raise SourceError("the wide video's field of view must be wider than the camera's")
        self.geometry = PanTiltView((width, height), wide_hfov, size, view_hfov)
        self.size = size
        self.fps = fps
        self.latency = latency
        self.pose = pose
        self.loop = loop
        self.video_fps = self.video.fps
        self.frames_in_video = int(self.video.capture.get(cv2.CAP_PROP_FRAME_COUNT)) or None
        self.description = (f"virtual pan/tilt camera: {size[0]}x{size[1]} at {fps:g} fps, "
                            f"{math.degrees(view_hfov):.0f}° wide, inside {path} ({width}x{height}, "
                            f"{self.video_fps:g} fps, taken as {math.degrees(wide_hfov):.0f}° wide), "
                            f"capture latency {latency * 1000:.0f} ms")
        self.start = None
        self.tick = 0
        self.index = 0
        self.dropped = 0
        self.video_image = None
        self.video_index = -1  # index of the decoded video frame held in video_image

    def _video_frame(self, number):
        """The video's frame `number` (counting on across loops), decoding forward as needed."""
        while self.video_index < number:
            image = self.video._decode()
            if image is None:
                return None
            self.video_image = image
            self.video_index += 1
        return self.video_image

    def read(self):
        now = time.monotonic()
        if self.start is None:
            self.start = now
        delivery = self.start + self.tick / self.fps + self.latency
        while delivery + 1 / self.fps < now:
            self.tick += 1
            self.dropped += 1
            delivery = self.start + self.tick / self.fps + self.latency
        capture_time = delivery - self.latency
        number = int((capture_time - self.start) * self.video_fps)
        if not self.loop and self.frames_in_video and number >= self.frames_in_video:
            return None
        wide = self._video_frame(number)
        if wide is None:
            return None
        wait = delivery - time.monotonic()  # read once: read twice, the second can be past it
        if wait > 0:
            time.sleep(wait)
        yaw, pitch = self.pose.at(capture_time)
        homography = np.array(self.geometry.view_to_wide(yaw, pitch))
        image = cv2.warpPerspective(wide, homography, self.size,
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        self.tick += 1
        self.index += 1
        frames = self.frames_in_video or 1
        return Frame(image, capture_time, self.index, self.dropped,
                     view={"yaw": yaw, "pitch": pitch, "video_frame": number % frames})

    def close(self):
        self.video.close()


def open_source(spec, size, fps, pixel_format, view_hfov, wide_hfov, latency, pose, loop, buffers=1):
    """`/dev/videoN`, `virtual:VIDEO` or a video file path."""
    if spec.startswith("virtual:"):
        path = spec[len("virtual:"):]
        if not os.path.isfile(path):
            raise SourceError(f"{path}: no such video for the virtual camera")
        return VirtualPanTiltSource(path, size, fps, view_hfov, wide_hfov, latency, pose, loop)
    if spec.startswith("/dev/video"):
        return V4L2Source(spec, size, fps, pixel_format, buffers)
    if not os.path.isfile(spec):
        raise SourceError(f"{spec}: no such file or device (give /dev/videoN, a video file or virtual:VIDEO)")
    return FileSource(spec, size, loop)
