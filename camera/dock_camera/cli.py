"""dock-camera: frames from a camera, a file or a virtual pan/tilt camera → face, body and object detections
→ dockd's `tracking.observe`, with the capture time, the camera's field of view and orientation."""
import json
import math
import os
import signal
import sys
import threading
import time

from . import detectors
from .arguments import parse_args
from .preview import Preview, status_line
from .keypoints import normalized
from .relay import Framer, RelayError, RelayLoop, V4L2Relay, selected_subject
from .rpc import DockdLink, NotConnected
from .stand_choice import stand_for_source
from .sources import SourceError, open_source, parse_size
from .stand_pose import StandPose
from .pace import DetectorPace
from .stats import RunStats

MAX_RATE = 30.0  # dockd refuses observations faster than 30 Hz


class Shared:
    """What the reader thread learns from dockd, read by the frame loop."""

    def __init__(self, keep_log=False):
        self.lock = threading.Lock()
        self.pose = StandPose()
        self.tracking = None
        self.keep_log = keep_log
        self.tracking_log = []  # only with --log
        # dockd's stands may have changed (a new connection, a stand attached or gone): the
        # stand of this camera's own device is looked up again before the next frame.
        self.stands_changed = False

    def on_notification(self, method, params, arrival):
        with self.lock:
            if method == "motion.state":
                self.pose.record(arrival, params)
            elif method == "tracking.state":
                self.tracking = params
                if self.keep_log:
                    self.tracking_log.append((arrival, params))
            elif method in ("stand.connected", "stand.disconnected"):
                self.stands_changed = True

    def on_connect(self):
        with self.lock:
            self.pose.reset()  # a new connection may be a new dockd with a new clock
            self.tracking = None
            self.stands_changed = True

    def take_stands_changed(self):
        with self.lock:
            changed, self.stands_changed = self.stands_changed, False
            return changed


def own_stand(link, source, log, current):
    """The stand attached at the device `source` captures from (stand_choice), asked of dockd now;
    said when it changes."""
    try:
        reply = link.call("stands.list")
    except NotConnected:
        return current
    found = stand_for_source(reply.get("result") or [], source)
    if found != current:
        log(f"dock-camera: observations go to stand {found}, attached at {source}" if found
            else "dock-camera: no stand is attached at this camera's device: observations go to dockd's first stand")
    return found


class LockedPose:
    """The virtual camera reads the stand's pose while the reader thread writes it."""

    def __init__(self, shared):
        self.shared = shared

    def at(self, t):
        with self.shared.lock:
            return self.shared.pose.at(t)


def camera_params(args, size):
    if args.hfov is None:
        return None
    hfov = math.radians(args.hfov)
    vfov = math.radians(args.vfov) if args.vfov else 2 * math.atan(math.tan(hfov / 2) * size[1] / size[0])
    return {"horizontal_fov": hfov, "vertical_fov": vfov}


def observations(found, size):
    w, h = size
    out = []
    for d in found[:64]:  # dockd takes at most 64 per frame
        x0, y0 = max(0.0, d.x / w), max(0.0, d.y / h)
        x1, y1 = min(1.0, (d.x + d.width) / w), min(1.0, (d.y + d.height) / h)
        if x1 - x0 <= 0 or y1 - y0 <= 0:
            continue
        observation = {"kind": d.kind, "rect": {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0},
                       "confidence": max(0.0, min(1.0, d.confidence))}
        points = normalized(d.keypoints, w, h) if d.kind == "body" and d.keypoints else None
        if points:
            observation["keypoints"] = points
        out.append(observation)
    return out


