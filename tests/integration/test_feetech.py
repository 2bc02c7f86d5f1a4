"""dockd's Feetech bus servo driver against a bus emulated here (tests/peers/feetech_servos.py), the
emulator itself first checked with the vendor's own SDK (PyPI feetech-servo-sdk, scservo_sdk), which
no one here wrote: it pings, reads and writes the emulated servos over a pty as it would real ones.
Then dock-driver-probe and the real dockd drive the servos through the same pty."""
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import feetech_servos as fs  # noqa: E402
from conftest import BIN, Client, wait_for  # noqa: E402
from test_drivers_peers import of, probe  # noqa: E402

STEPS_PER_RADIAN = 4096 / (2 * math.pi)


@pytest.fixture
def servos():
    links = []

    def make(**kw):
        link = fs.PtyLink(fs.Bus(**kw)).start()
        links.append(link)
        return link.bus, link
    yield make
    for link in links:
        link.stop()


# -- the emulator, checked with the vendor's SDK

def test_emulator_answers_the_vendor_sdk(servos, monkeypatch):
    import scservo_sdk as scs
    import scservo_sdk.port_handler as scs_port
    # The SDK waits 2 × LATENCY_TIMER + 2 ms (34 ms) for an answer: on a loaded machine the emulator
    # may take longer to be scheduled. Waiting longer changes nothing the test checks.
    monkeypatch.setattr(scs_port, "LATENCY_TIMER", 500)
    bus, link = servos()
    port = scs.PortHandler(link.path)
    assert port.openPort() and port.setBaudRate(1_000_000)
    handler = scs.PacketHandler(0)  # protocol end 0: STS/SMS little-endian words
    try:
        model, result, error = handler.ping(port, 1)
        assert (model, result, error) == (fs.MODEL_STS3215, scs.COMM_SUCCESS, 0)
        _, result, _ = handler.ping(port, 7)
        assert result == scs.COMM_RX_TIMEOUT, "no servo 7 on the bus: silence"
        # Present position and speed in one read: the SDK's packet is the one FeetechCodecTests
        # writes by hand (FF FF 01 04 02 38 04 BC).
        data, result, error = handler.read4ByteTxRx(port, 1, fs.PRESENT_POSITION)
        assert result == scs.COMM_SUCCESS and error == 0 and data & 0xFFFF == 2048 and data >> 16 == 0
        assert bus.received[-1][1] == bytes.fromhex("ff ff 01 04 02 38 04 bc")
        # Torque on, a goal speed, a goal: the servo turns there (for 1.5 s, time enough to read its
        # speed on a loaded machine) and reads it back.
        assert handler.write1ByteTxRx(port, 1, fs.TORQUE_ENABLE, 1) == (scs.COMM_SUCCESS, 0)
        assert handler.write2ByteTxRx(port, 1, fs.GOAL_SPEED, 100) == (scs.COMM_SUCCESS, 0)
        assert handler.write2ByteTxRx(port, 1, fs.GOAL_POSITION, 2198) == (scs.COMM_SUCCESS, 0)
        speed, result, _ = handler.read2ByteTxRx(port, 1, fs.PRESENT_SPEED)
        assert result == scs.COMM_SUCCESS and speed == 100, "turning up at its goal speed"
        wait_for(lambda: handler.read2ByteTxRx(port, 1, fs.PRESENT_POSITION)[0] == 2198, 10, "servo 1 at 2198")
        # Turning down, the speed's sign is bit 15 (scs.SCS_TOHOST(value, 15) as the SDK decodes it).
        assert handler.write2ByteTxRx(port, 1, fs.GOAL_POSITION, 2048) == (scs.COMM_SUCCESS, 0)
        speed, result, _ = handler.read2ByteTxRx(port, 1, fs.PRESENT_SPEED)
        assert result == scs.COMM_SUCCESS and scs.SCS_TOHOST(speed, 15) == -100
        # Both servos in one SYNC WRITE (goal position, time, speed), which neither answers.
        handler.write1ByteTxRx(port, 2, fs.TORQUE_ENABLE, 1)
        sync = scs.GroupSyncWrite(port, handler, fs.GOAL_POSITION, 6)
        for servo_id, goal in ((1, 1900), (2, 2300)):
            assert sync.addParam(servo_id, [goal & 0xFF, goal >> 8, 0, 0, 0xE8, 0x03])
        assert sync.txPacket() == scs.COMM_SUCCESS
        wait_for(lambda: [handler.read2ByteTxRx(port, i, fs.PRESENT_POSITION)[0] for i in (1, 2)] == [1900, 2300], 5, "both at their goals")
        # A servo in trouble says so in every status packet's error byte.
        bus.errors[2] = 0x20
        _, result, error = handler.ping(port, 2)
        assert result == scs.COMM_SUCCESS and error == 0x20 and "Overload" in handler.getRxPacketError(error)
    finally:
        port.closePort()


# -- dockd's driver against the emulator

