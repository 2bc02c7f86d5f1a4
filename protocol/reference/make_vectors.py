#!/usr/bin/env python3
"""Write protocol/vectors/messages.json and streams.json with the reference codec (dockproto.py).

Output is deterministic: entries keep the order below and every frame is checked on the way out.
Each stream carries an `expect` list written by hand from the receiving rules of PROTOCOL.md
section 1; the script refuses to write anything if the reference decoder disagrees with it.

Run from any directory: python3 protocol/reference/make_vectors.py
"""

import json
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dockproto  # noqa: E402

VECTORS_DIR = Path(__file__).resolve().parent.parent / "vectors"
SPEC = Path(__file__).resolve().parent.parent / "PROTOCOL.md"
DUMPS_BEGIN = "<!-- byte dumps: written by protocol/reference/make_vectors.py from the vectors; do not edit -->"
DUMPS_END = "<!-- end of byte dumps -->"
# The messages PROTOCOL.md shows byte by byte (section 6, "Byte dumps").
DUMPED = ["hello", "hello_reply", "feedback", "nack_version_mismatch"]

NAN = "NaN"


def frame(type_name, payload=None, seq=0, flags=0):
    return {"seq": seq, "flags": flags, "type": type_name, "payload": payload or {}}


def event(time_us, kind, value, button=0, factor=1.0):
    return {"time_us": time_us, "kind": kind, "value": value, "button": button, "factor": factor}


