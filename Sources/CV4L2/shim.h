// The V4L2 control ioctls for Swift, which cannot call the variadic ioctl(2) itself.
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/videodev2.h>
#include <linux/usb/video.h>
#include <linux/uvcvideo.h>

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

/// VIDIOC_S_EXT_CTRLS of `count` (at most 8) integer camera-class controls, all at once; 0 or -1
/// with errno.
static inline int dockd_v4l2_set_ext_ctrls(int fd, const unsigned int *ids, const int *values, unsigned int count) {
    struct v4l2_ext_control controls[8];
    struct v4l2_ext_controls request;
    if (count == 0 || count > 8) { errno = EINVAL; return -1; }
    memset(controls, 0, sizeof controls);
    memset(&request, 0, sizeof request);
    for (unsigned int i = 0; i < count; i++) { controls[i].id = ids[i]; controls[i].value = values[i]; }
    request.which = V4L2_CTRL_WHICH_CUR_VAL;
    request.count = count;
    request.controls = controls;
    return ioctl(fd, VIDIOC_S_EXT_CTRLS, &request);
}

/// VIDIOC_QUERYCAP: the card's name (at least 32 bytes) and bus, for the stand's identity.
static inline int dockd_v4l2_querycap(int fd, struct v4l2_capability *cap) {
    return ioctl(fd, VIDIOC_QUERYCAP, cap);
}

/// UVCIOC_CTRL_QUERY: one request (UVC_SET_CUR, UVC_GET_LEN…) on a UVC extension unit's control;
/// 0 or -1 with errno.
static inline int dockd_uvc_xu_query(int fd, unsigned char unit, unsigned char selector, unsigned char query,
                                     unsigned short size, unsigned char *data) {
    struct uvc_xu_control_query request = { .unit = unit, .selector = selector, .query = query, .size = size, .data = data };
    return ioctl(fd, UVCIOC_CTRL_QUERY, &request);
}

static const unsigned char dockd_uvc_set_cur = UVC_SET_CUR;
static const unsigned char dockd_uvc_get_len = UVC_GET_LEN;
static const unsigned char dockd_uvc_get_cur = UVC_GET_CUR;

/// The character device's number of `path`, as "MAJOR:MINOR" under /sys/dev/char; 0 or -1 with errno.
static inline int dockd_char_device(const char *path, unsigned int *major_number, unsigned int *minor_number) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISCHR(st.st_mode)) { errno = ENOTTY; return -1; }
    *major_number = major(st.st_rdev);
    *minor_number = minor(st.st_rdev);
    return 0;
}

static const unsigned int dockd_v4l2_next_ctrl = V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND;
static const unsigned int dockd_v4l2_camera_class = V4L2_CTRL_CLASS_CAMERA;
