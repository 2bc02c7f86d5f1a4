"""A second program reading dock-camera's relay, as a meeting app would: it opens the v4l2loopback
device's capture side, streams COUNT frames through mmap buffers (VIDIOC_REQBUFS, QBUF, DQBUF) and
records for each its sequence number, its timestamp (v4l2loopback's: when the frame was written),
the CLOCK_MONOTONIC time it was dequeued here, and where the bright square of kernel/vptz's picture
is in it. Writes them as JSON to OUT, with the first and last frames' raw bytes beside it.
Needs only the standard library (the test judges; this only records).
    relay_reader.py DEVICE COUNT OUT.json"""
import json
import mmap
import os
import select
import struct
import sys
import time


def ioc(direction, number, size):
    return (direction << 30) | (size << 16) | (ord("V") << 8) | number


CAPABILITY = struct.Struct("16s32s32sIII12x")
FORMAT_SIZE = 208
PIX = struct.Struct("12I")
REQBUFS = struct.Struct("4I4x")   # struct v4l2_requestbuffers: count, type, memory, capabilities, flags+reserved
BUFFER_SIZE = 88                  # struct v4l2_buffer on 64-bit
VIDIOC_QUERYCAP = ioc(2, 0, CAPABILITY.size)
VIDIOC_G_FMT = ioc(3, 4, FORMAT_SIZE)
VIDIOC_REQBUFS = ioc(3, 8, REQBUFS.size)
VIDIOC_QUERYBUF = ioc(3, 9, BUFFER_SIZE)
VIDIOC_QBUF = ioc(3, 15, BUFFER_SIZE)
VIDIOC_DQBUF = ioc(3, 17, BUFFER_SIZE)
VIDIOC_STREAMON = ioc(1, 18, 4)
VIDIOC_STREAMOFF = ioc(1, 19, 4)
CAPTURE = 1
MEMORY_MMAP = 1
CAP_VIDEO_CAPTURE = 1
CAP_DEVICE_CAPS = 0x80000000


def ioctl(fd, request, buf):
    import fcntl
    fcntl.ioctl(fd, request, buf)
    return buf


def buffer(index=0):
    b = bytearray(BUFFER_SIZE)
    struct.pack_into("II", b, 0, index, CAPTURE)
    struct.pack_into("I", b, 60, MEMORY_MMAP)
    return b


BRIGHT = bytes(1 if v > 200 else 0 for v in range(256))


def square(luma, width, height):
    """The bright square's bounding box [x0, y0, x1, y1] in a luma plane, or None (C-speed scans: the
    reader shares the VM's one CPU with dock-camera)."""
    rows = [y for y in range(height) if max(luma[y * width:(y + 1) * width]) > 200]
    if not rows:
        return None
    row = luma[rows[len(rows) // 2] * width:(rows[len(rows) // 2] + 1) * width].translate(BRIGHT)
    return [row.find(1), rows[0], row.rfind(1) + 1, rows[-1] + 1]


def main():
    device, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    deadline = time.monotonic() + 120
    # exclusive_caps=1: the device shows a capture side only once a writer has set its format
    while True:
        fd = os.open(device, os.O_RDWR)
        _d, card, _b, _v, caps, dcaps = CAPABILITY.unpack(ioctl(fd, VIDIOC_QUERYCAP, bytearray(CAPABILITY.size)))
        caps = dcaps if caps & CAP_DEVICE_CAPS else caps
        if caps & CAP_VIDEO_CAPTURE:
            break
        os.close(fd)
        if time.monotonic() > deadline:
            sys.exit(f"{device}: no capture side after 120 s (no writer?)")
        time.sleep(0.05)
    opened = time.monotonic()
    fmt = bytearray(FORMAT_SIZE)
    struct.pack_into("I", fmt, 0, CAPTURE)
    ioctl(fd, VIDIOC_G_FMT, fmt)
    width, height, fourcc, _field, bytesperline, sizeimage = PIX.unpack_from(fmt, 8)[:6]
    req = bytearray(REQBUFS.pack(4, CAPTURE, MEMORY_MMAP, 0))
    ioctl(fd, VIDIOC_REQBUFS, req)
    maps = []
    for i in range(REQBUFS.unpack(req)[0]):
        b = ioctl(fd, VIDIOC_QUERYBUF, buffer(i))
        offset, length = struct.unpack_from("I", b, 64)[0], struct.unpack_from("I", b, 72)[0]
        maps.append(mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ, offset=offset))
        ioctl(fd, VIDIOC_QBUF, buffer(i))
    ioctl(fd, VIDIOC_STREAMON, bytearray(struct.pack("I", CAPTURE)))
    frames, first, last = [], None, None
    deadline = time.monotonic() + 60  # VM clock: what arrived by then is recorded, complete or not
    for n in range(count):
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        b = ioctl(fd, VIDIOC_DQBUF, buffer())
        dequeued = time.monotonic()
        index, _type, used = struct.unpack_from("III", b, 0)
        sec, usec = struct.unpack_from("qq", b, 24)
        sequence = struct.unpack_from("I", b, 56)[0]
        data = maps[index][:used]
        ioctl(fd, VIDIOC_QBUF, buffer(index))
        luma = data[:width * height] if fourcc == struct.unpack("<I", b"YU12")[0] else data[0::2][:width * height]
        frames.append({"sequence": sequence, "timestamp": sec + usec / 1e6, "dequeued": dequeued,
                       "bytes": used, "square": square(luma, width, height),
                       "background": luma[width * 8 + 8]})
        if first is None:
            first = data
        last = data
        if n + 1 == count // 3:  # the guest script moves the camera once a third has been read
            print(f"read {n + 1}", flush=True)
    ioctl(fd, VIDIOC_STREAMOFF, bytearray(struct.pack("I", CAPTURE)))
    with open(out, "w") as f:
        json.dump({"card": card.rstrip(b"\0").decode(), "width": width, "height": height, "asked": count,
                   "fourcc": struct.pack("<I", fourcc).decode(), "bytesperline": bytesperline,
                   "sizeimage": sizeimage, "opened": opened, "frames": frames}, f)
    with open(out + ".first", "wb") as f:
        f.write(first)
    with open(out + ".last", "wb") as f:
        f.write(last)


if __name__ == "__main__":
    main()
