"""The real dockd owning an ONVIF PTZ camera through the `onvif` driver: the project's ONVIF
emulator (tests/peers/onvif_camera.py, itself validated with onvif-zeep in test_onvif_emulator.py)
on loopback, with WS-Security UsernameToken digests required. The emulator's state is read in
process: where the head really points, every move and Stop it accepted, the most requests it had
in flight at once."""
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import onvif_camera as oc  # noqa: E402
from conftest import BIN, Client, wait_for  # noqa: E402

PASSWORD = "Tr0ub4dor-and-3"


class Rig:
    """An emulated camera and the dockd that owns it, configured the way a user would."""

    def __init__(self, tmp_path, password=PASSWORD, mode=0o600, options="", **camera):
        self.tmp = tmp_path
        camera.setdefault("auth", "wsse")
        camera.setdefault("password", PASSWORD)
        self.cam = oc.Camera(**camera)
        self.server = oc.Server(self.cam).start()
        credentials = tmp_path / "cam.cred"
        credentials.write_text(password + "\n")
        credentials.chmod(mode)
        (tmp_path / "dockd.conf").write_text(
            f'[[device]]\nonvif = "admin@127.0.0.1:{self.server.port}"\ndriver = "onvif"\n'
            f'credentials = "{credentials}"\nname = "cam-1"\n{options}')
        self.log = tmp_path / "dockd.err"
        self.started = time.monotonic()
        self.dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(tmp_path / "dockd.conf"), "--socket", str(tmp_path / "d.sock"),
                                       "--socket-group", "", "--no-hotplug"], stderr=open(self.log, "wb"))
        wait_for((tmp_path / "d.sock").exists, 20, "dockd's socket")
        self.client = Client(tmp_path / "d.sock")

    def stand(self):
        return self.client.result("stands.list")[0]

    def connected(self, timeout=30):
        return wait_for(lambda: (lambda s: s if s["state"] == "connected" else None)(self.stand()), timeout,
                        f"the camera connected ({self.stand()}; {self.log.read_text()[-800:]})")

    def moves(self, since=0.0):
        with self.cam.lock:
            return [(t, action, details) for t, action, details in self.cam.moves if t >= since]

    def close(self):
        self.client.close()
        if self.dockd.poll() is None:
            self.dockd.terminate()
            self.dockd.wait(20)
        self.server.stop()


@pytest.fixture
def rig(tmp_path):
    rigs = []

    def make(**kw):
        r = Rig(tmp_path, **kw)
        rigs.append(r)
        return r
    yield make
    for r in rigs:
        r.close()
        # Never more than one request in flight (a camera's HTTP server is small).
        assert r.cam.max_in_flight <= 1, r.cam.max_in_flight
        assert PASSWORD not in r.log.read_text()


def pose(cam):
    """The emulated head's true pose as dockd's yaw and pitch (yaw = -pan), radians."""
    pan, tilt, _ = cam.pose()
    return -math.radians(pan), math.radians(tilt)


def test_connects_with_a_digest_stops_the_camera_then_orients_within_tolerance(rig):
    r = rig()
    stand = r.connected()
    print(f"\nconnected {time.monotonic() - r.started:.2f} s after dockd started (its socket, the setup's 6 requests, the Stop)")
    assert stand["id"] == "cam-1" and stand["driver"] == "onvif"
    with r.cam.lock:
        log = list(r.cam.log)
    # Every request but the clock's was authenticated by its UsernameToken, and the first move is a Stop.
    assert [e[3] for e in log if e[2] != "GetSystemDateAndTime"] and all(e[3] == "wsse" for e in log if e[2] != "GetSystemDateAndTime"), log
    assert r.moves()[0][1] == "Stop", r.moves()
    c = r.client
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    motion = c.result("motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1.5})
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                               and m["params"]["state"] != "running", timeout=20)
    assert done["params"]["state"] == "completed", (done, r.log.read_text()[-1500:])
    wait_for(r.cam.still, 10, "the head at rest")
    yaw, pitch = pose(r.cam)
    print(f"\norient (0.3, 0.1) -> emulator at ({yaw:.4f}, {pitch:.4f}) rad; moves {[m[1] for m in r.moves()]}")
    assert abs(yaw - 0.3) < 0.02 and abs(pitch - 0.1) < 0.02, (yaw, pitch)
    assert any(m[1] == "AbsoluteMove" for m in r.moves())


