"""What a run measured: capture → tracking.observe sent latency, CPU per frame, frame rate, dockd's
replies. Pure bookkeeping; the loop passes the times in."""
from collections import Counter, deque

# Percentiles are over the newest frames: a camera service runs for weeks and must not grow.
WINDOW = 20_000


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class RunStats:
    def __init__(self):
        self.latencies = deque(maxlen=WINDOW)    # s, capture → the observe line written to dockd's socket
        self.detect_times = deque(maxlen=WINDOW)  # s, the detector alone
        self.frames = 0
        self.unsent = 0       # frames not sent: dockd was not reachable
        self.skipped_for_rate = 0
        self.replies = Counter()  # "ok" or the error code
        self.detections = 0
        self.levels = Counter()  # frames per detector level (pace.py)
        self.first_capture = None
        self.last_capture = None
        self.cpu_start = None
        self.cpu_end = None

    def frame(self, capture_time, detect_seconds, detections, sent_time, cpu_now, level=0):
        if self.first_capture is None:
            self.first_capture = capture_time
            self.cpu_start = cpu_now
        self.last_capture = capture_time
        self.cpu_end = cpu_now
        self.frames += 1
        self.detections += detections
        self.levels[level] += 1
        self.detect_times.append(detect_seconds)
        if sent_time is None:
            self.unsent += 1
        else:
            self.latencies.append(sent_time - capture_time)

    def reply(self, message):
        """Counts dockd's answer; returns the error message the first time a code is seen."""
        if "error" not in message:
            self.replies["ok"] += 1
            return None
        code = message["error"].get("code")
        key = "unanswered" if code is None else str(code)
        self.replies[key] += 1
        return message["error"].get("message") if self.replies[key] == 1 and code is not None else None

    def fps(self):
        if self.frames < 2 or self.last_capture <= self.first_capture:
            return 0.0
        return (self.frames - 1) / (self.last_capture - self.first_capture)

    def summary(self, dropped):
        cpu_frames = self.frames - 1
        cpu = (self.cpu_end - self.cpu_start) / cpu_frames if cpu_frames > 0 else None
        return {
            "frames": self.frames,
            "fps": round(self.fps(), 2),
            "dropped_by_source": dropped,
            "unsent": self.unsent,
            "skipped_for_rate": self.skipped_for_rate,
            "latency_ms": {"p50": ms(percentile(self.latencies, 50)), "p99": ms(percentile(self.latencies, 99))},
            "detect_ms": {"p50": ms(percentile(self.detect_times, 50)), "p99": ms(percentile(self.detect_times, 99))},
            "cpu_ms_per_frame": ms(cpu),
            "detections_per_frame": round(self.detections / self.frames, 2) if self.frames else 0,
            "replies": dict(self.replies),
            "frames_per_detector_level": {str(k): v for k, v in sorted(self.levels.items())},
        }


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 1)
