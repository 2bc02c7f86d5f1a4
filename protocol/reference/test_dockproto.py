"""Tests of the reference codec and of the vectors it wrote (python3 -m pytest -q protocol/reference)."""

import json
import math
import random
import struct
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dockproto  # noqa: E402
import make_vectors  # noqa: E402

VECTORS = HERE.parent / "vectors"
MESSAGES = json.loads((VECTORS / "messages.json").read_text(encoding="utf-8"))
STREAMS = json.loads((VECTORS / "streams.json").read_text(encoding="utf-8"))
FRAMES_BY_NAME = {entry["name"]: entry["frame"] for entry in MESSAGES}


# --- CRC ----------------------------------------------------------------------------------------


def test_crc_check_value():
    assert dockproto.crc16(b"123456789") == 0x29B1


def test_crc_of_nothing_is_the_initial_value():
    assert dockproto.crc16(b"") == 0xFFFF


# --- COBS ---------------------------------------------------------------------------------------

SEQ_01_FE = bytes(range(1, 255))

# The examples of the COBS article on Wikipedia, which uses the same form for a final 0xFF block.
COBS_EXAMPLES = [
    (b"", b"\x01"),
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (SEQ_01_FE, b"\xff" + SEQ_01_FE),
    (b"\x00" + SEQ_01_FE, b"\x01\xff" + SEQ_01_FE),
    (bytes(range(1, 256)), b"\xff" + SEQ_01_FE + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize("plain, encoded", COBS_EXAMPLES)
def test_cobs_known_encodings(plain, encoded):
    assert dockproto.cobs_encode(plain) == encoded
    assert dockproto.cobs_decode(encoded) == plain


def _cobs_inputs():
    rng = random.Random(1)
    for length in (0, 1, 2, 253, 254, 255, 256, 257, 508, 509, 600):
        yield bytes(length)  # all zero
        yield bytes(rng.randrange(1, 256) for _ in range(length))  # no zero at all
        yield bytes(rng.choice((0, rng.randrange(1, 256))) for _ in range(length))  # mixed
        if length:
            yield bytes(rng.randrange(1, 256) for _ in range(length - 1)) + b"\x00"
            yield b"\x00" + bytes(rng.randrange(1, 256) for _ in range(length - 1))


@pytest.mark.parametrize("plain", list(_cobs_inputs()), ids=lambda data: f"len{len(data)}")
def test_cobs_round_trip(plain):
    encoded = dockproto.cobs_encode(plain)
    assert 0 not in encoded
    assert len(encoded) <= len(plain) + 1 + len(plain) // 254
    assert dockproto.cobs_decode(encoded) == plain


def test_cobs_max_packet_fits_the_buffer():
    packet = bytes(range(1, 256)) + b"\x01"
    assert len(dockproto.cobs_encode(packet)) == dockproto.MAX_ENCODED


@pytest.mark.parametrize("encoded", [b"\x02", b"\x05\x11\x22", b"\x01\x03\x11", b"\xff\x01"])
def test_cobs_code_past_the_end_is_an_error(encoded):
    with pytest.raises(dockproto.ProtocolError) as caught:
        dockproto.cobs_decode(encoded)
    assert caught.value.kind == "cobs"


def test_cobs_decode_accepts_a_trailing_empty_block():
    assert dockproto.cobs_decode(b"\xff" + SEQ_01_FE + b"\x01") == SEQ_01_FE


# --- Messages -----------------------------------------------------------------------------------


def test_every_message_type_has_a_vector():
    assert {entry["frame"]["type"] for entry in MESSAGES} == set(dockproto.MESSAGE_TYPES)


def test_vector_names_are_unique():
    names = [entry["name"] for entry in MESSAGES] + [entry["name"] for entry in STREAMS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("entry", MESSAGES, ids=lambda entry: entry["name"])
def test_message_decodes_to_its_frame(entry):
    wire = bytes.fromhex(entry["hex"])
    assert entry["hex"] == wire.hex()  # lower case, no spaces
    decoded = dockproto.decode_frame(wire)
    assert dockproto.frame_to_json(decoded) == entry["frame"]
    assert dockproto.encode_frame(decoded) == wire


@pytest.mark.parametrize("entry", MESSAGES, ids=lambda entry: entry["name"])
def test_message_frame_encodes_to_its_hex(entry):
    assert dockproto.encode_frame(entry["frame"]).hex() == entry["hex"]


@pytest.mark.parametrize("entry", MESSAGES, ids=lambda entry: entry["name"])
def test_message_wire_size_limits(entry):
    wire = bytes.fromhex(entry["hex"])
    assert wire[-1] == 0 and 0 not in wire[:-1]
    assert len(wire) <= dockproto.MAX_WIRE_FRAME


def test_nan_effort_decodes_to_a_float_nan():
    frame = dockproto.decode_frame(bytes.fromhex(
        next(entry["hex"] for entry in MESSAGES if entry["name"] == "feedback")))
    effort = frame["payload"]["axes"][0]["effort"]
    assert isinstance(effort, float) and math.isnan(effort)


def test_short_payload_is_malformed_and_extra_bytes_are_ignored():
    with pytest.raises(dockproto.ProtocolError) as caught:
        dockproto.decode_payload("ack", b"\x01\x00")
    assert caught.value.kind == "malformed"
    assert dockproto.decode_payload("ack", b"\x01\x00\x05\xff\xff") == {
        "ack_seq": 1, "ack_type": 5}


def test_payload_over_250_bytes_is_refused():
    with pytest.raises(ValueError):
        dockproto.encode_payload("nack", {"ack_seq": 0, "ack_type": 1, "code": 5,
                                          "detail": "x" * 246})


def test_axes_are_sent_in_axis_order():
    unordered = {"axes": [{"axis": "pitch", "velocity": -1.25}, {"axis": "yaw", "velocity": 0.5}]}
    ordered = {"axes": [{"axis": "yaw", "velocity": 0.5}, {"axis": "pitch", "velocity": -1.25}]}
    assert dockproto.encode_payload("velocity", unordered) == dockproto.encode_payload(
        "velocity", ordered)


def test_zoom_is_axis_3_and_its_fields_follow_roll():
    payload = {"axes": [{"axis": "zoom", "velocity": 0.5}, {"axis": "yaw", "velocity": -1.25}]}
    wire = dockproto.encode_payload("velocity", payload)
    assert wire[0] == 0b1001
    assert dockproto.decode_payload("velocity", wire) == {
        "axes": [{"axis": "yaw", "velocity": -1.25}, {"axis": "zoom", "velocity": 0.5}]}


def test_a_1_0_receiver_reads_a_zoom_frame_as_the_frame_without_zoom():
    # 1.0 ignores mask bit 3, and zoom's fields are trailing bytes it ignores.
    with_zoom = dockproto.encode_payload("velocity", {"axes": [{"axis": "yaw", "velocity": 0.5},
                                                                {"axis": "zoom", "velocity": 2.0}]})
    without = dockproto.encode_payload("velocity", {"axes": [{"axis": "yaw", "velocity": 0.5}]})
    assert with_zoom[1:].startswith(without[1:])
    assert with_zoom[0] & 0b0111 == without[0]


def _capabilities_with(axis_ids):
    axes = b"".join(bytes([axis, 0]) + struct.pack("<4fI", 1, 20, 2, 4, 0) for axis in axis_ids)
    return struct.pack("<HHHBB", 100, 0, 0, 0, 0) + bytes([len(axis_ids)]) + axes + b"\x00"


def test_capabilities_take_four_axes_with_zoom_and_refuse_a_fifth_or_axis_4():
    decoded = dockproto.decode_payload("capabilities", _capabilities_with([0, 1, 2, 3]))
    assert [a["axis"] for a in decoded["axes"]] == ["yaw", "pitch", "roll", "zoom"]
    for bad in ([0, 1, 2, 3, 3], [4]):
        with pytest.raises(dockproto.ProtocolError) as caught:
            dockproto.decode_payload("capabilities", _capabilities_with(bad))
        assert caught.value.kind == "malformed"


def test_mask_bits_above_zoom_carry_no_fields():
    wire = bytes([0b11110001]) + struct.pack("<f", 0.5)
    assert dockproto.decode_payload("velocity", wire) == {"axes": [{"axis": "yaw", "velocity": 0.5}]}


def test_sender_wraps_seq():
    sender = dockproto.Sender(first_seq=65535)
    first, _ = sender.encode("heartbeat", {"uptime_ms": 1})
    second, wire = sender.encode("stop", ack_request=True)
    assert (first["seq"], second["seq"], second["flags"]) == (65535, 0, 1)
    assert dockproto.decode_frame(wire) == second


# --- Streams ------------------------------------------------------------------------------------


def _expected(entry):
    return [("frame", FRAMES_BY_NAME[item["frame"]]) if "frame" in item else ("error", item["error"])
            for item in entry["expect"]]


def _decode(chunks):
    decoder = dockproto.StreamDecoder()
    events = []
    for chunk in chunks:
        events += decoder.feed(chunk)
        assert decoder.buffered <= dockproto.MAX_ENCODED
    return [(kind, dockproto.frame_to_json(value)) for kind, value in events]


def _random_chunks(data, rng):
    chunks, pos = [], 0
    while pos < len(data):
        size = rng.randint(0, 40)
        chunks.append(data[pos : pos + size])
        pos += size
    return chunks


@pytest.mark.parametrize("entry", STREAMS, ids=lambda entry: entry["name"])
def test_stream_all_at_once(entry):
    assert _decode([bytes.fromhex(entry["hex"])]) == _expected(entry)


@pytest.mark.parametrize("entry", STREAMS, ids=lambda entry: entry["name"])
def test_stream_one_byte_at_a_time(entry):
    data = bytes.fromhex(entry["hex"])
    assert _decode([data[i : i + 1] for i in range(len(data))]) == _expected(entry)


@pytest.mark.parametrize("entry", STREAMS, ids=lambda entry: entry["name"])
def test_stream_random_chunks(entry):
    rng = random.Random(entry["name"])
    data = bytes.fromhex(entry["hex"])
    for _ in range(25):
        assert _decode(_random_chunks(data, rng)) == _expected(entry)


def test_decoder_counts_errors():
    decoder = dockproto.StreamDecoder()
    for entry in STREAMS:
        decoder.feed(bytes.fromhex(entry["hex"]))
    expected = dict.fromkeys(dockproto.ERROR_KINDS, 0)
    frames = 0
    for entry in STREAMS:
        for item in entry["expect"]:
            if "error" in item:
                expected[item["error"]] += 1
            else:
                frames += 1
    assert decoder.errors == expected
    assert decoder.frames == frames


def test_decoder_buffer_stays_bounded_on_random_garbage():
    rng = random.Random(20240601)
    for _ in range(2000):
        # Vary the share of zero bytes so that both long runs and short frames show up.
        zero_chance = rng.choice((0.0, 0.001, 0.01, 0.1, 0.5))
        data = bytes(0 if rng.random() < zero_chance else rng.randrange(1, 256)
                     for _ in range(rng.randint(0, 700)))
        decoder = dockproto.StreamDecoder()
        for byte in data:
            for kind, value in decoder.feed(bytes([byte])):
                assert kind == "frame" or value in dockproto.ERROR_KINDS
            assert decoder.buffered <= dockproto.MAX_ENCODED


# --- The vector files are what make_vectors.py writes today -------------------------------------


def test_vector_files_are_up_to_date():
    assert (VECTORS / "messages.json").read_text(encoding="utf-8") == make_vectors.to_json_text(
        make_vectors.message_entries())
    assert (VECTORS / "streams.json").read_text(encoding="utf-8") == make_vectors.to_json_text(
        make_vectors.stream_entries())


def test_spec_byte_dumps_are_the_vectors():
    spec = make_vectors.SPEC.read_text(encoding="utf-8")
    assert spec == make_vectors.spec_with_dumps(spec), "run protocol/reference/make_vectors.py"
    for name in make_vectors.DUMPED:
        wire = next(entry["hex"] for entry in MESSAGES if entry["name"] == name)
        assert " ".join(wire[i:i + 2] for i in range(0, len(wire), 2)) in spec, name


def test_spec_names_the_version_the_reference_speaks():
    spec = make_vectors.SPEC.read_text(encoding="utf-8")
    version = f"{dockproto.PROTOCOL_MAJOR}.{dockproto.PROTOCOL_MINOR}"
    assert spec.splitlines()[0].endswith(f"version {version}")
    hello = FRAMES_BY_NAME["hello"]["payload"]
    assert (hello["major"], hello["minor"]) == (dockproto.PROTOCOL_MAJOR, dockproto.PROTOCOL_MINOR)
    # A 1.0 peer's handshake stays in the vectors: minor versions interoperate.
    assert FRAMES_BY_NAME["hello_v1_0"]["payload"]["minor"] == 0


def test_timing_fits_together():
    t = dockproto.TIMING
    assert t["hello_interval"] * t["hello_attempts"] < t["link_timeout"]
    assert t["link_timeout"] >= 4 * t["stand_heartbeat_interval"]
    assert t["hello_reply_within"] < t["hello_interval"]
    assert t["ack_within"] < t["resend_after"]


def test_unusable_frames_keep_their_header():
    decoder = dockproto.StreamDecoder()
    unknown = make_vectors.raw_frame(make_vectors.raw_packet(0x30, b"\x01", seq=9, flags=1))
    short = make_vectors.raw_frame(make_vectors.raw_packet(0x04, b"\x01", seq=10, flags=1))
    bad_crc = make_vectors.raw_frame(make_vectors.raw_packet(0x04, b"\x01\x02\x03\x04", seq=11, crc=1))
    events = decoder.feed_detailed(unknown + short + bad_crc)
    assert events == [("error", "unknown_type", {"seq": 9, "flags": 1, "type_code": 0x30}),
                      ("error", "malformed", {"seq": 10, "flags": 1, "type_code": 0x04}),
                      ("error", "crc", None)]
