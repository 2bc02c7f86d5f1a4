"""Reference people for vtest.avi, made without any detector under test: the camera that filmed it
stood still, so OpenCV's MOG2 background subtractor separates the walkers from the scene. Each
foreground blob of a person's size is a box; a greedy overlap tracker gives the boxes identities
across frames. Known limits (stated in BENCHMARKS.md): people walking side by side merge into one
box, a person standing still fades into the background after a few seconds, shadows are dropped
(MOG2 marks them 127) but can widen a box. Written to a JSON cache: {frame: [[id, x, y, w, h], ...]}."""
import argparse
import json
import sys

import cv2

MIN_HEIGHT = 40   # px in the 768×576 video: the smallest walkers are about 60 px tall
MIN_AREA = 500
WARMUP_FRAMES = 40


def iou(a, b):
    ax1, ay1, bx1, by1 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw = max(0, min(ax1, bx1) - max(a[0], b[0]))
    ih = max(0, min(ay1, by1) - max(a[1], b[1]))
    inter = iw * ih
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def blobs(mask):
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 15)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    found = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        if h >= MIN_HEIGHT and area >= MIN_AREA and 0.25 <= w / h <= 1.2:
            found.append([x, y, w, h])
    return found


def build(video):
    capture = cv2.VideoCapture(video)
    subtractor = cv2.createBackgroundSubtractorMOG2(history=300, varThreshold=25, detectShadows=True)
    # Learn the background from the whole video first (people move through; the scene stays), so the
    # first frames get boxes too.
    frames = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(image)
    for image in frames[::4] * 2:
        subtractor.apply(image, learningRate=0.02)
    tracks = {}   # id -> last box
    next_id = 1
    result = {}
    for number, image in enumerate(frames):
        mask = subtractor.apply(image, learningRate=0.002)
        _, mask = cv2.threshold(mask, 200, 255, cv2.THRESH_BINARY)  # drop shadows (127)
        boxes = blobs(mask)
        assigned = []
        free = dict(tracks)
        for box in sorted(boxes, key=lambda b: -b[2] * b[3]):
            best = max(free.items(), key=lambda kv: iou(kv[1], box), default=None)
            if best is not None and iou(best[1], box) > 0.2:
                track_id = best[0]
                del free[track_id]
            else:
                track_id = next_id
                next_id += 1
            tracks[track_id] = box
            assigned.append([track_id] + box)
        for gone in free:
            del tracks[gone]
        result[number] = assigned
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("video")
    p.add_argument("out")
    p.add_argument("--audit", nargs="*", type=int, default=[], help="frames to draw into OUT.frameN.png")
    args = p.parse_args()
    reference = build(args.video)
    with open(args.out, "w") as f:
        json.dump(reference, f)
    if args.audit:
        capture = cv2.VideoCapture(args.video)
        number = 0
        while True:
            ok, image = capture.read()
            if not ok:
                break
            if number in args.audit:
                for track_id, x, y, w, h in reference[number]:
                    cv2.rectangle(image, (x, y), (x + w, y + h), (0, 255, 0), 2)
                    cv2.putText(image, str(track_id), (x, y - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 0), 1)
                cv2.imwrite(f"{args.out}.frame{number}.png", image)
            number += 1
    print(f"{sum(len(v) for v in reference.values())} boxes in {len(reference)} frames", file=sys.stderr)


if __name__ == "__main__":
    main()
