"""dock-camera's relay under a real kernel: in the VM (tests/vm/run.sh, one boot) dock-camera captures
kernel/vptz's frames (640x360 YUYV, 30 frames/s) and relays them to v4l2loopback (built from Debian's
v4l2loopback-dkms for the VM's kernel), while relay_reader.py, a second program, reads them from the
loopback's capture side as a meeting app would. guest_relay.sh records; these tests judge.

The VM runs qemu's software emulation on one virtual CPU, many times slower than the host: rates and
latencies are judged by the VM's own clock, against what that machine can do (the target of one
frame of added latency is measured on the host: camera/bench/bench_relay.py, BENCHMARKS.md)."""
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))
W, H = 640, 360
FRAME = 1 / 30
LOOPBACK_BUFFERS = 2  # guest_relay.sh loads v4l2loopback with max_buffers=2 (its default)
CAPTURE_BUFFERS = 4  # dock-camera --relay asks the capture device for 4 buffers (camera/dock_camera/cli.py)
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def vm(tmp_path_factory):
    if os.environ.get("RELAY_VM_OUT"):  # judge a run recorded before (guest_relay.sh's folder)
        return Path(os.environ["RELAY_VM_OUT"])
    out = tmp_path_factory.mktemp("relay-vm")
    t0 = time.monotonic()
    run = subprocess.run(["bash", str(HERE / "run.sh"), "--rw", str(out), "--timeout", "400", "--console", str(out / "console.txt"),
                          "--", "sh", str(HERE / "guest_relay.sh"), str(out), str(BIN)],
                         cwd=ROOT, capture_output=True, text=True, timeout=580)
    if run.returncode != 0:
        pytest.fail(f"run.sh exited {run.returncode}\nstdout: {run.stdout[-3000:]}\nstderr: {run.stderr[-3000:]}")
    print(f"\nrelay VM run: {time.monotonic() - t0:.1f} s wall")
    assert not (out / "errors.txt").exists(), (out / "errors.txt").read_text()
    return out


def text(vm, name):
    path = vm / name
    return path.read_text(errors="replace") if path.exists() else f"(no {name})"


def run(vm, name):
    """What one relay phase recorded: the reader's frames, dock-camera's relay records and summary."""
    assert text(vm, f"{name}-reader.rc").strip() == "0", text(vm, f"{name}-reader.txt") + text(vm, f"{name}-camera.txt")
    assert text(vm, f"{name}-camera.rc").strip() == "0", text(vm, f"{name}-camera.txt")
    reader = json.loads(text(vm, f"{name}-reader.json"))
    records = [json.loads(line) for line in text(vm, f"{name}.jsonl").splitlines() if '"relayed"' in line]
    stats = json.loads(text(vm, f"{name}-stats.json"))
    return reader, records, stats


def relayed_frame(f, records):
    """The relay record of a frame the reader got. The loopback stamps a buffer as its write is
    taken in: the frame is the record whose write began last before that stamp (one writer: writes
    do not overlap), and the stamp comes within a frame period of that write's end. Neither the
    loopback's sequence number (in one VM run it counted one behind dock-camera's records) nor the
    write's exact span (a stamp 4 ms after the write returned, in the same run) identifies it reliably."""
    rec = max((r for r in records if r["write_started"] - 0.001 <= f["timestamp"]), key=lambda r: r["write_started"], default=None)
    assert rec is not None and f["timestamp"] - rec["written"] < FRAME, (f, rec)
    return rec


def latencies(reader, records):
    """Per frame the reader got: seconds from vptz's capture timestamp to the reader's dequeue."""
    # the first may be a buffer the writer overwrote before it was read
    return [f["dequeued"] - relayed_frame(f, records)["capture_time"] for f in reader["frames"][1:]]


def frames_behind(reader, records):
    """Per frame the reader got: how many newer frames the relay had already taken from the camera
    when the reader dequeued it — the queue between camera and reader, in frames."""
    captured = sorted(r["capture_time"] for r in records)
    out = []
    for f in reader["frames"][1:]:
        taken = relayed_frame(f, records)["capture_time"]
        out.append(sum(1 for c in captured if taken < c <= f["dequeued"]))
    return out


