"""JSON-RPC 2.0 exactly as the specification and protocol/API.md say, through the real dockd: ids
echoed as written, notifications never answered, strict JSON, and validation errors that name the
field at fault (data.field). Every reply is also checked against the OpenRPC document."""
import json
import socket

import pytest

import openrpc_check


def raw_exchange(rig, lines, expect, timeout=10, method=None):
    """Sends raw request lines on one connection and returns the next `expect` reply lines, raw.
    Each reply is checked against the document (as a reply to `method` when its id cannot say)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(rig.socket_path))
    s.sendall(b"".join(line + b"\n" for line in lines))
    data = b""
    while data.count(b"\n") < expect:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    replies = data.split(b"\n")[:-1]
    pending = {}
    # (a line nested 100 000 deep is past Python's own recursion limit: it has no method to note)
    openrpc_check.note_requests(b"\n".join(line for line in lines if len(line) < 10000), pending)
    for r in replies:
        message = json.loads(r)
        key = openrpc_check._id_key(message.get("id"))
        openrpc_check.shared().check_reply(message, pending.pop(key, method) if key else method, message.get("id"))
    return replies


@pytest.mark.parametrize("text", [b"9007199254740993", b"18446744073709551616", b"9223372036854775808",
                                  b"-0", b"1.0", b"1e400", b"0.30000000000000004", b"123456789012345678901234567890",
                                  b'"\\u00e9t\\u00e9"', b'"a\\/b"', b"null"])
def test_ids_come_back_exactly_as_written(rig, text):
    [reply] = raw_exchange(rig, [b'{"jsonrpc":"2.0","id":' + text + b',"method":"dockd.version"}'], 1, method="dockd.version")
    assert reply.startswith(b'{"id":' + text + b',"jsonrpc":"2.0","result":'), reply


@pytest.mark.parametrize("text", [b"[1]", b'{"a":1}', b"true", b"false"])
def test_an_id_that_is_not_a_string_number_or_null_is_refused(rig, text):
    [reply] = raw_exchange(rig, [b'{"jsonrpc":"2.0","id":' + text + b',"method":"dockd.version"}'], 1)
    message = json.loads(reply)
    assert message["id"] is None
    assert message["error"]["code"] == -32600 and message["error"]["data"]["field"] == "id"


def test_a_notification_is_never_answered_not_even_with_an_error(rig):
    notifications = [
        b'{"jsonrpc":"2.0","method":"no.such.method"}',
        b'{"jsonrpc":"1.0","method":"dockd.version"}',
        b'{"jsonrpc":"2.0","method":5}',
        b'{"jsonrpc":"2.0","method":"motion.orient","params":{"yaw":"left"}}',
        b'{"jsonrpc":"2.0","method":"motion.orient","params":[1]}',
        b'{"jsonrpc":"2.0","method":"dockd.version"}',
        b'{"jsonrpc":"2.0","method":"stands.attach","params":{"device":"x"}}',
    ]
    replies = raw_exchange(rig, notifications + [b'{"jsonrpc":"2.0","id":"last","method":"dockd.version"}'], 1)
    assert [json.loads(r)["id"] for r in replies] == ["last"], replies


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":1,"method":"dockd.version",}',
    b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion",]}}',
    b'{"jsonrpc":"2.0","id":01,"method":"dockd.version"}',
    b'{"jsonrpc":"2.0","id":1,"method":"motion.velocity","params":{"yaw":NaN}}',
    b'{"jsonrpc":"2.0","id":1,"method":"motion.velocity","params":{"yaw":Infinity}}',
    b'{"jsonrpc":"2.0","id":1,"method":"motion.velocity","params":{"yaw":+1}}',
    b"{'jsonrpc':'2.0','id':1,'method':'dockd.version'}",
    b'{"jsonrpc":"2.0","id":1,"method":"dockd.version"} // comment',
    b'{"jsonrpc":"2.0","id":1,"method":"dockd.version"}{}',
    b'{"jsonrpc":"2.0","id":1,"method":"dock\xffd.version"}',
    b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tab\there"}',
])
def test_only_strict_json_is_read(rig, line):
    [reply] = raw_exchange(rig, [line], 1)
    message = json.loads(reply)
    assert message["id"] is None and message["error"]["code"] == -32700, reply


def test_a_member_given_twice_or_nesting_too_deep_is_an_invalid_request(rig):
    replies = raw_exchange(rig, [b'{"jsonrpc":"2.0","id":1,"id":2,"method":"dockd.version"}',
                                 b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":' + b"[" * 100000 + b"]" * 100000 + b"}}"], 2)
    assert [json.loads(r)["error"]["code"] for r in replies] == [-32600, -32600]


@pytest.mark.parametrize("method, params, field", [
    ("motion.limits", {"axes": {"pitch": 1}}, "axes.pitch"),
    ("motion.limits", {"axes": {"pitch": {"min": 1e16}}}, "axes.pitch.min"),
    ("motion.limits", {"axes": {"pitch": {"max_speed": 1e16}}}, "axes.pitch.max_speed"),
    ("motion.limits", {"axes": []}, "axes"),
    ("motion.orient", {"yaw": 1e300}, "yaw"),
    ("motion.orient", {"pitch": 1e16}, "pitch"),
    ("motion.orient", {"yaw": 0.1, "duration": 1e300}, "duration"),
    ("motion.orient", {"yaw": "0.1"}, "yaw"),
    ("motion.velocity", {"yaw": 1e300}, "yaw"),
    ("motion.cancel", {"id": 1e20}, "id"),
    ("motion.cancel", {"id": 1.5}, "id"),
    ("animation.play", {"keyframes": [{"time": 1, "yaw": 1e16}]}, "keyframes[0].yaw"),
    ("animation.play", {"keyframes": [{"time": -1e300}]}, "keyframes[0].time"),
    ("animation.play", {"keyframes": [5]}, "keyframes[0]"),
    ("stands.attach", {"device": "x"}, "device"),
    ("stands.attach", {"device": "/dev/null@-5"}, "device"),
    ("stands.attach", {"device": "rfcomm:ZZ"}, "device"),
    ("stands.attach", {"device": "unix:relative.sock"}, "device"),
    ("stands.attach", {"device": 5}, "device"),
    ("tracking.observe", {"observations": [{"rect": {"x": 1e300, "y": 0, "width": 0.1, "height": 0.1}}]}, "observations[0].rect.x"),
    ("tracking.observe", {"observations": [{"rect": {"x": 0.1, "y": 0.1, "width": 0.1, "height": 0.1}, "face_yaw": 1e300}]},
     "observations[0].face_yaw"),
    ("tracking.observe", {"observations": [], "timestamp": "now"}, "timestamp"),
    ("camera.set", {"camera": {"fx": 1e300, "fy": 1, "width": 1, "height": 1}}, "camera.fx"),
    ("subscribe", {"topics": ["motion", "nope"]}, "topics[1]"),
    ("subscribe", {"topics": ["motion"], "motion_rate": 0}, "motion_rate"),
    ("tracking.select", {"ids": [1]}, "ids[0]"),
])
def test_invalid_params_are_refused_naming_the_field(rig, method, params, field):
    c = rig.client()
    rig.connected_stand(c)
    reply = c.call(method, params)
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["field"] == field, reply


def test_errors_carry_structured_data(rig):
    c = rig.client()
    stand = rig.connected_stand(c)["id"]
    unknown = c.call("no.such.method")["error"]
    assert unknown["code"] == -32601 and unknown["data"] == {"method": "no.such.method"}
    missing = c.call("stand.get", {"stand": "NOT-THERE"})["error"]
    assert missing["code"] == -32001 and missing["data"] == {"stand": "NOT-THERE"}
    axis = c.call("motion.limits", {"axes": {"tilt": {"min": 0}}})["error"]
    assert axis["code"] == -32003 and axis["data"] == {"field": "axes.tilt"}
    c.result("motion.velocity", {"yaw": 0.1})
    other = rig.client()
    busy = other.call("tracking.set", {"enabled": False})["error"]
    assert busy["code"] == -32008 and busy["data"]["stand"] == stand and busy["data"]["holder_client"] >= 1
    assert busy["data"]["holder_pid"] > 0