# Floats are all exact in float32 (few significant bits), so JSON text and wire bytes agree.
# u64 times stay below 2**53 so that JSON readers that parse numbers as doubles read them exactly.
MESSAGES = [
    ("hello", frame("hello", {"major": 1, "minor": 1, "heartbeat_timeout_ms": 500,
                              "host": "dockd 0.1"}, seq=0, flags=1)),
    ("hello_v1_0", frame("hello", {"major": 1, "minor": 0, "heartbeat_timeout_ms": 500,
                                   "host": "dockd 0.1"}, seq=0, flags=1)),
    ("hello_default_timeout_empty_host", frame("hello", {"major": 1, "minor": 1,
                                                         "heartbeat_timeout_ms": 0, "host": ""},
                                               seq=1, flags=1)),
    ("hello_reply", frame("hello_reply", {"major": 1, "minor": 1, "heartbeat_timeout_ms": 500,
                                          "model": "dock-sim", "firmware": "1.2.3",
                                          "hardware": "rev-b", "serial": "SIM-0001"}, seq=0)),
    ("hello_reply_v1_0", frame("hello_reply", {"major": 1, "minor": 0, "heartbeat_timeout_ms": 500,
                                               "model": "dock-sim", "firmware": "1.0.0",
                                               "hardware": "rev-a", "serial": "SIM-0001"}, seq=0)),
    ("hello_reply_utf8", frame("hello_reply", {"major": 1, "minor": 1,
                                               "heartbeat_timeout_ms": 5000,
                                               "model": "Stativ Größe M", "firmware": "0.9.12",
                                               "hardware": "B2", "serial": "ÆØÅ-0042"}, seq=17)),
    ("capabilities_2axes_1battery", frame("capabilities", {
        "feedback_hz": 100, "imu_hz": 0, "features": 0x0A, "buttons": 0x01, "custom_buttons": 0,
        "axes": [
            {"axis": "yaw", "flags": 1, "min": 0.0, "max": 0.0, "max_speed": 3.140625,
             "max_accel": 12.5, "counts_per_rev": 4096},
            {"axis": "pitch", "flags": 0, "min": -0.78125, "max": 1.5625, "max_speed": 2.25,
             "max_accel": 8.0, "counts_per_rev": 4096},
        ],
        "batteries": ["internal"],
    }, seq=1)),
    ("capabilities_3axes_2batteries", frame("capabilities", {
        "feedback_hz": 200, "imu_hz": 400, "features": 0x1F, "buttons": 0x1F,
        "custom_buttons": 3,
        "axes": [
            {"axis": "yaw", "flags": 1, "min": -3.140625, "max": 3.140625, "max_speed": 6.25,
             "max_accel": 25.0, "counts_per_rev": 16384},
            {"axis": "pitch", "flags": 0, "min": -1.5, "max": 1.5, "max_speed": 4.5,
             "max_accel": 18.75, "counts_per_rev": 16384},
            {"axis": "roll", "flags": 0, "min": -0.5, "max": 0.5, "max_speed": 1.0,
             "max_accel": 2.0, "counts_per_rev": 1000000},
        ],
        "batteries": ["internal", "grip"],
    }, seq=2)),
    ("capabilities_1axis_no_battery", frame("capabilities", {
        "feedback_hz": 50, "imu_hz": 0, "features": 0, "buttons": 0, "custom_buttons": 0,
        "axes": [
            {"axis": "yaw", "flags": 0, "min": -1.0, "max": 1.0, "max_speed": 0.5,
             "max_accel": 1.0, "counts_per_rev": 360},
        ],
        "batteries": [],
    }, seq=3)),
    ("heartbeat", frame("heartbeat", {"uptime_ms": 123456}, seq=42)),
    ("heartbeat_seq_wrap", frame("heartbeat", {"uptime_ms": 4294967295}, seq=65535)),
    ("heartbeat_zero", frame("heartbeat", {"uptime_ms": 0}, seq=0)),
    ("heartbeat_ack_request", frame("heartbeat", {"uptime_ms": 0x04030201}, seq=0x1234,
                                    flags=1)),
    ("heartbeat_plain", frame("heartbeat", {"uptime_ms": 0x04030201}, seq=0x1234)),
    ("ack", frame("ack", {"ack_seq": 258, "ack_type": 0x10}, seq=7)),
    ("ack_seq_wrap", frame("ack", {"ack_seq": 65535, "ack_type": 0x12}, seq=0)),
    ("nack_version_mismatch", frame("nack", {"ack_seq": 0, "ack_type": 0x01, "code": 6,
                                             "detail": "stand speaks 2.0"}, seq=0)),
    ("nack_not_ready", frame("nack", {"ack_seq": 3, "ack_type": 0x10, "code": 7,
                                      "detail": "no HELLO yet"}, seq=1)),
    ("nack_unsupported_unknown_type", frame("nack", {"ack_seq": 9, "ack_type": 0x30, "code": 1,
                                                     "detail": "type 0x30 is unknown to protocol 1.1"},
                                            seq=2)),
    ("nack_out_of_range_battery", frame("nack", {"ack_seq": 1013, "ack_type": 0x23, "code": 2,
                                                 "detail": "BATTERY 0 level nan is not a fraction in 0…1"},
                                        seq=3)),
    ("nack_out_of_range_max_detail", frame("nack", {"ack_seq": 513, "ack_type": 0x11, "code": 2,
                                                    "detail": "x" * 200}, seq=300)),
    ("request_capabilities", frame("request", {"what": 2}, seq=5, flags=1)),
    ("request_docked", frame("request", {"what": 4}, seq=6)),
    ("velocity", frame("velocity", {"axes": [{"axis": "yaw", "velocity": 0.5},
                                             {"axis": "pitch", "velocity": -1.25}]}, seq=100)),
    ("velocity_ack_request", frame("velocity", {"axes": [{"axis": "yaw", "velocity": 0.5}]},
                                   seq=101, flags=1)),
    ("velocity_pitch_only", frame("velocity", {"axes": [{"axis": "pitch",
                                                          "velocity": 0.0625}]}, seq=102)),
    ("velocity_zero_all", frame("velocity", {"axes": [{"axis": "yaw", "velocity": 0.0},
                                                      {"axis": "pitch", "velocity": 0.0},
                                                      {"axis": "roll", "velocity": 0.0}]},
                                seq=103)),
    ("position", frame("position", {"duration": 1.5, "axes": [
        {"axis": "yaw", "position": 3.140625, "velocity": 0.0},
        {"axis": "pitch", "position": -0.5, "velocity": 0.0}]}, seq=200, flags=1)),
    ("position_multiturn_fastest", frame("position", {"duration": 0.0, "axes": [
        {"axis": "yaw", "position": 7.0, "velocity": 0.25}]}, seq=201)),
    ("stop", frame("stop", {}, seq=202, flags=1)),
    ("limits", frame("limits", {"axes": [
        {"axis": "yaw", "min": -3.0, "max": 3.0, "max_speed": 1.5, "max_accel": 4.0},
        {"axis": "pitch", "min": -0.25, "max": 0.75, "max_speed": 0.5, "max_accel": 2.0}]},
        seq=203, flags=1)),
    ("limits_continuous_yaw_ignored", frame("limits", {"axes": [
        {"axis": "yaw", "min": NAN, "max": NAN, "max_speed": 3.0, "max_accel": 12.0},
        {"axis": "pitch", "min": -0.5, "max": 0.875, "max_speed": 2.0, "max_accel": 10.0}]},
        seq=208, flags=1)),
    ("led_blink", frame("led", {"mode": 2, "red": 255, "green": 128, "blue": 0,
                                "on_ms": 250, "off_ms": 750}, seq=204)),
    ("led_off", frame("led", {"mode": 0, "red": 0, "green": 0, "blue": 0,
                              "on_ms": 0, "off_ms": 0}, seq=205)),
    ("motors", frame("motors", {"enabled": ["yaw", "pitch"]}, seq=206, flags=1)),
    ("motors_released", frame("motors", {"enabled": []}, seq=207, flags=1)),
    ("feedback", frame("feedback", {"time_us": 1234567890123, "axes": [
        {"axis": "yaw", "position": 0.5, "velocity": -0.25, "effort": NAN, "status": 0x20},
        {"axis": "pitch", "position": -0.125, "velocity": 0.0, "effort": NAN, "status": 0x01}]},
        seq=1000)),
    ("feedback_effort", frame("feedback", {"time_us": 9007199254740991, "axes": [
        {"axis": "yaw", "position": 7.0, "velocity": 1.75, "effort": 0.375, "status": 0x00},
        {"axis": "pitch", "position": 1.5625, "velocity": 0.0, "effort": -0.0625,
         "status": 0x0E}]}, seq=1001)),
    ("feedback_3axes_disabled", frame("feedback", {"time_us": 0, "axes": [
        {"axis": "yaw", "position": 0.0, "velocity": 0.0, "effort": 0.0, "status": 0x10},
        {"axis": "pitch", "position": 0.0, "velocity": 0.0, "effort": 0.0, "status": 0x10},
        {"axis": "roll", "position": -0.0078125, "velocity": 0.0, "effort": 0.0,
         "status": 0x10}]}, seq=1002)),
    ("imu", frame("imu", {"time_us": 1234567890200, "gyro_x": 0.015625, "gyro_y": -0.03125,
                          "gyro_z": 0.0, "accel_x": 0.0, "accel_y": -0.0625, "accel_z": 9.8125},
                  seq=1003)),
    ("event_docked", frame("event", event(5000000, 1, 1), seq=1004)),
    ("event_undocked", frame("event", event(6000000, 1, 0), seq=1005)),
    ("event_tracking_button", frame("event", event(7000000, 2, 1), seq=1006)),
    ("event_shutter", frame("event", event(7100000, 3, 1), seq=1007)),
    ("event_flip", frame("event", event(7200000, 4, 0), seq=1008)),
    ("event_zoom_in", frame("event", event(7300000, 5, 1, factor=2.0), seq=1009)),
    ("event_zoom_out", frame("event", event(7400000, 5, 1, factor=0.5), seq=1010)),
    ("event_custom_button", frame("event", event(7500000, 6, 1, button=2), seq=1011)),
    ("event_tracking_button_ack_request", frame("event", event(7600000, 2, 1), seq=1018, flags=1)),
    ("battery", frame("battery", {"index": 0, "level": 0.75, "charge": 1, "flags": 0},
                      seq=1012)),
    ("battery_low", frame("battery", {"index": 1, "level": 0.0625, "charge": 0, "flags": 1},
                          seq=1013)),
    ("battery_not_chargeable", frame("battery", {"index": 2, "level": 1.0, "charge": 2,
                                                 "flags": 0}, seq=1014)),
    ("fault_heartbeat_lost", frame("fault", {"time_us": 8000000, "severity": 1, "code": 5,
                                             "axis": 255, "text": "no frame for 500 ms"},
                                   seq=1015)),
    ("fault_stall_pitch", frame("fault", {"time_us": 8100000, "severity": 2, "code": 1,
                                          "axis": 1, "text": "pitch stalled"}, seq=1016)),
    ("fault_log_empty_text", frame("fault", {"time_us": 8200000, "severity": 0, "code": 8,
                                             "axis": 255, "text": ""}, seq=1017)),
]
MESSAGE_FRAMES = dict(MESSAGES)


