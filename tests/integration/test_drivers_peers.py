"""dockd's hardware drivers against peers no one here wrote: the VISCA driver against a VISCA
camera emulator (tests/peers/visca_camera.py), itself validated with the PyPI `visca-over-ip`
controller, and the MAVLink gimbal driver against a gimbal device played by `pymavlink`. The
drivers run in real time through dock-driver-probe (DockDrivers + DockIO on a pty or UDP)."""
import json
import statistics
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import driver_fixtures  # noqa: E402
import mavlink_gimbal as mg  # noqa: E402
import visca_camera as vc  # noqa: E402
from conftest import BIN  # noqa: E402

GENERIC = ROOT / "profiles" / "visca" / "generic-ptzoptics.json"
SONY = ROOT / "profiles" / "visca" / "sony-brc-h700.json"  # 5 pan nibbles, raw pan growing left, VV 00
EMULATOR_HOST = "127.0.0.2"
VISCA_PORT = vc.free_udp_port(EMULATOR_HOST)  # visca-over-ip binds 0.0.0.0 at the camera's port


def probe(driver, endpoint, options, *args, seconds=2.5, user=None):
    # As `user` (a uid): dockd runs unprivileged, where a socket option only root may set fails.
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    cmd = [*prefix, str(BIN / "dock-driver-probe"), "--driver", driver, "--endpoint", endpoint, "--seconds", str(seconds)]
    for k, v in options.items():
        cmd += ["--option", f"{k}={v}"]
    p = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=30 + seconds)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return p.returncode, lines, p.stderr


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def of(lines, kind):
    return [line for line in lines if line["report"] == kind]


@pytest.fixture
def camera():
    links = []

    def make(profile=GENERIC, link="pty", **kw):
        cam = vc.Camera(vc.load_profile(profile), **kw)
        if link == "pty":
            lk = vc.PtyLink(cam).start()
        elif link == "tcp":
            lk = vc.TcpLink(cam).start()
        else:
            lk = vc.UdpLink(cam, EMULATOR_HOST, VISCA_PORT, raw=(link == "raw")).start()
        links.append(lk)
        return cam, lk
    yield make
    for lk in links:
        lk.stop()


# -- the emulator itself, checked with a VISCA controller we did not write

def test_emulator_answers_visca_over_ip_controller(camera):
    from visca_over_ip import Camera
    cam, link = camera(link="udp")
    controller = Camera(EMULATOR_HOST, VISCA_PORT)
    try:
        assert link.control == [b"\x01"], "sequence reset"
        assert cam.received[0][1] == bytes.fromhex("81 01 00 01 ff"), "IF_Clear on connect"
        assert controller.get_pantilt_position() == (0, 0)
        controller.pantilt(-13, -7)  # visca-over-ip: negative = direction 01 = left / up
        time.sleep(0.5)
        pan, tilt = controller.get_pantilt_position()
        assert pan < -50 and tilt > 10, (pan, tilt)
        controller.pantilt(0, 0)
        time.sleep(0.05)
        stopped = controller.get_pantilt_position()
        time.sleep(0.2)
        assert controller.get_pantilt_position() == stopped
        controller.pantilt(24, 20, 1000, -200)
        wait_until(lambda: controller.get_pantilt_position() == (1000, -200), 3, "absolute move")
        controller.pantilt_home()
        wait_until(lambda: controller.get_pantilt_position() == (0, 0), 3, "home")
        # visca-over-ip sends inquiries as payload type 0x0100 (Sony: 0x0110); the emulator takes both.
        assert {t for t, m in cam.received if m[1] == 0x09} == {0x0100}
        assert cam.counts["errors"] == 0
    finally:
        controller.close_connection()


def test_emulator_zooms_for_a_visca_over_ip_controller(camera):
    """CAM_Zoom Tele/Wide variable, Stop, Direct and CAM_ZoomPosInq as visca-over-ip sends them."""
    from visca_over_ip import Camera
    cam, link = camera(link="udp")
    controller = Camera(EMULATOR_HOST, VISCA_PORT)
    try:
        assert controller.get_zoom_position() == 0, "the wide end"
        controller.zoom(7)  # tele, fastest
        wait_until(lambda: controller.get_zoom_position() > 2000, 3, "zooming in")
        controller.zoom(0)
        time.sleep(0.05)
        stopped = controller.get_zoom_position()
        time.sleep(0.2)
        assert controller.get_zoom_position() == stopped, "stopped"
        controller.zoom_to(1.0)  # 0x4000, the optical tele end
        wait_until(lambda: controller.get_zoom_position() == 0x4000, 5, "zoom direct to the tele end")
        controller.zoom(-3)  # wide
        wait_until(lambda: controller.get_zoom_position() < 0x4000 - 500, 3, "zooming out")
        controller.zoom(0)
        assert cam.counts["errors"] == 0
    finally:
        controller.close_connection()


