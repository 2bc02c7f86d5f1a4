"""Reference implementation of the dockd stand wire protocol, version 1.1.

Written from protocol/PROTOCOL.md alone, independently of the Swift codec, so that the two can check
each other through the vectors in protocol/vectors/. Standard library only, so that it can also serve
as a protocol peer (a fake stand or a fake host) in integration tests without any setup.

Frames are plain dicts, shaped like the ``frame`` objects of the test vectors::

    {"seq": 7, "flags": 1, "type": "velocity",
     "payload": {"axes": [{"axis": "yaw", "velocity": 0.5}]}}

Decoded float32 fields are Python floats (NaN stays a float NaN); ``frame_to_json`` turns NaN into
the string "NaN" used by the vectors, and the encoder accepts either form.

Public API:
    crc16(data)                      CRC-16/CCITT-FALSE
    cobs_encode(data), cobs_decode(data)
    encode_packet(frame)             packet bytes (header, payload, CRC), before COBS
    encode_frame(frame)              bytes on the wire: COBS(packet) + 0x00
    decode_packet(packet)            packet bytes -> frame dict, raises ProtocolError
    StreamDecoder().feed(data)       -> [("frame", dict) | ("error", kind), ...]
    StreamDecoder().feed_detailed(data)  the same, errors as ("error", kind, header): the header
                                     ({"seq", "flags", "type_code"}) of a frame whose CRC checked but
                                     whose type is unknown or payload malformed, else None
    TIMING                           the times of sections 3 and 5, seconds
    Sender                           numbers outgoing frames (seq wraps 65535 -> 0)
    frame_to_json(frame)             NaN -> "NaN", for comparing with the vectors
"""

import math
import struct

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 1

# Section 3, "Timing": the numbers fit together (handshake < link timeout = 4 stand heartbeats).
TIMING = {
    "stand_heartbeat_interval": 0.25,  # a stand silent this long sends HEARTBEAT, in every state
    "link_timeout": 1.0,  # host: no valid frame this long = link lost
    "hello_interval": 0.15,  # host: HELLO again after this, while no HELLO_REPLY + CAPABILITIES
    "hello_attempts": 5,  # so the handshake fails 0.75 s after the first HELLO
    "hello_reply_within": 0.1,  # stand: HELLO_REPLY within this of HELLO
    "ack_within": 0.05,  # any receiver: ACK/NACK within this of the frame that asked
    "resend_after": 0.1,  # a sender resends an unanswered command after this (at most 3 times)
    "max_resends": 3,
    "default_heartbeat_timeout_ms": 500,
    "heartbeat_timeout_range_ms": (100, 5000),
    "reconnect_backoff": (0.25, 8.0),  # host: after a lost link or a failed handshake, doubling
    "version_retry": 60.0,  # host: after a version mismatch (section 2.2)
    "battery_level_step": 0.01,  # BATTERY when the level moved this far from the last one sent…
    "battery_report_interval": 10.0,  # …and at least this often
}

FLAG_ACK_REQUEST = 0x01

MIN_PACKET = 6  # header (4) + CRC (2), empty payload
MAX_PAYLOAD = 250
MAX_PACKET = 256
MAX_ENCODED = 258  # COBS(MAX_PACKET); the receive buffer never holds more than this
MAX_WIRE_FRAME = MAX_ENCODED + 1  # plus the 0x00 delimiter

MESSAGE_TYPES = {
    "hello": 0x01,
    "hello_reply": 0x02,
    "capabilities": 0x03,
    "heartbeat": 0x04,
    "ack": 0x05,
    "nack": 0x06,
    "request": 0x07,
    "velocity": 0x10,
    "position": 0x11,
    "stop": 0x12,
    "limits": 0x13,
    "led": 0x14,
    "motors": 0x15,
    "feedback": 0x20,
    "imu": 0x21,
    "event": 0x22,
    "battery": 0x23,
    "fault": 0x24,
}
TYPE_NAMES = {code: name for name, code in MESSAGE_TYPES.items()}

AXES = ("yaw", "pitch", "roll", "zoom")  # index == axis number == bit in an axis mask; zoom since 1.1

