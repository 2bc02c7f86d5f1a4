"""Hardware left safe: the real dockd owning an emulated VISCA camera (tests/peers/visca_camera.py)
or a pymavlink gimbal (tests/peers/mavlink_gimbal.py) through SIGTERM, SIGKILL and restart, a
reconnect, a full command buffer, refused commands, a wrong direction, limits and a silent device
(issue 12), including what the daemon does with the drivers' interface: it waits for
`stopConfirmed` on exit, returns refusals to the caller, stops on a sign error, and orients through
one `.position` when the driver closes the loop."""
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import mavlink_gimbal as mg  # noqa: E402
import visca_camera as vc  # noqa: E402
from conftest import BIN, Client, wait_for  # noqa: E402

GENERIC = ROOT / "profiles" / "visca" / "generic-ptzoptics.json"
H700 = ROOT / "profiles" / "visca" / "sony-brc-h700.json"
POLL = b"\x09\x06\x12"
DRIVE = b"\x01\x06\x01"
LIMIT = b"\x01\x06\x07"
IF_CLEAR = b"\x01\x00\x01"


class Daemon:
    """dockd owning one configured device; started again after a kill on the same configuration."""

    def __init__(self, tmp_path, device):
        self.tmp = tmp_path
        self.sock = tmp_path / "d.sock"
        self.config = tmp_path / "dockd.conf"
        self.config.write_text("[[device]]\n" + device)
        self.runs = 0
        self.proc = None

    def start(self):
        self.runs += 1
        if self.sock.exists():
            self.sock.unlink()  # left behind by a SIGKILL
        self.proc = subprocess.Popen([str(BIN / "dockd"), "--config", str(self.config), "--socket", str(self.sock),
                                      "--socket-group", "", "--no-hotplug"],
                                     stderr=open(self.tmp / f"dockd-{self.runs}.err", "wb"))
        wait_for(self.sock.exists, 10, "dockd's socket")
        return self

    def client(self, topics=("stands", "logs", "motion")):
        c = Client(self.sock)
        c.result("subscribe", {"topics": list(topics), "motion_rate": 20})
        return c

    def connected(self, c, timeout=15):
        return wait_for(lambda: next((s for s in c.result("stands.list") if s["state"] == "connected"), None), timeout,
                        "the stand connected through its driver")

    def kill(self, sig):
        """Sends `sig` and returns when the process ended (monotonic time)."""
        self.proc.send_signal(sig)
        self.proc.wait(10)
        return time.monotonic()

    def log(self):
        return "".join((self.tmp / f"dockd-{i}.err").read_text(errors="replace") for i in range(1, self.runs + 1))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def rig(tmp_path):
    made = []

    def camera(profile=GENERIC, **kw):
        cam = vc.Camera(vc.load_profile(profile), **kw)
        link = vc.PtyLink(cam).start()
        made.append(link)
        device = f'path = "{link.path}"\ndriver = "visca"\nprofile = "{profile}"\nname = "ptz"\n'
        daemon = Daemon(tmp_path, device)
        made.append(daemon)
        return cam, daemon

    def gimbal(**kw):
        g = mg.PtyGimbal(**kw).start()
        made.append(g)
        daemon = Daemon(tmp_path, f'path = "{g.path}"\ndriver = "mavlink"\nname = "gimbal"\n')
        made.append(daemon)
        return g.gimbal, daemon

    class Rig:
        pass
    r = Rig()
    r.camera, r.gimbal = camera, gimbal
    yield r
    for thing in reversed(made):
        thing.stop()


def turned(cam, degrees, since=None):
    start = since if since is not None else cam.degrees()[0]
    return lambda: abs(cam.degrees()[0] - start) >= degrees


def at_rest(cam, seconds=0.3):
    """The camera does not move for `seconds` (sampled): true or false, never a sleep to pass."""
    first = cam.degrees()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cam.degrees() != first or cam.moving():
            return False
        time.sleep(0.02)
    return True


def signal_while_turning(c, cam, d, sig):
    """Drives left and signals dockd while the camera still turns: a loaded host can take longer
    than the 0.5 s deadman to see it turn, and then the deadman's Stop has come and gone before the
    signal (nothing left to stop: the Stop-on-exit tests failed on that beside a CPU hog). Asked
    again then, up to three times. Returns (signalled, exited)."""
    for _ in range(3):
        c.result("motion.velocity", {"yaw": 0.4})
        wait_for(turned(cam, 1.5), 5, "the camera turning left")
        if cam.moving():
            signalled = time.monotonic()
            return signalled, d.kill(sig)
    raise AssertionError("the deadman stopped the camera before each signal")


