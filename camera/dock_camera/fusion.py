"""One person, one body, when several detectors run on a frame (`--detector hog+blazepose`): dockd
takes every body for a person of its own, so the same person sent twice would be two subjects. A
body from pose keypoints gives way to another detector's body of the same person and hands it its
keypoints. Pure: boxes in, boxes out."""
from dataclasses import replace


def centre_in(inner, outer):
    """Whether `inner`'s centre lies in `outer`."""
    cx, cy = inner.x + inner.width / 2, inner.y + inner.height / 2
    return outer.x <= cx <= outer.x + outer.width and outer.y <= cy <= outer.y + outer.height


def one_box_per_person(found):
    """`found` without the pose bodies another detector's body already stands for: one whose centre
    lies in that body, or that holds its centre."""
    bodies = [d for d in found if d.kind == "body" and not d.from_keypoints]

    def same_person(pose, body):
        return centre_in(pose, body) or centre_in(body, pose)

    def doubled(d):
        return d.from_keypoints and any(same_person(d, b) for b in bodies)

    kept = [d for d in found if not doubled(d)]
    # A pose body that gave way hands its keypoints to the body standing for it.
    for pose in (d for d in found if d.keypoints and doubled(d)):
        for i, b in enumerate(kept):
            if b.kind == "body" and not b.from_keypoints and b.keypoints is None and same_person(pose, b):
                kept[i] = replace(b, keypoints=pose.keypoints)
                break
    return kept