@pytest.mark.parametrize("zoom", [True, False])
def test_with_max_zoom_the_cameras_zoom_is_an_axis_reported_in_magnification(rig, zoom):
    """ONVIF names no magnification: max_zoom gives the zoom space's top; a camera without zoom
    spaces has no zoom axis whatever the option says."""
    r = rig(zoom=zoom, options="max_zoom = 10\nzoom_seconds = 2\n")  # the emulator: 0.5 of the space a second
    stand = r.connected()
    axes = {a["axis"]: a for a in stand["capabilities"]["axes"]}
    if not zoom:
        assert "zoom" not in axes, axes
        return
    assert axes["zoom"]["min"] == 1 and axes["zoom"]["max"] == 10, axes["zoom"]
    # dockctl list writes the zoom as a magnification, and a camera's missing buttons and batteries as none.
    listing = subprocess.run([str(BIN / "dockctl"), "list", "--socket", str(r.tmp / "d.sock")], capture_output=True, text=True, timeout=20)
    assert re.search(r"\n    zoom: 1\.000 … 10\.000×, ≤ \d+\.\d+×/s, ≤ \d+\.\d+×/s²\n", listing.stdout), listing.stdout
    assert "buttons: none, batteries: none" in listing.stdout, listing.stdout
    pan, tilt, _ = r.cam.generic()
    r.cam.set_generic(pan, tilt, 0.5)  # zoomed by someone else: dockd reads it back
    r.client.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    r.client.wait_notification(lambda m: m.get("method") == "motion.state"
                               and abs(m["params"]["positions"].get("zoom", 0) - 5.5) < 0.01, timeout=10)
    # An orientation leaves the zoom where it is.
    motion = r.client.result("motion.orient", {"yaw": 0.2, "duration": 1})
    done = r.client.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                      and m["params"]["state"] != "running", timeout=20)
    assert done["params"]["state"] == "completed", done
    assert r.cam.generic()[2] == 0.5
    # A client's zoom: a target goes in an AbsoluteMove, a rate in ContinuousMoves, then a Stop.
    zoom_to_and_back(r, target_request="AbsoluteMove", rate_request="ContinuousMove")


def zoom_to_and_back(r, target_request, rate_request):
    """A client's zoom to 8.2× (0.8 of the camera's space) goes out in `target_request`s; then
    1 s of a widening rate goes out in `rate_request`s, each with a negative zoom, and the lens
    stops once the rates end."""
    since = time.monotonic()
    motion = r.client.result("motion.orient", {"zoom": 8.2, "duration": 1})
    done = r.client.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                      and m["params"]["state"] != "running", timeout=20)
    assert done["params"]["state"] == "completed", (done, r.log.read_text()[-1500:])
    wait_for(lambda: abs(r.cam.generic()[2] - 0.8) < 0.01, 5, "the zoom at 8.2x (0.8 of its space)")
    assert any(m[1] == target_request and m[2]["zoom"] for m in r.moves(since)), r.moves(since)
    since = time.monotonic()
    end = since + 1.0
    while time.monotonic() < end:  # a client renewing its rate, as a joystick does
        r.client.result("motion.velocity", {"zoom": -1.5})
        time.sleep(0.1)
    assert r.cam.generic()[2] < 0.7, r.cam.generic()
    rates = [m for m in r.moves(since) if m[1] == rate_request]
    assert rates and all(m[2]["zoom"] and m[2]["zoom"][0] < 0 for m in rates), rates
    wait_for(r.cam.still, 10, "the zoom stopped once the rates ended")