def faults(c, contains, timeout=5):
    return c.wait_notification(lambda m: m.get("method") == "stand.fault" and contains in m["params"]["text"], timeout)


# -- VISCA: exits, restarts, reconnects

def test_visca_sigterm_mid_drive_sends_a_stop_that_stops_the_camera(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    signalled, exited = signal_while_turning(c, cam, d, signal.SIGTERM)
    stops = [t for t, m in cam.messages(DRIVE, since=signalled) if vc.is_stop(m)]
    assert stops and stops[0] <= exited + 0.05, f"no Stop reached the camera before dockd exited: {cam.log[-6:]}"
    wait_for(lambda: not cam.moving(), 2, "the camera stopped")
    assert at_rest(cam)


def test_visca_sigterm_waits_for_the_cameras_completion_of_the_stop(rig):
    cam, d = rig.camera(latency=0.15)
    d.start()
    c = d.client()
    d.connected(c)
    signalled, exited = signal_while_turning(c, cam, d, signal.SIGTERM)
    done = [t for t in cam.stop_completions if t >= signalled]
    assert done and exited >= done[0], "dockd exited before the camera's Completion of the Stop came back"


def test_visca_sigkill_then_restart_stops_the_camera_before_anything_else(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.3})
    wait_for(turned(cam, 1.0), 5, "the camera turning")
    d.kill(signal.SIGKILL)
    # VISCA has no heartbeat: the camera keeps turning without dockd.
    left = cam.degrees()[0]
    wait_for(turned(cam, 2.0, since=left), 5, "the camera still turning after SIGKILL")
    restarted = time.monotonic()
    d.start()
    wait_for(lambda: not cam.moving(), 5, "the camera stopped by the restarted dockd")
    wait_for(lambda: cam.messages(POLL, since=restarted), 5, "the position read")
    after = [m for t, _, m in cam.log if t >= restarted]
    assert [m.hex(" ") for m in after[:3]] == ["88 30 01 ff", "81 01 00 01 ff", "81 01 06 01 01 01 03 03 ff"], after[:6]
    first_poll = next(i for i, m in enumerate(after) if m[1:4] == POLL)
    assert first_poll > 2, "the position is read after the Stop"
    c = d.client()
    d.connected(c)
    assert not [m for m in after if vc.is_moving_drive(m)], "no drive after the restart"
    assert at_rest(cam)


def test_visca_reconnect_clears_stops_and_never_resends_an_old_drive(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.3})
    wait_for(turned(cam, 0.5), 5, "the camera turning")
    # The camera falls silent: dockd loses the link (1 s) and starts again with AddressSet.
    cam.silent = True
    silenced = time.monotonic()
    c.notifications = []
    wait_for(lambda: any(m == bytes.fromhex("88 30 01 ff") for t, _, m in cam.log if t > silenced), 10,
             "dockd connecting again")
    cam.silent = False
    c.wait_notification(lambda m: m.get("method") == "stand.connected", 15)
    back = next(t for t, _, m in cam.log if t > silenced and m == bytes.fromhex("88 30 01 ff"))
    wait_for(lambda: not cam.moving(), 5, "the camera stopped at the reconnect")
    after = [m for t, _, m in cam.log if t >= back]
    stop_at = next(i for i, m in enumerate(after) if vc.is_stop(m))
    assert any(m[1:4] == IF_CLEAR for m in after[:stop_at]), "IF_Clear before the Stop"
    assert not [m for m in after if vc.is_moving_drive(m)], "a drive from before the reconnect was sent after it"
    assert at_rest(cam)


