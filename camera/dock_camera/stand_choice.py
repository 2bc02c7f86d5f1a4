"""Which stand dock-camera's observations go to without --stand: the stand dockd drives through the
V4L2 device dock-camera captures from — a PTZ webcam is its own stand, attached as `video:PATH`
(the same device, compared by real path, so /dev/v4l/by-id/… and /dev/video0 match) — else none
named, and dockd takes its first connected stand (a plain webcam on a motorized stand)."""
import os


def stand_for_source(stands, source, realpath=os.path.realpath):
    """The id of the stand in `stands` (stands.list's result) attached at the device `source`
    captures from, or None."""
    if not source.startswith("/dev/"):
        return None
    wanted = realpath(source)
    for stand in stands:
        endpoint = stand.get("endpoint") or ""
        if endpoint.startswith("video:") and stand.get("id") and realpath(endpoint[len("video:"):]) == wanted:
            return stand["id"]
    return None