def test_a_relative_only_camera_zooms_by_translations(rig):
    """A camera with a zoom translation space and no zoom position or velocity space: a zoom
    target goes as the RelativeMove's Translation/Zoom from the zoom read, a rate as translations
    a little ahead of it, as for its pan/tilt."""
    r = rig(motion=("relative",), options="max_zoom = 10\nzoom_seconds = 2\n")
    stand = r.connected()
    axes = {a["axis"]: a for a in stand["capabilities"]["axes"]}
    assert axes.get("zoom", {}).get("max") == 10, axes
    pan, tilt, _ = r.cam.generic()
    r.cam.set_generic(pan, tilt, 0.2)
    r.client.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    r.client.wait_notification(lambda m: m.get("method") == "motion.state"
                               and abs(m["params"]["positions"].get("zoom", 0) - 2.8) < 0.01, timeout=10)
    zoom_to_and_back(r, target_request="RelativeMove", rate_request="RelativeMove")


@pytest.mark.parametrize("reversed_pan", [False, True])
def test_rates_move_the_camera_by_continuous_moves_with_whole_second_timeouts_then_a_stop(rig, reversed_pan):
    """Also on a camera whose pan velocity runs against its pan position (the Tapo C220's quirk),
    told so by pan_velocity_sign."""
    r = rig(whole_second_timeouts=True, velocity_sign=(-1 if reversed_pan else 1, 1),
            options="pan_velocity_sign = -1\n" if reversed_pan else "")
    r.connected()
    start_yaw, _ = pose(r.cam)
    began = time.monotonic()
    while time.monotonic() - began < 2.0:  # the dead man's switch wants a call every few hundred ms
        r.client.result("motion.velocity", {"yaw": 0.4})
        time.sleep(0.1)
    moved = pose(r.cam)[0] - start_yaw
    wait_for(r.cam.still, 10, "the camera stopped after the rates ended")
    moves = r.moves()
    continuous = [m for m in moves if m[1] == "ContinuousMove"]
    print(f"\nyaw 0.4 rad/s for 2 s: moved {moved:.3f} rad with {len(continuous)} ContinuousMoves")
    assert continuous and all(m[2]["timeout"] == int(m[2]["timeout"]) for m in continuous), continuous
    # yaw left = pan negative (a velocity that is positive where the camera's velocity is reversed)
    assert all((m[2]["pantilt"][0] > 0) == reversed_pan for m in continuous), continuous
    assert moved > 0.4, moved
    assert moves[-1][1] == "Stop" and moves[-1][0] > continuous[-1][0], moves[-3:]
    assert r.stand()["state"] == "connected"  # no fractional Timeout broke the camera


@pytest.mark.parametrize("held", [None, "GetStatus", "ContinuousMove"])
def test_sigterm_mid_move_stops_the_camera_without_waiting_for_the_request_in_flight(rig, held):
    """Issue 24: the Stop reaches the camera within one round trip of SIGTERM. With `held` the
    camera holds every reply to that request from before the signal: the Stop must reach it while
    the request in flight is still unanswered (dockd gives it up, closing its connection, rather
    than wait for an answer it no longer needs), and dockd never has two requests in flight (the
    fixture's check: one given up is no longer in flight). A move given up is followed by a second
    Stop once the first is answered (a camera serving connections in parallel could act on the
    move after the first)."""
    r = rig(default_timeout=180.0)
    r.connected()
    r.client.result("motion.velocity", {"yaw": 0.3})
    wait_for(lambda: not r.cam.still(), 10, "the camera moving")
    round_trip = r.client.result("stand.get")["counters"]["round_trip_ms"]
    if held:
        with r.cam.lock:
            r.cam.hold = {held}
        if held == "ContinuousMove":
            r.client.result("motion.velocity", {"yaw": 0.35})  # a new rate: a ContinuousMove now
        wait_for(lambda: r.cam.held, 10, f"a {held} reply held")
    signalled = time.monotonic()
    r.dockd.send_signal(signal.SIGTERM)
    r.dockd.wait(20)
    moves = r.moves(since=signalled)
    assert moves and moves[-1][1] == "Stop", (r.moves()[-3:], r.log.read_text()[-1500:])
    assert r.cam.still()
    if held:
        # No held reply was ever sent: the Stop went without one.
        wait_for(lambda: len(r.cam.given_up) == len(r.cam.held), 10, f"every held {held} given up by dockd")
        assert {a for _, a in r.cam.given_up} == {held}, r.cam.given_up
    if held == "ContinuousMove":
        assert [m[1] for m in moves] == ["Stop", "Stop"], moves
    with r.cam.lock:
        requests = list(r.cam.log)
    stop_arrived = next(e[0] for e in requests if e[2] == "Stop" and e[0] >= signalled)
    before = max((e for e in requests if e[0] < signalled), key=lambda e: e[0])
    print(f"\nSIGTERM mid-move{f' ({held} replies held)' if held else ''}: the camera's Stop arrived "
          f"{stop_arrived - signalled:.3f} s after the signal, acted on {moves[0][0] - signalled:.3f} s after it (the camera's "
          f"round trip {round_trip} ms, smoothed; the last request before the signal a {before[2]} {signalled - before[0]:.3f} s "
          f"before it), dockd gone {time.monotonic() - signalled:.2f} s after it")