ERROR_KINDS = ("oversize", "cobs", "truncated", "crc", "unknown_type", "malformed")

# Named codes, for peers that build or check messages (section 3 and 4).
NACK_CODES = {
    "unsupported": 1,
    "out_of_range": 2,
    "busy": 3,
    "fault": 4,
    "malformed": 5,
    "version_mismatch": 6,
    "not_ready": 7,
}
REQUEST_WHAT = {"hello_reply": 1, "capabilities": 2, "battery": 3, "docked": 4}
EVENT_KINDS = {"docked": 1, "tracking": 2, "shutter": 3, "flip": 4, "zoom": 5, "custom": 6}
FAULT_CODES = {
    "stall": 1,
    "overcurrent": 2,
    "overtemperature": 3,
    "encoder": 4,
    "heartbeat_lost": 5,
    "brownout": 6,
    "limit_hit": 7,
    "log": 8,
}
FAULT_AXIS_NONE = 255


class ProtocolError(Exception):
    """A receive error; ``kind`` is one of ERROR_KINDS, the names the vectors use."""

    def __init__(self, kind, detail="", header=None):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        # For unknown_type and malformed: {"seq", "flags", "type_code"} of a frame whose CRC checked,
        # so that a receiver can answer it with NACK when it asked for an ACK (section 3).
        self.header = header


# --- CRC-16/CCITT-FALSE -------------------------------------------------------------------------