def test_emulator_keeps_presets_for_a_visca_over_ip_controller(camera):
    """CAM_Memory as visca-over-ip sends it: Set keeps where the head is, Recall goes back there,
    Reset forgets it (a Recall of a forgotten memory leaves the head where it is)."""
    from visca_over_ip import Camera
    cam, link = camera(link="udp")
    controller = Camera(EMULATOR_HOST, VISCA_PORT)
    try:
        controller.pantilt(24, 20, 1000, -200)
        wait_until(lambda: controller.get_pantilt_position() == (1000, -200), 3, "absolute move")
        controller.save_preset(5)
        controller.pantilt_home()
        wait_until(lambda: controller.get_pantilt_position() == (0, 0), 3, "home")
        controller.recall_preset(5)
        wait_until(lambda: controller.get_pantilt_position() == (1000, -200), 3, "the preset recalled")
        assert set(cam.memories) == {5}
        controller._send_command("04 3F 00 05")  # Reset: visca-over-ip has no method for it
        wait_until(lambda: not cam.memories, 3, "memory 5 reset")
        assert cam.counts["errors"] == 0
    finally:
        controller.close_connection()


def test_emulator_moves_from_when_each_drive_arrived_even_when_its_physics_thread_does_not_run():
    """On a busy machine the emulator's physics thread can miss its 5 ms ticks for a long while.
    A real camera still turns from the moment a drive arrives and answers where it is now: so must
    the emulator, or dockd is tested against a plant that acts on time before the command came and
    reports stale positions (that rang the visca-over-ip tracking test beside stress-ng)."""
    cam = vc.Camera(vc.load_profile(GENERIC))  # no link: nothing steps it but its messages and reads
    replies = []
    speed = cam.pan.speed(0x10)  # degrees/s, to the right
    before_drive = time.monotonic()
    cam.handle(bytes.fromhex("81 01 06 01 10 10 02 03 ff"), replies.append)
    after_drive = time.monotonic()
    time.sleep(0.2)  # the time it turns for, measured below: not a wait for an event
    before_inquiry = time.monotonic()
    cam.handle(bytes.fromhex("81 09 06 12 ff"), replies.append)
    after_inquiry = time.monotonic()
    cam.handle(bytes.fromhex("81 01 06 01 10 10 03 03 ff"), replies.append)
    after_stop = time.monotonic()
    wait_until(lambda: any(r[1] == 0x50 and len(r) > 3 for r in replies), 10, "the position reply")
    answered = cam.pan.degrees(vc.signed(next(r for r in replies if r[1] == 0x50 and len(r) > 3)[2:2 + cam.pan.nibbles]))
    assert speed * (before_inquiry - after_drive) - 0.1 <= answered <= speed * (after_inquiry - before_drive) + 0.1, (answered, speed)
    stopped = cam.degrees()[0]
    assert speed * (before_inquiry - after_drive) <= stopped <= speed * (after_stop - before_drive), (stopped, speed)
    time.sleep(0.1)
    assert cam.degrees()[0] == stopped, "stopped"


def test_gimbal_turns_from_when_each_rate_arrived_even_when_its_run_thread_does_not_run():
    """The same for the MAVLink gimbal: a rate acts from its SET_ATTITUDE's arrival, however late
    the run thread steps."""
    gimbal = mg.Gimbal(lambda data: None)  # not started: nothing steps it but what it is sent
    controller = mg.mavlink.MAVLink(None, srcSystem=1, srcComponent=191)
    nan = float("nan")

    def rate(yaw):
        return mg.mavlink.MAVLink_gimbal_device_set_attitude_message(
            1, mg.GIMBAL_COMP, 4 | 8 | 32, [nan] * 4, nan, 0.0, yaw).pack(controller)
    before_rate = time.monotonic()
    gimbal.feed(rate(-0.5))
    after_rate = time.monotonic()
    time.sleep(0.2)  # the time it turns for, measured below: not a wait for an event
    before_stop = time.monotonic()
    gimbal.feed(rate(0.0))
    after_stop = time.monotonic()
    assert -0.5 * (after_stop - before_rate) <= gimbal.yaw <= -0.5 * (before_stop - after_rate), gimbal.yaw


def test_fixture_bytes_are_still_what_visca_over_ip_and_pymavlink_send():
    """The Swift tests compare dockd's encoders with these files; regenerate them from the peers now."""
    fixtures = ROOT / "Tests" / "DockDriversTests" / "Fixtures"
    assert json.loads((fixtures / "visca_commands.json").read_text()) == driver_fixtures.visca_commands()
    assert json.loads((fixtures / "mavlink_frames.json").read_text()) == json.loads(json.dumps(driver_fixtures.mavlink_frames()))


# -- dockd's VISCA driver against the emulator

