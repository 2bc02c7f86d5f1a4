"""Byte fixtures for Tests/DockDriversTests, generated from the peers no one here wrote:
visca-over-ip 0.5.2 (VISCA commands, captured by the emulator) and pymavlink 2.4.50 (MAVLink 2
frames). The Swift tests compare dockd's encoders with these files; tests/integration/
test_drivers_peers.py regenerates them at test time and checks the files still match.

    python tests/peers/driver_fixtures.py   # rewrite the fixture files
"""
import json
import math
import time
from pathlib import Path

from pymavlink.dialects.v20 import common as mavlink

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests" / "DockDriversTests" / "Fixtures"
PROFILE = ROOT / "profiles" / "visca" / "generic-ptzoptics.json"

# (name, visca-over-ip call, dockd encoder arguments). Directions in dockd's encoder: pan −1 left,
# +1 right; tilt +1 up, −1 down. visca-over-ip: a negative speed is direction 01 (left / up).
VISCA_CASES = [
    ("drive_left_up", lambda c: c.pantilt(-13, -7), {"kind": "drive", "pan_speed": 13, "tilt_speed": 7, "pan": -1, "tilt": 1}),
    ("drive_right_down", lambda c: c.pantilt(24, 20), {"kind": "drive", "pan_speed": 24, "tilt_speed": 20, "pan": 1, "tilt": -1}),
    ("drive_pan_only_right", lambda c: c.pantilt(5, 1), {"kind": "drive", "pan_speed": 5, "tilt_speed": 1, "pan": 1, "tilt": -1}),
    ("absolute", lambda c: c.pantilt(10, 8, 1000, -200), {"kind": "move", "relative": False, "pan_speed": 10, "tilt_speed": 8, "pan_units": 1000, "tilt_units": -200}),
    ("absolute_negative_pan", lambda c: c.pantilt(24, 20, -2448, 1296), {"kind": "move", "relative": False, "pan_speed": 24, "tilt_speed": 20, "pan_units": -2448, "tilt_units": 1296}),
    ("relative", lambda c: c.pantilt(3, 3, -50, 25, relative=True), {"kind": "move", "relative": True, "pan_speed": 3, "tilt_speed": 3, "pan_units": -50, "tilt_units": 25}),
    ("home", lambda c: c.pantilt_home(), {"kind": "home"}),
    ("position_inquiry", lambda c: c.get_pantilt_position(), {"kind": "position_inquiry"}),
]


def visca_commands():
    """Runs visca-over-ip against the emulator on 127.0.0.2 (a free port) and records each command's payload."""
    import visca_camera as vc
    from visca_over_ip import Camera

    def next_after(before):
        deadline = time.monotonic() + 2
        while len(cam.received) <= before and time.monotonic() < deadline:
            time.sleep(0.005)
        return cam.received[before]

    cam = vc.Camera(vc.load_profile(PROFILE))
    port = vc.free_udp_port()
    link = vc.UdpLink(cam, "127.0.0.2", port).start()
    controller = Camera("127.0.0.2", port)
    try:
        ptype, payload = next_after(0)
        out = [{"name": "if_clear", "visca_over_ip": payload.hex(" "), "dockd": {"kind": "if_clear"}, "payload_type": ptype}]
        for name, call, dockd in VISCA_CASES:
            before = len(cam.received)
            call(controller)
            ptype, payload = next_after(before)
            out.append({"name": name, "visca_over_ip": payload.hex(" "), "payload_type": ptype, "dockd": dockd})
        # Stop: visca-over-ip sends speed bytes 00 00, outside VISCA's 01…18 range; dockd sends 01 01.
        before = len(cam.received)
        controller.pantilt(0, 0)
        ptype, payload = next_after(before)
        out.append({"name": "stop", "visca_over_ip": payload.hex(" "), "payload_type": ptype,
                    "dockd": {"kind": "drive", "pan_speed": 1, "tilt_speed": 1, "pan": 0, "tilt": 0},
                    "dockd_hex": "81 01 06 01 01 01 03 03 ff"})
        return out
    finally:
        controller.close_connection()
        link.stop()