def test_a_wrong_password_is_a_clear_error_and_never_shown(rig):
    r = rig(password="not-the-password")
    stand = wait_for(lambda: (lambda s: s if s.get("last_error") else None)(r.stand()), 30, "the link's error")
    assert stand["state"] != "connected"
    assert "NotAuthorized" in stand["last_error"], stand
    listing = subprocess.run([str(BIN / "dockctl"), "list", "--socket", str(r.tmp / "d.sock")], capture_output=True, text=True, timeout=20)
    assert listing.returncode == 0 and "NotAuthorized" in listing.stdout, (listing.stdout, listing.stderr)
    for text in (listing.stdout, listing.stderr, json.dumps(stand), r.log.read_text()):
        assert "not-the-password" not in text and PASSWORD not in text
    print(f"\nwrong password: {stand['last_error']}")


def test_a_password_file_others_can_read_is_refused(rig):
    r = rig(mode=0o644)
    stand = wait_for(lambda: (lambda s: s if s.get("last_error") else None)(r.stand()), 30, "the link's error")
    assert "chmod 600" in stand["last_error"] and stand["state"] != "connected", stand
    assert not [e for e in r.cam.log if e[2] != "GetSystemDateAndTime"]


def test_a_soap_fault_and_an_http_500_are_reported_not_crashed(rig):
    r = rig()
    r.connected()
    c = r.client
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    real = r.cam.ptz_AbsoluteMove

    def busy(body):
        r.cam.ptz_AbsoluteMove = real  # once
        raise oc.Fault("Receiver", ["Action", "Busy"], "the head is busy")
    r.cam.ptz_AbsoluteMove = busy
    motion = c.result("motion.orient", {"yaw": -0.2, "duration": 1})
    c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                        and m["params"]["state"] != "running", timeout=20)
    with r.cam.lock:
        r.cam.inject += ["http500", "http500"]
    wait_for(lambda: not r.cam.inject, 20, "the injected 500s answered")
    assert r.dockd.poll() is None
    assert r.stand()["state"] == "connected"
    # Not even a reconnect: one clock request, the connect's.
    assert [e[2] for e in r.cam.log].count("GetSystemDateAndTime") == 1, [e[2] for e in r.cam.log]
    log = r.log.read_text()
    assert "the head is busy" in log and "HTTP 500" in log, log[-2000:]
    # Still steerable after both.
    motion = c.result("motion.orient", {"yaw": -0.2, "duration": 1})
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                               and m["params"]["state"] != "running", timeout=20)
    assert done["params"]["state"] == "completed", done


def test_a_camera_rebooting_mid_move_is_reconnected_and_stopped(rig):
    r = rig(default_timeout=180.0)
    r.connected()
    r.client.result("motion.velocity", {"yaw": 0.3})
    wait_for(lambda: not r.cam.still(), 10, "the camera moving")
    went = time.monotonic()
    rebooting = threading.Thread(target=r.server.reboot, kwargs={"down_for": 1.5})
    rebooting.start()
    rebooting.join(30)
    wait_for(lambda: any(m[1] == "Stop" for m in r.moves(since=went)), 60, "a Stop after the reboot")
    wait_for(lambda: r.stand()["state"] == "connected", 60, "the camera reconnected")
    assert r.cam.still()
    print(f"\nreboot: reconnected and stopped {r.moves(since=went)[0][0] - r.server.reboots[-1][1]:.2f} s after the camera was back")


