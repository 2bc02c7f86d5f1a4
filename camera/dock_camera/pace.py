"""How much work the detector may do on a frame so that dockd keeps taking the stream.

dockd refuses a stream whose median interval over the last eight frames is longer than 125 ms
(8 frames/s, API.md) with -32005 and drops those frames: its tracks then run blind. A detector
slower than the camera's frame period makes dock-camera skip frames, and on a busy machine HOG's
40 ms become 60–140 ms: a 15 fps camera's frames then come 133 ms apart, dockd refuses them, its
tracks coast and break, and it keeps a stale track selected while the person is framed under a new
one. So when the intervals between the frames sent grow long, the detector steps down to a cheaper
setting (a level: 0 is the detector's own, each next one cheaper), before dockd would refuse; after
a while it tries the finer setting again, and waits twice as long each time that one proves too slow.
Pure: capture times in, a level out.
"""
from collections import deque

# An interval this long (s) is near dockd's 125 ms floor: a frame of a 15 fps camera was skipped.
SLOW = 0.1
# Intervals judged, as dockd judges eight; three slow ones step down, dockd refuses at four (the
# upper median of eight).
WINDOW = 8
SLOW_COUNT = 3
# A pause this long (s) starts a new stream, for dockd and here.
PAUSE = 1.0
# Seconds at a level before the finer one is tried again; doubled each time that one proves slow.
FIRST_HOLD = 5.0
MAX_HOLD = 60.0


class DetectorPace:
    def __init__(self, levels, frame_period=None):
        """`levels`: how many settings the detector has; `frame_period`: the camera's (s), when
        known. A frame skipped by a camera that is itself slower than SLOW says nothing about the
        detector, so an interval counts as slow only beyond one and a half of the camera's periods."""
        self.levels = levels
        self.slow = max(SLOW, 1.5 * frame_period) if frame_period else SLOW
        self.level = 0
        self.last = None
        self.intervals = deque(maxlen=WINDOW)
        self.since = None   # capture time the current level started
        self.hold = {}      # level -> seconds to stay at it before trying the finer one

    def sent(self, capture_time, detect_seconds=None):
        """Notes the capture time of a frame sent to dockd, and how long the detector took on it when
        known; returns the level for the next frames. A long interval counts against the detector
        only when the detector took at least half of it: a camera that delivers slower than it
        declares (a webcam lengthening its exposure in dim light) is not the detector's doing."""
        if self.last is not None:
            interval = capture_time - self.last
            if interval < 0 or interval >= PAUSE:
                self.intervals.clear()
            elif detect_seconds is None or detect_seconds >= 0.5 * interval:
                self.intervals.append(interval)
            else:
                self.intervals.append(0.0)
        self.last = capture_time
        if self.since is None:
            self.since = capture_time
        slow = sum(i > self.slow for i in self.intervals) >= SLOW_COUNT
        if slow and self.level < self.levels - 1:
            coarser = self.level + 1
            self.hold[coarser] = min(MAX_HOLD, 2 * self.hold.get(coarser, FIRST_HOLD / 2))
            self._change(coarser, capture_time)
        # Also from the cheapest level while still slow: then the detector is not what is slow.
        elif self.level > 0 and capture_time - self.since >= self.hold.get(self.level, FIRST_HOLD):
            self._change(self.level - 1, capture_time)
        return self.level

    def _change(self, level, capture_time):
        self.level = level
        self.since = capture_time
        self.intervals.clear()  # the next judgement is of the new level's own intervals