# --- Helpers for hand-built streams -------------------------------------------------------------


def wire(name):
    """The wire bytes of a messages.json entry."""
    return dockproto.encode_frame(MESSAGE_FRAMES[name])


def raw_packet(type_code, payload, seq=0, flags=0, crc=None):
    """A packet with any type and payload; a correct CRC unless one is given."""
    body = struct.pack("<BBH", type_code, flags, seq) + bytes(payload)
    if crc is None:
        crc = dockproto.crc16(body)
    return body + struct.pack("<H", crc)


def raw_frame(packet):
    return dockproto.cobs_encode(packet) + b"\x00"


def extended(name, extra):
    """A messages.json entry's packet with `extra` payload bytes appended (valid CRC)."""
    packet = dockproto.encode_packet(MESSAGE_FRAMES[name])
    return raw_packet(packet[0], packet[4:-2] + bytes(extra),
                      seq=MESSAGE_FRAMES[name]["seq"], flags=packet[1])


def extended_until(name, size, accept):
    """The first `size`-byte packet extending `name` with non-zero filler that `accept`s.

    Only the last two filler bytes vary, so the search is deterministic and short.
    """
    base = dockproto.encode_packet(MESSAGE_FRAMES[name])
    filler = bytes((i % 255) + 1 for i in range(size - len(base) - 2))
    for second_last in range(1, 256):
        for last in range(1, 256):
            packet = extended(name, filler + bytes([second_last, last]))
            if accept(packet):
                return packet
    raise RuntimeError(f"no filler gives an acceptable {size}-byte {name} packet")