def test_dockctl_attach_takes_an_onvif_address_its_driver_and_the_password_from_systemd_credentials(tmp_path):
    cam = oc.Camera(auth="wsse", password=PASSWORD)
    server = oc.Server(cam).start()
    # A second camera for the profile attach: two stands on one camera may each have a request
    # in flight at once (one per stand is what dockd keeps to).
    cam2 = oc.Camera(auth="wsse", password=PASSWORD)
    server2 = oc.Server(cam2).start()
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    for host in ("127.0.0.1", "localhost"):
        (credentials / f"onvif-{host}").write_text(PASSWORD + "\n")
        (credentials / f"onvif-{host}").chmod(0o600)
    sock = tmp_path / "d.sock"
    dockd = subprocess.Popen([str(BIN / "dockd"), "--socket", str(sock), "--socket-group", "", "--no-hotplug"],
                             env=dict(os.environ, CREDENTIALS_DIRECTORY=str(credentials)), stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for(sock.exists, 20, "dockd's socket")
        # onvif is the default driver of an onvif:// address: no --driver
        attach = subprocess.run([str(BIN / "dockctl"), "attach", f"onvif://admin@127.0.0.1:{server.port}",
                                 "--socket", str(sock)], capture_output=True, text=True, timeout=30)
        assert attach.returncode == 0, attach.stderr
        c = Client(sock)
        stand = wait_for(lambda: next((s for s in c.result("stands.list") if s["state"] == "connected"), None), 30, "the attached camera")
        assert stand["id"] == "onvif-EMU-0001" and stand["endpoint"] == f"onvif://admin@127.0.0.1:{server.port}", stand
        # A profile in the address is the one steered: the emulator's second has no PTZ configuration.
        c.result("stands.attach", {"device": f"onvif://admin@localhost:{server2.port}/Profile_2"})
        wait_for(lambda: any("Profile_2 has no PTZ configuration" in (s.get("last_error") or "") for s in c.result("stands.list")), 30,
                 "the second profile refused")
        refused = c.call("stands.attach", {"device": "onvif://admin:secret@127.0.0.1:1", "driver": "onvif"})
        assert refused["error"]["code"] == -32602 and "secret" not in refused["error"]["message"], refused
        c.close()
    finally:
        dockd.terminate()
        dockd.wait(20)
        server.stop()
        server2.stop()
    assert cam.max_in_flight == 1 and cam2.max_in_flight == 1 and PASSWORD not in (tmp_path / "dockd.err").read_text()


@pytest.mark.parametrize("motion,quirk", [(("continuous", "absolute", "relative"), None), (("continuous",), None),
                                          (("continuous",), "position_static"), (("continuous",), "no_position"),
                                          (("absolute",), None), (("relative",), None)])
def test_dockd_tracks_a_subject_through_the_camera(rig, motion, quirk):
    """The tracking loop closed through ONVIF: the Scene camera (test_tracking) sees a subject from
    wherever the emulated head points now; dockd centres it, by ContinuousMoves where the camera
    offers them — also one whose GetStatus stands still while it moves, and one whose GetStatus
    gives no position at all (both steered by the driver's estimate) — else by AbsoluteMoves or
    RelativeMoves to targets ahead on the rate's path, at its speed."""
    from test_tracking import Scene
    r = rig(motion=motion, **({quirk: True} if quirk else {}))
    r.cam.set_generic(0.0, -0.5)  # level: tilt 0° of -30…90° (the head starts 30° up)
    r.connected()
    subject = {"yaw": 0.35, "pitch": 0.05}
    scene = Scene(r.client, [subject], lambda: pose(r.cam))
    r.client.result("tracking.framing", {"mode": "center"})
    errors, centered = scene.centring(subject, 8)
    final = errors[-1][1]
    kinds = sorted({m[1] for m in r.moves()})
    print(f"\n{'+'.join(motion)}{f' ({quirk})' if quirk else ''}: centered (|u-0.5| < 0.05) after {centered} s, final |u-0.5| = {final:.3f}, moves {kinds}")
    assert centered is not None and final < 0.05, errors


@pytest.mark.parametrize("fault", ["close", "truncated", "malformed", "huge"])
def test_a_broken_reply_closes_the_link_and_the_camera_is_stopped_on_reconnect(rig, fault):
    r = rig(huge_bytes=8 << 20)
    r.connected()
    went = time.monotonic()
    with r.cam.lock:
        r.cam.inject.append(fault)
    wait_for(lambda: not r.cam.inject, 20, "the broken reply sent")
    if fault in ("malformed", "truncated"):
        # A 200 that is not XML (or whose envelope a closed connection cut off: HTTP without a
        # Content-Length ends at the close) is a failed GetStatus, reported: the link stays.
        time.sleep(0.5)  # a few polls (5 Hz) after it, to see that nothing reconnects
        assert [e[2] for e in r.cam.log].count("GetSystemDateAndTime") == 1
    else:
        wait_for(lambda: [e[2] for e in r.cam.log].count("GetSystemDateAndTime") == 2, 30, "a reconnect")
        wait_for(lambda: any(m[1] == "Stop" for m in r.moves(since=went)), 30, "the Stop at reconnect")
    r.connected()
    assert r.dockd.poll() is None
    if fault == "huge":
        assert "a reply over 1048576 bytes" in r.log.read_text()  # cut off at the cap, not read whole
    print(f"\n{fault}: {[ln for ln in r.log.read_text().splitlines() if 'reconnect' in ln or 'did not answer' in ln][:1]}")


def orient_and_settle(r, yaw, pitch):
    """motion.orient to (yaw, pitch) over 1.5 s: it completes, and the emulator's head comes to rest."""
    c = r.client
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    motion_id = c.result("motion.orient", {"yaw": yaw, "pitch": pitch, "duration": 1.5})["id"]
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion_id
                               and m["params"]["state"] != "running", timeout=30)
    assert done["params"]["state"] == "completed", (done, r.log.read_text()[-1500:])
    wait_for(r.cam.still, 10, "the head at rest")


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("motion", [("absolute",), ("relative",), ("continuous",)])
def test_each_motion_model_orients_within_tolerance(rig, motion, static):
    """Absolute-only (Reolink-like): one AbsoluteMove; relative-only: RelativeMoves from the pose
    read; velocity-only: dockd's controller closes the loop with ContinuousMoves and a Stop. Also
    on cameras whose GetStatus reports where a motion began until the head is still again (the
    emulator's position_static): while the reads do not follow what the camera was told, the
    driver estimates the pose from its moves and pan_speed/tilt_speed."""
    r = rig(motion=motion, position_static=static)
    r.connected()
    orient_and_settle(r, -0.4, 0.3)
    yaw, pitch = pose(r.cam)
    kinds = sorted({m[1] for m in r.moves()})
    print(f"\n{motion[0]} only{', status static while moving' if static else ''}: orient (-0.4, 0.3) -> ({yaw:.4f}, {pitch:.4f}) rad with {kinds}")
    assert abs(yaw + 0.4) < 0.02 and abs(pitch - 0.3) < 0.02, (yaw, pitch)


