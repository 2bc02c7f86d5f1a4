// The V4L2 control ioctls for Swift, which cannot call the variadic ioctl(2) itself.
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/videodev2.h>

/// A connected pair of close-on-exec stream sockets (AF_UNIX): the stand host's end and the
/// device thread's. In C, where the socket constants are plain integers on every Swift build.
static inline int dockd_stream_socketpair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}

/// VIDIOC_QUERY_EXT_CTRL; 0 or -1 with errno.
static inline int dockd_v4l2_query_ext_ctrl(int fd, struct v4l2_query_ext_ctrl *query) {
    return ioctl(fd, VIDIOC_QUERY_EXT_CTRL, query);
}

/// VIDIOC_G_CTRL of one integer control; 0 or -1 with errno.
static inline int dockd_v4l2_get_ctrl(int fd, unsigned int id, int *value) {
    struct v4l2_control control = { .id = id, .value = 0 };
    int result = ioctl(fd, VIDIOC_G_CTRL, &control);
    if (result == 0) *value = control.value;
    return result;
}

/// VIDIOC_S_CTRL of one integer control; 0 or -1 with errno.
static inline int dockd_v4l2_set_ctrl(int fd, unsigned int id, int value) {
    struct v4l2_control control = { .id = id, .value = value };
    return ioctl(fd, VIDIOC_S_CTRL, &control);
}

/// VIDIOC_QUERYCAP: the card's name (at least 32 bytes) and bus, for the stand's identity.
static inline int dockd_v4l2_querycap(int fd, struct v4l2_capability *cap) {
    return ioctl(fd, VIDIOC_QUERYCAP, cap);
}

static const unsigned int dockd_v4l2_next_ctrl = V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND;
static const unsigned int dockd_v4l2_camera_class = V4L2_CTRL_CLASS_CAMERA;