def test_visca_over_pty_velocity_moves_the_camera_and_polls_feed_back(camera):
    cam, link = camera(link="pty")
    code, lines, err = probe("visca", link.path + "@9600", {"profile": GENERIC, "transport": "serial"},
                             "--velocity", "yaw=0.3,pitch=0.1", "--velocity-seconds", "1")
    assert code == 0, err
    ready = of(lines, "ready")[0]
    assert ready["serial"] == "visca-1" and ready["protocol"] == "visca"
    # AddressSet, then IF_Clear, Stop and the first poll, then the limits (LimitClear, both corners).
    assert [m.hex(" ") for _, m in cam.received[:4]] == ["88 30 01 ff", "81 01 00 01 ff", "81 01 06 01 01 01 03 03 ff", "81 09 06 12 ff"]
    assert [m.hex(" ") for _, m in cam.received if m[1:4] == b"\x01\x06\x07"] == [
        "81 01 06 07 01 01 07 0f 0f 0f 07 0f 0f 0f ff", "81 01 06 07 01 00 07 0f 0f 0f 07 0f 0f 0f ff"]
    # 0.3 rad/s = 17.2°/s → byte 0x0f (19°/s) left; 0.1 rad/s = 5.7°/s → byte 0x06 (6°/s) up.
    drive = bytes.fromhex("81 01 06 01 0f 06 01 01 ff")
    assert drive in [m for _, m in cam.received]
    # Turned from the drive's arrival to the Stop's, at those bytes' speeds; where it stands is that,
    # however late a loaded host sent the Stop (the test once asked -21 < pan < -17, 1 s ± 0.1 s).
    went = next(t for t, m in cam.messages(b"\x01\x06\x01") if m == drive)
    stopped = next(t for t, m in cam.messages(b"\x01\x06\x01", since=went) if vc.is_stop(m))
    pan, tilt = cam.degrees()
    print(f"\ndriven {stopped - went:.3f} s for --velocity-seconds 1; pan {pan:.2f}°, tilt {tilt:.2f}°")
    assert abs(pan + cam.pan.speed(0x0f) * (stopped - went)) < 0.05 and abs(tilt - cam.tilt.speed(0x06) * (stopped - went)) < 0.05
    # The script's Stop after about --velocity-seconds, well before the run's end (2.5 s) would stop it.
    assert 0.8 < stopped - went < 1.8, stopped - went
    summary = of(lines, "summary")[0]
    # Polled at 20 Hz; a loaded host answers late and polls less (19.5 Hz seen at load 16). Fails
    # polls at half the rate or less (polls waiting behind the drives, a poll interval doubled).
    print(f"feedback {summary['feedback_hz']:.1f} Hz")
    assert summary["feedback_hz"] > 10
    assert math.isclose(summary["final_yaw"], -math.radians(pan), abs_tol=0.002)
    assert math.isclose(summary["final_pitch"], math.radians(tilt), abs_tol=0.002)
    assert cam.counts["errors"] == 0 and cam.counts["buffer_full"] == 0, "one message in flight: no buffer-full storms"


def test_visca_over_ip_closes_the_loop_on_polled_position(camera):
    cam, link = camera(link="udp")
    code, lines, err = probe("visca", f"udp:{EMULATOR_HOST}:{VISCA_PORT}", {"profile": GENERIC, "transport": "ip"},
                             "--target", "yaw=0.4,pitch=-0.2")
    assert code == 0, err
    assert link.control == [b"\x01"]
    assert of(lines, "ready")[0]["protocol"] == "visca-over-ip"
    summary = of(lines, "summary")[0]
    assert abs(summary["final_yaw"] - 0.4) < 0.01 and abs(summary["final_pitch"] + 0.2) < 0.01, summary
    pan, tilt = cam.degrees()
    assert abs(pan + math.degrees(0.4)) < 0.6 and abs(tilt + math.degrees(0.2)) < 0.6
    assert {t for t, m in cam.received if m[1] == 0x09} == {0x0110}, "inquiries as Sony's payload type 0x0110"
    assert cam.counts["buffer_full"] == 0


def test_visca_raw_udp_position_on_a_five_nibble_sony_profile(camera):
    cam, link = camera(profile=SONY, link="raw")
    code, lines, err = probe("visca", f"udp:{EMULATOR_HOST}:{VISCA_PORT}", {"profile": SONY, "transport": "raw-udp", "name": "brc"},
                             "--position", "yaw=-0.3,pitch=0.2", "--duration", "1")
    assert code == 0, err
    assert of(lines, "ready")[0]["serial"] == "brc"
    moves = [m for _, m in cam.received if m[2:4] == b"\x06\x02"]
    assert len(moves) == 1 and len(moves[0]) == 4 + 2 + 5 + 4 + 1  # header, speeds, 5 pan + 4 tilt nibbles, FF
    pan, tilt = cam.degrees()
    assert abs(pan - math.degrees(0.3)) < 0.05 and abs(tilt - math.degrees(0.2)) < 0.05, (pan, tilt)
    summary = of(lines, "summary")[0]
    assert abs(summary["final_yaw"] + 0.3) < 0.002 and abs(summary["final_pitch"] - 0.2) < 0.002


@pytest.mark.parametrize("user", [None, 65534], ids=["root", "unprivileged"])
def test_visca_raw_tcp_stream_without_address_set(camera, user):
    cam, link = camera(link="tcp")
    host, port = link.address
    code, lines, err = probe("visca", f"tcp:{host}:{port}", {"profile": GENERIC, "transport": "raw-tcp"},
                             "--target", "yaw=-0.3,pitch=0.1", seconds=2.0, user=user)
    assert code == 0, err
    assert cam.received[0][1] == bytes.fromhex("81 01 00 01 ff"), "IF_Clear first, no AddressSet on TCP"
    summary = of(lines, "summary")[0]
    assert abs(summary["final_yaw"] + 0.3) < 0.01 and abs(summary["final_pitch"] - 0.1) < 0.01