def payload_of(name):
    return dockproto.encode_payload(MESSAGE_FRAMES[name]["type"], MESSAGE_FRAMES[name]["payload"])


def flip_payload_byte(name, offset):
    """The wire bytes of `name` with one payload bit flipped after the CRC was computed."""
    packet = bytearray(dockproto.encode_packet(MESSAGE_FRAMES[name]))
    packet[4 + offset] ^= 0x01
    return raw_frame(bytes(packet))


def all_nonzero(data):
    return 0 not in data


def build_streams():
    hb = wire("heartbeat")
    ack = wire("ack")

    max_packet = extended_until("heartbeat_ack_request", 256, all_nonzero)
    block_at_end = extended_until(
        "heartbeat_plain", 256, lambda p: all_nonzero(p[2:]))
    run_then_zero = extended_until(
        "heartbeat_ack_request", 256, lambda p: all_nonzero(p[:254]) and p[254] == 0 and p[255])
    cut = wire("hello_reply")[:12]

    return [
        ("back_to_back", wire("hello") + wire("hello_reply") + wire("capabilities_2axes_1battery"),
         ["hello", "hello_reply", "capabilities_2axes_1battery"],
         "three frames with nothing between them"),
        ("leading_and_repeated_delimiters", b"\x00\x00" + hb + b"\x00\x00\x00" + ack + b"\x00",
         ["heartbeat", "ack"],
         "empty frames (0x00 right after 0x00 or at the start) are ignored silently"),
        ("bad_crc_then_good", flip_payload_byte("feedback", 9) + hb,
         [("error", "crc"), "heartbeat"],
         "bit 0 of the first byte of yaw's position flipped after the CRC was computed"),
        ("bad_crc_field", raw_frame(raw_packet(0x04, b"\x40\xe2\x01\x00", seq=42, crc=0x0000)) + hb,
         [("error", "crc"), "heartbeat"],
         "the heartbeat entry's packet with CRC 0x0000"),
        ("truncated_packet", raw_frame(b"\x04\x00\x2a\x00\x40") + hb,
         [("error", "truncated"), "heartbeat"],
         "a 5-byte packet: too short to hold a header and a CRC, so no CRC check happens"),
        ("empty_packet", b"\x01\x00" + hb,
         [("error", "truncated"), "heartbeat"],
         "0x01 0x00 is COBS for an empty packet, not an empty frame: its buffer is not empty"),
        ("frame_cut_then_good", cut + b"\x00" + hb,
         [("error", "cobs"), "heartbeat"],
         "the first 12 bytes of hello_reply, then a delimiter: the COBS code 0x23 at offset 6 "
         "points past the end of the buffer"),
        ("oversize_600", b"\x55" * 600 + b"\x00" + hb,
         [("error", "oversize"), "heartbeat"],
         "the 259th byte without 0x00 is one oversize error; the rest of the run and its 0x00 are "
         "discarded without further errors"),
        ("oversize_259", b"\x55" * 259 + b"\x00" + hb,
         [("error", "oversize"), "heartbeat"],
         "exactly 259 bytes: oversize on the last one; the following 0x00 only ends the discard "
         "and does not produce another error"),
        ("no_oversize_258", b"\x55" * 258 + b"\x00" + hb,
         [("error", "cobs"), "heartbeat"],
         "258 bytes fit the buffer; decoding fails on COBS (code 0x55 at offset 255 points past "
         "the end)"),
        ("oversize_swallows_glued_frame", b"\x55" * 300 + ack + hb,
         [("error", "oversize"), "heartbeat"],
         "the discard after oversize runs to the ack's delimiter, so the ack is lost"),
        ("oversize_garbage_glued_to_max_frame", b"\x55" * 10 + raw_frame(max_packet) + hb,
         [("error", "oversize"), "heartbeat"],
         "10 garbage bytes merged with a 258-byte COBS frame reach 259 bytes before its 0x00"),
        ("garbage_with_delimiter_between_frames", hb + b"\xde\xad\xbe\xef\x00" + ack,
         ["heartbeat", ("error", "cobs"), "ack"],
         "garbage ending in 0x00 costs one error of its own (code 0xde points past the end)"),
        ("garbage_without_delimiter_cobs", b"\xde\xad\xbe\xef" + hb + ack,
         [("error", "cobs"), "ack"],
         "garbage merges with the heartbeat, which is lost; the ack after it decodes"),
        ("garbage_without_delimiter_crc", b"\x01\x01" + hb + ack,
         [("error", "crc"), "ack"],
         "0x01 0x01 decodes to two zero bytes in front of the heartbeat packet: valid COBS, "
         "wrong CRC"),
        ("invalid_cobs_code", b"\x05\x11\x22\x00" + hb,
         [("error", "cobs"), "heartbeat"],
         "code 0x05 announces 4 data bytes, only 2 follow"),
        ("unknown_type", raw_frame(raw_packet(0x30, b"\x01\x02\x03", seq=9)) + hb,
         [("error", "unknown_type"), "heartbeat"],
         "type 0x30 with a valid CRC"),
        ("unknown_type_zero", raw_frame(raw_packet(0x00, b"", seq=10)) + hb,
         [("error", "unknown_type"), "heartbeat"],
         "type 0x00 is not assigned"),
        ("unknown_type_bad_crc", raw_frame(raw_packet(0x30, b"\x01", seq=11, crc=0x1234)) + hb,
         [("error", "crc"), "heartbeat"],
         "the CRC is checked before the type"),
        ("malformed_short_heartbeat", raw_frame(raw_packet(0x04, b"\x01\x02\x03", seq=12)) + hb,
         [("error", "malformed"), "heartbeat"],
         "HEARTBEAT needs 4 payload bytes, has 3"),
        ("malformed_empty_ack", raw_frame(raw_packet(0x05, b"", seq=13)) + hb,
         [("error", "malformed"), "heartbeat"],
         "ACK needs 3 payload bytes, has none"),
        ("malformed_velocity_mask", raw_frame(raw_packet(0x10, b"\x03" + struct.pack("<f", 0.5),
                                                         seq=14)) + hb,
         [("error", "malformed"), "heartbeat"],
         "mask 0x03 names yaw and pitch but only one float follows"),
        ("malformed_string_length", raw_frame(raw_packet(0x01, b"\x01\x00\xf4\x01\x0adoc",
                                                         seq=15)) + hb,
         [("error", "malformed"), "heartbeat"],
         "HELLO whose host string claims 10 bytes but has 3"),
        ("malformed_capabilities_battery_count",
         raw_frame(raw_packet(0x03, payload_of("capabilities_1axis_no_battery")[:-1]
                              + b"\x02\x03abc", seq=16)) + hb,
         [("error", "malformed"), "heartbeat"],
         "CAPABILITIES announcing 2 batteries but carrying only one name"),
        ("malformed_capabilities_five_batteries",
         raw_frame(raw_packet(0x03, payload_of("capabilities_1axis_no_battery")[:-1]
                              + b"\x05" + b"\x01a" * 5, seq=17)) + hb,
         [("error", "malformed"), "heartbeat"],
         "CAPABILITIES with 5 batteries: the limit is 4"),
        ("malformed_capabilities_four_axes",
         raw_frame(raw_packet(0x03, bytes(payload_of("capabilities_1axis_no_battery")[:8]) + b"\x04"
                              + bytes(payload_of("capabilities_1axis_no_battery")[9:]), seq=18)) + hb,
         [("error", "malformed"), "heartbeat"],
         "CAPABILITIES announcing 4 axes: the limit is 3 (rejected at the count)"),
        ("long_payload_extra_bytes", raw_frame(extended("ack", b"\x99\x00\x42")) + hb,
         ["ack", "heartbeat"],
         "the ack entry with 3 extra payload bytes (CRC over all of them): accepted, extras "
         "ignored, so it decodes to the ack entry although its bytes differ"),
        ("long_payload_max_packet", raw_frame(max_packet) + hb,
         ["heartbeat_ack_request", "heartbeat"],
         "heartbeat_ack_request padded to a 256-byte packet with no zero byte: COBS 0xff block "
         "then a 3-byte block, 258 bytes + delimiter = 259, the largest frame"),
        ("long_payload_254_block_at_end", raw_frame(block_at_end) + hb,
         ["heartbeat_plain", "heartbeat"],
         "heartbeat_plain padded to 256 bytes whose last 254 are non-zero: the packet ends "
         "exactly on a 0xff block, which is not followed by an empty 0x01 block"),
        ("cobs_trailing_empty_block", dockproto.cobs_encode(block_at_end) + b"\x01\x00" + hb,
         ["heartbeat_plain", "heartbeat"],
         "the same packet encoded with a trailing empty 0x01 block (the other common COBS form): "
         "it decodes to the same packet"),
        ("long_payload_254_run_then_zero", raw_frame(run_then_zero) + hb,
         ["heartbeat_ack_request", "heartbeat"],
         "254 non-zero bytes, then a zero (the CRC's low byte), then one byte: 0xff block, an "
         "empty 0x01 block for the zero, then 0x02 and the last byte"),
    ]