def test_visca_full_buffer_for_two_seconds_keeps_the_link_and_a_stop_gets_through(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.3})
    wait_for(turned(cam, 0.5), 5, "the camera turning")
    cam.hold_sockets(2.5)  # a second controller fills both command sockets
    held = time.monotonic()
    polls_before = len(cam.messages(POLL))
    reply = c.call("motion.stop")
    assert "result" in reply, f"motion.stop while the buffer is full: {reply}"
    wait_for(lambda: not cam.moving(), 10, "the camera stopped through the full buffer")
    sent = [m for t, _, m in cam.log if t >= held]
    stop_at = max(i for i, m in enumerate(sent) if vc.is_stop(m))
    assert any(m[1:4] == IF_CLEAR for m in sent[:stop_at]), "IF_Clear let the Stop through"
    # Judged by the order the camera read them in, not by the test's clock: on a busy machine a
    # drive dockd wrote before motion.stop can reach the camera after `held`.
    first_stop = next(i for i, m in enumerate(sent) if vc.is_stop(m))
    # Polls went on and the link held for the whole two seconds.
    wait_for(lambda: time.monotonic() > held + 2.5, 5, "the hold to end")
    assert len(cam.messages(POLL)) - polls_before >= 20, "polls stopped while the buffer was full"
    assert not [m for m in c.notifications if m.get("method") == "stand.disconnected"], "the link was declared lost"
    assert [s["state"] for s in c.result("stands.list")] == ["connected"]
    assert not [m for m in sent[first_stop:] if vc.is_moving_drive(m)], "a stale drive went after the Stop"
    assert at_rest(cam)


# -- VISCA: refusals, direction, limits, configuration