def test_visca_zoom_rate_is_tele_wide_and_its_stop_and_feedback_is_the_lens_magnification(camera):
    cam, link = camera(link="pty")
    code, lines, err = probe("visca", link.path + "@9600", {"profile": GENERIC, "transport": "serial"},
                             "--velocity", "zoom=0.5", "--velocity-seconds", "1")
    assert code == 0, err
    zoom = next(a for a in of(lines, "ready")[0]["axes"] if a["axis"] == "zoom")
    assert zoom["min"] == 1 and zoom["max"] == 20
    sent = [m.hex(" ") for _, m in cam.received if m[1:4] == b"\x01\x04\x07"]
    # 0.5x/s at the wide end is 3306 position units/s: variable speed 5 (3200), tele; then its Stop.
    assert sent[0] == "81 01 04 07 25 ff" and sent[-1] == "81 01 04 07 00 ff", sent
    assert any(m[1:4] == b"\x09\x04\x47" for _, m in cam.received), "CAM_ZoomPosInq polled"
    # At 3200 units/s (speed 5) from the Tele's arrival to the Stop's: about 1 s, longer when a
    # loaded host sends the Stop late (the test once asked 2400-4000 units, 1 s ± 0.25 s).
    tele = next(t for t, m in cam.messages(b"\x01\x04\x07") if m[4] == 0x25)
    stop = next(t for t, m in cam.messages(b"\x01\x04\x07", since=tele) if m[4] == 0x00)
    position = cam.zoom_position()
    print(f"\nzoomed {stop - tele:.3f} s for --velocity-seconds 1: {position:.0f} units")
    assert abs(position - cam.zoom.lo - cam.zoom.speeds[5] * (stop - tele)) < 2, position
    assert 0.8 < stop - tele < 1.8, stop - tele
    assert math.isclose(of(lines, "summary")[0]["final_zoom"], cam.magnification(position), abs_tol=0.01)
    assert cam.counts["errors"] == 0


def test_visca_zoom_target_is_zoom_direct_and_the_lens_gets_there(camera):
    cam, link = camera(SONY, link="udp")
    code, lines, err = probe("visca", f"udp:{EMULATOR_HOST}:{VISCA_PORT}", {"profile": SONY, "transport": "ip"},
                             "--position", "zoom=4", seconds=3.5)
    assert code == 0, err
    direct = [m for _, m in cam.received if m[1:4] == b"\x01\x04\x47"]
    assert len(direct) == 1, direct
    target = vc.signed(b"\x00" + direct[0][4:8])
    assert math.isclose(cam.magnification(target), 4, abs_tol=0.01)
    wait_until(lambda: cam.zoom_position() == target, 5, "the lens at its target")
    assert math.isclose(of(lines, "summary")[0]["final_zoom"], 4, abs_tol=0.01)
    assert cam.counts["errors"] == 0


def test_visca_buffer_full_backs_off_and_errors_are_refusals(camera):
    cam, link = camera(link="pty")
    # The first drives meet buffer full twice, then a refusal.
    cam.inject_motion = ["buffer_full", "buffer_full", "not_executable"]
    code, lines, err = probe("visca", link.path + "@9600", {"profile": GENERIC},
                             "--velocity", "yaw=0.3", "--velocity-seconds", "1.5")
    assert code == 0, err
    refused = of(lines, "refused")
    assert [r["reason"] for r in refused] == ["command not executable"] and refused[0]["command"] == 0x10
    assert cam.counts["buffer_full"] == 2, "each buffer-full answered by one delayed resend, no storm"
    assert cam.degrees()[0] < -10, "the velocity went through after the refusal"


def test_visca_drive_bytes_equal_visca_over_ip_for_the_same_speeds(camera):
    """Live: what dockd's driver put on the wire vs what visca-over-ip sends for the same command."""
    from visca_over_ip import Camera
    cam, link = camera(link="udp")
    code, lines, err = probe("visca", f"udp:{EMULATOR_HOST}:{VISCA_PORT}", {"profile": GENERIC, "transport": "ip"},
                             "--velocity", "yaw=-0.5,pitch=0.3", "--velocity-seconds", "0.5", seconds=1.0)
    assert code == 0, err
    ours = [m for _, m in cam.received if m[2:4] == b"\x06\x01" and m[6:8] != b"\x03\x03"]
    assert ours, cam.received
    # dockd: yaw −0.5 rad/s (right) = 28.6°/s → byte 17 (32°/s); pitch 0.3 rad/s (up) = 17.2°/s → byte 11 (18°/s).
    before = len(cam.received)
    controller = Camera(EMULATOR_HOST, VISCA_PORT)
    try:
        controller.pantilt(17, -11)  # right at 17, up at 11
        wait_until(lambda: any(m[2:4] == b"\x06\x01" for _, m in cam.received[before:]), 5, "visca-over-ip's drive")
        theirs = [m for _, m in cam.received[before:] if m[2:4] == b"\x06\x01"]
    finally:
        controller.close_connection()
    assert ours[0] == theirs[0] == bytes.fromhex("81 01 06 01 11 0b 02 01 ff")


# -- dockd's MAVLink gimbal driver against pymavlink

@pytest.fixture
def gimbal():
    made = []

    def make(link="pty", **kw):
        g = (mg.PtyGimbal(**kw) if link == "pty" else mg.UdpGimbal(**kw)).start()
        made.append(g)
        return g
    yield make
    for g in made:
        g.stop()


