// SPDX-License-Identifier: GPL-2.0
/*
 * vptz - a virtual PTZ webcam for testing pan/tilt/zoom drivers under a real kernel.
 *
 * One /dev/videoN: the V4L2 camera-class controls of a USB PTZ webcam (pan/tilt absolute in
 * arc-seconds, pan/tilt speed, pan/tilt relative, pan/tilt reset, zoom absolute) with the ranges
 * of a camera profile, and a capture queue (videobuf2-vmalloc, 640x360 YUYV, 30 frames/s,
 * CLOCK_MONOTONIC timestamps) whose frames show a bright square at a fixed point of the world:
 * it moves opposite to pan/tilt and grows with zoom.
 *
 * The pose moves toward an absolute target (or at a set speed) at a finite rate. It is computed
 * from ktime when read, so there is no timer: a read while moving returns where the camera is
 * now, rounded to the control's step.
 */
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/usb/video.h>
#include <linux/uvcvideo.h>
#include <linux/spinlock.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/workqueue.h>
#include <media/v4l2-device.h>
#include <media/v4l2-ioctl.h>
#include <media/v4l2-ctrls.h>
#include <media/v4l2-event.h>
#include <media/v4l2-fh.h>
#include <media/videobuf2-vmalloc.h>

#define VPTZ_W		640
#define VPTZ_H		360
#define VPTZ_FPS	30
#define ARCSEC_PER_DEG	3600

/*
 * Camera profiles. Units are those of the V4L2 controls: arc-seconds for pan/tilt, the
 * camera's own units for speed and zoom. Figures marked "estimated" could not be cited from a
 * dump of the real camera's controls; they follow its published mechanical range or are guesses.
 */
struct vptz_profile {
	const char *name;
	const char *card;
	bool absolute;			/* offers PAN_ABSOLUTE/TILT_ABSOLUTE */
	s32 pan_min, pan_max, tilt_min, tilt_max, pt_step;
	s32 pan_speed_max, tilt_speed_max;
	s32 zoom_min, zoom_max;
	u32 hfov_deg;			/* horizontal field of view at the widest zoom */
	bool ai_xu;			/* OBSBOT's AI-tracking extension-unit control (see vptz_default) */
};

static const struct vptz_profile vptz_profiles[] = {
	{
		.name = "tiny2", .card = "vptz OBSBOT Tiny 2 (virtual)", .absolute = true, .ai_xu = true,
		/* pan ±130°, tilt ±90°, 1° steps: estimated */
		.pan_min = -468000, .pan_max = 468000,
		.tilt_min = -324000, .tilt_max = 324000, .pt_step = 3600,
		/*
		 * ±160/±120: the OBSBOT Tiny's pan_speed/tilt_speed maxima as uvcvideo lists them
		 * (github.com/torvalds/linux pull 823; that firmware reports min=-1, not -160).
		 */
		.pan_speed_max = 160, .tilt_speed_max = 120,
		.zoom_min = 100, .zoom_max = 400,	/* 4x digital zoom: estimated */
		.hfov_deg = 80,				/* estimated */
	},
	{
		.name = "link", .card = "vptz Insta360 Link (virtual)", .absolute = true,
		/* pan ±145°, tilt -90°..+100°: estimated */
		.pan_min = -522000, .pan_max = 522000,
		.tilt_min = -324000, .tilt_max = 360000, .pt_step = 3600,
		.pan_speed_max = 100, .tilt_speed_max = 100,	/* estimated */
		.zoom_min = 100, .zoom_max = 400,		/* estimated */
		.hfov_deg = 70,					/* estimated */
	},
	{
		/*
		 * Logitech's conference cameras are said not to implement PAN/TILT_ABSOLUTE
		 * (github.com/glikely/obs-ptz pull 357, unverified): speed, relative and reset only.
		 * Ranges estimated (pan ±130°, tilt ±90°), zoom 10x estimated.
		 */
		.name = "ptzpro2", .card = "vptz Logitech PTZ Pro 2 (virtual)", .absolute = false,
		.pan_min = -468000, .pan_max = 468000,
		.tilt_min = -324000, .tilt_max = 324000, .pt_step = 3600,
		.pan_speed_max = 1, .tilt_speed_max = 1,
		.zoom_min = 100, .zoom_max = 1000,
		.hfov_deg = 82,
	},
};

static char *profile = "tiny2";
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile, "camera profile: tiny2 (OBSBOT Tiny 2-like, default), link (Insta360 Link-like), ptzpro2 (Logitech PTZ Pro 2-like, no absolute pan/tilt)");

static bool volatile_pose = true;
module_param(volatile_pose, bool, 0444);
MODULE_PARM_DESC(volatile_pose, "PAN/TILT_ABSOLUTE read back the current pose while moving (default); 0: they echo the last value set, like many real cameras");

