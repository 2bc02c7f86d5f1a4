"""One person, one body and one face, when several detectors run on a frame (`--detector
hog+blazepose`): dockd takes every body, and every face it cannot pair with a body, for a person of
its own, so the same person sent twice would be two subjects. Boxes from pose keypoints give way to a detector's own: a face
detector's face to the head box, another detector's body to the pose's body (whose head box then
goes with that body, and so do its keypoints). Pure: boxes in, boxes out."""
from dataclasses import replace


def centre_in(inner, outer, grow=0.0):
    """Whether `inner`'s centre lies in `outer` grown by `grow` times its size on every side."""
    gx, gy = grow * outer.width, grow * outer.height
    cx, cy = inner.x + inner.width / 2, inner.y + inner.height / 2
    return outer.x - gx <= cx <= outer.x + outer.width + gx and outer.y - gy <= cy <= outer.y + outer.height + gy


def one_box_per_person(found):
    """`found` without the keypoint boxes a detector's own box already stands for: a head box with a
    detected face's centre on it (grown by half), a pose body whose centre lies in another
    detector's body or that holds another body's centre."""
    faces = [d for d in found if d.kind == "face" and not d.from_keypoints]
    bodies = [d for d in found if d.kind == "body" and not d.from_keypoints]

    def doubled(d):
        if not d.from_keypoints:
            return False
        if d.kind == "face":
            return any(centre_in(f, d, grow=0.5) for f in faces)
        return any(centre_in(d, b) or centre_in(b, d) for b in bodies)

    kept = [d for d in found if not doubled(d)]
    # A pose body that gave way hands its keypoints to the body standing for it.
    for pose in (d for d in found if d.kind == "body" and d.from_keypoints and d.keypoints and doubled(d)):
        for i, b in enumerate(kept):
            if b.kind == "body" and not b.from_keypoints and b.keypoints is None and (centre_in(pose, b) or centre_in(b, pose)):
                kept[i] = replace(b, keypoints=pose.keypoints)
                break
    return kept
