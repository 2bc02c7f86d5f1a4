"""Annotated frames for a person to look at: the detector's boxes, dockd's tracked subjects (ids from
`tracking.state`, the selected one in green), the frame's centre and thirds (where the stand aims),
and a status line. `.png` writes a strip of frames spread over the run; `.avi` or `.mkv` a
Motion-JPEG video."""
import math

import cv2
import numpy as np

KIND_COLOURS = {"face": (255, 200, 0), "body": (0, 165, 255), "object": (255, 0, 255)}
SELECTED = (60, 220, 60)
TRACKED = (200, 200, 200)
STRIP_FRAMES = 8
STRIP_COLUMNS = 4
STRIP_WIDTH = 480


class Preview:
    def __init__(self, path, fps):
        self.path = str(path)
        self.is_strip = self.path.lower().endswith(".png")
        self.fps = fps
        self.writer = None
        self.kept = []      # strip: every `stride`-th frame so far
        self.stride = 1
        self.seen = 0

    def add(self, frame, detections, tracking, status):
        self.seen += 1
        if self.is_strip:
            if (self.seen - 1) % self.stride:
                return
            self.kept.append(annotate(frame.image, detections, tracking, status))
            if len(self.kept) > 4 * STRIP_FRAMES:  # bounded memory, still evenly spread over the run
                self.kept = self.kept[::2]
                self.stride *= 2
            return
        image = annotate(frame.image, detections, tracking, status)
        if self.writer is None:
            h, w = image.shape[:2]
            self.writer = cv2.VideoWriter(self.path, cv2.VideoWriter_fourcc(*"MJPG"), self.fps, (w, h))
            if not self.writer.isOpened():
                raise OSError(f"cannot write a Motion-JPEG video to {self.path}")
        self.writer.write(image)

    def close(self):
        if self.writer is not None:
            self.writer.release()
        if self.is_strip and self.kept:
            n = len(self.kept)
            count = min(STRIP_FRAMES, n)  # the first, the last and evenly between
            chosen = [self.kept[round(i * (n - 1) / max(1, count - 1))] for i in range(count)]
            thumbs = [cv2.resize(im, (STRIP_WIDTH, int(im.shape[0] * STRIP_WIDTH / im.shape[1])),
                                 interpolation=cv2.INTER_AREA) for im in chosen]
            blank = np.zeros_like(thumbs[0])
            while len(thumbs) % STRIP_COLUMNS:
                thumbs.append(blank)
            rows = [np.hstack(thumbs[i:i + STRIP_COLUMNS]) for i in range(0, len(thumbs), STRIP_COLUMNS)]
            if not cv2.imwrite(self.path, np.vstack(rows)):
                raise OSError(f"cannot write {self.path}")


def pixel_rect(rect, w, h):
    return (int(rect["x"] * w), int(rect["y"] * h),
            int((rect["x"] + rect["width"]) * w), int((rect["y"] + rect["height"]) * h))


def annotate(image, detections, tracking, status):
    out = image.copy()
    h, w = out.shape[:2]
    for x in (w // 3, 2 * w // 3):  # the thirds, faint
        cv2.line(out, (x, 0), (x, h), (90, 90, 90), 1)
    cv2.drawMarker(out, (w // 2, h // 2), (255, 255, 255), cv2.MARKER_CROSS, 24, 1)  # the aim
    for d in detections:
        cv2.rectangle(out, (int(d.x), int(d.y)), (int(d.x + d.width), int(d.y + d.height)),
                      KIND_COLOURS.get(d.kind, (255, 255, 255)), 1)
        if d.label:
            cv2.putText(out, d.label, (int(d.x), int(d.y + d.height) + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                        KIND_COLOURS["object"], 1, cv2.LINE_AA)
    for subject in (tracking or {}).get("subjects", []):
        x0, y0, x1, y1 = pixel_rect(subject["rect"], w, h)
        colour = SELECTED if subject.get("selected") else TRACKED
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, 3 if subject.get("selected") else 1)
        label = subject["id"][:4] + (" selected" if subject.get("selected") else "")
        cv2.putText(out, label, (x0, max(12, y0 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    cv2.rectangle(out, (0, h - 22), (w, h), (0, 0, 0), -1)
    cv2.putText(out, status, (6, h - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def status_line(detector, fps, latency, pose, frame):
    yaw, pitch = pose
    return (f"{detector}  {fps:4.1f} fps  capture->sent {latency * 1000:4.0f} ms  "
            f"stand yaw {math.degrees(yaw):+5.1f} pitch {math.degrees(pitch):+5.1f} deg  frame {frame}")