def _crc_table():
    table = []
    for high in range(256):
        crc = high << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, no final XOR."""
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


# --- COBS ---------------------------------------------------------------------------------------


def cobs_encode(data):
    """Encode ``data`` with COBS; the result contains no 0x00 and has no delimiter.

    A run of 254 non-zero bytes that ends the data is closed by its 0xFF block alone, without a
    trailing empty 0x01 block (the usual form, e.g. Wikipedia's and the `cobs` package's encoders).
    Both forms decode to the same bytes; this choice only matters for byte-exact vectors.
    """
    out = bytearray()
    segments = bytes(data).split(b"\x00")  # every segment but the last was followed by a zero
    for index, segment in enumerate(segments):
        is_last = index == len(segments) - 1
        ends_on_full_block = len(segment) > 0 and len(segment) % 254 == 0
        while len(segment) >= 254:
            out.append(0xFF)  # 0xFF: 254 data bytes and no implied zero after them
            out += segment[:254]
            segment = segment[254:]
        if is_last and ends_on_full_block:
            break  # nothing left to carry: no zero follows the last segment
        out.append(len(segment) + 1)  # a code < 0xFF implies the segment's trailing zero
        out += segment
    return bytes(out)


def cobs_decode(data):
    """Decode one COBS block sequence (without delimiter); ProtocolError("cobs") if invalid."""
    data = bytes(data)
    out = bytearray()
    pos = 0
    while pos < len(data):
        code = data[pos]
        end = pos + code
        if code == 0:
            raise ProtocolError("cobs", f"0x00 inside a frame at offset {pos}")
        if end > len(data):
            raise ProtocolError("cobs", f"code {code} at offset {pos} points past the end")
        block = data[pos + 1 : end]
        if 0 in block:
            raise ProtocolError("cobs", "0x00 inside a frame")
        out += block
        pos = end
        # The last block's implied zero is the delimiter itself, so it is not part of the data.
        if code != 0xFF and pos < len(data):
            out.append(0)
    return bytes(out)


# --- Payload field codecs -----------------------------------------------------------------------
#
# A payload layout is a tuple of (key, codec). Each codec writes one JSON value to a bytearray and
# reads it back from a _Reader. Reading past the end of the payload is the "malformed" error; bytes
# left over after the layout are ignored (later minor versions append fields).


class _Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0
        self.mask = 0  # the last axis mask read; the per-axis fields that follow depend on it

    def unpack(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ProtocolError("malformed", "payload too short")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def take(self, count):
        if self.pos + count > len(self.data):
            raise ProtocolError("malformed", "payload too short")
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk


class _Int:
    def __init__(self, fmt):
        self.fmt = fmt

    def write(self, out, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"integer expected, got {value!r}")
        try:
            out += struct.pack(self.fmt, value)
        except struct.error as error:
            raise ValueError(f"{value} does not fit {self.fmt}") from error

    def read(self, reader):
        return reader.unpack(self.fmt)


class _F32:
    def write(self, out, value):
        if value == "NaN":  # the vectors' spelling of NaN
            value = math.nan
        out += struct.pack("<f", float(value))  # NaN packs as the quiet NaN 0x7FC00000

    def read(self, reader):
        return reader.unpack("<f")


class _Str:
    def write(self, out, value):
        encoded = value.encode("utf-8")
        if len(encoded) > 255:
            raise ValueError(f"string longer than 255 bytes: {value!r}")
        out.append(len(encoded))
        out += encoded

    def read(self, reader):
        raw = reader.take(reader.unpack("<B"))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError("malformed", "string is not UTF-8") from error


class _AxisId:
    """An axis number on the wire, its name in JSON."""

    def write(self, out, value):
        out.append(AXES.index(value))

    def read(self, reader):
        number = reader.unpack("<B")
        if number >= len(AXES):
            raise ProtocolError("malformed", f"unknown axis {number}")
        return AXES[number]


def _mask_of(names):
    mask = 0
    for name in names:
        bit = 1 << AXES.index(name)
        if mask & bit:
            raise ValueError(f"axis {name} given twice")
        mask |= bit
    return mask


def _names_of(mask):
    # Bits 4-7 name no axis in 1.1 and carry no fields, so they are dropped.
    return [name for index, name in enumerate(AXES) if mask & (1 << index)]


class _AxisSet:
    """A list of axis names, a mask on the wire (MOTORS' `enabled`)."""

    def write(self, out, value):
        out.append(_mask_of(value))

    def read(self, reader):
        return _names_of(reader.unpack("<B"))


class _AxisMask:
    """The mask in front of a per-axis block, derived from that block's `axes` list.

    It is not a JSON field of its own; reading it only tells the _PerAxis codec which axes follow.
    """

    stored = False

    def write(self, out, value):
        out.append(_mask_of(entry["axis"] for entry in value))

    def read(self, reader):
        reader.mask = reader.unpack("<B")


class _PerAxis:
    """Per-axis fields, in axis order, for the bits of the preceding mask."""

    def __init__(self, *fields):
        self.fields = fields

    def write(self, out, value):
        for entry in sorted(value, key=lambda entry: AXES.index(entry["axis"])):
            for key, codec in self.fields:
                codec.write(out, entry[key])

    def read(self, reader):
        return [
            {"axis": name, **{key: codec.read(reader) for key, codec in self.fields}}
            for name in _names_of(reader.mask)
        ]


class _Counted:
    """A u8 count, at most `limit`, followed by that many items. A larger count is malformed: it
    is what keeps every decodable frame within the 250-byte payload when it is sent again."""

    def __init__(self, item, limit):
        self.item = item
        self.limit = limit

    def write(self, out, value):
        if len(value) > self.limit:
            raise ValueError(f"more than {self.limit} items")
        out.append(len(value))
        for item in value:
            self.item.write(out, item)

    def read(self, reader):
        count = reader.unpack("<B")
        if count > self.limit:
            raise ProtocolError("malformed", f"{count} items, at most {self.limit}")
        return [self.item.read(reader) for _ in range(count)]


class _Record:
    """A fixed sequence of keyed fields: a whole payload, or one item of a list."""

    def __init__(self, *fields):
        self.fields = fields

    def write(self, out, value):
        for key, codec in self.fields:
            codec.write(out, value[key])

    def read(self, reader):
        record = {}
        for key, codec in self.fields:
            item = codec.read(reader)
            if getattr(codec, "stored", True):
                record[key] = item
        return record


U8, U16, U32, U64 = _Int("<B"), _Int("<H"), _Int("<I"), _Int("<Q")
F32, STR = _F32(), _Str()

PAYLOADS = {
    "hello": _Record(
        ("major", U8), ("minor", U8), ("heartbeat_timeout_ms", U16), ("host", STR)
    ),
    "hello_reply": _Record(
        ("major", U8),
        ("minor", U8),
        ("heartbeat_timeout_ms", U16),
        ("model", STR),
        ("firmware", STR),
        ("hardware", STR),
        ("serial", STR),
    ),
    "capabilities": _Record(
        ("feedback_hz", U16),
        ("imu_hz", U16),
        ("features", U16),
        ("buttons", U8),
        ("custom_buttons", U8),
        (
            "axes",
            _Counted(
                _Record(
                    ("axis", _AxisId()),
                    ("flags", U8),
                    ("min", F32),
                    ("max", F32),
                    ("max_speed", F32),
                    ("max_accel", F32),
                    ("counts_per_rev", U32),
                ),
                limit=4,
            ),
        ),
        ("batteries", _Counted(STR, limit=4)),
    ),
    "heartbeat": _Record(("uptime_ms", U32)),
    "ack": _Record(("ack_seq", U16), ("ack_type", U8)),
    "nack": _Record(("ack_seq", U16), ("ack_type", U8), ("code", U8), ("detail", STR)),
    "request": _Record(("what", U8)),
    "velocity": _Record(("axes", _AxisMask()), ("axes", _PerAxis(("velocity", F32)))),
    "position": _Record(
        ("axes", _AxisMask()),
        ("duration", F32),
        ("axes", _PerAxis(("position", F32), ("velocity", F32))),
    ),
    "stop": _Record(),
    "limits": _Record(
        ("axes", _AxisMask()),
        ("axes", _PerAxis(("min", F32), ("max", F32), ("max_speed", F32), ("max_accel", F32))),
    ),
    "led": _Record(
        ("mode", U8),
        ("red", U8),
        ("green", U8),
        ("blue", U8),
        ("on_ms", U16),
        ("off_ms", U16),
    ),
    "motors": _Record(("enabled", _AxisSet())),
    "feedback": _Record(
        ("time_us", U64),
        ("axes", _AxisMask()),
        ("axes", _PerAxis(("position", F32), ("velocity", F32), ("effort", F32), ("status", U8))),
    ),
    "imu": _Record(
        ("time_us", U64),
        ("gyro_x", F32),
        ("gyro_y", F32),
        ("gyro_z", F32),
        ("accel_x", F32),
        ("accel_y", F32),
        ("accel_z", F32),
    ),
    "event": _Record(
        ("time_us", U64), ("kind", U8), ("value", U8), ("button", U8), ("factor", F32)
    ),
    "battery": _Record(("index", U8), ("level", F32), ("charge", U8), ("flags", U8)),
    "fault": _Record(
        ("time_us", U64), ("severity", U8), ("code", U16), ("axis", U8), ("text", STR)
    ),
}


def encode_payload(type_name, payload):
    out = bytearray()
    PAYLOADS[type_name].write(out, payload)
    if len(out) > MAX_PAYLOAD:
        raise ValueError(f"{type_name} payload is {len(out)} bytes, more than {MAX_PAYLOAD}")
    return bytes(out)


def decode_payload(type_name, data):
    """Decode a payload; extra bytes are ignored, missing ones raise ProtocolError("malformed")."""
    return PAYLOADS[type_name].read(_Reader(bytes(data)))


# --- Packets and frames -------------------------------------------------------------------------


def encode_packet(frame):
    """The packet for ``frame`` (header, payload, CRC), before COBS."""
    header = struct.pack(
        "<BBH", MESSAGE_TYPES[frame["type"]], frame.get("flags", 0), frame["seq"]
    )
    body = header + encode_payload(frame["type"], frame.get("payload", {}))
    return body + struct.pack("<H", crc16(body))


def encode_frame(frame):
    """The bytes a sender writes for ``frame``: COBS(packet) followed by the 0x00 delimiter."""
    return cobs_encode(encode_packet(frame)) + b"\x00"


def decode_packet(packet):
    """Check and decode one packet (COBS already removed), in the order of section 1's rules."""
    packet = bytes(packet)
    if len(packet) < MIN_PACKET:
        raise ProtocolError("truncated", f"{len(packet)} bytes")
    (crc,) = struct.unpack_from("<H", packet, len(packet) - 2)
    if crc != crc16(packet[:-2]):
        raise ProtocolError("crc")
    type_code, flags, seq = struct.unpack_from("<BBH", packet)
    header = {"seq": seq, "flags": flags, "type_code": type_code}
    type_name = TYPE_NAMES.get(type_code)
    if type_name is None:
        raise ProtocolError("unknown_type", f"0x{type_code:02x}", header)
    try:
        payload = decode_payload(type_name, packet[4:-2])
    except ProtocolError as error:
        raise ProtocolError(error.kind, str(error), header) from error
    # Reserved flag bits are kept as received so that decoding loses nothing; acting on them is
    # the application's business (section 1: "ignore on receipt").
    return {"seq": seq, "flags": flags, "type": type_name, "payload": payload}


def decode_frame(data):
    """Decode exactly one frame given as wire bytes (the trailing 0x00 is optional)."""
    data = bytes(data)
    if data.endswith(b"\x00"):
        data = data[:-1]
    return decode_packet(cobs_decode(data))


class StreamDecoder:
    """Turns a byte stream into frames and errors, following section 1's receiving rules.

    Any chunking of the same stream yields the same list of events. ``errors`` counts each kind.
    """

    def __init__(self):
        self._buffer = bytearray()
        self._discarding = False  # after an oversize error, until the next 0x00
        self.errors = dict.fromkeys(ERROR_KINDS, 0)
        self.frames = 0

    @property
    def buffered(self):
        """Bytes held while waiting for a delimiter; never more than MAX_ENCODED."""
        return len(self._buffer)

    def feed(self, data):
        """Consume ``data``; return [("frame", frame) | ("error", kind), ...] in stream order."""
        return [event[:2] for event in self.feed_detailed(data)]

    def feed_detailed(self, data):
        """Like ``feed``, but errors are ("error", kind, header); header is None unless the frame's
        CRC checked (unknown_type, malformed)."""
        events = []
        for byte in bytes(data):
            event = self._push(byte)
            if event is not None:
                events.append(event)
        return events

    def _push(self, byte):
        if self._discarding:
            self._discarding = byte != 0  # the delimiter ending the oversize run is consumed too
            return None
        if byte != 0:
            if len(self._buffer) == MAX_ENCODED:
                # This byte would be the 259th without a delimiter: no valid frame is that long.
                self._buffer.clear()
                self._discarding = True
                return self._error("oversize")
            self._buffer.append(byte)
            return None
        if not self._buffer:
            return None  # extra delimiters are allowed anywhere
        encoded = bytes(self._buffer)
        self._buffer.clear()
        try:
            frame = decode_packet(cobs_decode(encoded))
        except ProtocolError as error:
            return self._error(error.kind, error.header)
        self.frames += 1
        return ("frame", frame)

    def _error(self, kind, header=None):
        self.errors[kind] += 1
        return ("error", kind, header)


class Sender:
    """Numbers outgoing frames: seq +1 per frame, wrapping 65535 -> 0."""

    def __init__(self, first_seq=0):
        self.next_seq = first_seq & 0xFFFF

    def frame(self, type_name, payload=None, ack_request=False):
        """Build the frame dict for the next seq (see ``encode``, which also encodes it)."""
        frame = {
            "seq": self.next_seq,
            "flags": FLAG_ACK_REQUEST if ack_request else 0,
            "type": type_name,
            "payload": payload or {},
        }
        self.next_seq = (self.next_seq + 1) & 0xFFFF
        return frame

    def encode(self, type_name, payload=None, ack_request=False):
        """The wire bytes of the next frame; returns (frame, bytes)."""
        frame = self.frame(type_name, payload, ack_request)
        return frame, encode_frame(frame)


def frame_to_json(value):
    """A copy of a frame (or any part of it) with float NaN replaced by the string "NaN"."""
    if isinstance(value, dict):
        return {key: frame_to_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [frame_to_json(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value
