#!/usr/bin/env python3
"""A stand that answers late: what round trip dockd measures and how its moves end.

For each delay, dock-sim answers that much late (`slow MS S`) and dockd (the binaries in DOCK_BIN,
default .build/debug) turns the yaw 0 → 0.5 → 0 → 0.5 rad in 1 s each. Prints the round trip dockd
reports (`stand.get` counters.round_trip_ms) and, per move, its final state and the overshoot past
the target in mrad (from the 100 Hz motion.state positions, which arrive late too). Nothing asserted.

    DOCK_BIN=.build/debug .venv/bin/python bench/slow_stand.py [DELAY_MS ...]   # default 0 100 200 400
"""
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "integration"))
from conftest import Rig  # noqa: E402  -- dock-sim on a pty + dockd, as the integration tests run them


def main():
    delays = [int(d) for d in sys.argv[1:]] or [0, 100, 200, 400]
    print("| stand answers late by | round trip dockd measured | moves (state, overshoot mrad) |")
    print("|---|---|---|")
    for delay in delays:
        rig = Rig(pathlib.Path(tempfile.mkdtemp(prefix="slow-stand.")))
        try:
            c = rig.client()
            rig.connected_stand(c)
            c.result("subscribe", {"topics": ["motion"], "motion_rate": 100})
            if delay:
                rig.sim_command(f"slow {delay} 60")
            time.sleep(2.5)  # the smoothed round trip settles
            moves = []
            for target in (0.5, 0.0, 0.5):
                c.notifications.clear()
                reply = c.call("motion.orient", {"yaw": target, "duration": 1.0})
                if "error" in reply:
                    moves.append(("refused: " + reply["error"]["message"], None))
                    continue
                done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == reply["result"]["id"]
                                           and m["params"]["state"] != "running", timeout=10)
                time.sleep(delay / 1000 + 0.3)  # the last positions arrive late
                yaws = [m["params"]["positions"]["yaw"] for m in c.notifications if m.get("method") == "motion.state"]
                overshoot = (max(yaws) - 0.5) if target else -min(yaws)
                moves.append((done["params"]["state"], round(overshoot * 1000, 1)))
                time.sleep(0.6)  # the orientation rate limit
            rtt = c.result("stand.get")["counters"]["round_trip_ms"]
            print(f"| {delay} ms | {rtt} ms | {', '.join(f'{s} {o}' if o is not None else s for s, o in moves)} |")
        finally:
            rig.stop()


if __name__ == "__main__":
    main()