def message_entries():
    entries = []
    for name, definition in MESSAGES:
        encoded = dockproto.encode_frame(definition)
        decoded = dockproto.frame_to_json(dockproto.decode_frame(encoded))
        if decoded != definition:
            raise SystemExit(f"{name}: decodes to {decoded}, not to its definition")
        entries.append({"name": name, "hex": encoded.hex(), "frame": decoded})
    return entries


def stream_entries():
    by_frame = {json.dumps(frame_, sort_keys=True): name for name, frame_ in MESSAGES}
    entries = []
    for name, data, hand_expect, note in build_streams():
        expect = [{"frame": item} if isinstance(item, str) else {item[0]: item[1]}
                  for item in hand_expect]
        decoded = []
        for kind, value in dockproto.StreamDecoder().feed(data):
            if kind == "frame":
                key = json.dumps(dockproto.frame_to_json(value), sort_keys=True)
                decoded.append({"frame": by_frame.get(key, f"<no entry: {key}>")})
            else:
                decoded.append({"error": value})
        if decoded != expect:
            raise SystemExit(f"stream {name}: decoder yields {decoded}, hand-derived {expect}")
        entries.append({"name": name, "hex": data.hex(), "expect": expect, "note": note})
    return entries


def _hex(data):
    return " ".join(f"{b:02x}" for b in data)


