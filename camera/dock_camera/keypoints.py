"""Body keypoints as dockd takes them with a body observation (`keypoints` in tracking.observe, API.md):
COCO's seventeen joints by name, normalized like the body's rect, each with its visibility. dockd
places the head from them when no face is detected and judges how squarely the person faces the
camera. Pure: no model, no image."""

# BlazePose (MediaPipe Pose) landmark index of each joint dockd knows; BlazePose's other landmarks
# (inner eye corners, mouth, hands, feet) have no joint in the API.
BLAZEPOSE_JOINTS = {0: "nose", 2: "left_eye", 5: "right_eye", 7: "left_ear", 8: "right_ear",
                    11: "left_shoulder", 12: "right_shoulder", 13: "left_elbow", 14: "right_elbow",
                    15: "left_wrist", 16: "right_wrist", 23: "left_hip", 24: "right_hip",
                    25: "left_knee", 26: "right_knee", 27: "left_ankle", 28: "right_ankle"}

# How far outside the image dockd takes a point (as a rect): a landmark the model guesses further
# out says nothing about where the person is in the picture.
REACH = (-0.5, 1.5)


def blazepose_joints(landmarks, width, height):
    """{joint: (x, y, visibility)} in pixels, upper-left origin, from BlazePose's normalized
    landmarks (each with .x, .y, .visibility)."""
    return {name: (landmarks[i].x * width, landmarks[i].y * height, landmarks[i].visibility)
            for i, name in BLAZEPOSE_JOINTS.items() if i < len(landmarks)}


def normalized(joints, width, height):
    """The API's `keypoints` from {joint: (x, y, visibility)} in pixels: points beyond dockd's reach
    are left out, visibility clamped to 0…1; None when no point is left."""
    out = {}
    for name, (x, y, visibility) in joints.items():
        nx, ny = x / width, y / height
        if REACH[0] <= nx <= REACH[1] and REACH[0] <= ny <= REACH[1]:
            out[name] = {"x": nx, "y": ny, "visibility": max(0.0, min(1.0, visibility))}
    return out or None