@pytest.mark.parametrize("password", [PASSWORD, "not-the-password"])
def test_a_camera_asking_for_http_digest_gets_it(rig, password):
    r = rig(auth="digest", password=password)
    if password == PASSWORD:
        r.connected()
        with r.cam.lock:
            log = list(r.cam.log)
        assert all(e[3] in ("digest", "refused") for e in log if e[2] != "GetSystemDateAndTime"), log
        # One challenge, then every request authorized without another 401.
        assert [e[4] for e in log].count(401) == 1, log
    else:
        stand = wait_for(lambda: (lambda s: s if s.get("last_error") else None)(r.stand()), 30, "the link's error")
        assert "HTTP 401" in stand["last_error"] and stand["state"] != "connected", stand
        assert "not-the-password" not in r.log.read_text() + json.dumps(stand)


@pytest.mark.parametrize("per_connection", [0, 5])
def test_requests_share_a_kept_connection_and_a_camera_closing_it_costs_nothing(rig, per_connection):
    """HTTP/1.1 keep-alive: the polls and moves go on one connection (per_connection 0); a camera
    whose server closes a connection after its fifth reply ("Connection: close", as lighttpd's
    max-keep-alive-requests does) gets a new one for the next request, with no request failed and
    no reconnect of the stand."""
    r = rig(requests_per_connection=per_connection)
    r.connected()
    began = time.monotonic()
    while time.monotonic() - began < 2.0:
        r.client.result("motion.velocity", {"yaw": 0.2})
        time.sleep(0.1)
    wait_for(r.cam.still, 10, "the camera stopped after the rates ended")
    with r.cam.lock:
        requests = r.cam.counts["requests"]
        log = list(r.cam.log)
    stand = r.stand()
    print(f"\n{per_connection or 'unlimited'} requests per connection: {requests} requests on {r.server.accepted} connections")
    assert [e[2] for e in log].count("GetSystemDateAndTime") == 1, log[:5]  # no reconnect
    assert stand["state"] == "connected" and not stand.get("last_error"), stand
    assert all(e[4] == 200 for e in log), [e for e in log if e[4] != 200]
    assert any(e[2] == "ContinuousMove" for e in log) and requests >= 20
    if per_connection:
        assert r.server.accepted >= requests // per_connection, (r.server.accepted, requests)
    else:
        assert r.server.accepted <= 2, (r.server.accepted, requests)  # the connect's and the stand's