static uint speed_dps = 60;
module_param(speed_dps, uint, 0444);
MODULE_PARM_DESC(speed_dps, "pan/tilt rate in degrees/s for absolute, relative and reset moves, and at the full PAN/TILT_SPEED value (default 60)");

static uint busy_ms;
module_param(busy_ms, uint, 0444);
MODULE_PARM_DESC(busy_ms, "a new absolute pan/tilt set returns -EBUSY while the previous move on that axis has run less than this many ms (default 0: never)");

struct vptz_axis {
	s64 pos;		/* milli-arc-seconds */
	s64 target;		/* milli-arc-seconds, when moving to a target */
	s64 rate;		/* milli-arc-seconds/s; signed when driven at a speed */
	s64 min, max;		/* milli-arc-seconds */
	ktime_t t;		/* when pos was computed */
	ktime_t started;	/* when the current move began */
	enum { AXIS_IDLE, AXIS_TARGET, AXIS_SPEED } mode;
};

struct vptz_buffer {
	struct vb2_v4l2_buffer vb;
	struct list_head list;
};

struct vptz {
	struct platform_device *pdev;
	struct v4l2_device v4l2_dev;
	struct video_device *vdev;	/* the plugged-in /dev/videoN; NULL while unplugged */
	struct v4l2_ctrl_handler hdl;
	struct v4l2_ctrl *pan_abs, *tilt_abs, *zoom;
	struct vb2_queue queue;
	struct mutex lock;		/* the video device's and the queue's */
	const struct vptz_profile *prof;

	spinlock_t pose_lock;		/* the axes */
	struct vptz_axis pan, tilt;

	spinlock_t qlock;		/* buffers */
	struct list_head bufs;
	struct delayed_work frame_work;
	ktime_t stream_start;
	u32 sequence;
};

static struct vptz *vptz_dev;

/* ---- motion ---- */

static void axis_update(struct vptz_axis *a, ktime_t now)
{
	s64 dt_us = ktime_us_delta(now, a->t);
	s64 step;

	a->t = now;
	if (dt_us <= 0 || a->mode == AXIS_IDLE)
		return;
	dt_us = min_t(s64, dt_us, 3600LL * USEC_PER_SEC);
	if (a->mode == AXIS_TARGET) {
		step = div_s64(a->rate * dt_us, USEC_PER_SEC);
		if (abs(a->target - a->pos) <= step) {
			a->pos = a->target;
			a->mode = AXIS_IDLE;
		} else {
			a->pos += a->target > a->pos ? step : -step;
		}
	} else {
		a->pos += div_s64(a->rate * dt_us, USEC_PER_SEC);
		if (a->pos >= a->max || a->pos <= a->min) {
			a->pos = clamp(a->pos, a->min, a->max);
			a->mode = AXIS_IDLE;	/* at the end stop */
		}
	}
}

static bool axis_busy(struct vptz_axis *a, ktime_t now)
{
	return busy_ms && a->mode != AXIS_IDLE &&
	       ktime_ms_delta(now, a->started) < busy_ms;
}

static void axis_go(struct vptz_axis *a, s64 target_marcsec, ktime_t now)
{
	a->target = clamp(target_marcsec, a->min, a->max);
	a->rate = (s64)speed_dps * ARCSEC_PER_DEG * 1000;
	a->mode = AXIS_TARGET;
	a->started = now;
}

static void axis_speed(struct vptz_axis *a, s32 v, s32 vmax, ktime_t now)
{
	if (v == 0) {
		a->mode = AXIS_IDLE;
		return;
	}
	a->rate = div_s64((s64)speed_dps * ARCSEC_PER_DEG * 1000 * v, vmax);
	a->mode = AXIS_SPEED;
	a->started = now;
}

/*
 * /sys/module/vptz/parameters/pose: where the camera points, "PAN TILT" in arc-seconds, read
 * whatever controls the profile offers. A real camera without absolute controls has no such
 * window; tests read it as the ground truth of where dockd's estimate should be.
 */
static int vptz_pose_get(char *buf, const struct kernel_param *kp)
{
	struct vptz *dev = vptz_dev;
	unsigned long flags;
	s64 pan, tilt;

	if (!dev)
		return sysfs_emit(buf, "none\n");
	spin_lock_irqsave(&dev->pose_lock, flags);
	axis_update(&dev->pan, ktime_get());
	axis_update(&dev->tilt, ktime_get());
	pan = div_s64(dev->pan.pos, 1000);
	tilt = div_s64(dev->tilt.pos, 1000);
	spin_unlock_irqrestore(&dev->pose_lock, flags);
	return sysfs_emit(buf, "%lld %lld\n", pan, tilt);
}