def cannot_create(path):
    """Why `path` cannot be written (None: it can), found before the run rather than at its end: by
    opening it (what a root's os.access would not tell) — created exclusively and removed again when
    it was not there, so nothing else is ever removed; else opened to append, without blocking (a
    FIFO without a reader says so rather than hanging)."""
    if os.path.islink(path):  # the file is where it points (the link stays as it is)
        path = os.path.realpath(path)
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        return f"no such directory {directory}"
    try:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            os.unlink(path)
        except FileExistsError:  # there already: left as it is, only seen to open
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
    except OSError as error:
        return error.strerror.lower() if error.strerror else str(error)
    return None


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    log = lambda text: print(text, file=sys.stderr, flush=True)
    for option, path in (("--preview", args.preview), ("--log", args.log), ("--stats", args.stats)):
        reason = path and cannot_create(path)
        if reason:
            log(f"dock-camera: {option} {path}: cannot create it: {reason}")
            return 73
    try:
        size = parse_size(args.size)
        detector = detectors.make(args.detector, detectors.DetectorOptions(track=args.track, yolo_dir=args.yolo_dir))
    except (SourceError, detectors.DetectorUnavailable) as error:
        log(f"dock-camera: {error}")
        return 64
    virtual = args.source.startswith("virtual:")
    if virtual and args.hfov is None:
        args.hfov = 50.0
    camera = camera_params(args, size)

    shared = Shared(keep_log=bool(args.log))
    link = DockdLink(args.socket, ["motion", "tracking", "stands"], 100 if virtual else 10,
                     shared.on_notification, shared.on_connect, log)
    try:
        source = open_source(args.source, size, args.fps, args.pixel_format,
                             math.radians(args.hfov or 50), math.radians(args.virtual_wide_fov),
                             args.capture_latency, LockedPose(shared), loop=not args.no_loop,
                             buffers=4 if args.relay else 1)
    except SourceError as error:
        log(f"dock-camera: {error}")
        return 66
    capture = None
    if args.relay:
        try:
            relay = V4L2Relay(args.relay, args.relay_format)
        except RelayError as error:
            source.close()
            log(f"dock-camera: {error}")
            return 69

        def subject():
            with shared.lock:
                return selected_subject(shared.tracking)
        framer = None
        if args.relay_crop:
            framer = Framer(max_zoom=args.relay_max_zoom, shot=None if args.relay_crop == "subject" else args.relay_crop)
        capture = RelayLoop(source, relay, framer, subject)
    log(f"dock-camera: {source.description}; detector {detector.name}; dockd at {args.socket}"
        + (f"; {capture.relay.description}{', framed' if args.relay_crop else ''}" if capture else ""))

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    link.start()
    if capture:
        capture.start()
    stats = RunStats()
    period = 1 / source.fps if getattr(source, "fps", None) else None
    pace = DetectorPace(detector.levels, period)
    preview = Preview(args.preview, args.fps) if args.preview else None
    frame_log = open(args.log, "w") if args.log else None
    started = time.monotonic()
    last_sent_capture = None
    device_stand = None  # without --stand: the stand attached at this camera's device, if any

    def on_reply(message):
        refused = stats.reply(message)
        if refused:
            log(f"dock-camera: dockd refused an observation: {refused} (said once per kind)")

    status = 0
    try:
        while not stopping.is_set():
            if args.seconds is not None and time.monotonic() - started >= args.seconds:
                break
            try:
                frame = capture.next(stopping) if capture else source.read()
            except SourceError as error:
                log(f"dock-camera: {error}")
                status = 74
                break
            if frame is None:
                if capture and capture.error:
                    log(f"dock-camera: {capture.error}")
                    status = 74
                break
            if last_sent_capture is not None and frame.capture_time - last_sent_capture < 1 / MAX_RATE * 0.95:
                stats.skipped_for_rate += 1
                continue
            if not link.connected and not preview:  # nobody to tell: spare the CPU
                stats.unsent += 1
                continue
            t0 = time.monotonic()
            found = detector.detect(frame.image)
            detect_seconds = time.monotonic() - t0
            params = {"observations": observations(found, size), "timestamp": frame.capture_time,
                      "origin": "upper_left", "orientation": args.orientation}
            if camera:
                params["camera"] = camera
            if not args.stand and args.source.startswith("/dev/") and shared.take_stands_changed():
                device_stand = own_stand(link, args.source, log, device_stand)
            if args.stand or device_stand:
                params["stand"] = args.stand or device_stand
            try:
                sent = link.send("tracking.observe", params, on_reply)
                last_sent_capture = frame.capture_time
            except NotConnected:
                sent = None
            stats.frame(frame.capture_time, detect_seconds, len(found), sent, time.process_time(), detector.level)
            level_used = detector.level
            if sent is not None:
                detector.set_level(pace.sent(frame.capture_time, detect_seconds))
            with shared.lock:
                tracking = shared.tracking
                pose = shared.pose.at(frame.capture_time)
            if frame_log:
                frame_log.write(json.dumps({"frame": frame.index, "capture_time": frame.capture_time,
                                            "sent": sent, "view": frame.view, "detector_level": level_used,
                                            "observations": params["observations"]}) + "\n")
            if preview:
                latency = (sent - frame.capture_time) if sent else 0.0
                try:
                    preview.add(frame, found, tracking, status_line(detector.name, stats.fps(), latency, pose, frame.index))
                except OSError as error:  # the video writer refused the file: said, the run ends
                    log(f"dock-camera: {error}")
                    preview = None
                    status = 74
                    break
    finally:
        link.stop()
        if capture:
            capture.stop()
            capture.relay.close()
        source.close()
        if preview:
            try:
                preview.close()
            except OSError as error:  # a disk that filled up meanwhile: said, not a traceback
                log(f"dock-camera: {error}")
                status = 74
        if frame_log:
            with shared.lock:
                offset = shared.pose.offset
                for arrival, state in shared.tracking_log:
                    local = state["capture_time"] + offset if offset is not None and "capture_time" in state else None
                    frame_log.write(json.dumps({"tracking": state, "arrival": arrival, "capture_local": local}) + "\n")
            if capture:
                for index, capture_time, started, written in capture.records:
                    frame_log.write(json.dumps({"relayed": index, "capture_time": capture_time,
                                                "write_started": started, "written": written}) + "\n")
            frame_log.close()
    summary = stats.summary(getattr(source, "dropped", 0))
    summary.update({"detector": detector.name, "source": args.source, "size": list(size),
                    "connections": link.connections})
    if capture:
        summary["relay"] = capture.summary()
    log("dock-camera: " + json.dumps(summary))
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(summary, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