def test_visca_refused_drives_are_backed_off_and_reported(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    cam.refuse_motion = "not_executable"  # as a camera that is off
    asked = time.monotonic()
    while time.monotonic() < asked + 3:
        c.call("motion.velocity", {"yaw": 0.3})
        time.sleep(0.1)  # the renewal period of a client steering by hand, not a wait for an event
    drives = [m for t, m in cam.messages(DRIVE, since=asked) if vc.is_moving_drive(m)]
    assert 2 <= len(drives) <= 8, f"{len(drives)} refused drives in 3 s (the issue saw 24-30 a second)"
    faults(c, "not executable")


def test_visca_refusal_reaches_the_velocity_caller(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    cam.refuse_motion = "not_executable"
    replies = []
    asked = time.monotonic()
    while time.monotonic() < asked + 2:
        replies.append(c.call("motion.velocity", {"yaw": 0.3}))
        time.sleep(0.1)  # a client renewing its velocity
    errors = [r["error"]["message"] for r in replies if "error" in r]
    assert any("not executable" in e for e in errors), replies[-3:]


def test_visca_wrong_direction_is_detected_and_stopped(rig):
    cam, d = rig.camera(pan_sign=-1)  # its units grow to the left; the profile says right
    d.start()
    c = d.client()
    d.connected(c)
    # A drive (Pan-tiltDrive left/right) against a position read the other way round: the feedback
    # moves against the command. (An orientation goes by the camera's own AbsolutePosition, which
    # reads back consistently with its mirrored target: no feedback can tell; calibration does.)
    reply = c.call("motion.velocity", {"yaw": 0.3})
    assert "result" in reply
    fault = c.wait_notification(lambda m: m.get("method") == "stand.fault" and "direction" in m["params"]["text"], 3)
    assert fault
    wait_for(lambda: not cam.moving(), 2, "the camera stopped")
    assert abs(cam.degrees()[0]) < 15, f"drove {cam.degrees()[0]:.1f}° the wrong way before stopping"


def test_visca_limits_are_written_into_the_camera_so_a_dead_dockd_cannot_pass_them(rig):
    cam, d = rig.camera()
    d.start()
    c = d.client()
    d.connected(c)
    # On connect: LimitClear for both corners (a dead session's narrowed limits are forgotten).
    wait_for(lambda: len(cam.messages(LIMIT)) >= 2, 5, "the limits written on connect")
    clears = [m.hex(" ") for t, m in cam.messages(LIMIT)]
    assert clears == ["81 01 06 07 01 01 07 0f 0f 0f 07 0f 0f 0f ff", "81 01 06 07 01 00 07 0f 0f 0f 07 0f 0f 0f ff"]
    c.result("motion.limits", {"axes": {"yaw": {"min": -0.5, "max": 0.5}}})
    wait_for(lambda: abs(cam.pan.limits[1] - math.degrees(0.5)) < 0.1 and abs(cam.pan.limits[0] + math.degrees(0.5)) < 0.1, 5,
             "the camera's pan limits at ±28.6°")
    # Driving right toward the limit, dockd dies: the camera stops at the limit on its own.
    c.result("motion.velocity", {"yaw": -0.5})
    wait_for(lambda: cam.degrees()[0] > 5, 5, "the camera turning right")
    d.kill(signal.SIGKILL)
    wait_for(lambda: cam.degrees()[0] >= math.degrees(0.5) - 0.1, 5, "the camera at its limit")
    assert cam.degrees()[0] <= math.degrees(0.5) + 0.05 and cam.pan.vel != 0, "stopped by the limit, not by a Stop"


def test_visca_poll_hz_sets_the_feedback_rate(tmp_path):
    cam = vc.Camera(vc.load_profile(GENERIC))
    link = vc.PtyLink(cam).start()
    d = Daemon(tmp_path, f'path = "{link.path}"\ndriver = "visca"\nprofile = "{GENERIC}"\npoll_hz = 12.5\n')
    try:
        d.start()
        c = d.client()
        d.connected(c)
        since = time.monotonic()
        wait_for(lambda: time.monotonic() > since + 2, 5, "two seconds of polls")
        rate = len(cam.messages(POLL, since=since)) / (time.monotonic() - since)
        print(f"\n{rate:.1f} polls/s for poll_hz = 12.5")
        # Never faster than asked (the default 20 Hz fails it); a loaded host polls late, so the
        # floor is half the rate, which a poll interval doubled or ignored still fails.
        assert 6.25 < rate < 14, f"{rate:.1f} polls/s for poll_hz = 12.5"
    finally:
        d.stop()
        link.stop()


def test_visca_poll_hz_written_as_an_integer(tmp_path):
    cam = vc.Camera(vc.load_profile(GENERIC))
    link = vc.PtyLink(cam).start()
    d = Daemon(tmp_path, f'path = "{link.path}"\ndriver = "visca"\nprofile = "{GENERIC}"\npoll_hz = 20\n')
    try:
        d.start()
        d.connected(d.client())
    finally:
        d.stop()
        link.stop()


def test_visca_orientation_is_one_absolute_move_closed_by_the_camera(rig):
    cam, d = rig.camera(latency=0.2)
    d.start()
    c = d.client()
    d.connected(c)
    since = time.monotonic()
    motion = c.result("motion.orient", {"yaw": 0.5, "pitch": 0.2, "duration": 1.5})
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                               and m["params"]["state"] != "running", 10)
    assert done["params"]["state"] == "completed", done
    moves = [m for t, m in cam.messages(b"\x01\x06\x02", since=since)]
    assert len(moves) == 1, f"{len(moves)} AbsolutePosition"
    assert not [m for t, m in cam.messages(DRIVE, since=since) if vc.is_moving_drive(m)], "velocity drives"
    pan, tilt = cam.degrees()
    assert abs(pan + math.degrees(0.5)) <= 0.5 and abs(tilt - math.degrees(0.2)) <= 0.5, (pan, tilt)


def test_visca_tracking_holds_a_moving_subject_with_replies_200ms_late(rig):
    """Issue 12's tracking target: a subject swaying ±0.25 rad every 8 s, seen by a pinhole camera
    on the emulated head whose every reply is 200 ms late. Before the aim was predicted across the
    round trip and the gain bounded by it, the loop rang until the subject left the frame (lost
    ~45 % of the time, bench/drivers_bench.py --latency)."""
    cam, d = rig.camera(latency=0.2)
    d.start()
    c = d.client()
    d.connected(c)
    hfov, vfov = 1.2, 0.75
    c.result("camera.set", {"camera": {"horizontal_fov": hfov, "vertical_fov": vfov}})
    c.result("tracking.framing", {"mode": "center"})
    started, errors = time.monotonic(), []
    while (t := time.monotonic() - started) < 10:
        subject = 0.25 * math.sin(2 * math.pi * t / 8)
        pan, tilt = cam.degrees()
        zoom = cam.magnification()  # the shot's zoom narrows the view dockd steers by
        u = 0.5 - math.tan(subject + math.radians(pan)) * zoom / (2 * math.tan(hfov / 2))
        v = 0.5 - math.tan(0.05 - math.radians(tilt)) * zoom / (2 * math.tan(vfov / 2))
        seen = 0 < u < 1 and 0 < v < 1
        observations = [{"kind": "body", "rect": {"x": u - 0.06, "y": v - 0.22, "width": 0.12, "height": 0.45}, "confidence": 0.95},
                        {"kind": "face", "rect": {"x": u - 0.03, "y": v - 0.2, "width": 0.06, "height": 0.09},
                         "confidence": 0.9}] if seen else []
        c.result("tracking.observe", {"observations": observations, "origin": "upper_left"})
        errors.append((t, abs(u - 0.5) if seen else 0.5))
        time.sleep(max(0.0, 0.05 - (time.monotonic() - started - t)))  # a 20 Hz camera, paced by the clock
    late = [e for t, e in errors if t >= 4]
    rms = math.sqrt(sum(e * e for e in late) / len(late))
    # dockd's log says why, when it does not hold (once beside stress-ng the head stopped following
    # at about t = 4 s; not reproduced in 3 runs beside stress-ng since).
    assert max(late) < 0.3 and rms < 0.1, f"RMS {rms:.3f}, worst {max(late):.3f} of the image width; dockd: {d.log()[-3000:]}"


def test_visca_sony_head_whose_units_grow_left_is_driven_the_right_way(rig):
    cam, d = rig.camera(profile=H700)
    d.start()
    c = d.client()
    d.connected(c)
    motion = c.result("motion.orient", {"yaw": 0.3, "duration": 1.5})
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                               and m["params"]["state"] != "running", 10)
    assert done["params"]["state"] == "completed", done
    pan, _ = cam.degrees()
    assert abs(pan + math.degrees(0.3)) < 1.0, f"yaw 0.3 rad (17.2° left) ended at pan {pan:.1f}°"