static const struct kernel_param_ops vptz_pose_ops = {
	.get = vptz_pose_get,
};
module_param_cb(pose, &vptz_pose_ops, NULL, 0444);
MODULE_PARM_DESC(pose, "read only: where the camera points, PAN TILT in arc-seconds (the tests' ground truth)");

/* the pose in arc-seconds, rounded to the control's step */
static s32 axis_report(struct vptz *dev, struct vptz_axis *a)
{
	s64 step = dev->prof->pt_step;
	s64 off = div_s64(a->pos - a->min + step * 500, step * 1000);

	return (s32)(div_s64(a->min, 1000) + off * step);
}

static void axis_init(struct vptz_axis *a, s32 min, s32 max, ktime_t now)
{
	a->min = (s64)min * 1000;
	a->max = (s64)max * 1000;
	a->pos = 0;
	a->mode = AXIS_IDLE;
	a->t = now;
}

/* ---- controls ---- */

static int vptz_g_volatile_ctrl(struct v4l2_ctrl *ctrl)
{
	struct vptz *dev = container_of(ctrl->handler, struct vptz, hdl);
	struct vptz_axis *a = ctrl->id == V4L2_CID_PAN_ABSOLUTE ? &dev->pan : &dev->tilt;
	unsigned long flags;

	if (ctrl->id != V4L2_CID_PAN_ABSOLUTE && ctrl->id != V4L2_CID_TILT_ABSOLUTE)
		return -EINVAL;
	spin_lock_irqsave(&dev->pose_lock, flags);
	axis_update(a, ktime_get());
	ctrl->val = axis_report(dev, a);
	spin_unlock_irqrestore(&dev->pose_lock, flags);
	return 0;
}

static int vptz_s_ctrl(struct v4l2_ctrl *ctrl)
{
	struct vptz *dev = container_of(ctrl->handler, struct vptz, hdl);
	const struct vptz_profile *p = dev->prof;
	ktime_t now = ktime_get();
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&dev->pose_lock, flags);
	axis_update(&dev->pan, now);
	axis_update(&dev->tilt, now);
	switch (ctrl->id) {
	case V4L2_CID_PAN_ABSOLUTE:
	case V4L2_CID_TILT_ABSOLUTE: {
		struct vptz_axis *a = ctrl->id == V4L2_CID_PAN_ABSOLUTE ? &dev->pan : &dev->tilt;

		if (axis_busy(a, now))
			ret = -EBUSY;
		else
			axis_go(a, (s64)ctrl->val * 1000, now);
		break;
	}
	case V4L2_CID_PAN_RELATIVE:
		axis_go(&dev->pan, dev->pan.pos + (s64)ctrl->val * 1000, now);
		break;
	case V4L2_CID_TILT_RELATIVE:
		axis_go(&dev->tilt, dev->tilt.pos + (s64)ctrl->val * 1000, now);
		break;
	case V4L2_CID_PAN_SPEED:
		axis_speed(&dev->pan, ctrl->val, p->pan_speed_max, now);
		break;
	case V4L2_CID_TILT_SPEED:
		axis_speed(&dev->tilt, ctrl->val, p->tilt_speed_max, now);
		break;
	case V4L2_CID_PAN_RESET:
		axis_go(&dev->pan, 0, now);
		break;
	case V4L2_CID_TILT_RESET:
		axis_go(&dev->tilt, 0, now);
		break;
	case V4L2_CID_ZOOM_ABSOLUTE:
		break;		/* digital zoom: immediate, read by the frame generator */
	default:
		ret = -EINVAL;
	}
	spin_unlock_irqrestore(&dev->pose_lock, flags);
	return ret;
}

static const struct v4l2_ctrl_ops vptz_ctrl_ops = {
	.g_volatile_ctrl = vptz_g_volatile_ctrl,
	.s_ctrl = vptz_s_ctrl,
};

