"""The frames dock-camera captured, relayed to a virtual camera (v4l2loopback's output side) that
other programs — a meeting app, OBS, a browser — open as their camera, since a UVC camera streams
to one program at a time. Optionally digitally framed: a crop around the subject dockd selected,
smoothed, kept within the frame and scaled back to the output size (`Framer`).

The device is driven through three ioctls packed here (VIDIOC_QUERYCAP, VIDIOC_S_FMT, VIDIOC_G_FMT on
V4L2_BUF_TYPE_VIDEO_OUTPUT) and one write() per frame, in YU12 (I420) or YUYV."""
import errno
import fcntl
import math
import os
import struct
import threading
import time
from collections import deque

try:  # Debian's python3-opencv and numpy; the framing's arithmetic (Framer.update) needs neither
    import cv2
    import numpy as np
except ImportError:
    cv2 = np = None

SETUP = ("set one up with: sudo apt install v4l2loopback-dkms; sudo modprobe v4l2loopback devices=1 "
         "video_nr=10 card_label=\"dockd camera\" exclusive_caps=1 (then --relay /dev/video10; "
         "camera/README.md, \"Relaying to other apps\")")


def _ioc(direction, number, size):
    return (direction << 30) | (size << 16) | (ord("V") << 8) | number


# struct v4l2_capability: 104 bytes; struct v4l2_format: 208 on 64-bit (u32 type, then a union of 200
# bytes aligned to 8 because struct v4l2_window holds pointers), 204 on 32-bit.
CAPABILITY = struct.Struct("16s32s32sIII12x")
FORMAT_SIZE = 208 if struct.calcsize("P") == 8 else 204
PIX_OFFSET = 8 if struct.calcsize("P") == 8 else 4
PIX = struct.Struct("12I")  # struct v4l2_pix_format: width … xfer_func
VIDIOC_QUERYCAP = _ioc(2, 0, CAPABILITY.size)
VIDIOC_G_FMT = _ioc(3, 4, FORMAT_SIZE)
VIDIOC_S_FMT = _ioc(3, 5, FORMAT_SIZE)
VIDIOC_STREAMON = _ioc(1, 18, 4)
BUF_TYPE_VIDEO_OUTPUT = 2
CAP_VIDEO_OUTPUT = 0x00000002
CAP_READWRITE = 0x01000000
CAP_DEVICE_CAPS = 0x80000000
FIELD_NONE = 1
COLORSPACE_SMPTE170M = 1  # BT.601, as OpenCV's BGR→I420 converts
FORMATS = ("YU12", "YUYV")


def fourcc(name):
    return struct.unpack("<I", name.encode())[0]


class RelayError(Exception):
    pass


def frame_bytes(pixel_format, width, height):
    return width * height * 3 // 2 if pixel_format == "YU12" else width * height * 2