# -- VISCA on every link: the deadman

EMULATOR_HOST = "127.0.0.2"
VISCA_PORT = vc.free_udp_port(EMULATOR_HOST)


@pytest.fixture
def any_link(tmp_path):
    """A camera on a pty, VISCA-over-IP, raw UDP or raw TCP, and dockd configured for it."""
    made = []

    def make(link, profile=GENERIC, **kw):
        cam = vc.Camera(vc.load_profile(profile), **kw)
        if link == "serial":
            lk = vc.PtyLink(cam).start()
            where = f'path = "{lk.path}"\n'
        elif link == "raw-tcp":
            lk = vc.TcpLink(cam).start()
            where = f'tcp = "{lk.address[0]}:{lk.address[1]}"\ntransport = "raw-tcp"\n'
        else:
            lk = vc.UdpLink(cam, EMULATOR_HOST, VISCA_PORT, raw=(link == "raw-udp")).start()
            where = f'udp = "{EMULATOR_HOST}:{VISCA_PORT}"\ntransport = "{link}"\n'
        made.append(lk)
        daemon = Daemon(tmp_path, f'{where}driver = "visca"\nprofile = "{profile}"\nname = "ptz"\n')
        made.append(daemon)
        return cam, lk, daemon
    yield make
    for thing in reversed(made):
        thing.stop()


@pytest.mark.parametrize("link", ["serial", "ip", "raw-udp", "raw-tcp"])
def test_visca_deadman_stop_reaches_the_camera_on_time_on_every_link(link, any_link):
    """One motion.velocity and no renewal: the 0.5 s deadman's Stop must reach the camera about a
    round trip after it expires, on every link. Over VISCA-over-IP it came 0.81-0.85 s after the
    call in 3 of 5 runs: the engine wrote a poll and the drive (or the Stop) in one datagram, the
    camera read the first message only, and the lost one went again at the reply timeout."""
    cam, lk, d = any_link(link)
    d.start()
    c = d.client()
    d.connected(c)
    latencies = []
    for _ in range(5):
        wait_for(lambda: not cam.moving(), 5, "the camera at rest")
        asked = time.monotonic()
        c.result("motion.velocity", {"yaw": 0.3})
        wait_for(cam.moving, 5, "the camera turning")
        wait_for(lambda: [t for t, m in cam.messages(DRIVE, since=asked) if vc.is_stop(m)], 5, "the deadman's Stop")
        stop = next(t for t, m in cam.messages(DRIVE, since=asked) if vc.is_stop(m))
        # From the drive the camera read, not from the test's call: the call's way to dockd and the
        # drive's to the camera are not the deadman's (a pty starved beside a CPU hog took 0.5 s).
        drive = next(t for t, m in cam.messages(DRIVE, since=asked) if vc.is_moving_drive(m))
        latencies.append(stop - drive)
    print(f"\n{link}: deadman Stop {', '.join(f'{x:.3f}' for x in latencies)} s after the drive")
    # 0.5 s, plus a round trip (a few ms here) and a feedback period, plus slack for a loaded machine.
    assert max(latencies) < 0.75, latencies
    assert not getattr(lk, "overfull", []), f"datagrams carrying two messages (the camera reads one): {lk.overfull[:3]}"
    assert at_rest(cam)