def test_probe_turns_the_pan_servo_at_the_rate_and_feeds_back_its_reads(servos):
    bus, link = servos()
    code, lines, err = probe("feetech", link.path + "@1000000", {}, "--velocity", "yaw=0.3,pitch=-0.1", "--velocity-seconds", "1")
    assert code == 0, err
    ready = of(lines, "ready")[0]
    assert ready["serial"] == "feetech-1-2" and ready["protocol"] == "feetech-sts"
    # The connect: both servos read, held where they are, torque on, before any motion.
    first = [m for _, m in bus.received[:4]]
    assert first[0] == bytes.fromhex("ff ff 01 04 02 38 04 bc") and first[1][2] == 2
    assert first[2][4] == 0x83 and first[2][5] == fs.GOAL_POSITION and first[3][5] == fs.TORQUE_ENABLE
    pan, tilt = bus.steps(1), bus.steps(2)
    yaw, pitch = (pan - 2048) / STEPS_PER_RADIAN, (tilt - 2048) / STEPS_PER_RADIAN
    print(f"\nyaw {yaw:.3f} rad, pitch {pitch:.3f} rad after --velocity-seconds 1")
    # Turned at the rates (pan steps growing to the left) for about a second, then held.
    assert 0.2 < yaw < 0.45 and -0.15 < pitch < -0.06, (yaw, pitch)
    assert bus.still()
    summary = of(lines, "summary")[0]
    assert summary["feedback_hz"] > 10, summary
    assert math.isclose(summary["final_yaw"], yaw, abs_tol=0.01) and math.isclose(summary["final_pitch"], pitch, abs_tol=0.01)


def test_probe_reports_a_servos_overload_as_a_refusal(servos):
    bus, link = servos(errors={1: 0x20})
    code, lines, err = probe("feetech", link.path + "@1000000", {}, "--velocity", "yaw=0.3", "--velocity-seconds", "1")
    refusals = of(lines, "refused")
    assert refusals and "servo 1 (pan) reports overload" in refusals[0]["reason"], lines[:6]


def test_dockd_orients_and_tracks_through_the_servos(servos, tmp_path):
    from test_tracking import Scene
    bus, link = servos()
    config = tmp_path / "dockd.conf"
    config.write_text(f'[[device]]\npath = "{link.path}"\ndriver = "feetech"\ntilt_direction = "reversed"\n')
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        stand = wait_for(lambda: next((s for s in c.result("stands.list") if s["state"] == "connected"), None), 15, "the servo head")
        assert stand["id"] == "feetech-1-2" and stand["driver"] == "feetech"
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
        motion = c.result("motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1.5})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=10)
        assert done["params"]["state"] == "completed", (done, (tmp_path / "dockd.err").read_text()[-1500:])
        wait_for(bus.still, 5, "the servos at rest")
        yaw, pitch = (bus.steps(1) - 2048) / STEPS_PER_RADIAN, -(bus.steps(2) - 2048) / STEPS_PER_RADIAN
        assert abs(yaw - 0.3) < 0.02 and abs(pitch - 0.1) < 0.02, (yaw, pitch)

        def pose():
            return (bus.steps(1) - 2048) / STEPS_PER_RADIAN, -(bus.steps(2) - 2048) / STEPS_PER_RADIAN
        subject = {"yaw": -0.2, "pitch": 0.05}
        scene = Scene(c, [subject], pose)
        c.result("tracking.framing", {"mode": "center"})
        errors, centered = scene.centring(subject, 6)
        print(f"\nfeetech: centred (|u-0.5| < 0.05) after {centered} s, final |u-0.5| = {errors[-1][1]:.3f}")
        assert centered is not None and errors[-1][1] < 0.05, errors
        c.close()
    finally:
        dockd.terminate()
        dockd.wait(5)


def start_dockd(link, tmp_path):
    config = tmp_path / "dockd.conf"
    config.write_text(f'[[device]]\npath = "{link.path}"\ndriver = "feetech"\n')
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp_path / "dockd.err", "wb"))
    wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
    c = Client(tmp_path / "d.sock")
    wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 15, "the servo head")
    return dockd, c


def turn_left(c, bus, seconds=1.0):
    """motion.velocity yaw 0.5 rad/s renewed every 0.1 s for `seconds`, as a client steering."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        c.result("motion.velocity", {"yaw": 0.5})
        time.sleep(0.1)
    assert not bus.still(), "turning when the test ends the client's rates"


@pytest.mark.parametrize("signal", ["SIGTERM", "SIGKILL"])
def test_the_servos_stop_when_dockd_ends_even_killed(servos, tmp_path, signal):
    """SIGTERM: dockd's stop holds both servos where they are. SIGKILL: nothing more is written, and
    the last goal lies no more than the driver's lead (0.3 s of the rate) ahead: the servo stops
    there by itself, instead of running on to the end of its range."""
    bus, link = servos()
    dockd, c = start_dockd(link, tmp_path)
    try:
        turn_left(c, bus)
        getattr(dockd, "terminate" if signal == "SIGTERM" else "kill")()
        at_signal = bus.steps(1)
        dockd.wait(5)
        wait_for(bus.still, 2, "the servos at rest")
        moved = (bus.steps(1) - at_signal) / STEPS_PER_RADIAN
        print(f"\n{signal}: moved {moved:.3f} rad after the signal")
        goals = [m for _, m in bus.received if m[4] == 0x83 and m[5] == fs.GOAL_POSITION]
        assert goals[-1][7] == 1 and abs(int.from_bytes(goals[-1][8:10], "little") - bus.steps(1)) < 1, "at rest at the last goal written"
        # 0.5 rad/s: a stop within about a poll's worth; a kill within the 0.3 s lead (0.15 rad)
        # ahead of a read no newer than now.
        assert -0.005 < moved < (0.05 if signal == "SIGTERM" else 0.16), moved  # a hold rounds to a step
        assert bus.servos[1].table[fs.TORQUE_ENABLE] == 1, "held, not let go"
    finally:
        if dockd.poll() is None:
            dockd.kill()
            dockd.wait(5)
        c.close()