static int vptz_init_ctrls(struct vptz *dev)
{
	const struct vptz_profile *p = dev->prof;
	struct v4l2_ctrl_handler *hdl = &dev->hdl;
	const struct v4l2_ctrl_ops *ops = &vptz_ctrl_ops;
	s32 pan_span = p->pan_max - p->pan_min, tilt_span = p->tilt_max - p->tilt_min;

	v4l2_ctrl_handler_init(hdl, 10);
	if (p->absolute) {
		dev->pan_abs = v4l2_ctrl_new_std(hdl, ops, V4L2_CID_PAN_ABSOLUTE,
						 p->pan_min, p->pan_max, p->pt_step, 0);
		dev->tilt_abs = v4l2_ctrl_new_std(hdl, ops, V4L2_CID_TILT_ABSOLUTE,
						  p->tilt_min, p->tilt_max, p->pt_step, 0);
	}
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_PAN_RELATIVE, -pan_span, pan_span, p->pt_step, 0);
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_TILT_RELATIVE, -tilt_span, tilt_span, p->pt_step, 0);
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_PAN_SPEED, -p->pan_speed_max, p->pan_speed_max, 1, 0);
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_TILT_SPEED, -p->tilt_speed_max, p->tilt_speed_max, 1, 0);
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_PAN_RESET, 0, 0, 0, 0);
	v4l2_ctrl_new_std(hdl, ops, V4L2_CID_TILT_RESET, 0, 0, 0, 0);
	dev->zoom = v4l2_ctrl_new_std(hdl, ops, V4L2_CID_ZOOM_ABSOLUTE,
				      p->zoom_min, p->zoom_max, 1, p->zoom_min);
	if (hdl->error)
		return hdl->error;
	/* an absolute set always starts a move, even to the value the control last held */
	if (dev->pan_abs) {
		dev->pan_abs->flags |= V4L2_CTRL_FLAG_EXECUTE_ON_WRITE;
		dev->tilt_abs->flags |= V4L2_CTRL_FLAG_EXECUTE_ON_WRITE;
		if (volatile_pose) {
			dev->pan_abs->flags |= V4L2_CTRL_FLAG_VOLATILE;
			dev->tilt_abs->flags |= V4L2_CTRL_FLAG_VOLATILE;
		}
	}
	return 0;
}

/* ---- frames ---- */

static void vptz_fill(struct vptz *dev, u8 *buf)
{
	s64 pan, tilt, zoom, cx, cy, half, x0, x1, y0, y1, x, y, den;
	unsigned long flags;
	ktime_t now = ktime_get();

	spin_lock_irqsave(&dev->pose_lock, flags);
	axis_update(&dev->pan, now);
	axis_update(&dev->tilt, now);
	pan = dev->pan.pos;
	tilt = dev->tilt.pos;
	spin_unlock_irqrestore(&dev->pose_lock, flags);
	zoom = READ_ONCE(dev->zoom->cur.val);

	/* gray background: Y = U = V = 0x80 */
	memset(buf, 0x80, VPTZ_W * VPTZ_H * 2);
	/* pixels per milli-arc-second: W * zoom / (hfov * 3600 * 1000 * zoom_min) */
	den = (s64)dev->prof->hfov_deg * ARCSEC_PER_DEG * 1000 * dev->prof->zoom_min;
	cx = VPTZ_W / 2 - div64_s64(pan * VPTZ_W * zoom, den);
	cy = VPTZ_H / 2 + div64_s64(tilt * VPTZ_W * zoom, den);
	half = div_s64(16 * zoom, dev->prof->zoom_min);
	x0 = max_t(s64, cx - half, 0) & ~1LL;
	x1 = min_t(s64, cx + half, VPTZ_W);
	y0 = max_t(s64, cy - half, 0);
	y1 = min_t(s64, cy + half, VPTZ_H);
	for (y = y0; y < y1; y++)
		for (x = x0; x < x1; x++)
			buf[(y * VPTZ_W + x) * 2] = 0xeb;	/* Y: white */
}

static void vptz_frame_work(struct work_struct *work)
{
	struct vptz *dev = container_of(to_delayed_work(work), struct vptz, frame_work);
	struct vptz_buffer *b = NULL;
	ktime_t next;
	s64 wait;

	spin_lock_irq(&dev->qlock);
	if (!list_empty(&dev->bufs)) {
		b = list_first_entry(&dev->bufs, struct vptz_buffer, list);
		list_del(&b->list);
	}
	spin_unlock_irq(&dev->qlock);
	if (b) {
		vptz_fill(dev, vb2_plane_vaddr(&b->vb.vb2_buf, 0));
		b->vb.vb2_buf.timestamp = ktime_get_ns();
		b->vb.sequence = dev->sequence;
		b->vb.field = V4L2_FIELD_NONE;
		vb2_buffer_done(&b->vb.vb2_buf, VB2_BUF_STATE_DONE);
	}
	dev->sequence++;	/* a frame with no buffer queued is dropped, as a camera does */
	next = ktime_add_ns(dev->stream_start, div_u64((u64)dev->sequence * NSEC_PER_SEC, VPTZ_FPS));
	wait = ktime_to_ns(ktime_sub(next, ktime_get()));
	schedule_delayed_work(&dev->frame_work, wait > 0 ? nsecs_to_jiffies(wait) : 0);
}

static int vptz_queue_setup(struct vb2_queue *q, unsigned int *nbuffers, unsigned int *nplanes,
			    unsigned int sizes[], struct device *alloc_devs[])
{
	if (*nplanes)
		return sizes[0] < VPTZ_W * VPTZ_H * 2 ? -EINVAL : 0;
	*nplanes = 1;
	sizes[0] = VPTZ_W * VPTZ_H * 2;
	return 0;
}