@pytest.mark.parametrize("motion", [("absolute",), ("continuous", "absolute")])
def test_a_narrower_advertised_tilt_range_is_the_pitch_limit_and_rates_stop_there_without_a_fault(rig, motion):
    """A ceiling dome advertising a tilt position range of -1..0.2 (of the generic -1..1, here
    -30..90°: up to 42°) refuses an AbsoluteMove beyond it with a SOAP fault: dockd reports that
    limit, and a rate up ends there — on an absolute-only camera through position targets ahead
    of the head, which must not pass it."""
    r = rig(motion=motion, tilt_range=(-1.0, 0.2))
    stand = r.connected()
    axes = {a["axis"]: a for a in stand["capabilities"]["axes"]}
    top = math.radians(42.0)
    began = time.monotonic()
    # Up until the head has rested at its limit a while (the dead man's switch wants a call every few hundred ms).
    at_limit_since = None
    while time.monotonic() - began < 20 and (at_limit_since is None or time.monotonic() - at_limit_since < 1.0):
        r.client.result("motion.velocity", {"pitch": 0.5})
        if at_limit_since is None and abs(pose(r.cam)[1] - top) < 0.01:
            at_limit_since = time.monotonic()
        time.sleep(0.1)
    r.client.result("motion.stop")
    wait_for(r.cam.still, 10, "the head at rest")
    pitch = pose(r.cam)[1]
    refused = [e for e in r.cam.log if e[4] != 200]
    print(f"\ntilt range -1..0.2 ({'+'.join(motion)}): pitch limits {axes['pitch']['min']:.4f}..{axes['pitch']['max']:.4f} rad, "
          f"rates up ended at {pitch:.4f} rad; {len(refused)} requests refused")
    assert abs(axes["pitch"]["max"] - top) < 1e-3 and abs(axes["pitch"]["min"] - math.radians(-30)) < 1e-3, axes["pitch"]
    assert abs(axes["yaw"]["min"] + math.radians(170)) < 1e-3 and abs(axes["yaw"]["max"] - math.radians(170)) < 1e-3, axes["yaw"]
    assert not refused and r.cam.counts["faults"] == 0, refused
    assert abs(pitch - top) < 0.01, pitch
    # A target beyond the limit is the caller's error, said before anything moves.
    beyond = r.client.call("motion.orient", {"pitch": math.radians(60), "duration": 1})
    assert "error" in beyond and "outside the limits" in beyond["error"]["message"], beyond
    assert r.stand()["state"] == "connected"