def test_mavlink_gimbal_over_pty_gets_the_commanded_rates(gimbal):
    g = gimbal("pty")
    code, lines, err = probe("mavlink", g.path + "@115200", {}, "--velocity", "yaw=0.3,pitch=0.2", "--velocity-seconds", "1")
    assert code == 0, err
    ready = of(lines, "ready")[0]
    assert ready["model"] == "PeerGimbal" and ready["firmware"] == "1.2.3" and ready["serial"] == "mavlink-1234abcd"
    yaw_axis = [a for a in ready["axes"] if a["axis"] == "yaw"][0]
    assert math.isclose(yaw_axis["min"], -2.6, abs_tol=1e-6) and math.isclose(yaw_axis["max"], 2.6, abs_tol=1e-6)
    types = {m.get_type() for m in g.gimbal.received}
    assert {"HEARTBEAT", "COMMAND_LONG", "GIMBAL_DEVICE_SET_ATTITUDE"} <= types
    hb = [m for m in g.gimbal.received if m.get_type() == "HEARTBEAT"][0]
    assert hb.type == 18 and hb.get_srcComponent() == 191
    req = [m for m in g.gimbal.received if m.get_type() == "COMMAND_LONG" and m.command == 512]
    assert req and int(req[0].param1) == 283
    sets = g.gimbal.set_attitudes
    moving = [m for m in sets if m.angular_velocity_z != 0]
    assert moving and all(math.isnan(v) for v in moving[0].q)
    # Stand yaw left 0.3 rad/s = FRD z −0.3; pitch up 0.2 = FRD y +0.2 (decoded by pymavlink).
    assert math.isclose(moving[0].angular_velocity_z, -0.3, rel_tol=1e-6)
    assert math.isclose(moving[0].angular_velocity_y, 0.2, rel_tol=1e-6)
    assert moving[0].flags == 4 | 8 | 32 and moving[0].target_component == 154
    assert sets[-1].angular_velocity_z == 0 and sets[-1].angular_velocity_y == 0, "STOP after the velocity period"
    # The gimbal turned right (FRD) at the rates it got, from the first to the zero rates' arrival:
    # about 1 s, longer when a loaded host sends the STOP late (the test once asked -0.33 < yaw <
    # -0.27, 1 s +- 0.1 s); dockd reports it as + stand yaw.
    times = g.gimbal.set_attitude_times
    went = times[sets.index(moving[0])]
    stopped = next(t for t, m in zip(times, sets) if t > went and m.angular_velocity_z == 0)
    turned = sum(m.angular_velocity_z * (b - a) for m, a, b in zip(sets, times, times[1:]))
    print(f"\nturned {stopped - went:.3f} s for --velocity-seconds 1: yaw {g.gimbal.yaw:.4f} rad")
    assert abs(g.gimbal.yaw - turned) < 1e-3 and 0.8 < stopped - went < 1.8, (g.gimbal.yaw, turned, stopped - went)
    assert abs(g.gimbal.pitch - 0.2 / 0.3 * -g.gimbal.yaw) < 1e-3, (g.gimbal.pitch, g.gimbal.yaw)
    summary = of(lines, "summary")[0]
    # 50 Hz attitude status; fewer when a loaded host delivers late. Fails a halved rate.
    print(f"feedback {summary['feedback_hz']:.1f} Hz")
    assert abs(summary["final_yaw"] + g.gimbal.yaw) < 0.01 and summary["feedback_hz"] > 25


def test_mavlink_gimbal_over_udp_closed_loop_and_attitude_command(gimbal):
    g = gimbal("udp")
    code, lines, err = probe("mavlink", f"udp:127.0.0.1:{g.port}", {}, "--target", "yaw=-0.5,pitch=0.3")
    assert code == 0, err
    summary = of(lines, "summary")[0]
    assert abs(summary["final_yaw"] + 0.5) < 0.01 and abs(summary["final_pitch"] - 0.3) < 0.01
    g2 = gimbal("udp")
    code, lines, err = probe("mavlink", f"udp:127.0.0.1:{g2.port}", {}, "--position", "yaw=0.5,pitch=-0.3", seconds=1.5)
    assert code == 0, err
    q = [m for m in g2.gimbal.set_attitudes if all(math.isfinite(v) for v in m.q)][0]
    _, pitch, yaw = mg.quat_to_euler(q.q)
    assert math.isclose(yaw, -0.5, abs_tol=1e-5) and math.isclose(pitch, -0.3, abs_tol=1e-5)
    assert abs(g2.gimbal.yaw + 0.5) < 0.01


def test_mavlink_gimbal_without_device_information_uses_defaults(gimbal):
    g = gimbal("pty", answer_info=False)
    code, lines, err = probe("mavlink", g.path + "@115200", {"name": "storm"}, "--velocity", "pitch=-0.2", seconds=5)
    assert code == 0, err
    ready = of(lines, "ready")[0]
    # The first HEARTBEAT comes within 1 s (the pty is flushed on open), then 3 s for the information;
    # a loaded host adds its lateness (the bound was 4.2 s: 0.2 s of it). Still fails READY before
    # the 3 s, or after a second 3 s wait or a missed HEARTBEAT period and more.
    print(f"\nready after {ready['t']:.3f} s")
    assert ready["serial"] == "storm" and 2.9 < ready["t"] < 5.0
    assert len(of(lines, "feedback")) > 20


