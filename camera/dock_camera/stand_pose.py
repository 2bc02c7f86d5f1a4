"""Where the stand pointed at a given CLOCK_MONOTONIC time, from dockd's `motion.state` stream
(pure: times are passed in).

`motion.state` carries dockd's own clock (seconds since dockd started), not CLOCK_MONOTONIC. A
notification is stamped before it is sent, so `arrival - stamp` is the clock offset plus a delivery
delay of at least zero: the smallest value seen is the best estimate of the offset (the usual
minimum-one-way-delay estimate). A new dockd (restart) starts a new clock: the history is dropped
whenever the connection is made again.
"""
import bisect

HISTORY_SECONDS = 3.0
# How far past the newest sample the velocity is trusted to extrapolate.
EXTRAPOLATE_SECONDS = 0.15


class StandPose:
    def __init__(self):
        self.reset()

    def reset(self):
        self.offset = None  # local monotonic − dockd clock
        self.times = []     # dockd clock
        self.samples = []   # (yaw, pitch, yaw_rate, pitch_rate)

    def record(self, arrival, params):
        """One motion.state notification's params, received at local monotonic `arrival`."""
        stamp = params["time"]
        positions = params.get("positions", {})
        velocities = params.get("velocities", {})
        candidate = arrival - stamp
        if self.offset is None or candidate < self.offset:
            self.offset = candidate
        if self.times and stamp <= self.times[-1]:
            if stamp < self.times[-1] - 1.0:  # a different clock: dockd restarted under us
                self.reset()
                self.offset = candidate
            else:
                return
        self.times.append(stamp)
        self.samples.append((positions.get("yaw", 0.0), positions.get("pitch", 0.0),
                             velocities.get("yaw", 0.0), velocities.get("pitch", 0.0)))
        while self.times and self.times[0] < stamp - HISTORY_SECONDS:
            self.times.pop(0)
            self.samples.pop(0)

    def dockd_time(self, local_time):
        """dockd's clock at a local CLOCK_MONOTONIC time, or None before the first sample."""
        return None if self.offset is None else local_time - self.offset

    def at(self, local_time):
        """(yaw, pitch) at a local CLOCK_MONOTONIC time: interpolated between samples, extrapolated a
        little with the measured rates past the newest one; (0, 0) (home) before any sample."""
        if not self.times:
            return 0.0, 0.0
        t = local_time - self.offset
        i = bisect.bisect_left(self.times, t)
        if i == 0:
            yaw, pitch, _, _ = self.samples[0]
            return yaw, pitch
        if i == len(self.times):
            yaw, pitch, yaw_rate, pitch_rate = self.samples[-1]
            ahead = min(t - self.times[-1], EXTRAPOLATE_SECONDS)
            return yaw + yaw_rate * ahead, pitch + pitch_rate * ahead
        t0, t1 = self.times[i - 1], self.times[i]
        a, b = self.samples[i - 1], self.samples[i]
        w = (t - t0) / (t1 - t0)
        return a[0] + (b[0] - a[0]) * w, a[1] + (b[1] - a[1]) * w