static int vptz_buf_prepare(struct vb2_buffer *vb)
{
	if (vb2_plane_size(vb, 0) < VPTZ_W * VPTZ_H * 2)
		return -EINVAL;
	vb2_set_plane_payload(vb, 0, VPTZ_W * VPTZ_H * 2);
	return 0;
}

static void vptz_buf_queue(struct vb2_buffer *vb)
{
	struct vptz *dev = vb2_get_drv_priv(vb->vb2_queue);
	struct vptz_buffer *b = container_of(to_vb2_v4l2_buffer(vb), struct vptz_buffer, vb);
	unsigned long flags;

	spin_lock_irqsave(&dev->qlock, flags);
	list_add_tail(&b->list, &dev->bufs);
	spin_unlock_irqrestore(&dev->qlock, flags);
}

static void vptz_return_all(struct vptz *dev, enum vb2_buffer_state state)
{
	struct vptz_buffer *b, *n;
	unsigned long flags;

	spin_lock_irqsave(&dev->qlock, flags);
	list_for_each_entry_safe(b, n, &dev->bufs, list) {
		list_del(&b->list);
		vb2_buffer_done(&b->vb.vb2_buf, state);
	}
	spin_unlock_irqrestore(&dev->qlock, flags);
}

static int vptz_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct vptz *dev = vb2_get_drv_priv(q);

	dev->sequence = 0;
	dev->stream_start = ktime_get();
	schedule_delayed_work(&dev->frame_work, 0);
	return 0;
}

static void vptz_stop_streaming(struct vb2_queue *q)
{
	struct vptz *dev = vb2_get_drv_priv(q);

	cancel_delayed_work_sync(&dev->frame_work);
	vptz_return_all(dev, VB2_BUF_STATE_ERROR);
}

static const struct vb2_ops vptz_qops = {
	.queue_setup = vptz_queue_setup,
	.buf_prepare = vptz_buf_prepare,
	.buf_queue = vptz_buf_queue,
	.start_streaming = vptz_start_streaming,
	.stop_streaming = vptz_stop_streaming,
	.wait_prepare = vb2_ops_wait_prepare,
	.wait_finish = vb2_ops_wait_finish,
};

/* ---- ioctls ---- */

static int vptz_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct vptz *dev = video_drvdata(file);

	strscpy(cap->driver, "vptz", sizeof(cap->driver));
	strscpy(cap->card, dev->prof->card, sizeof(cap->card));
	strscpy(cap->bus_info, "platform:vptz", sizeof(cap->bus_info));
	return 0;
}

static int vptz_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	if (f->index)
		return -EINVAL;
	f->pixelformat = V4L2_PIX_FMT_YUYV;
	return 0;
}

static int vptz_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct v4l2_pix_format *pix = &f->fmt.pix;

	memset(pix, 0, sizeof(*pix));
	pix->width = VPTZ_W;
	pix->height = VPTZ_H;
	pix->pixelformat = V4L2_PIX_FMT_YUYV;
	pix->field = V4L2_FIELD_NONE;
	pix->bytesperline = VPTZ_W * 2;
	pix->sizeimage = VPTZ_W * VPTZ_H * 2;
	pix->colorspace = V4L2_COLORSPACE_SRGB;
	return 0;
}

static int vptz_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct vptz *dev = video_drvdata(file);

	if (vb2_is_busy(&dev->queue))
		return -EBUSY;
	return vptz_g_fmt(file, fh, f);
}

static int vptz_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	if (fs->index || fs->pixel_format != V4L2_PIX_FMT_YUYV)
		return -EINVAL;
	fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
	fs->discrete.width = VPTZ_W;
	fs->discrete.height = VPTZ_H;
	return 0;
}

static int vptz_enum_frameintervals(struct file *file, void *fh, struct v4l2_frmivalenum *fi)
{
	if (fi->index || fi->pixel_format != V4L2_PIX_FMT_YUYV ||
	    fi->width != VPTZ_W || fi->height != VPTZ_H)
		return -EINVAL;
	fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
	fi->discrete.numerator = 1;
	fi->discrete.denominator = VPTZ_FPS;
	return 0;
}