# -- dockd's motion controller (DockCore) closed through each driver, as the daemon runs it

@pytest.mark.parametrize("driver", ["visca-serial", "visca-ip", "mavlink-pty"])
def test_motion_controller_orientation_move_through_each_driver(driver, camera, gimbal):
    if driver.startswith("visca"):
        cam, link = camera(link="pty" if driver == "visca-serial" else "udp")
        endpoint = link.path + "@9600" if driver == "visca-serial" else f"udp:{EMULATOR_HOST}:{VISCA_PORT}"
        options = {"profile": GENERIC, "transport": "serial" if driver == "visca-serial" else "ip"}
        name = "visca"
    else:
        g = gimbal("pty")
        endpoint, options, name = g.path + "@115200", {}, "mavlink"
    code, lines, err = probe(name, endpoint, options, "--orient", "yaw=0.5,pitch=0.2", "--orient-duration", "1.5", seconds=3.5)
    assert code == 0, err
    assert [m["state"] for m in of(lines, "motion")] == ["completed"]
    orient = of(lines, "summary")[0]["orient"]
    assert orient["final_error_rad"] < 0.01 and orient["overshoot_rad"] < 0.01, orient
    # Settled by the feedback's times, which a loaded host makes late: a figure (printed), judged
    # only against twice the 1.5 s asked (was 2.0 s), which a move that creeps or hunts still fails.
    print(f"\n{driver}: settled after {orient['settled_s']:.3f} s")
    assert orient["settled_s"] < 3.0, orient


@pytest.mark.parametrize("link", ["pty", "udp"])
def test_probe_orient_completes_on_a_camera_whose_tilt_is_a_third_of_its_profile(link, camera):
    """Issue 21: the camera's own AbsolutePosition is let finish however slow its tilt."""
    cam, lk = camera(link=link, speed_scale=(1.0, 0.33))
    endpoint = lk.path + "@9600" if link == "pty" else f"udp:{EMULATOR_HOST}:{VISCA_PORT}"
    options = {"profile": GENERIC, "transport": "serial" if link == "pty" else "ip"}
    code, lines, err = probe("visca", endpoint, options, "--orient", "yaw=0.2,pitch=0.2", "--orient-duration", "1", seconds=6)
    assert code == 0, (err, of(lines, "summary"))
    assert [m["state"] for m in of(lines, "motion")] == ["completed"]
    orient = of(lines, "summary")[0]["orient"]
    assert orient["reached"] and orient["final_error_rad"] < 0.01, orient


@pytest.mark.parametrize("trouble", ["refuse_motion", "stalled_tilt"])
def test_probe_orient_exits_non_zero_when_the_target_is_not_reached(trouble, camera):
    """Issue 21: --orient ended 0.13 rad short and exited 0. A camera that refuses the move, or
    whose tilt does not turn, must make the probe say so in its exit status."""
    if trouble == "refuse_motion":
        cam, lk = camera(link="pty")
        cam.refuse_motion = "not_executable"
    else:
        cam, lk = camera(link="pty", speed_scale=(1.0, 0.0))
    code, lines, err = probe("visca", lk.path + "@9600", {"profile": GENERIC}, "--orient", "yaw=0.2,pitch=0.2",
                             "--orient-duration", "1", seconds=5)
    assert code == 3, (code, err, of(lines, "summary"))
    assert "pitch ended at" in err and "from 0.2" in err, err
    assert of(lines, "summary")[0]["orient"]["reached"] is False


# -- the real dockd owning each kind of hardware, configured the way a user would