def mavlink_frames():
    """pymavlink-encoded frames with fixed sequence numbers and ids, with their fields."""
    def frame(msg, seq, sys_id, comp_id):
        mav = mavlink.MAVLink(None, srcSystem=sys_id, srcComponent=comp_id)
        mav.seq = seq
        return msg.pack(mav).hex(" ")

    out = []
    hb = mavlink.MAVLink_heartbeat_message(mavlink.MAV_TYPE_ONBOARD_CONTROLLER, mavlink.MAV_AUTOPILOT_INVALID, 0, 0,
                                           mavlink.MAV_STATE_ACTIVE, 3)
    out.append({"name": "heartbeat_onboard_controller", "hex": frame(hb, 0, 1, 191), "seq": 0, "sys": 1, "comp": 191,
                "msgid": 0, "crc_extra": hb.crc_extra, "fields": {"type": 18, "autopilot": 8, "system_status": 4, "mavlink_version": 3}})
    nan = float("nan")
    rates = mavlink.MAVLink_gimbal_device_set_attitude_message(1, 154, 44, [nan] * 4, 0.0, 0.2, -0.3)
    out.append({"name": "set_attitude_rates", "hex": frame(rates, 7, 1, 191), "seq": 7, "sys": 1, "comp": 191,
                "msgid": 284, "crc_extra": rates.crc_extra,
                "fields": {"q": ["nan"] * 4, "angular_velocity": [0.0, 0.2, -0.3], "flags": 44, "target_system": 1, "target_component": 154}})
    q = [0.9659258, 0.0, 0.2588190, 0.0]
    quat = mavlink.MAVLink_gimbal_device_set_attitude_message(1, 154, 44, q, nan, nan, nan)
    out.append({"name": "set_attitude_quaternion", "hex": frame(quat, 255, 1, 191), "seq": 255, "sys": 1, "comp": 191,
                "msgid": 284, "crc_extra": quat.crc_extra,
                "fields": {"q": q, "angular_velocity": ["nan"] * 3, "flags": 44, "target_system": 1, "target_component": 154}})
    req = mavlink.MAVLink_command_long_message(0, 154, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 283, 0, 0, 0, 0, 0, 0)
    out.append({"name": "request_gimbal_device_information", "hex": frame(req, 1, 1, 191), "seq": 1, "sys": 1, "comp": 191,
                "msgid": 76, "crc_extra": req.crc_extra,
                "fields": {"command": 512, "params": [283, 0, 0, 0, 0, 0, 0], "target_system": 0, "target_component": 154}})
    interval = mavlink.MAVLink_command_long_message(0, 154, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0, 285, 20000, 0, 0, 0, 0, 0)
    out.append({"name": "set_attitude_status_interval", "hex": frame(interval, 2, 1, 191), "seq": 2, "sys": 1, "comp": 191,
                "msgid": 76, "crc_extra": interval.crc_extra,
                "fields": {"command": 511, "params": [285, 20000, 0, 0, 0, 0, 0], "target_system": 0, "target_component": 154}})
    info = mavlink.MAVLink_gimbal_device_information_message(
        1234, b"PeerVendor", b"PeerGimbal", b"custom", 0x00030201, 7, 0x1122334455667788,
        mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_PITCH_AXIS | mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_YAW_AXIS, 0,
        nan, nan, -1.5, 0.5, -2.5, 2.0, 0)
    out.append({"name": "gimbal_device_information", "hex": frame(info, 3, 1, 154), "seq": 3, "sys": 1, "comp": 154,
                "msgid": 283, "crc_extra": info.crc_extra,
                "fields": {"uid": "1122334455667788", "firmware_version": 0x00030201, "hardware_version": 7,
                           "pitch_min": -1.5, "pitch_max": 0.5, "yaw_min": -2.5, "yaw_max": 2.0, "cap_flags": 288,
                           "vendor_name": "PeerVendor", "model_name": "PeerGimbal"}})
    # Yaw 30° to the right (FRD), pitch 10° up.
    y, p = math.radians(30), math.radians(10)
    qs = [math.cos(p / 2) * math.cos(y / 2), -math.sin(p / 2) * math.sin(y / 2), math.sin(p / 2) * math.cos(y / 2), math.cos(p / 2) * math.sin(y / 2)]
    status = mavlink.MAVLink_gimbal_device_attitude_status_message(0, 0, 5000, 44, qs, 0.0, 0.1, -0.2, 2)
    out.append({"name": "gimbal_device_attitude_status", "hex": frame(status, 9, 1, 154), "seq": 9, "sys": 1, "comp": 154,
                "msgid": 285, "crc_extra": status.crc_extra,
                "fields": {"time_boot_ms": 5000, "frd_yaw": y, "frd_pitch": p, "angular_velocity": [0.0, 0.1, -0.2],
                           "failure_flags": 2, "flags": 44}})
    return out


def write():
    FIXTURES.mkdir(parents=True, exist_ok=True)
    (FIXTURES / "visca_commands.json").write_text(json.dumps(visca_commands(), indent=1) + "\n")
    (FIXTURES / "mavlink_frames.json").write_text(json.dumps(mavlink_frames(), indent=1) + "\n")


if __name__ == "__main__":
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    write()