static int vptz_g_parm(struct file *file, void *fh, struct v4l2_streamparm *parm)
{
	if (parm->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
		return -EINVAL;
	memset(&parm->parm.capture, 0, sizeof(parm->parm.capture));
	parm->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
	parm->parm.capture.timeperframe.numerator = 1;
	parm->parm.capture.timeperframe.denominator = VPTZ_FPS;
	parm->parm.capture.readbuffers = 1;
	return 0;
}

static int vptz_enum_input(struct file *file, void *fh, struct v4l2_input *inp)
{
	if (inp->index)
		return -EINVAL;
	inp->type = V4L2_INPUT_TYPE_CAMERA;
	strscpy(inp->name, "Camera", sizeof(inp->name));
	return 0;
}

static int vptz_g_input(struct file *file, void *fh, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int vptz_s_input(struct file *file, void *fh, unsigned int i)
{
	return i ? -EINVAL : 0;
}

/*
 * The camera's own AI tracking, as an OBSBOT Tiny 2 holds it in its vendor extension unit (GUID
 * 9a1e7291-6843-4683-6d92-39bc7906ee49, unit 2 on that camera, selector 6, 60 bytes: cgevans/tiny2
 * and OpenFoxes/Tiny4Linux): SET_CUR "16 02 MM 00 ..." sets the mode MM (0 off, 2 normal tracking),
 * GET_CUR answers a status block whose byte 0x18 is the mode. Reached, as on a UVC camera, through
 * uvcvideo's UVCIOC_CTRL_QUERY; a unit or selector it lacks is ENOENT, as uvcvideo answers.
 */
#define VPTZ_XU_UNIT 2
#define VPTZ_XU_SELECTOR 6
#define VPTZ_XU_SIZE 60

static int ai_mode = 2;
module_param(ai_mode, int, 0444);
MODULE_PARM_DESC(ai_mode, "the camera's own AI tracking mode in its extension unit (tiny2 profile): 2 tracking at load, 0 off; read only here, set through UVCIOC_CTRL_QUERY");

static long vptz_default(struct file *file, void *fh, bool valid_prio, unsigned int cmd, void *arg)
{
	struct vptz *dev = video_drvdata(file);
	struct uvc_xu_control_query *query = arg;
	u8 block[VPTZ_XU_SIZE] = { 0 };

	if (cmd != UVCIOC_CTRL_QUERY)
		return -ENOTTY;
	if (!dev->prof->ai_xu || query->unit != VPTZ_XU_UNIT || query->selector != VPTZ_XU_SELECTOR)
		return -ENOENT;
	switch (query->query) {
	case UVC_GET_LEN:
		if (query->size != 2)
			return -EINVAL;
		block[0] = VPTZ_XU_SIZE;
		return copy_to_user(query->data, block, 2) ? -EFAULT : 0;
	case UVC_GET_CUR:
		if (query->size != VPTZ_XU_SIZE)
			return -EINVAL;
		block[0x18] = ai_mode;
		return copy_to_user(query->data, block, VPTZ_XU_SIZE) ? -EFAULT : 0;
	case UVC_SET_CUR:
		if (query->size != VPTZ_XU_SIZE)
			return -EINVAL;
		if (copy_from_user(block, query->data, VPTZ_XU_SIZE))
			return -EFAULT;
		if (block[0] == 0x16 && block[1] == 0x02)
			ai_mode = block[2];
		return 0;
	default:
		return -EINVAL;
	}
}

static const struct v4l2_ioctl_ops vptz_ioctl_ops = {
	.vidioc_default = vptz_default,
	.vidioc_querycap = vptz_querycap,
	.vidioc_enum_fmt_vid_cap = vptz_enum_fmt,
	.vidioc_g_fmt_vid_cap = vptz_g_fmt,
	.vidioc_try_fmt_vid_cap = vptz_g_fmt,
	.vidioc_s_fmt_vid_cap = vptz_s_fmt,
	.vidioc_enum_framesizes = vptz_enum_framesizes,
	.vidioc_enum_frameintervals = vptz_enum_frameintervals,
	.vidioc_g_parm = vptz_g_parm,
	.vidioc_s_parm = vptz_g_parm,
	.vidioc_enum_input = vptz_enum_input,
	.vidioc_g_input = vptz_g_input,
	.vidioc_s_input = vptz_s_input,
	.vidioc_reqbufs = vb2_ioctl_reqbufs,
	.vidioc_create_bufs = vb2_ioctl_create_bufs,
	.vidioc_prepare_buf = vb2_ioctl_prepare_buf,
	.vidioc_querybuf = vb2_ioctl_querybuf,
	.vidioc_qbuf = vb2_ioctl_qbuf,
	.vidioc_dqbuf = vb2_ioctl_dqbuf,
	.vidioc_expbuf = vb2_ioctl_expbuf,
	.vidioc_streamon = vb2_ioctl_streamon,
	.vidioc_streamoff = vb2_ioctl_streamoff,
	.vidioc_log_status = v4l2_ctrl_log_status,
	.vidioc_subscribe_event = v4l2_ctrl_subscribe_event,
	.vidioc_unsubscribe_event = v4l2_event_unsubscribe,
};

/*
 * The control sets the camera received (VIDIOC_S_CTRL and VIDIOC_S_EXT_CTRLS from any opener, each
 * counted once however many controls it carries): how many, when the last arrived, and the least
 * time between two in a row. A real camera sent sets faster than it takes them can wedge; tests
 * read these to judge a driver's rate, and when its stop reached the camera.
 */
static DEFINE_SPINLOCK(vptz_sets_lock);
static u64 vptz_sets_count;
static ktime_t vptz_sets_last;
static s64 vptz_sets_min_gap_ns = -1;	/* until two sets have arrived */

static long vptz_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	if (cmd == VIDIOC_S_CTRL || cmd == VIDIOC_S_EXT_CTRLS) {
		ktime_t now = ktime_get();
		unsigned long flags;

		spin_lock_irqsave(&vptz_sets_lock, flags);
		if (vptz_sets_count) {
			s64 gap = ktime_to_ns(ktime_sub(now, vptz_sets_last));

			if (vptz_sets_min_gap_ns < 0 || gap < vptz_sets_min_gap_ns)
				vptz_sets_min_gap_ns = gap;
		}
		vptz_sets_count++;
		vptz_sets_last = now;
		spin_unlock_irqrestore(&vptz_sets_lock, flags);
	}
	return video_ioctl2(file, cmd, arg);
}

/*
 * /sys/module/vptz/parameters/sets: "COUNT LAST_NS MIN_GAP_NS", the sets received since the module
 * was loaded or the count was last reset, LAST_NS when the last arrived (CLOCK_MONOTONIC, as
 * ktime_get; 0 before any), MIN_GAP_NS the least time between two in a row (-1 before two).
 * Writing 0 resets them.
 */
static int vptz_sets_get(char *buf, const struct kernel_param *kp)
{
	unsigned long flags;
	u64 count;
	s64 last, gap;

	spin_lock_irqsave(&vptz_sets_lock, flags);
	count = vptz_sets_count;
	last = ktime_to_ns(vptz_sets_last);
	gap = vptz_sets_min_gap_ns;
	spin_unlock_irqrestore(&vptz_sets_lock, flags);
	return sysfs_emit(buf, "%llu %lld %lld\n", count, last, gap);
}

static int vptz_sets_set(const char *val, const struct kernel_param *kp)
{
	unsigned long flags;
	u64 v;
	int ret = kstrtou64(val, 10, &v);

	if (ret)
		return ret;
	if (v)
		return -EINVAL;
	spin_lock_irqsave(&vptz_sets_lock, flags);
	vptz_sets_count = 0;
	vptz_sets_last = 0;
	vptz_sets_min_gap_ns = -1;
	spin_unlock_irqrestore(&vptz_sets_lock, flags);
	return 0;
}

static const struct kernel_param_ops vptz_sets_ops = {
	.get = vptz_sets_get,
	.set = vptz_sets_set,
};
module_param_cb(sets, &vptz_sets_ops, NULL, 0644);
MODULE_PARM_DESC(sets, "the control sets received: COUNT LAST_NS (CLOCK_MONOTONIC) MIN_GAP_NS (-1 before two); write 0 to reset");

static const struct v4l2_file_operations vptz_fops = {
	.owner = THIS_MODULE,
	.open = v4l2_fh_open,
	.release = vb2_fop_release,
	.read = vb2_fop_read,
	.poll = vb2_fop_poll,
	.mmap = vb2_fop_mmap,
	.unlocked_ioctl = vptz_ioctl,
};

/* ---- plug and unplug ---- */

/*
 * Each plug-in registers a new video device, as a USB camera's does: an unplug unregisters it
 * while programs may still hold it open (their ioctls then fail with ENODEV, as uvcvideo's do
 * after a disconnect), and the old device is freed when the last of them closes it.
 */
static int vptz_plug(struct vptz *dev)
{
	struct video_device *vdev = video_device_alloc();
	int ret;

	if (!vdev)
		return -ENOMEM;
	strscpy(vdev->name, "vptz", sizeof(vdev->name));
	vdev->fops = &vptz_fops;
	vdev->ioctl_ops = &vptz_ioctl_ops;
	vdev->release = video_device_release;
	vdev->v4l2_dev = &dev->v4l2_dev;
	vdev->queue = &dev->queue;
	vdev->lock = &dev->lock;
	vdev->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_READWRITE;
	video_set_drvdata(vdev, dev);
	ret = video_register_device(vdev, VFL_TYPE_VIDEO, -1);
	if (ret) {
		video_device_release(vdev);
		return ret;
	}
	dev->vdev = vdev;
	return 0;
}

static DEFINE_MUTEX(vptz_plug_lock);

/*
 * /sys/module/vptz/parameters/plugged: write 0 to unplug the camera, 1 to plug it in again. The
 * pose and the controls' values survive (a camera that was turning at a speed goes on turning), so
 * a test sees whether a program stops the camera when it reattaches. Refused (EBUSY) while a
 * capture holds buffers: the queue belongs to the device that is going.
 */
static int vptz_plugged_set(const char *val, const struct kernel_param *kp)
{
	struct vptz *dev = vptz_dev;
	bool plug;
	int ret = kstrtobool(val, &plug);

	if (ret)
		return ret;
	if (!dev) {
		pr_err("vptz: plugged is set once the module is loaded, not as a load parameter\n");
		return -EINVAL;
	}
	mutex_lock(&vptz_plug_lock);
	if (plug && !dev->vdev) {
		ret = vptz_plug(dev);
	} else if (!plug && dev->vdev) {
		mutex_lock(&dev->lock);
		ret = vb2_is_busy(&dev->queue) ? -EBUSY : 0;
		mutex_unlock(&dev->lock);
		if (!ret) {
			video_unregister_device(dev->vdev);
			dev->vdev = NULL;
		}
	}
	mutex_unlock(&vptz_plug_lock);
	return ret;
}

static int vptz_plugged_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", vptz_dev && vptz_dev->vdev ? 1 : 0);
}