@pytest.mark.parametrize("driver", ["visca-serial", "visca-ip", "mavlink-pty"])
def test_dockd_steers_each_driver_from_its_configuration(driver, camera, gimbal, tmp_path):
    from conftest import Client, wait_for
    if driver.startswith("visca"):
        cam, link = camera(link="pty" if driver == "visca-serial" else "udp")
        where = f'path = "{link.path}"' if driver == "visca-serial" else f'udp = "{EMULATOR_HOST}:{VISCA_PORT}"\ntransport = "ip"'
        device = f'{where}\ndriver = "visca"\nprofile = "{GENERIC}"\nname = "ptz-1"\n'
        expected_id = "ptz-1"
    else:
        g = gimbal("pty")
        device = f'path = "{g.path}"\ndriver = "mavlink"\nname = "gimbal-1"\n'
        expected_id = "gimbal-1"
    config = tmp_path / "dockd.conf"
    config.write_text(f"[[device]]\n{device}")
    dockd = subprocess.Popen([str(BIN / "dockd"),
                              "--config", str(config), "--socket", str(tmp_path / "d.sock"), "--socket-group", "", "--no-hotplug"],
                             stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        stand = wait_for(lambda: next((s for s in c.result("stands.list") if s["state"] == "connected"), None), 15,
                         "the stand through its driver")
        assert stand["id"] == expected_id and stand["driver"] == driver.split("-")[0]
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
        motion = c.result("motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1.5})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=10)
        assert done["params"]["state"] == "completed", (done, (tmp_path / "dockd.err").read_text()[-1500:])
        # The position after the completion, not a motion.state queued during the slew before it.
        c.notifications = [m for m in c.notifications if m.get("method") != "motion.state"]
        positions = c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)["params"]["positions"]
        assert abs(positions["yaw"] - 0.3) < 0.02 and abs(positions["pitch"] - 0.1) < 0.02, positions
        c.close()
    finally:
        dockd.terminate()
        dockd.wait(5)


def test_dockd_lists_a_visca_cameras_zoom_reports_where_the_lens_is_and_steers_it(camera, tmp_path):
    from conftest import Client, wait_for
    cam, link = camera(link="pty")
    config = tmp_path / "dockd.conf"
    config.write_text(f'[[device]]\npath = "{link.path}"\ndriver = "visca"\nprofile = "{GENERIC}"\nname = "ptz-1"\n')
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        stand = wait_for(lambda: next((s for s in c.result("stands.list") if s["state"] == "connected"), None), 15,
                         "the stand through its driver")
        zoom = next(a for a in stand["capabilities"]["axes"] if a["axis"] == "zoom")
        assert zoom["min"] == 1 and zoom["max"] == 20, zoom
        with cam.lock:
            cam.zoom.pos = 0x2000  # turned by someone else: dockd reads where the lens is
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
        expected = cam.magnification(0x2000)
        c.wait_notification(lambda m: m.get("method") == "motion.state"
                            and abs(m["params"]["positions"].get("zoom", 0) - expected) < 0.01, timeout=10)
        # A client's zoom: a target (CAM_Zoom Direct), then a rate (Tele/Wide) that the dead man's
        # switch ends (CAM_Zoom Stop or a zero rate).
        motion = c.result("motion.orient", {"zoom": 4, "duration": 2})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=15)
        assert done["params"]["state"] == "completed", (done, (tmp_path / "dockd.err").read_text()[-1500:])
        wait_for(lambda: abs(cam.magnification() - 4) < 0.05, 5, "the lens at 4x")
        assert any(m[1:4] == b"\x01\x04\x47" for _, m in cam.received), "CAM_Zoom Direct"
        before = cam.zoom_position()
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            c.result("motion.velocity", {"zoom": 1.0})
            time.sleep(0.1)
        assert cam.zoom_position() > before + 500, (before, cam.zoom_position())
        assert any(m[1:5] == b"\x01\x04\x07\x27" or m[1:4] == b"\x01\x04\x07" and m[4] >> 4 == 2 for _, m in cam.received), "Tele"
        wait_for(lambda: not cam.zoom.vel, 5, "the zoom stopped once the rates ended")
        c.close()
    finally:
        dockd.terminate()
        dockd.wait(5)


@pytest.mark.parametrize("driver", ["visca-serial", "visca-ip", "mavlink-pty"])
def test_dockd_tracks_a_subject_through_each_driver(driver, camera, gimbal, tmp_path):
    """The tracking loop closed through real hardware protocols: the Scene camera (test_tracking)
    sees a subject from wherever the emulated camera or gimbal points now, dockd tracks it. (Drawn
    from dockd's reports instead, the picture showed a pose as old as the poll plus the test's own
    delays while stamped as new; beside stress-ng that lag made the subject seem to move with the
    camera and the loop rang.)"""
    from conftest import Client, wait_for
    from test_tracking import Scene
    if driver.startswith("visca"):
        cam, link = camera(link="pty" if driver == "visca-serial" else "udp")
        where = f'path = "{link.path}"' if driver == "visca-serial" else f'udp = "{EMULATOR_HOST}:{VISCA_PORT}"\ntransport = "ip"'
        device = f'{where}\ndriver = "visca"\nprofile = "{GENERIC}"\n'

        def pose():
            pan, tilt = cam.degrees()
            return -math.radians(pan), math.radians(tilt)
    else:
        g = gimbal("pty")
        device = f'path = "{g.path}"\ndriver = "mavlink"\n'

        def pose():
            _, yaw, pitch, _ = g.gimbal.advance()  # FRD: yaw positive right
            return -yaw, pitch
    config = tmp_path / "dockd.conf"
    config.write_text(f"[[device]]\n{device}")
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 15, "the stand")
        subject = {"yaw": 0.35, "pitch": 0.05}
        scene = Scene(c, [subject], pose)
        c.result("tracking.framing", {"mode": "center"})
        errors, centered = scene.centring(subject, 6)
        final = errors[-1][1]
        print(f"\n{driver}: centered (|u-0.5| < 0.05) after {centered} s, final |u-0.5| = {final:.3f}")
        assert centered is not None and final < 0.05, errors
        c.close()
    finally:
        dockd.terminate()
        dockd.wait(5)


# -- dock-driver-probe --calibrate: a camera that differs from its profile, measured into a new one