@pytest.mark.parametrize("quirk", ["no_position", "status_fault"])
def test_a_camera_whose_status_gives_no_position_is_steered_by_the_moves_it_was_sent(rig, quirk):
    """A cheap continuous-only camera whose GetStatus gives no Position (the emulator's
    no_position), or answers it with onvif_simple_server's fault ter:NoStatus (status_fault): the
    driver dead-reckons the pose from the ContinuousMoves and Stops it sent (pan_speed /
    tilt_speed: what a velocity of 1 turns), from yaw 0, pitch 0 where the camera was at connect,
    and says so in `hardware`; dockd's controller orients it on that estimate, and rates turn it
    and end with a Stop."""
    r = rig(motion=("continuous",), **{quirk: True})
    r.cam.set_generic(0.3, -0.2)  # wherever the camera was at connect: dockd's forward
    stand = r.connected()
    start = pose(r.cam)
    assert "pose estimated from the moves" in stand["identity"]["hardware"], stand["identity"]
    c = r.client
    orient_and_settle(r, -0.4, 0.3)
    yaw, pitch = pose(r.cam)
    print(f"\nno position: orient (-0.4, 0.3) from where it was -> turned ({yaw - start[0]:.4f}, {pitch - start[1]:.4f}) rad")
    assert abs(yaw - start[0] + 0.4) < 0.02 and abs(pitch - start[1] - 0.3) < 0.02, (yaw - start[0], pitch - start[1])
    assert {m[1] for m in r.moves()} == {"ContinuousMove", "Stop"}
    # Rates: 0.3 rad/s to the left for a second, then nothing: the head turns, and stops.
    began = time.monotonic()
    while time.monotonic() - began < 1.0:
        c.result("motion.velocity", {"yaw": 0.3})
        time.sleep(0.1)
    wait_for(r.cam.still, 10, "the camera stopped after the rates ended")
    assert r.moves()[-1][1] == "Stop", r.moves()[-3:]
    turned = pose(r.cam)[0] - yaw
    # Where dockd says it points, once still, is where it really turned from its connect pose.
    state = wait_for(lambda: (lambda m: m if all(abs(v) < 1e-3 for v in m["velocities"].values()) else None)(c.latest("motion.state")["params"]),
                     10, "dockd's pose at rest")
    truth = pose(r.cam)[0] - start[0]
    print(f"rates 0.3 rad/s for 1 s: turned {turned:.3f} rad; dockd's yaw {state['positions']['yaw']:.4f}, the camera's {truth:.4f} from its connect pose")
    assert 0.25 < turned < 0.45, turned
    assert abs(state["positions"]["yaw"] - truth) < 0.02, (state["positions"], truth)


def test_a_camera_whose_position_keeps_coming_late_is_reconnected_with_growing_backoff(rig):
    """A camera whose GetStatus gives no position to the connect's three reads and one to the first
    poll after, at every connect: each link is closed for the connect to decide again, and though
    each had a handshake, the reconnects back off (0.25 s doubling) rather than go on every 1.5 s."""
    r = rig(motion=("continuous",), position_late=3)

    def delays():
        return [float(line.split("reconnecting in ")[1].split(" s")[0]) for line in r.log.read_text().splitlines()
                if "reconnecting in " in line and "GetStatus gives a position now" in line]
    wait_for(lambda: len(delays()) >= 4, 60, f"four links closed ({r.log.read_text()[-1500:]})")
    delays = delays()[:4]
    print(f"\nposition late at every connect: reconnected after {delays} s")
    assert delays == [0.25, 0.5, 1.0, 2.0], (delays, r.log.read_text()[-2000:])


def test_a_camera_whose_position_comes_later_is_reconnected_to_steer_on_it(rig):
    """A camera that gave no position at connect (its three reads half a second apart) and gives
    one later (a camera that was still booting): the link is closed with the reason, and the
    connect after it reads the position."""
    r = rig(motion=("continuous",), no_position=True)
    stand = r.connected()
    assert "pose estimated from the moves" in stand["identity"]["hardware"], stand["identity"]
    statuses = [t for t, _, action, _, _ in r.cam.log if action == "GetStatus"]
    assert len(statuses) >= 3 and statuses[2] - statuses[0] >= 0.9, statuses[:3]
    r.cam.no_position = False
    wait_for(lambda: "pose read back" in r.stand()["identity"]["hardware"], 30,
             f"the camera reconnected and read ({r.stand()}; {r.log.read_text()[-800:]})")
    assert "GetStatus gives a position now" in r.log.read_text(), r.log.read_text()[-1500:]