def to_pixels(image, pixel_format):
    """A BGR image (even width and height) as the bytes of one YU12 or YUYV frame (BT.601, limited range)."""
    h, w = image.shape[:2]
    i420 = cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420)  # (h*3/2, w): Y, then U and V planes of (h/2, w/2)
    if pixel_format == "YU12":
        return i420
    y = i420[:h]
    chroma = i420[h:].reshape(2, h // 2, w // 2)
    yuyv = np.empty((h, w * 2), np.uint8)
    yuyv[:, 0::2] = y
    yuyv[:, 1::4] = np.repeat(chroma[0], 2, axis=0)
    yuyv[:, 3::4] = np.repeat(chroma[1], 2, axis=0)
    return yuyv


class V4L2Relay:
    """One v4l2loopback output device: the format is set from the first frame's size (made even);
    later frames of another size are scaled to it. Each write() is one whole frame."""

    def __init__(self, device, pixel_format="YU12"):
        if pixel_format not in FORMATS:
            raise RelayError(f"relay pixel format {pixel_format!r}: YU12 or YUYV")
        self.device = device
        self.pixel_format = pixel_format
        self.size = None
        try:
            self.fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            raise RelayError(f"{device}: no such device — v4l2loopback is not loaded or has no device "
                             f"there; {SETUP}") from None
        except PermissionError:
            raise RelayError(f"{device}: permission denied — dock-camera's user must be in the group "
                             f"'video' (ls -l {device})") from None
        except OSError as error:
            raise RelayError(f"{device}: cannot open it: {error.strerror}") from None
        try:
            self.driver, self.card, caps = self._query()
        except OSError as error:
            os.close(self.fd)
            raise RelayError(f"{device}: not a video4linux device ({error.strerror}); {SETUP}") from None
        if not caps & CAP_VIDEO_OUTPUT or not caps & CAP_READWRITE:
            os.close(self.fd)
            if self.driver == "v4l2 loopback":  # exclusive_caps=1: its output side is hidden while taken
                raise RelayError(f"{device}: v4l2loopback \"{self.card}\" offers no output side: another program "
                                 f"is writing to it (or one that wrote without VIDIOC_STREAMON, like ffmpeg, left "
                                 f"v4l2loopback 0.12 so: reload the module, sudo modprobe -r v4l2loopback)")
            raise RelayError(f"{device}: {self.driver} \"{self.card}\" is not a video output device that "
                             f"takes write() (v4l2loopback's side for a writer); {SETUP}")

    def _query(self):
        buf = bytearray(CAPABILITY.size)
        fcntl.ioctl(self.fd, VIDIOC_QUERYCAP, buf)
        driver, card, _bus, _version, caps, device_caps = CAPABILITY.unpack(buf)
        if caps & CAP_DEVICE_CAPS:
            caps = device_caps
        return driver.rstrip(b"\0").decode(errors="replace"), card.rstrip(b"\0").decode(errors="replace"), caps

    def _set_format(self, width, height):
        fmt = bytearray(FORMAT_SIZE)
        struct.pack_into("I", fmt, 0, BUF_TYPE_VIDEO_OUTPUT)
        bytesperline = width if self.pixel_format == "YU12" else width * 2
        PIX.pack_into(fmt, PIX_OFFSET, width, height, fourcc(self.pixel_format), FIELD_NONE, bytesperline,
                      frame_bytes(self.pixel_format, width, height), COLORSPACE_SMPTE170M, 0, 0, 0, 0, 0)
        try:
            fcntl.ioctl(self.fd, VIDIOC_S_FMT, fmt)
        except OSError as error:
            hint = " (another program is writing to it)" if error.errno == errno.EBUSY else ""
            raise RelayError(f"{self.device}: the format {self.pixel_format} {width}x{height} was refused: "
                             f"{error.strerror}{hint}") from None
        got_w, got_h, got_fourcc = PIX.unpack_from(fmt, PIX_OFFSET)[:3]
        if (got_w, got_h, got_fourcc) != (width, height, fourcc(self.pixel_format)):
            got = struct.pack("<I", got_fourcc).decode(errors="replace")
            raise RelayError(f"{self.device}: asked for {self.pixel_format} {width}x{height}, the device "
                             f"took {got} {got_w}x{got_h}")
        # A writer that says it streams: v4l2loopback (0.12) hides its output side once frames are
        # written (exclusive_caps=1) and shows it again when a writer that called STREAMON closes;
        # one that only wrote leaves the device a capture device until the module is reloaded.
        try:
            fcntl.ioctl(self.fd, VIDIOC_STREAMON, struct.pack("I", BUF_TYPE_VIDEO_OUTPUT))
        except OSError:
            pass  # a driver that streams output only through buffers: write() is what it takes
        self.size = (width, height)

    def write(self, image):
        """Writes one BGR frame; returns the CLOCK_MONOTONIC time the write returned."""
        h, w = image.shape[:2]
        if self.size is None:
            self._set_format(w - w % 2, h - h % 2)
        if (w, h) != self.size:
            if (w - w % 2, h - h % 2) == self.size:
                image = image[:self.size[1], :self.size[0]]
            else:
                image = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        data = to_pixels(np.ascontiguousarray(image), self.pixel_format)
        try:
            written = os.write(self.fd, data)
        except OSError as error:
            raise RelayError(f"{self.device}: writing a frame failed: {error.strerror}") from None
        if written != data.nbytes:
            raise RelayError(f"{self.device}: wrote {written} of a frame's {data.nbytes} bytes")
        return time.monotonic()

    @property
    def description(self):
        size = f" {self.size[0]}x{self.size[1]}" if self.size else ""
        return f"relay to {self.device} ({self.driver} \"{self.card}\"), {self.pixel_format}{size}"

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Framer:
    """Digital framing: a crop window of the output's aspect around the selected subject, which
    follows it smoothly. Without a `shot` the target window holds the subject's box with `margin`
    around it (its height × 1/fill); with one it holds the subject as dockd's shots do with a zoom
    lens (API.md, "Shots and zoom"): `head` — the face 35 % of the window's height, its centre at
    0.42 of the height; `upper_body` — the face 14 %, on the upper third; `full_body` — the body
    75 %, centred. A subject with no face measured is framed whole in a face shot. The window is at
    most `max_zoom` times smaller than the frame and never outside it; it moves toward the target
    with a critically damped first-order lag of `time_constant` seconds, and ignores target changes
    within `deadband` (a fraction of the window) so a detector's jitter of a few pixels does not
    shake the picture. Without a subject it eases back to the whole frame. Rectangles are
    normalized (0…1, upper-left origin), like tracking.state's."""

    # shot → (which box, the share of the window's height it fills, where its centre sits down the window)
    SHOTS = {"head": ("face_rect", 0.35, 0.42), "upper_body": ("face_rect", 0.14, 1 / 3), "full_body": ("rect", 0.75, 0.5)}

    def __init__(self, fill=0.6, max_zoom=3.0, time_constant=0.6, deadband=0.04, shot=None):
        if shot is not None and shot not in self.SHOTS:
            raise ValueError(f"unknown shot {shot!r} (one of {', '.join(self.SHOTS)})")
        self.fill = fill
        self.shot = shot
        self.max_zoom = max_zoom
        self.time_constant = time_constant
        self.deadband = deadband
        self.window = (0.0, 0.0, 1.0, 1.0)  # x, y, width, height
        self.target = self.window
        self.last = None

    def _target_for(self, subject):
        if subject is None or not subject.get("rect"):
            return (0.0, 0.0, 1.0, 1.0)
        box, fill, down = self.SHOTS.get(self.shot, ("rect", self.fill, 0.5))
        rect = subject.get(box)
        if rect is None:  # a face shot of a subject whose face is not measured: framed whole
            box, fill, down, rect = "rect", self.fill, 0.5, subject["rect"]
        # the window keeps the frame's aspect: a normalized window is as wide as it is high
        wanted = rect["height"] / fill if self.shot else max(rect["height"], rect["width"]) / fill
        size = min(1.0, max(1.0 / self.max_zoom, wanted))
        cx = rect["x"] + rect["width"] / 2
        cy = rect["y"] + rect["height"] / 2
        return self._inside(cx - size / 2, cy - size * down, size)

    @staticmethod
    def _inside(x, y, size):
        return (min(max(0.0, x), 1.0 - size), min(max(0.0, y), 1.0 - size), size, size)

    def update(self, subject, now):
        """The window for a frame at `now` (seconds) given the selected subject (tracking.state's
        entry: its `rect` and `face_rect`) or None."""
        target = self._target_for(subject)
        tx, ty, ts, _ = target
        cx, cy, cs, _ = self.target
        # A new target only when it differs from the held one by more than the deadband
        if (abs(tx + ts / 2 - (cx + cs / 2)) > self.deadband * cs or abs(ty + ts / 2 - (cy + cs / 2)) > self.deadband * cs
                or abs(ts - cs) > self.deadband * cs or subject is None):
            self.target = target
        dt = 0.0 if self.last is None else max(0.0, min(1.0, now - self.last))
        self.last = now
        a = 1.0 - math.exp(-dt / self.time_constant) if self.time_constant > 0 else 1.0
        wx, wy, ws, _ = self.window
        tx, ty, ts, _ = self.target
        ws += (ts - ws) * a
        wcx = wx + self.window[2] / 2 + (tx + ts / 2 - (wx + self.window[2] / 2)) * a
        wcy = wy + self.window[3] / 2 + (ty + ts / 2 - (wy + self.window[3] / 2)) * a
        self.window = self._inside(wcx - ws / 2, wcy - ws / 2, ws)
        return self.window

    @staticmethod
    def crop(image, window):
        """The window cut out of the image and scaled back to the image's size."""
        h, w = image.shape[:2]
        x, y, size, _ = window
        x0, y0 = int(round(x * w)), int(round(y * h))
        x1, y1 = min(w, int(round((x + size) * w))), min(h, int(round((y + size) * h)))
        if x1 - x0 >= w and y1 - y0 >= h:
            return image
        return cv2.resize(image[y0:y1, x0:x1], (w, h), interpolation=cv2.INTER_LINEAR)


def selected_subject(tracking):
    """The subject tracking.state marks selected (the most salient one when several), with a rect."""
    chosen = [s for s in (tracking or {}).get("subjects", []) if s.get("selected") and s.get("rect")]
    if not chosen:
        return None
    return min(chosen, key=lambda s: s.get("saliency_rank") or 99)


class RelayLoop(threading.Thread):
    """Captures every frame on a thread of its own and relays it at once, so the relay keeps the
    camera's rate whatever the detector takes; the detector loop takes the newest frame with
    `next()` (frames it is too slow for are relayed all the same, only not detected)."""

    def __init__(self, source, relay, framer=None, subject=lambda: None, keep=100000):
        super().__init__(name="relay", daemon=True)
        self.source, self.relay, self.framer, self.subject = source, relay, framer, subject
        self.cond = threading.Condition()
        self.latest = None
        self.taken = None
        self.done = False
        self.error = None
        self.stopping = threading.Event()
        self.records = deque(maxlen=keep)  # (index, capture_time, write started, write returned)
        self.relayed = 0
        self.cpu_seconds = self.wall_seconds = 0.0

    def run(self):
        self.started = time.monotonic()
        cpu = time.thread_time()
        try:
            while not self.stopping.is_set():
                frame = self.source.read()
                if frame is None:
                    break
                image = frame.full if frame.full is not None else frame.image
                if self.framer is not None:
                    image = Framer.crop(image, self.framer.update(self.subject(), frame.capture_time))
                started = time.monotonic()
                written = self.relay.write(image)
                self.records.append((frame.index, frame.capture_time, started, written))
                self.relayed += 1
                with self.cond:
                    self.latest = frame
                    self.cond.notify_all()
        except Exception as error:  # SourceError, RelayError: the main loop reports it
            self.error = error
        finally:
            self.cpu_seconds = time.thread_time() - cpu
            self.wall_seconds = time.monotonic() - self.started
            with self.cond:
                self.done = True
                self.cond.notify_all()

    def next(self, stopping=None):
        """The newest frame not yet taken (waiting for it); None once capture has ended (or `stopping` is set)."""
        with self.cond:
            while not self.done and (self.latest is None or self.latest is self.taken):
                if stopping is not None and stopping.is_set():
                    return None
                self.cond.wait(0.5)
            if self.latest is None or self.latest is self.taken:
                return None
            self.taken = self.latest
            return self.taken

    def stop(self):
        self.stopping.set()
        self.join(5)

    def summary(self):
        """Frames relayed; capture → written and write() times (p50/p95, ms); frames the capture
        missed (gaps between capture times longer than 1.5 frame periods, the period being the rate
        the source granted, or else the 10th percentile of the gaps, seen whenever the relay kept up)."""
        records = list(self.records)
        out = {"device": self.relay.device, "format": self.relay.pixel_format,
               "size": list(self.relay.size) if self.relay.size else None, "frames": self.relayed}
        if len(records) < 2:
            return out
        latency = np.array([w - c for _, c, _, w in records]) * 1000
        write = np.array([w - s for _, _, s, w in records]) * 1000
        gaps = np.diff([c for _, c, _, _ in records])
        interval = float(np.percentile(gaps, 10))
        if getattr(self.source, "fps", None):  # the rate the camera granted, when it says
            interval = min(interval, 1 / self.source.fps)
        missed = int(sum(max(0, round(g / interval) - 1) for g in gaps if g > 1.5 * interval)) if interval > 0 else 0
        out.update({"capture_to_written_ms": {"p50": round(float(np.percentile(latency, 50)), 2),
                                              "p95": round(float(np.percentile(latency, 95)), 2)},
                    "write_ms": {"p50": round(float(np.percentile(write, 50)), 2),
                                 "p95": round(float(np.percentile(write, 95)), 2)},
                    "frame_interval_ms": round(interval * 1000, 2), "capture_gaps": missed,
                    # this thread's CPU (capture, conversion, framing, write) per frame and as a share of a core
                    "thread_cpu_ms_per_frame": round(self.cpu_seconds / self.relayed * 1000, 2),
                    "thread_cpu_percent": round(100 * self.cpu_seconds / max(1e-9, self.wall_seconds), 1)})
        return out