@pytest.mark.parametrize("link", ["serial", "ip"])
def test_visca_orientation_completes_on_a_camera_whose_tilt_is_a_third_of_its_profile(link, any_link):
    """Issue 21: a PTZOptics-class head whose tilt turns at a third of the profile's table. dockd
    sent the right AbsolutePosition, then failed the motion when its own plan ran out and sent a
    Stop: 0.2 rad asked, 0.14 reached; back to 0 left it at 0.42 rad. The camera's move must be
    let finish: the orientation completes where the camera stops, within one of its units."""
    cam, lk, d = any_link(link, speed_scale=(1.0, 0.33))
    d.start()
    c = d.client()
    d.connected(c)
    unit = 1 / cam.tilt.upd  # degrees
    for pitch in (0.2, 0.0):
        # 2 s asked: the slowest tilt byte that arrives in 2 s by the table (6°/s) truly turns at 2°/s.
        motion = c.result("motion.orient", {"pitch": pitch, "duration": 2.0})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", 20)
        assert done["params"]["state"] == "completed", (done, d.log()[-1500:])
        wait_for(lambda: not cam.moving(), 5, "the camera at rest")
        tilt = cam.degrees()[1]
        assert abs(tilt - math.degrees(pitch)) <= unit + 1e-6, f"asked {pitch} rad, the camera stopped at {math.radians(tilt):.4f} rad"
    assert not [m for m in cam.messages(DRIVE) if vc.is_stop(m[1]) and m[0] > cam.log[0][0] + 1], "no Stop cut a move short"


@pytest.mark.parametrize("link", ["serial", "ip"])
def test_visca_speeds_measured_from_feedback_scale_the_profile_and_are_reported(link, any_link):
    """Issue 21: the speeds the feedback shows correct the profile's table while dockd runs. After
    one drive on each axis, stand.get's counters say pitch turns at ~0.33 × the table and yaw at
    1 ×, a notice says so, and a velocity asked of the tilt is then what it really turns at."""
    cam, lk, d = any_link(link, speed_scale=(1.0, 0.33))
    d.start()
    c = d.client()
    d.connected(c)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(c.result("stand.get")["counters"]["speed_scale"]) < 2:
        c.result("motion.velocity", {"yaw": 0.2, "pitch": 0.15})
        time.sleep(0.1)  # a client renewing its velocity
    scale = c.result("stand.get")["counters"]["speed_scale"]
    assert abs(scale.get("pitch", 0) - 0.33) < 0.04 and abs(scale.get("yaw", 0) - 1.0) < 0.1, scale
    wait_for(lambda: "pitch turns at 0.3" in d.log(), 5, "the notice about the tilt's speed")
    assert "yaw turns at" not in d.log(), "yaw is as its profile says: no notice"
    c.result("motion.stop")
    wait_for(lambda: not cam.moving(), 5, "the camera at rest")
    # Down at 0.1 rad/s (5.7°/s): by the table alone, byte 6 (6°/s), truly 2°/s.
    start, t0 = cam.degrees()[1], time.monotonic()
    while time.monotonic() - t0 < 1.5:
        c.result("motion.velocity", {"pitch": -0.1})
        time.sleep(0.1)
    rate = math.radians(start - cam.degrees()[1]) / (time.monotonic() - t0)
    # The tilt byte the camera was driven at once past the ramp (the last), at the speed it truly
    # turns at: the test's own clock also counts the way of the first call to the camera and of
    # the last renewal, which a loaded host stretches (printed, not judged).
    downs = [m[5] for _, m in cam.messages(DRIVE, since=t0) if vc.is_moving_drive(m) and m[7] == 0x02]
    assert downs, "driven down"
    settled = math.radians(cam.tilt.speed(downs[-1]))
    print(f"\nasked 0.1 rad/s down: tilt bytes {downs}, the last truly {settled:.3f} rad/s; {rate:.3f} rad/s by the test's clock")
    assert 0.07 < settled < 0.13, f"asked 0.1 rad/s down, driven at {settled:.3f} rad/s (bytes {downs})"