def test_calibrate_measures_direction_scale_and_speeds_into_a_profile_that_drives_true(camera, tmp_path):
    # Its pan units grow the other way than the generic profile says, and it turns at 0.52× (pan)
    # and 0.44× (tilt) the table's speeds (what the issue measured on a PTZOptics-style head).
    cam, link = camera(link="pty", pan_sign=-1, speed_scale=(0.52, 0.44))
    out = tmp_path / "my-camera.json"
    code, lines, err = probe("visca", link.path + "@9600", {"profile": GENERIC}, "--calibrate", "--write-profile", str(out),
                             "--calibrate-window", "0.6", seconds=180)
    assert code == 0, (err, [l for l in lines if l["report"] != "feedback"][-5:])
    assert [l for l in lines if l.get("state") == "written"][0]["name"] == "my-camera"
    written = json.loads(out.read_text())
    generic = json.loads(GENERIC.read_text())
    assert written["pan"]["sign"] == -1 and written["tilt"]["sign"] == 1
    for axis, scale in (("pan", 0.52), ("tilt", 0.44)):
        assert abs(written[axis]["unitsPerDegree"] - 14.4) < 0.05, written[axis]
        truth = [s * scale for s in generic[axis]["speeds"]]
        measured = written[axis]["speeds"]
        assert all(b > a > 0 for a, b in zip(measured, measured[1:])), f"{axis}: the table in order, {measured}"
        # How long each byte was timed the last time (the time its written speed came from).
        timed = {l["byte"]: l["timed_s"] for l in lines if l.get("axis") == axis and "byte" in l}
        ratios = [m / t for m, t in zip(measured, truth)]
        print(f"\n{axis}: measured / true per byte " + " ".join(f"{r:.2f}" for r in ratios))
        # The scale the calibration found, over the whole table: a wrong clock, units per degree or
        # slope moves every byte alike.
        assert abs(statistics.median(ratios) - 1) < 0.05, ratios
        for byte, (m, true) in enumerate(zip(measured, truth), start=1):
            # Each byte within 20 %, plus one camera unit over the time it was timed: the position
            # reads in whole units, so a slow byte timed for 0.6 s (about 4 units) cannot be known
            # better than that (1 unit is 22 % of pan byte 1 here; the CI run under load 13-17
            # measured one 20 % slow), and a fast byte's 0.5 s window beside stress-ng at a load of 20 read one 12 %
            # fast (answers read late; the scale above is the median's to judge). Still fails a
            # turn or a stall taken into a window, a byte driven as another where the table's
            # steps are wider than that, speeds not measured at all (the table's own).
            resolution = 1 / (timed[byte] * written[axis]["unitsPerDegree"])
            assert abs(m - true) <= 0.2 * true + resolution, f"{axis} byte {byte}: {m} deg/s, truly {true} (± {resolution:.3f})"
    assert abs(written["pan"]["minDegrees"] + 170) < 0.2 and abs(written["tilt"]["maxDegrees"] - 90) < 0.2
    assert all(written["provenance"][f].startswith("measured:") for f in ("pan.sign", "pan.speeds", "tilt.unitsPerDegree"))
    # Driven through the new profile, asked 0.5 rad/s to the left, it turns left at 0.5 rad/s: the
    # pan bytes the camera got, at the speeds it truly turns at (not the polled feedback's rate,
    # which a loaded host's late answers bend).
    start, since = cam.degrees()[0], time.monotonic()
    code, lines, err = probe("visca", link.path + "@9600", {"profile": out}, "--velocity", "yaw=0.5", "--velocity-seconds", "1",
                             seconds=1.6)
    assert code == 0, err
    drives = [m for _, m in cam.messages(b"\x01\x06\x01", since=since) if vc.is_moving_drive(m)]
    assert drives and all(m[6] == 0x01 for m in drives), "driven left"
    rates = [math.radians(cam.pan.speed(m[4])) for m in drives]
    feedback = [l["yaw_velocity"] for l in of(lines, "feedback")][5:18]
    print(f"asked 0.5 rad/s: pan bytes {sorted({m[4] for m in drives})} turn at {sorted(set(rates))} rad/s; "
          f"feedback median {statistics.median(feedback) if feedback else None}")
    assert all(abs(r - 0.5) < 0.075 for r in rates), rates
    assert cam.degrees()[0] < start - 20, "it turned left"


def test_probe_ends_when_the_stand_goes_away_with_its_summary_and_status_2(tmp_path):
    # The stand (dock-sim on a Unix socket) goes away mid-run: the probe says so and ends at once,
    # its summary printed, rather than running to --seconds or failing with a bare I/O error.
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--unix", str(link), "--seed", "3"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert sim.stdout.readline().decode().startswith("unix ")
        wait_until(link.exists, 5, "dock-sim's socket")
        p = subprocess.Popen([str(BIN / "dock-driver-probe"), "--driver", "native", "--endpoint", f"unix:{link}",
                              "--seconds", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        for text in p.stdout:
            lines.append(json.loads(text))
            if lines[-1]["report"] == "feedback":
                break
        gone = time.monotonic()
        sim.kill()
        sim.wait()
        out, err = p.communicate(timeout=30)
        ended = time.monotonic() - gone
        lines += [json.loads(line) for line in out.splitlines() if line.strip()]
    finally:
        sim.kill()
        sim.wait()
    assert p.returncode == 2, err
    assert "the link closed" in err, err
    assert ended < 10, f"ended {ended:.1f} s after the stand went away"
    summary = of(lines, "summary")[0]
    assert summary["feedback"] >= 1 and "ready_s" in summary