static const struct kernel_param_ops vptz_plugged_ops = {
	.set = vptz_plugged_set,
	.get = vptz_plugged_get,
};
module_param_cb(plugged, &vptz_plugged_ops, NULL, 0644);
MODULE_PARM_DESC(plugged, "1 while the camera is plugged in (the default); write 0 to unplug it, 1 to plug it in again as a new device");

/* ---- module ---- */

static int __init vptz_init(void)
{
	const struct vptz_profile *prof = NULL;
	struct vptz *dev;
	ktime_t now = ktime_get();
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vptz_profiles); i++)
		if (!strcmp(profile, vptz_profiles[i].name))
			prof = &vptz_profiles[i];
	if (!prof) {
		pr_err("vptz: unknown profile '%s'\n", profile);
		return -EINVAL;
	}
	if (!speed_dps) {
		pr_err("vptz: speed_dps must be > 0\n");
		return -EINVAL;
	}
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->prof = prof;
	mutex_init(&dev->lock);
	spin_lock_init(&dev->pose_lock);
	spin_lock_init(&dev->qlock);
	INIT_LIST_HEAD(&dev->bufs);
	INIT_DELAYED_WORK(&dev->frame_work, vptz_frame_work);
	axis_init(&dev->pan, prof->pan_min, prof->pan_max, now);
	axis_init(&dev->tilt, prof->tilt_min, prof->tilt_max, now);

	dev->pdev = platform_device_register_simple("vptz", -1, NULL, 0);
	if (IS_ERR(dev->pdev)) {
		ret = PTR_ERR(dev->pdev);
		goto free;
	}
	/* named here: the platform device has no driver, whose name v4l2 would take */
	strscpy(dev->v4l2_dev.name, "vptz", sizeof(dev->v4l2_dev.name));
	ret = v4l2_device_register(&dev->pdev->dev, &dev->v4l2_dev);
	if (ret)
		goto unreg_pdev;
	ret = vptz_init_ctrls(dev);
	if (ret)
		goto free_hdl;
	dev->v4l2_dev.ctrl_handler = &dev->hdl;

	dev->queue.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	dev->queue.io_modes = VB2_MMAP | VB2_USERPTR | VB2_DMABUF | VB2_READ;
	dev->queue.drv_priv = dev;
	dev->queue.buf_struct_size = sizeof(struct vptz_buffer);
	dev->queue.ops = &vptz_qops;
	dev->queue.mem_ops = &vb2_vmalloc_memops;
	dev->queue.timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
	dev->queue.lock = &dev->lock;
	dev->queue.dev = &dev->pdev->dev;
	ret = vb2_queue_init(&dev->queue);
	if (ret)
		goto free_hdl;

	ret = vptz_plug(dev);
	if (ret)
		goto free_hdl;
	vptz_dev = dev;
	v4l2_info(&dev->v4l2_dev, "%s as %s (volatile_pose=%d speed_dps=%u busy_ms=%u)\n",
		  prof->name, video_device_node_name(dev->vdev), volatile_pose, speed_dps, busy_ms);
	return 0;

free_hdl:
	v4l2_ctrl_handler_free(&dev->hdl);
	v4l2_device_unregister(&dev->v4l2_dev);
unreg_pdev:
	platform_device_unregister(dev->pdev);
free:
	kfree(dev);
	return ret;
}

static void __exit vptz_exit(void)
{
	struct vptz *dev = vptz_dev;

	if (dev->vdev)
		video_unregister_device(dev->vdev);
	v4l2_ctrl_handler_free(&dev->hdl);
	v4l2_device_unregister(&dev->v4l2_dev);
	platform_device_unregister(dev->pdev);
	kfree(dev);
}

module_init(vptz_init);
module_exit(vptz_exit);

MODULE_DESCRIPTION("vptz: a virtual PTZ webcam (V4L2 camera-class controls and a capture queue)");
MODULE_LICENSE("GPL");