def test_a_missing_or_wrong_relay_device_is_a_clear_error(vm):
    assert text(vm, "error-missing.rc").strip() == "69"
    assert "/dev/video11: no such device — v4l2loopback is not loaded" in text(vm, "error-missing.txt")
    assert "modprobe v4l2loopback" in text(vm, "error-missing.txt")
    assert text(vm, "error-capture.rc").strip() == "69"
    assert "/dev/video0: vptz" in text(vm, "error-capture.txt") and "is not a video output device" in text(vm, "error-capture.txt")


@pytest.mark.parametrize("name, fourcc, bytes_per_frame", [("alone", "YU12", W * H * 3 // 2), ("detecting", "YUYV", W * H * 2)])
def test_another_program_reads_the_relayed_frames_at_the_cameras_size(vm, name, fourcc, bytes_per_frame):
    reader, records, stats = run(vm, name)
    # all the frames asked for within the reader's 60 s (at 30 frames/s they take 5 s)
    assert len(reader["frames"]) == reader["asked"], (len(reader["frames"]), reader["asked"], stats)
    assert reader["card"] == "dockd camera", reader["card"]
    assert (reader["width"], reader["height"], reader["fourcc"]) == (W, H, fourcc), reader
    assert reader["sizeimage"] == bytes_per_frame
    assert all(f["bytes"] == bytes_per_frame for f in reader["frames"])
    assert stats["relay"]["size"] == [W, H] and stats["relay"]["format"] == fourcc


@pytest.mark.parametrize("name", ["alone", "detecting"])
def test_the_relayed_picture_is_the_cameras(vm, name):
    """vptz draws a 32x32 white square on gray (Y 128) centred at pan 0; the camera panned to −20°
    moves it 160 px right (640 px / 80° of field of view)."""
    reader, _, _ = run(vm, name)
    frames = reader["frames"]
    assert all(abs(f["background"] - 128) <= 3 for f in frames), [f["background"] for f in frames]
    first, last = frames[0]["square"], frames[-1]["square"]
    assert first and abs(first[0] - 304) <= 2 and abs(first[1] - 164) <= 2 and abs(first[2] - first[0] - 32) <= 2, first
    assert last and abs(last[0] - 464) <= 2 and abs(last[1] - 164) <= 2 and abs(last[3] - last[1] - 32) <= 2, last
    xs = [f["square"][0] for f in frames if f["square"]]
    assert xs == sorted(xs), xs  # it only moves one way: no frame out of order


def frames_lost_unexplained(reader, records):
    """Frames missing between two the reader took in turn while it kept pace: at most LOOPBACK_BUFFERS
    writes began after the first one's write and before the second's dequeue. A reader descheduled
    for longer finds the loopback's buffers overwritten and skips to the newest frame, as a meeting
    app would; a frame missing without that happening was lost by the relay or the loopback.
    Counted from the first frame's own write, not from its dequeue: a reader that dequeued it late
    (216 ms after its stamp in one CI run) had newer frames waiting already."""
    frames = reader["frames"]
    lost = []
    for a, b in zip(frames, frames[1:]):
        if b["sequence"] - a["sequence"] > 1:
            after = relayed_frame(a, records)["write_started"]
            writes = sum(1 for r in records if after < r["write_started"] <= b["dequeued"])
            if writes <= LOOPBACK_BUFFERS:
                lost.append((a["sequence"], b["sequence"], writes))
    return lost


@pytest.mark.parametrize("name", ["alone", "detecting"])
def test_frames_reach_the_reader_in_order_and_none_are_lost_between_relay_and_reader(vm, name):
    reader, records, stats = run(vm, name)
    sequences = [f["sequence"] for f in reader["frames"]]
    assert sequences == sorted(sequences)
    missed = sum(b - a - 1 for a, b in zip(sequences, sequences[1:]))
    print(f"\n{name}: the reader missed {missed} of {sequences[-1] - sequences[0] + 1} relayed frames; "
          f"dock-camera relayed {stats['relay']['frames']}, missed {stats['relay']['capture_gaps']} at capture "
          f"(VM clock: frame interval {stats['relay']['frame_interval_ms']} ms)")
    # One virtual CPU shared by the camera, the relay, the reader (and HOG): the reader is sometimes
    # descheduled for longer than the loopback's buffers last (36 of 186 frames skipped in one CI run,
    # none in most); only a frame missing while it kept pace is a loss.
    assert frames_lost_unexplained(reader, records) == []


@pytest.mark.parametrize("name", ["alone", "detecting"])
def test_the_added_latency_is_bounded_and_does_not_grow(vm, name):
    reader, records, stats = run(vm, name)
    lat = latencies(reader, records)
    p50, p95 = statistics.median(lat), sorted(lat)[int(0.95 * len(lat))]
    third = len(lat) // 3
    early, late = statistics.median(lat[:third]), statistics.median(lat[-third:])
    print(f"\n{name}: capture -> another program's dequeue, VM clock: p50 {p50 * 1000:.0f} ms ({p50 / FRAME:.1f} frames), "
          f"p95 {p95 * 1000:.0f} ms ({p95 / FRAME:.1f} frames); first third {early * 1000:.0f} ms, last {late * 1000:.0f} ms; "
          f"relay thread {stats['relay'].get('thread_cpu_ms_per_frame')} ms CPU/frame ({stats['relay'].get('thread_cpu_percent')} %)")
    # Bounded and not growing: a relay that fell behind without bound (frames queued in dock-camera)
    # would fail this. Judged in frames, not milliseconds: under qemu's emulation the camera's rate
    # is what the shared virtual CPU allows (in one CI run vptz delivered 1 frame in 3 while HOG ran,
    # so 4 queued frames were 610 ms at p95), while the queue's depth is the relay's own doing: the
    # capture buffers it asks for, the loopback's, and the one being written. The target of one frame
    # of added latency is the host's (camera/bench/bench_relay.py).
    behind = frames_behind(reader, records)
    print(f"{name}: frames the relay had taken behind the one dequeued: p50 {statistics.median(behind)}, max {max(behind)}")
    assert max(behind) <= CAPTURE_BUFFERS + LOOPBACK_BUFFERS + 1, behind
    third = len(behind) // 3
    assert statistics.median(behind[-third:]) <= statistics.median(behind[:third]) + 1, behind


def test_the_relay_keeps_the_cameras_rate_while_the_detector_is_slower(vm):
    """With dockd connected dock-camera runs HOG on the newest frame it can; the relay must not be
    paced by it: far more frames relayed than detected, and as many as without the detector, within
    what the shared CPU allows."""
    _, _, alone = run(vm, "alone")
    _, _, detecting = run(vm, "detecting")
    relayed, detected = detecting["relay"]["frames"], detecting["frames"]
    print(f"\nwith HOG: {detected} frames detected ({detecting['detect_ms']}), {relayed} relayed; "
          f"capture gaps {detecting['relay']['capture_gaps']} (alone: {alone['relay']['capture_gaps']} of {alone['relay']['frames']})")
    assert detected > 0, detecting
    assert relayed >= 3 * detected, (relayed, detected)


def test_without_stand_the_camera_feeds_the_stand_of_its_own_device(vm):
    """dockd drives a simulated stand (attached first) and vptz itself; dock-camera capturing from
    /dev/video0 without --stand sends its observations to the stand attached at /dev/video0."""
    stands = (vm / "own-stand-list.json").read_text()
    assert stands.count('"connected"') == 2, stands
    said = (vm / "own-stand-camera.txt").read_text()
    assert (vm / "own-stand-camera.rc").read_text().strip() == "0", said
    assert "observations go to stand webcam, attached at /dev/video0" in said, said
