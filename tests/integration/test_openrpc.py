"""protocol/dockd.openrpc.json: its shape, that dockd serves it with rpc.discover, and that it names
exactly the methods dockd accepts. (Every reply and notification in every test is also checked
against it: conftest.py's Client, openrpc_check.py.)"""
import time

import jsonschema
import pytest

import openrpc_check
from conftest import wait_for


@pytest.fixture(scope="module")
def document():
    return openrpc_check.load_document()


def _closed(required, properties, extensions=True):
    """An OpenRPC object: these fields, plus x- extensions where the specification allows them."""
    schema = {"type": "object", "required": required, "properties": properties, "additionalProperties": False}
    if extensions:
        schema["patternProperties"] = {"^x-": {}}
    return schema


# The OpenRPC 1.2.6 object structure (after the spec's meta-schema), for the objects this document uses.
_REF = _closed(["$ref"], {"$ref": {"type": "string"}}, extensions=False)
_CONTENT = _closed(["name", "schema"], {"name": {"type": "string", "minLength": 1}, "summary": {"type": "string"},
                                        "description": {"type": "string"}, "schema": {"type": ["object", "boolean"]},
                                        "required": {"type": "boolean"}, "deprecated": {"type": "boolean"}})
_ERROR = _closed(["code", "message"], {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
                 extensions=False)
_EXAMPLE = {"type": "object", "required": ["name", "value"]}
_METHOD = _closed(["name", "params", "result"], {
    "name": {"type": "string", "minLength": 1}, "summary": {"type": "string"}, "description": {"type": "string"},
    "tags": {"type": "array"}, "paramStructure": {"enum": ["by-position", "by-name", "either"]},
    "params": {"type": "array", "items": {"oneOf": [_CONTENT, _REF]}},
    "result": {"oneOf": [_CONTENT, _REF]},
    "errors": {"type": "array", "items": {"oneOf": [_ERROR, _REF]}},
    "links": {"type": "array"},
    "examples": {"type": "array", "items": {"type": "object", "required": ["name", "params", "result"],
                                             "properties": {"params": {"type": "array", "items": _EXAMPLE},
                                                            "result": _EXAMPLE}}},
    "deprecated": {"type": "boolean"}})
OPENRPC_SHAPE = _closed(["openrpc", "info", "methods"], {
    "openrpc": {"type": "string", "pattern": "^1\\.2\\.[0-9]+$"},
    "info": _closed(["title", "version"], {"title": {"type": "string"}, "description": {"type": "string"},
                                           "termsOfService": {"type": "string"}, "version": {"type": "string"},
                                           "contact": {"type": "object"}, "license": {"type": "object"}}),
    "servers": {"type": "array", "items": _closed(["url"], {"url": {"type": "string"}, "name": {"type": "string"},
                                                          "description": {"type": "string"}, "summary": {"type": "string"},
                                                          "variables": {"type": "object"}})},
    "methods": {"type": "array", "items": _METHOD},
    "components": {"type": "object", "properties": {
        "schemas": {"type": "object"},
        "errors": {"type": "object", "additionalProperties": _ERROR},
        "contentDescriptors": {"type": "object", "additionalProperties": _CONTENT},
        "examples": {"type": "object"}, "examplePairings": {"type": "object"}, "links": {"type": "object"},
        "tags": {"type": "object"}}},
})


def test_document_is_openrpc_shaped(document):
    assert document["openrpc"] == "1.2.6"
    jsonschema.validate(document, OPENRPC_SHAPE, cls=jsonschema.Draft7Validator)
    assert document["info"]["title"] and document["info"]["version"]
    names = [m["name"] for m in document["methods"]]
    assert len(names) == len(set(names)), "method names are unique"
    check = openrpc_check.OpenRPCCheck(document)
    for m in document["methods"]:
        assert isinstance(m["name"], str) and m["name"], m
        assert isinstance(m["params"], list), m["name"]
        assert m.get("paramStructure") == "by-name", m["name"]
        for p in m["params"]:
            if "$ref" in p:
                p = check.registry.resolver(openrpc_check.BASE).lookup(openrpc_check.BASE + p["$ref"]).contents
            assert p["name"] and "schema" in p, (m["name"], p)
            jsonschema.Draft7Validator.check_schema(p["schema"])
        assert m["result"]["name"] and "schema" in m["result"], m["name"]
        for e in m["errors"]:
            assert "$ref" in e or {"code", "message"} <= set(e), (m["name"], e)
        assert check.method_errors(m["name"]) >= {-32602}, m["name"]
    for n in document["x-notifications"]:
        assert n["name"] and n["x-topic"] and n["params"]["schema"], n
    for name, schema in document["components"]["schemas"].items():
        jsonschema.Draft7Validator.check_schema(schema)
    # Every $ref resolves.
    def refs(value):
        if isinstance(value, dict):
            if isinstance(value.get("$ref"), str):
                yield value["$ref"]
            for v in value.values():
                yield from refs(v)
        elif isinstance(value, list):
            for v in value:
                yield from refs(v)
    resolver = check.registry.resolver(openrpc_check.BASE)
    for ref in set(refs(document)):
        assert ref.startswith("#/"), ref
        resolver.lookup(openrpc_check.BASE + ref)


def test_rpc_discover_returns_the_document(rig, document):
    c = rig.client()
    assert c.result("rpc.discover") == document


def test_documented_methods_exist_and_others_do_not(rig, document):
    c = rig.client()
    rig.connected_stand(c)
    c.result("motion.stop")  # nothing moves while unknown params go to motion methods
    for m in document["methods"]:
        # Empty params: a method either runs or refuses its params, but it exists.
        reply = c.call(m["name"], {})
        assert reply.get("error", {}).get("code") != -32601, (m["name"], reply)
    for name in ["rpc.nothing", "stand.list", "motion.velocities", "dockd.Version", ""]:
        reply = c.call(name, {})
        assert reply["error"]["code"] == -32601, (name, reply)


def test_every_method_and_notification_is_exercised_against_the_document(rig, document):
    """Success replies of every method and every notification kind, all checked by the Client."""
    c = rig.client()
    stand = rig.connected_stand(c)
    seen = set()

    def expect(method, predicate=lambda p: True, timeout=10):
        m = c.wait_notification(lambda m: m.get("method") == method and predicate(m["params"]), timeout=timeout)
        seen.add(method)
        return m["params"]

    topics = ["stands", "motion", "events", "battery", "tracking", "logs"]
    assert c.result("subscribe", {"topics": topics, "motion_rate": 20})["topics"] == sorted(topics)
    expect("stand.state")
    expect("battery.state")
    expect("motion.state")
    detail = c.result("stand.get", {"stand": stand["id"]})
    assert detail["counters"]["handshakes"] >= 1
    assert c.result("battery.get") == detail["batteries"]
    assert c.result("tracking.set", {"enabled": False}) == {"enabled": False}
    expect("tracking.changed", lambda p: p["source"] == "api")
    c.result("tracking.set", {"enabled": True, "stand": None})

    pitch = next(a for a in stand["capabilities"]["axes"] if a["axis"] == "pitch")
    c.result("motion.limits", {"axes": {"pitch": {"min": pitch["min"] / 2, "max": pitch["max"] / 2,
                                                  "max_speed": pitch["max_speed"] / 2}}})
    moving = c.result("motion.orient", {"yaw": 1.0, "relative": True, "duration": 3})
    expect("motion.progress", lambda p: p["id"] == moving["id"])
    # (On a starved machine the move may already have failed for lack of feedback: then -32003.)
    cancelled = c.call("motion.cancel", {"id": moving["id"]})
    assert cancelled.get("result") == {"ok": True} or cancelled["error"]["code"] == -32003, cancelled
    expect("motion.progress", lambda p: p["id"] == moving["id"] and p["state"] != "running")
    nod = c.result("animation.play", {"keyframes": [{"time": 0.3, "pitch": 0.05}, {"time": 0.6, "pitch": 0}]})
    expect("motion.progress", lambda p: p["id"] == nod["id"] and p["state"] != "running")
    c.result("motion.velocity", {"yaw": 0.2})
    assert c.result("motion.stop")["ok"]
    expect("motion.hold", lambda p: p["stopped"])
    c.result("motion.resume")
    expect("motion.hold", lambda p: not p["stopped"])

    for command, kind in [("press shutter", "shutter"), ("press flip", "flip"), ("button 0 press", "button"),
                          ("zoom 1.5", "zoom"), ("undock", "undocked"), ("dock", "docked")]:
        rig.sim_command(command)
        expect("stand.event", lambda p: p["kind"] == kind)
    rig.sim_command("charger on")
    expect("battery.state", lambda p: p["charge"] == "charging")
    rig.sim_command("log hello from the stand")
    expect("stand.fault", lambda p: "hello" in p["text"])

    # Tracking: one person ahead (a body and a speaking face, Vision's lower-left origin) at 15 Hz.
    c.result("camera.set", {"camera": {"horizontal_fov": 1.2, "vertical_fov": 0.75}})
    for _ in range(10):
        c.result("tracking.observe", {"observations": [
            {"kind": "body", "rect": {"x": 0.45, "y": 0.2, "width": 0.1, "height": 0.5}, "confidence": 0.9},
            {"kind": "face", "rect": {"x": 0.47, "y": 0.6, "width": 0.06, "height": 0.08}, "speaking_confidence": 0.9}]})
        time.sleep(1 / 15)
    state = expect("tracking.state", lambda p: p["subjects"])
    assert c.result("tracking.get")["subjects"]
    c.result("tracking.framing", {"mode": "left"})
    c.result("tracking.roi", {"rect": {"x": 0.1, "y": 0.1, "width": 0.8, "height": 0.8}})
    assert c.result("tracking.select", {"ids": [state["subjects"][0]["id"]]})["ids"] == [state["subjects"][0]["id"]]
    assert c.result("tracking.select", {"x": 0.5, "y": 0.5})["ids"]  # inside the body (upper-left origin)
    c.result("tracking.select", {"ids": []})
    c.result("tracking.lost_policy", {"policy": "search", "after": 1, "search_seconds": 2, "preset": "home"})
    c.result("sweep.start", {"from": -0.2, "to": 0.2, "rate": 0.5, "repeat": True})
    expect("tracking.phase", lambda p: p["phase"] == "sweeping")
    assert c.result("stand.get")["control"]["pan"]["kind"] == "sweep"
    c.result("sweep.stop")
    c.result("tour.start", {"stops": [{"preset": "home", "dwell": 0.5}]})
    expect("tracking.phase", lambda p: p["phase"] == "touring")
    c.result("tour.stop")
    assert c.result("dockd.stats")["clients"] >= 1
    other = rig.client()
    other.result("motion.velocity", {"yaw": 0.1, "force": True})
    expect("lease.changed")
    other.result("lease.release")
    c.result("stands.attach", {"device": "unix:/nonexistent/stand.sock"})
    c.result("stands.detach", {"device": "unix:/nonexistent/stand.sock"})

    rig.sim_command("unplug 0.3")
    expect("stand.disconnected")
    expect("stand.connected", timeout=15)
    assert c.result("unsubscribe", {"topics": ["motion", "logs"]})["topics"] == ["battery", "events", "stands", "tracking"]
    assert seen == {n["name"] for n in document["x-notifications"]}


def _all_property_names(node, document, seen=None):
    """Every parameter and object-property name reachable from `node`, following $refs."""
    seen = set() if seen is None else seen
    names = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref and ref not in seen:
            seen.add(ref)
            target = document
            for part in ref.lstrip("#/").split("/"):
                target = target[part]
            names |= _all_property_names(target, document, seen)
        if "name" in node and "schema" in node:
            names.add(node["name"])
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                names |= set(value)
            names |= _all_property_names(value, document, seen)
    elif isinstance(node, list):
        for item in node:
            names |= _all_property_names(item, document, seen)
    return names


# The methods that name a file: an administrator (root or dockd's own user, SO_PEERCRED)
# attaching or detaching a stand's tty; dockd opens it only as a tty (see the test below).
ADMIN_PATHS = {("stands.attach", "device"), ("stands.detach", "device")}


def test_no_method_takes_a_path_except_the_admins_tty(document):
    """Security (hardening issue): no API method reads or writes a file the caller names."""
    names = set()
    for method in document["methods"]:
        for name in _all_property_names(method.get("params", []), document):
            names.add((method["name"], name))
    suspicious = {(m, n) for m, n in names if any(w in n.lower() for w in ("path", "file", "dir", "config", "device", "socket", "url"))}
    assert suspicious == ADMIN_PATHS, f"parameters that could name a file: {sorted(suspicious - ADMIN_PATHS)}"
    assert len(names) > 20, f"the walk found only {sorted(names)}: it is not reading the document"


def test_attaching_a_file_that_is_not_a_tty_neither_reads_nor_writes_it(rig, tmp_path):
    victim = tmp_path / "important.txt"
    victim.write_text("keep me\n")
    before = victim.stat()
    c = rig.client()  # the tests run as root: an administrator
    c.result("stands.attach", {"device": str(victim)})
    def reported():
        stand = next((s for s in c.result("stands.list") if s["endpoint"].startswith(f"serial:{victim}")), None)
        return stand if stand and stand["last_error"] else None
    stand = wait_for(reported, 10, "the refusal")
    assert "not a tty" in stand["last_error"], stand
    time.sleep(0.6)  # a retry or two
    after = victim.stat()
    assert victim.read_text() == "keep me\n" and after.st_size == before.st_size and after.st_mtime_ns == before.st_mtime_ns
    c.result("stands.detach", {"device": str(victim)})
