"""Writes the seed corpora of VISCAFuzz and MAVLinkFuzz into Fuzz/seeds/{visca,mavlink}/ from what
the test peers really send (tests/peers/visca_camera.py, tests/peers/mavlink_gimbal.py with
pymavlink) in answer to dockd's own commands (Tests/DockDriversTests/Fixtures).

Usage (pymavlink is in the test venv): .venv/bin/python Fuzz/driver_seeds.py
The seeds are committed; run this again when the peers or the fixtures change.
"""
import json
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
import mavlink_gimbal  # noqa: E402
import visca_camera  # noqa: E402
from pymavlink.dialects.v10 import common as mavlink1  # noqa: E402

# Byte 0 of every input: all at once, fixed 2- and 8-byte reads, varying reads, byte at a time.
CHUNKINGS = (0x00, 0x05, 0x1D, 0x02, 0x03)


def fixtures(name):
    with open(os.path.join(ROOT, "Tests", "DockDriversTests", "Fixtures", name)) as f:
        return json.load(f)


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    for chunking in CHUNKINGS:
        with open(os.path.join(directory, f"{name}-{chunking:02x}"), "wb") as f:
            f.write(bytes([chunking]) + data)


def camera_replies(profile, commands, buffer_full_at=None):
    """The camera's replies, in order, to each command (the emulator answers on timers)."""
    camera = visca_camera.Camera(profile, ack_delay=0.001, completion_delay=0.002, inquiry_delay=0.001)
    replies, lock = [], threading.Lock()

    def send(data):
        with lock:
            replies.append(bytes(data))
    for i, command in enumerate(commands):
        if i == buffer_full_at:
            camera.inject.append("buffer_full")
        camera.handle(command, send)
        time.sleep(0.02)
        camera.step()
    time.sleep(0.02)
    return replies


def visca_seeds(out):
    address_set, if_clear, inquiry = bytes.fromhex("88 30 01 ff"), bytes.fromhex("81 01 00 01 ff"), bytes.fromhex("81 09 06 12 ff")
    commands = [bytes.fromhex(c["visca_over_ip"]) for c in fixtures("visca_commands.json")]
    count = 0
    for bit, name in ((0, "generic-ptzoptics"), (4, "sony-brc-h700")):
        profile = visca_camera.load_profile(os.path.join(ROOT, "profiles", "visca", name + ".json"))
        # Serial: AddressSet first; raw UDP and TCP start at IF_Clear; every poll between commands.
        talk = [if_clear, inquiry] + [m for c in commands for m in (c, inquiry)]
        serial = camera_replies(profile, [address_set] + talk, buffer_full_at=4)
        raw = camera_replies(profile, talk)
        for transport, replies in ((0, serial), (2, raw), (3, raw)):
            write(out, f"{name}-transport{transport}", bytes([transport | bit]) + b"".join(replies))
            count += len(CHUNKINGS)
        # VISCA-over-IP: the sequence reset's control reply, then every reply in a 0x0111 header.
        wrapped = bytes.fromhex("02 01 00 01 00 00 00 00 01") + b"".join(
            b"\x01\x11" + len(r).to_bytes(2, "big") + (seq + 1).to_bytes(4, "big") + r for seq, r in enumerate(raw))
        write(out, f"{name}-transport1", bytes([1 | bit]) + wrapped)
        count += len(CHUNKINGS)
    return count


def gimbal_bytes():
    """A gimbal's talk: HEARTBEAT and ATTITUDE_STATUS for 50 ms, then its answers to dockd's requests."""
    sent, lock = [], threading.Lock()

    def collect(data):
        with lock:
            sent.append(bytes(data))
    gimbal = mavlink_gimbal.Gimbal(collect)
    runner = threading.Thread(target=gimbal.run)
    runner.start()
    time.sleep(0.05)
    gimbal.stopping.set()
    runner.join()
    for frame in fixtures("mavlink_frames.json"):
        if frame["name"] in ("request_gimbal_device_information", "set_attitude_status_interval"):
            gimbal.feed(bytes.fromhex(frame["hex"]))
    return sent


def mavlink_seeds(out):
    count = 0
    for frame in fixtures("mavlink_frames.json"):
        write(out, frame["name"], bytes.fromhex(frame["hex"]))
        count += len(CHUNKINGS)
    write(out, "gimbal-session", b"".join(gimbal_bytes()))
    old = mavlink1.MAVLink(None, srcSystem=1, srcComponent=154)
    heartbeat_v1 = mavlink1.MAVLink_heartbeat_message(26, 8, 0, 0, 4, 3).pack(old)
    write(out, "heartbeat-v1", heartbeat_v1)
    return count + 2 * len(CHUNKINGS)


if __name__ == "__main__":
    seeds = os.path.join(ROOT, "Fuzz", "seeds")
    print("visca:", visca_seeds(os.path.join(seeds, "visca")))
    print("mavlink:", mavlink_seeds(os.path.join(seeds, "mavlink")))
