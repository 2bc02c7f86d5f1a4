"""Where a person's head is, from body keypoints, for when no face detector found the face: a person
far away, turned aside or looking down still gets a face box, so dockd frames on the head (API.md:
the selected subject's face goes on the face line) instead of the body's middle.

Keypoints are BlazePose's (MediaPipe Pose) indices, in pixels, only those the model saw. Pure: no
model, no image."""

NOSE = 0
EYES_OUTER = (3, 6)
EYES = (1, 2, 3, 4, 5, 6)
EARS = (7, 8)
SHOULDERS = (11, 12)

# Head width over each distance, from adult head proportions: the ears are about a head's width
# apart, the outer eye corners 0.6 of it, nose to ear 0.65 (seen from the side) and the shoulders
# 2.5 head widths. Turning the head shortens some of these distances in the image (the ears', the
# eyes') and lengthens none, so the widest estimate wins.
WIDTH_PER_EAR_SPAN = 1.0
WIDTH_PER_EYE_SPAN = 1.6
WIDTH_PER_NOSE_TO_EAR = 1.5
WIDTH_PER_SHOULDER_SPAN = 0.4


def distance(a, b):
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5


def head_box(points):
    """(x, y, size) of a square head box, upper-left origin, from {index: (x, y)}; None without the
    nose or an eye. The box is centred across between the ears (or the ear and the nose, or the head
    points seen) and, up and down, on the nose (or a little below the eyes), the way a face
    detector's box sits."""
    eyes = [points[i] for i in EYES if i in points]
    if NOSE not in points and not eyes:
        return None
    estimates = []
    if all(i in points for i in EARS):
        estimates.append(WIDTH_PER_EAR_SPAN * distance(points[EARS[0]], points[EARS[1]]))
    if all(i in points for i in EYES_OUTER):
        estimates.append(WIDTH_PER_EYE_SPAN * distance(points[EYES_OUTER[0]], points[EYES_OUTER[1]]))
    if NOSE in points:
        estimates += [WIDTH_PER_NOSE_TO_EAR * distance(points[NOSE], points[i]) for i in EARS if i in points]
    if all(i in points for i in SHOULDERS):
        estimates.append(WIDTH_PER_SHOULDER_SPAN * distance(points[SHOULDERS[0]], points[SHOULDERS[1]]))
    size = max(estimates, default=0.0)
    if size <= 0:
        return None
    ears = [points[i] for i in EARS if i in points]
    if len(ears) == 2:
        cx = (ears[0][0] + ears[1][0]) / 2
    elif ears and NOSE in points:  # seen from the side: the ear behind the head's middle, the nose before it
        cx = (ears[0][0] + points[NOSE][0]) / 2
    else:
        head = [points[i] for i in (NOSE, *EYES, *EARS) if i in points]
        cx = sum(p[0] for p in head) / len(head)
    cy = points[NOSE][1] if NOSE in points else sum(p[1] for p in eyes) / len(eyes) + 0.15 * size
    return cx - size / 2, cy - size / 2, size