# -- MAVLink gimbal: the same review

def gimbal_turning(g, rate=None):
    return lambda: abs(g.rates[0]) > 0.1 and (rate is None or abs(g.rates[0] - rate) < 1e-3)


def zero_rates_since(g, since):
    with g.lock:
        return [m for m, t in zip(g.set_attitudes, g.set_attitude_times)
                if t >= since and m.angular_velocity_z == 0 and m.angular_velocity_y == 0]


def test_mavlink_sigterm_mid_drive_zeroes_the_rates(rig):
    g, d = rig.gimbal()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.5})
    wait_for(gimbal_turning(g), 5, "the gimbal turning")
    signalled = time.monotonic()
    exited = d.kill(signal.SIGTERM)
    zeros = zero_rates_since(g, signalled)
    assert zeros, "no zero rates reached the gimbal"
    wait_for(lambda: g.rates == (0.0, 0.0), 2, "the gimbal at rest")
    assert exited >= signalled


def test_mavlink_sigkill_then_restart_zeroes_the_rates_at_connect(rig):
    g, d = rig.gimbal()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.5})
    wait_for(gimbal_turning(g), 5, "the gimbal turning")
    d.kill(signal.SIGKILL)
    yaw = g.yaw
    wait_for(lambda: abs(g.yaw - yaw) > 0.1, 5, "the gimbal still turning after SIGKILL (no host heartbeat for rates)")
    restarted = time.monotonic()
    d.start()
    wait_for(lambda: g.rates == (0.0, 0.0), 3, "zero rates from the restarted dockd")
    first = zero_rates_since(g, restarted)
    assert first and first[0].target_system in (0, mg.GIMBAL_SYS)
    d.connected(d.client())


def test_mavlink_reconnect_after_silence_reports_the_gimbal_ready_again(rig):
    g, d = rig.gimbal()
    d.start()
    c = d.client()
    d.connected(c)
    g.silent = True  # the gimbal stops talking: dockd loses the link after 1 s
    c.notifications = []
    c.wait_notification(lambda m: m.get("method") == "stand.disconnected", 10)
    g.silent = False
    c.wait_notification(lambda m: m.get("method") == "stand.connected", 15)
    assert [s["state"] for s in c.result("stands.list")] == ["connected"]


def test_mavlink_refused_request_is_reported_and_the_gimbal_used_with_defaults(rig):
    g, d = rig.gimbal(refuse_commands={512: 3})  # MAV_CMD_REQUEST_MESSAGE: unsupported
    d.start()
    c = d.client()
    started = time.monotonic()
    d.connected(c)
    assert time.monotonic() - started < 2.5, "the defaults are used at once, not after the 3 s wait"
    log = d.log()
    assert "refused MAV_CMD_REQUEST_MESSAGE(GIMBAL_DEVICE_INFORMATION): unsupported" in log, log[-2000:]


def test_mavlink_silent_gimbal_is_not_connected_and_gets_zero_rates_each_attempt(rig):
    g, d = rig.gimbal()
    g.silent = True
    d.start()
    c = d.client()
    wait_for(lambda: len(zero_rates_since(g, 0)) >= 2, 10, "zero rates at each connect attempt")
    assert [s["state"] for s in c.result("stands.list")] != ["connected"]
    assert d.proc.poll() is None, "dockd still runs"
    g.silent = False
    d.connected(c)


def test_mavlink_gimbal_falling_silent_mid_drive_is_sent_zero_rates(rig):
    g, d = rig.gimbal()
    d.start()
    c = d.client()
    d.connected(c)
    c.result("motion.velocity", {"yaw": 0.5})
    wait_for(gimbal_turning(g), 5, "the gimbal turning")
    g.silent = True  # no more status: the controller must not steer blind
    silenced = time.monotonic()
    wait_for(lambda: zero_rates_since(g, silenced), 2, "zero rates once the feedback stopped")
    assert g.rates == (0.0, 0.0)
