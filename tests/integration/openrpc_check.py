"""Checks every message dockd sends against protocol/dockd.openrpc.json: replies (envelope, result
against the method's result schema, error against the Error schema and the method's error list) and
notifications (against the x-notifications entry of their method). A mismatch raises AssertionError."""
import json
from pathlib import Path

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

DOCUMENT_PATH = Path(__file__).resolve().parents[2] / "protocol" / "dockd.openrpc.json"
BASE = "urn:dockd:openrpc"
# Errors any request can get regardless of its method (transport level).
ANY_METHOD_ERRORS = {-32700, -32600}


def load_document(path=DOCUMENT_PATH):
    with open(path) as f:
        return json.load(f)


class OpenRPCCheck:
    def __init__(self, document=None):
        self.document = document if document is not None else load_document()
        resource = Resource.from_contents(self.document, default_specification=DRAFT7)
        self.registry = Registry().with_resource(BASE, resource)
        self._validators = {}
        self.methods = {m["name"]: (i, m) for i, m in enumerate(self.document["methods"])}
        self.notifications = {n["name"]: (i, n) for i, n in enumerate(self.document.get("x-notifications", []))}
        self.error_codes = {name: e["code"] for name, e in self.document["components"]["errors"].items()}

    def validator(self, pointer):
        """A Draft 7 validator for the schema at `pointer` (a JSON pointer into the document)."""
        v = self._validators.get(pointer)
        if v is None:
            v = jsonschema.Draft7Validator({"$ref": f"{BASE}#{pointer}"}, registry=self.registry)
            self._validators[pointer] = v
        return v

    def _check(self, pointer, value, what):
        e = jsonschema.exceptions.best_match(self.validator(pointer).iter_errors(value))
        if e is not None:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            raise AssertionError(f"{what} does not match {pointer}: at {where}: {e.message}"
                                 f"\n  value: {json.dumps(value)[:2000]}")

    def method_errors(self, name):
        _, m = self.methods[name]
        codes = set()
        for e in m.get("errors", []):
            if "$ref" in e:
                codes.add(self.error_codes[e["$ref"].rsplit("/", 1)[1]])
            else:
                codes.add(e["code"])
        return codes

    def check_reply(self, message, method, request_id):
        """`method`: the request's method, or None when the request was not a readable one."""
        what = f"reply to {method or 'an unreadable request'} (id {request_id!r})"
        if message.get("jsonrpc") != "2.0":
            raise AssertionError(f"{what}: jsonrpc is {message.get('jsonrpc')!r}, not '2.0'")
        extra = set(message) - {"jsonrpc", "id", "result", "error"}
        if extra or ("result" in message) == ("error" in message):
            raise AssertionError(f"{what}: a reply has exactly one of result and error, and nothing else: {sorted(message)}")
        if "error" in message:
            self._check("/components/schemas/Error", message["error"], f"{what}: error")
            code = message["error"]["code"]
            if method in self.methods and code not in ANY_METHOD_ERRORS and code not in self.method_errors(method):
                raise AssertionError(f"{what}: error {code} ({message['error']['message']}) "
                                     f"is not among the errors the document lists for {method}")
            return
        if method not in self.methods:
            raise AssertionError(f"{what}: a result for a method the document does not describe")
        index, _ = self.methods[method]
        self._check(f"/methods/{index}/result/schema", message["result"], f"{what}: result")

    def check_notification(self, message):
        method = message.get("method")
        what = f"notification {method}"
        if message.get("jsonrpc") != "2.0" or "id" in message or set(message) - {"jsonrpc", "method", "params"}:
            raise AssertionError(f"{what}: not a JSON-RPC 2.0 notification: {sorted(message)}")
        if method not in self.notifications:
            raise AssertionError(f"{what}: the document's x-notifications do not describe it")
        index, _ = self.notifications[method]
        self._check(f"/x-notifications/{index}/params/schema", message.get("params"), what)

    def check_message(self, message, pending):
        """Checks one message read from dockd. `pending` maps request ids to method names (replies
        are matched and removed)."""
        if not isinstance(message, dict):
            raise AssertionError(f"dockd sent a non-object message: {message!r}")
        if "method" in message:
            self.check_notification(message)
            return
        request_id = message.get("id")
        key = _id_key(request_id)
        method = pending.pop(key, None) if key is not None else None
        self.check_reply(message, method, request_id)


def _id_key(request_id):
    """A hashable key for a request id as JSON compares it (1 and 1.0 are the same id)."""
    if request_id is None or isinstance(request_id, bool):
        return None
    if isinstance(request_id, (int, float)):
        return ("n", float(request_id))
    if isinstance(request_id, str):
        return ("s", request_id)
    return None


def note_requests(data, pending):
    """Records the method of every request in raw bytes sent to dockd (lines that parse as requests)."""
    for line in data.split(b"\n"):
        if not line.strip() or len(line) > (1 << 20):
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if isinstance(request, dict) and isinstance(request.get("method"), str):
            key = _id_key(request.get("id"))
            if key is not None:
                pending[key] = request["method"]


_shared = None


def shared():
    """One checker per test session (the document is read once)."""
    global _shared
    if _shared is None:
        _shared = OpenRPCCheck()
    return _shared
