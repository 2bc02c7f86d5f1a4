"""The relay's cost outside the VM, where there is no /dev/video*: dock-camera's relay thread
(camera/dock_camera/relay.py's RelayLoop, unchanged) fed by a synthetic 30 frames/s YUYV camera and
writing into a pipe instead of v4l2loopback, read by another process as an app would read the
loopback. Everything the thread does per frame is the real code: the capture's YUYV→BGR conversion
(what OpenCV's V4L2 backend does), the digital framing (--crop), BGR→YU12, one write() of the whole
frame. A pipe write copies the frame into the kernel as v4l2loopback's write() does; the reader's
read() copies it out again, which a loopback reader's mmap does not: an upper bound.

dock-camera's main thread runs the detector meanwhile (HOG, as dock-camera would), and the process
is pinned to one core (--cores 1) as the target asks. The camera drops a frame when the relay has
not taken it within 4 frame periods (dock-camera asks for 4 capture buffers when relaying).

    /usr/bin/python3 camera/bench/bench_relay.py --size 1280x720 --seconds 20 [--crop] [--detector hog|none]
Prints a JSON summary: latency from capture to the reader's read (p50/p95, ms and frames), frames
dropped, CPU of the relay thread."""
import argparse
import json
import math
import os
import struct
import sys
import threading
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dock_camera import detectors  # noqa: E402
from dock_camera.relay import Framer, RelayLoop, frame_bytes, to_pixels  # noqa: E402
from dock_camera.sources import Frame  # noqa: E402

F_SETPIPE_SZ = 1031


class SyntheticCamera:
    """YUYV frames at `fps` with a square moving across; capture time = when the frame is due."""

    def __init__(self, size, fps, detect_size, seconds, queue=4):
        self.size, self.fps, self.detect_size, self.queue = size, fps, detect_size, queue
        w, h = size
        self.frames = []
        for k in range(8):  # a few precomputed pictures, the square at different places
            bgr = np.full((h, w, 3), 128, np.uint8)
            x = (k * w // 8)
            cv2.rectangle(bgr, (x, h // 3), (x + w // 10, h // 3 + w // 10), (255, 255, 255), -1)
            i420 = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)
            yuyv = np.empty((h, w * 2), np.uint8)
            yuyv[:, 0::2] = i420[:h]
            chroma = i420[h:].reshape(2, h // 2, w // 2)
            yuyv[:, 1::4] = np.repeat(chroma[0], 2, axis=0)
            yuyv[:, 3::4] = np.repeat(chroma[1], 2, axis=0)
            self.frames.append(yuyv.reshape(h, w, 2))
        self.start = time.monotonic() + 0.2
        self.end = self.start + seconds
        self.n = 0
        self.index = 0
        self.dropped = 0

    def read(self):
        due = self.start + self.n / self.fps
        now = time.monotonic()
        while now - due > self.queue / self.fps:  # its buffers were full: the camera dropped it
            self.n += 1
            self.dropped += 1
            due = self.start + self.n / self.fps
        if due >= self.end:
            return None
        if due > now:
            time.sleep(due - now)
        yuyv = self.frames[self.n % len(self.frames)]
        self.n += 1
        bgr = cv2.cvtColor(yuyv, cv2.COLOR_YUV2BGR_YUYV)  # what OpenCV's V4L2 capture hands over
        image = cv2.resize(bgr, self.detect_size, interpolation=cv2.INTER_AREA)
        self.index += 1
        return Frame(image, due, self.index, full=bgr)


class PipeRelay:
    """V4L2Relay's write() into a pipe: the same conversion, one write() of a whole frame."""

    def __init__(self, fd, size, pixel_format):
        self.fd, self.size, self.pixel_format, self.device = fd, size, pixel_format, "pipe"

    def write(self, image):
        data = memoryview(to_pixels(np.ascontiguousarray(image), self.pixel_format)).cast("B")
        while data:
            data = data[os.write(self.fd, data):]
        return time.monotonic()


def reader(fd, frame_size, out_fd):
    """Another process: reads whole frames, notes when each was complete."""
    times = []
    while True:
        got = 0
        while got < frame_size:
            chunk = os.read(fd, min(1 << 20, frame_size - got))
            if not chunk:
                os.write(out_fd, json.dumps(times).encode())
                os._exit(0)
            got += len(chunk)
        times.append(time.monotonic())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="1280x720")
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--format", default="YU12", choices=("YU12", "YUYV"))
    p.add_argument("--crop", action="store_true", help="digital framing on: a subject box moving slowly")
    p.add_argument("--detector", default="hog", help="run in the main thread meanwhile (none: no detector)")
    p.add_argument("--cores", type=int, default=1, help="pin dock-camera's process to this many cores")
    args = p.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    frame_size = frame_bytes(args.format, *size)

    r, w = os.pipe()
    try:
        fcntl_size = 1 << 20
        import fcntl
        fcntl.fcntl(w, F_SETPIPE_SZ, fcntl_size)
    except OSError:
        pass
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        reader(r, frame_size, res_w)
    os.close(r)
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:args.cores]))

    camera = SyntheticCamera(size, args.fps, (640, 480), args.seconds)
    subject_t0 = time.monotonic()

    def subject():  # a person walking slowly across the frame
        t = time.monotonic() - subject_t0
        return {"x": 0.3 + 0.2 * math.sin(t / 2), "y": 0.3, "width": 0.12, "height": 0.35}

    loop = RelayLoop(camera, PipeRelay(w, size, args.format), Framer() if args.crop else None, subject)
    detector = None if args.detector == "none" else detectors.make(args.detector)
    cpu0 = time.process_time()
    loop.start()
    detected = 0
    while True:
        frame = loop.next()
        if frame is None:
            break
        if detector:
            detector.detect(frame.image)
            detected += 1
    loop.join()
    process_cpu = time.process_time() - cpu0
    os.close(w)
    os.waitpid(pid, 0)
    chunks = b""
    while True:
        c = os.read(res_r, 1 << 20)
        if not c:
            break
        chunks += c
        if chunks.endswith(b"]"):
            break
    read_times = json.loads(chunks)
    records = list(loop.records)
    lat = sorted(t - rec[1] for t, rec in zip(read_times, records))
    frame = 1 / args.fps
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    summary = {"size": list(size), "format": args.format, "crop": args.crop, "detector": args.detector,
               "cores": args.cores, "seconds": args.seconds, "frames_due": camera.n,
               "relayed": loop.relayed, "read_by_the_other_process": len(read_times),
               "dropped_by_the_camera": camera.dropped, "detected": detected,
               "capture_to_read_ms": {"p50": round(pct(0.5) * 1000, 2), "p95": round(pct(0.95) * 1000, 2)},
               "capture_to_read_frames": {"p50": round(pct(0.5) / frame, 2), "p95": round(pct(0.95) / frame, 2)},
               "relay": loop.summary(), "process_cpu_percent": round(100 * process_cpu / args.seconds, 1)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