def _value_text(codec, value):
    if isinstance(codec, dockproto._Str):
        return f'"{value}" ({len(value.encode("utf-8"))} bytes)'
    if isinstance(codec, dockproto._F32):
        return "NaN (0x7fc00000)" if value == NAN else repr(float(value))
    return str(value)


def _field_rows(record, payload, prefix=""):
    """(bytes, field, value) for each field of a payload, in wire order, per-axis fields expanded."""
    rows = []
    for key, codec in record.fields:
        if isinstance(codec, dockproto._AxisMask):
            out = bytearray()
            codec.write(out, payload[key])
            rows.append((bytes(out), "mask", "+".join(entry["axis"] for entry in payload[key])))
        elif isinstance(codec, dockproto._PerAxis):
            for entry in sorted(payload[key], key=lambda e: dockproto.AXES.index(e["axis"])):
                for field, sub in codec.fields:
                    out = bytearray()
                    sub.write(out, entry[field])
                    rows.append((bytes(out), f"{entry['axis']}.{field}", _value_text(sub, entry[field])))
        else:
            out = bytearray()
            codec.write(out, payload[key])
            rows.append((bytes(out), prefix + key, _value_text(codec, payload[key])))
    return rows


def byte_dump(name):
    """Markdown for one vector: every byte of its packet with its field, then the wire bytes."""
    definition = MESSAGE_FRAMES[name]
    packet = dockproto.encode_packet(definition)
    type_code = dockproto.MESSAGE_TYPES[definition["type"]]
    flags = definition["flags"]
    rows = [(packet[0:1], "type", f"0x{type_code:02x} {definition['type'].upper()}"),
            (packet[1:2], "flags", "ACK_REQUEST" if flags & 1 else "0"),
            (packet[2:4], "seq", str(definition["seq"]))]
    rows += _field_rows(dockproto.PAYLOADS[definition["type"]], definition["payload"])
    rows.append((packet[-2:], "crc", f"0x{int.from_bytes(packet[-2:], 'little'):04x}"))
    lines = [f"**{definition['type'].upper()}** (vector `{name}`), packet of {len(packet)} bytes:", "",
             "| offset | bytes | field | value |", "|---|---|---|---|"]
    offset = 0
    for data, field, value in rows:
        lines.append(f"| {offset} | `{_hex(data)}` | {field} | {value} |")
        offset += len(data)
    assert offset == len(packet)
    wire_bytes = dockproto.encode_frame(definition)
    lines += ["", f"On the wire (COBS, then the delimiter), {len(wire_bytes)} bytes:", "",
              "```", _hex(wire_bytes), "```"]
    return "\n".join(lines)


def dumps_section():
    return "\n\n".join(byte_dump(name) for name in DUMPED)


def spec_with_dumps(text):
    """PROTOCOL.md's text with the dumps between the markers written anew."""
    begin, end = text.index(DUMPS_BEGIN), text.index(DUMPS_END)
    return text[:begin] + DUMPS_BEGIN + "\n\n" + dumps_section() + "\n\n" + text[end:]


def to_json_text(entries):
    return json.dumps(entries, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path, entries):
    path.write_text(to_json_text(entries), encoding="utf-8")


def main():
    names = [name for name, _ in MESSAGES]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate message names")
    missing = set(dockproto.MESSAGE_TYPES) - {frame_["type"] for _, frame_ in MESSAGES}
    if missing:
        raise SystemExit(f"no vector for {sorted(missing)}")
    VECTORS_DIR.mkdir(parents=True, exist_ok=True)
    write_json(VECTORS_DIR / "messages.json", message_entries())
    write_json(VECTORS_DIR / "streams.json", stream_entries())
    SPEC.write_text(spec_with_dumps(SPEC.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
