"""A person walking past vptz's camera, seen through dockd's API (in the VM, Debian's python3).

    walking_subject.py SOCKET OUT.jsonl

The subject stands at pan 0 for 2 s, walks right at 0.12 rad/s for 5 s (to 0.6 rad) and stands
there 15 s more. At 15 frames/s the camera's true pose is read from vptz
(/sys/module/vptz/parameters/pose), the subject's face is projected into the frame it would see
(80° × 50.5°, tiny2's estimated fields of view, told to dockd with camera.set) and sent with
tracking.observe, time-stamped, without waiting for each answer (an emulated machine is slow:
waiting would cost the frame rate dockd asks for, 10–30 Hz). One JSON line per frame: t, subject,
pan, tilt (rad), x, y (the face's centre, normalized), in_frame; then a summary: the frames
tracking.observe refused ("refused", and the first, "first_refusal") and when the subject stood
at the end ("standing_from", "standing_to": time.time(), to match v4l2-ctl's samples).
"""
import json
import math
import sys
import time

from dockd_rpc import Connection
from vptz_camera import true_pose

ARCSEC = math.pi / (180 * 3600)
HFOV = math.radians(80)
VFOV = 2 * math.atan(math.tan(HFOV / 2) * 9 / 16)
RATE_HZ = 15
STAND_S, WALK_S, STANDING_S, SPEED = 2.0, 5.0, 15.0, 0.12
FACE_W, FACE_H = 0.06, 0.1


def subject_at(t):
    return SPEED * min(WALK_S, max(0.0, t - STAND_S))


def main(socket_path, out_path):
    dockd = Connection(socket_path)
    dockd.call("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
    dockd.call("tracking.set", {"enabled": True})
    start = time.monotonic()
    standing_from = None
    refusals = []
    with open(out_path, "w") as out:
        frame = 0
        while True:
            now = time.monotonic()
            t = now - start
            pan, tilt = (v * ARCSEC for v in true_pose())
            subject = subject_at(t)
            # Positive pan is right, as is the image's x; the face is at the camera's height.
            x = 0.5 + math.tan(subject - pan) / (2 * math.tan(HFOV / 2))
            y = 0.5 - math.tan(-tilt) / (2 * math.tan(VFOV / 2))
            in_frame = (abs(subject - pan) < HFOV / 2 and FACE_W / 2 <= x <= 1 - FACE_W / 2
                        and abs(tilt) < VFOV / 2 and FACE_H / 2 <= y <= 1 - FACE_H / 2)
            observations = [{"kind": "face", "confidence": 0.95,
                             "rect": {"x": x - FACE_W / 2, "y": y - FACE_H / 2, "width": FACE_W, "height": FACE_H}}] if in_frame else []
            dockd.send("tracking.observe", {"observations": observations, "origin": "upper_left", "timestamp": now})
            refusals += [a["error"] for a in dockd.answers() if "error" in a]
            out.write(json.dumps({"t": round(t, 3), "subject": subject, "pan": pan, "tilt": tilt, "x": x, "y": y,
                                  "in_frame": in_frame}) + "\n")
            if t >= STAND_S + WALK_S and standing_from is None:
                standing_from = time.time()
            if t >= STAND_S + WALK_S + STANDING_S:
                out.write(json.dumps({"refused": len(refusals), "first_refusal": refusals[0] if refusals else None,
                                      "standing_from": standing_from, "standing_to": time.time()}) + "\n")
                return 0
            # The next frame on the 15 Hz clock; a slow VM that fell behind goes on from now.
            frame += 1
            due = start + frame / RATE_HZ
            if due < time.monotonic():
                frame = math.ceil((time.monotonic() - start) * RATE_HZ)
                due = start + frame / RATE_HZ
            time.sleep(max(0.0, due - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
