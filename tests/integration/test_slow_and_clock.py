"""A stand that answers late, and clocks that jump: dockd measures the delay, says so, steers across
it or refuses to, and never takes the stand's clock or the wall clock for its own."""
import signal
import time
from pathlib import Path

import pytest

from conftest import Rig, wait_for


@pytest.fixture
def rig(tmp_path):
    """dock-sim on a Unix socket: these tests time dockd against a stand's own delay, and beside a
    CPU hog a pty's starved tty work added delays of its own (conftest.Rig)."""
    r = Rig(tmp_path, link="unix")
    yield r
    r.stop()


def faults(client, needle):
    return [m for m in client.notifications if m.get("method") == "stand.fault" and needle in m["params"]["text"]]


def test_a_slow_stand_is_measured_reported_and_still_steered_without_overshoot(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 100})
    rig.sim_command("slow 200 12")
    late = c.wait_notification(lambda m: m.get("method") == "stand.fault" and "answers late" in m["params"]["text"], timeout=5)
    assert "round trip" in late["params"]["text"]
    wait_for(lambda: (c.result("stand.get")["counters"]["round_trip_ms"] or 0) > 170, 5, "the round trip to be measured")
    for attempt in range(3):
        c.notifications.clear()
        motion = c.result("motion.orient", {"yaw": 0.5, "duration": 1.0})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=10)
        # On a loaded machine dockd or dock-sim can be descheduled for the 100 ms its feedback
        # watchdog allows; that is not what this test is about, so it tries again.
        if not (done["params"]["reason"] or "").startswith("no feedback"):
            break
        time.sleep(1.1)
    assert done["params"]["state"] == "completed", done
    time.sleep(0.6)  # the last positions arrive 200 ms late
    yaws = [m["params"]["positions"]["yaw"] for m in c.notifications if m.get("method") == "motion.state"]
    assert max(yaws) < 0.5 + 0.03, f"overshoot to {max(yaws)}"
    assert abs(c.latest("motion.state")["params"]["positions"]["yaw"] - 0.5) < 0.02
    counters = c.result("stand.get")["counters"]
    assert counters["commands_failed"] == 0
    assert 170 < counters["round_trip_ms"] < 400
    # When the slow spell ends, dockd says so.
    c.wait_notification(lambda m: m.get("method") == "stand.fault" and "on time again" in m["params"]["text"], timeout=15)
    assert c.result("stand.get")["state"] == "connected"


def test_a_stand_too_slow_to_steer_gets_no_motion_and_its_running_motion_stops(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 20})
    c.result("motion.velocity", {"yaw": 0.5})
    rig.sim_command("slow 700 10")
    text = c.wait_notification(lambda m: m.get("method") == "stand.fault" and "too late to steer" in m["params"]["text"],
                               timeout=8)["params"]["text"]
    assert "motion stops and is refused" in text
    reply = c.call("motion.velocity", {"yaw": 0.5})
    assert reply["error"]["code"] == -32009 and "too late to be steered" in reply["error"]["message"], reply
    # The stand is at rest (its late FEEDBACK shows it once it arrives), and the link was kept.
    time.sleep(1.5)
    assert abs(c.latest("motion.state")["params"]["velocities"]["yaw"]) < 0.02
    assert c.result("stand.get")["state"] == "connected"


def test_the_stands_clock_jumping_changes_nothing_but_its_timestamps(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 50})
    before = c.latest("motion.state")["params"]["stand_time_us"]
    rig.sim_command("clockjump 3600")
    wait_for(lambda: c.latest("motion.state")["params"]["stand_time_us"] > before + 3_000_000_000, 5, "the jump forward")
    motion = c.result("motion.orient", {"yaw": 0.3, "duration": 0.6})
    rig.sim_command("clockjump -3700")  # mid-motion, to before the session started
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                               and m["params"]["state"] != "running", timeout=10)
    assert done["params"]["state"] == "completed", done
    assert c.latest("motion.state")["params"]["stand_time_us"] < 1_000_000
    counters = c.result("stand.get")["counters"]
    assert counters["invalid_feedback"] == 0 and counters["reconnects"] == 0
    assert not [m for m in c.notifications if m.get("method") == "stand.disconnected"]


FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")


@pytest.mark.skipif(not FAKETIME.exists(), reason="needs libfaketime (apt: libfaketime; make deps installs it)")
def test_wall_clock_jumps_leave_timers_motion_and_observations_alone(tmp_path):
    """An NTP step or a hand-set clock moves CLOCK_REALTIME by hours; dockd's deadman, heartbeats,
    control loop and observation timestamps run on CLOCK_MONOTONIC and must not notice."""
    offset = tmp_path / "faketime"
    offset.write_text("+0\n")
    # libfaketime re-reads the offset file at most once a second (reading it on every clock call
    # would slow dockd itself down by hundreds of milliseconds).
    rig = Rig(tmp_path, dockd_env={"LD_PRELOAD": str(FAKETIME), "FAKETIME_TIMESTAMP_FILE": str(offset),
                                   "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}, link="unix")

    def stamped_with(jump):
        """SIGHUP (a reload: nothing changed) until dockd logs a line stamped with the faked hour: the
        jump took effect. Once, 0.5 s after one SIGHUP, the '+2h' line still carried the real hour
        beside a CPU hog (libfaketime had not read the file again yet)."""
        shift = {"+2h": 2 * 3600, "-3d": -3 * 86400, "+1h": 3600}[jump]

        def logged():
            rig.dockd.send_signal(signal.SIGHUP)
            hours = {time.strftime("%Y-%m-%dT%H", time.gmtime(time.time() + shift - back)) for back in (0, 5)}
            return any(line[:13] in hours and "configuration reloaded" in line for line in rig.log().splitlines()) \
                or time.sleep(0.5)
        wait_for(logged, 15, f"a log line stamped {jump} from the real time")

    try:
        c = rig.client()
        rig.connected_stand(c)
        c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 100})
        for jump in ("+2h", "-3d"):
            offset.write_text(jump + "\n")
            end = time.monotonic() + 1.5  # in velocity mode while the jump takes effect
            while time.monotonic() < end:
                c.result("motion.velocity", {"yaw": 0.3 if jump == "+2h" else -0.3})
                time.sleep(0.2)
            renewed = c.latest("motion.state")["params"]["time"]
            # The deadman (0.5 s on dockd's monotonic clock) still ends velocity mode on time.
            stopped = c.wait_notification(lambda m: m.get("method") == "motion.state" and m["params"]["time"] > renewed + 0.3
                                          and abs(m["params"]["velocities"]["yaw"]) < 0.02, timeout=5)
            assert stopped["params"]["time"] - renewed < 0.5 + 0.35, f"the deadman fired late after {jump}"
            stamped_with(jump)
        offset.write_text("+1h\n")
        motion = c.result("motion.orient", {"yaw": 0.0, "duration": 1.5})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=10)
        assert done["params"]["state"] == "completed", done
        stamped_with("+1h")
        reply = c.result("tracking.observe", {"timestamp": time.monotonic() - 0.03,
                                              "observations": [{"kind": "face", "rect": {"x": 0.45, "y": 0.45, "width": 0.1, "height": 0.1}}]})
        assert reply["subjects"] >= 0
        assert c.result("stand.get")["counters"]["reconnects"] == 0, "the link was dropped"
    finally:
        rig.stop()
