"""A type-aware fuzzer of dockd's API that sends whole requests through the running daemon.

Requests are generated from the OpenRPC document (protocol/dockd.openrpc.json): each method's params
from their JSON schemas, with every number path given hostile values (±huge, -0, denormals, 2^53±1,
2^63, 2^64, overflow to infinity, many digits), strings that look like numbers ("NaN", "Infinity"),
wrong types, deep nesting, and broken envelopes (bad ids, bad JSON, invalid UTF-8, notifications).
It checks that dockd stays up, that every request with an id gets exactly one reply, a notification
none, and that every reply and notification validates against the document (openrpc_check).

Library: `Fuzzer(rig_or_socket, seed).run(seconds)`, used by tests/integration/test_api_fuzz.py (a
bounded run in `make test`). Command line (`make api-fuzz`, a long run): see `main()`."""
import argparse
import json
import os
import random
import select
import socket
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import openrpc_check  # noqa: E402


class Raw(str):
    """JSON text written as is (numbers a JSON library would round, invalid tokens)."""


NUMBERS = [
    "0", "-0", "0.0", "-0.0", "1", "-1", "0.5", "-0.5", "1e-7", "0.01", "0.1", "0.9", "1.5", "2", "3",
    "3.141592653589793", "6.283185307179586", "7", "10", "30", "60", "100", "255", "256", "1000", "3600",
    "3600.0001", "9999.999", "10000", "10000.000001", "65535", "65536", "4294967295", "4294967296",
    "-2147483648", "-2147483649", "5e-324", "4.9e-324", "2.2250738585072014e-308", "2.225073858507201e-308",
    "1e-300", "1e-400", "1e16", "-1e16", "1e20", "-1e20", "1e300", "-1e300", "1e308", "1.7976931348623157e308",
    "-1.7976931348623157e308", "1e309", "-1e309", "1e999999", "9007199254740991", "9007199254740992",
    "9007199254740993", "-9007199254740993", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "123456789012345678901234567890123456789", "0.30000000000000004", "1E2", "1e+2", "-1e-2",
]
STRINGS = ["", "yaw", "pitch", "roll", "motion", "x", "NaN", "Infinity", "-Infinity", "nan", "1e999", "-0",
           "0", "null", "true", "SIM-0001", "SIM-9999", "automatic", "center", "face", "body", "é", "\u0000",
           "\u202e", "😀", "a" * 300, "\\", "\"", "/dev/null", "lower_left", "upper_left", "portrait"]
DEVICES = ["x", "/dev/null@-5", "/dev/null@0", "/dev/null@99999999999999999999", "rfcomm:ZZ", "rfcomm:",
           "rfcomm:00:11:22:33:44:55/0", "rfcomm:00:11:22:33:44:55/99", "unix:", "unix:rel", "udp:", "tcp:x",
           "udp:127.0.0.1:0", "tcp:127.0.0.1:99999", "@", "/nonexistent/dockd-fuzz-tty", "unix:/nonexistent/dockd-fuzz.sock",
           "", " ", "/dev/null@", "udp:[::1]:9"]


def encode(value):
    """JSON text of a generated value (Raw pieces verbatim)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


class Generator:
    def __init__(self, document, rng, stand_ids=("SIM-0001",)):
        self.doc = document
        self.rng = rng
        self.stand_ids = list(stand_ids)
        self.methods = []
        for m in document["methods"]:
            params = [self.resolve(p) for p in m.get("params", [])]
            self.methods.append((m["name"], params))

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    # -- values -------------------------------------------------------------------------------

    def number(self, schema=None):
        r = self.rng.random()
        if schema and r < 0.3 and ("minimum" in schema or "maximum" in schema):
            lo = schema.get("minimum", schema.get("exclusiveMinimum", -1e4))
            hi = schema.get("maximum", schema.get("exclusiveMaximum", 1e4))
            pick = self.rng.choice([lo, hi, (lo + hi) / 2, lo - 1e-9, hi + 1e-9, self.rng.uniform(lo, hi)])
            return Raw(repr(float(pick)) if isinstance(pick, float) else str(pick))
        if r < 0.8:
            return Raw(self.rng.choice(NUMBERS))
        return Raw(repr(self.rng.uniform(-4, 4)))

    def string(self, schema=None):
        if schema and "enum" in schema and self.rng.random() < 0.8:
            return self.rng.choice(schema["enum"])
        if self.rng.random() < 0.3:
            return self.rng.choice(self.stand_ids)
        return self.rng.choice(STRINGS)

    def hostile(self, depth):
        kind = self.rng.randrange(10)
        if kind == 0:
            return Raw("[" * 70 + "]" * 70)
        if kind == 1:
            nested = 0
            for _ in range(self.rng.randrange(1, 60)):
                nested = {"a": nested} if self.rng.random() < 0.5 else [nested]
            return nested
        if kind == 2:
            return self.rng.choice([None, True, False, [], {}, "", [1, 2], {"x": 1}])
        if kind == 3:
            return Raw(self.rng.choice(NUMBERS))
        if kind == 4:
            return self.rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "0x10", "1_000", " 1", "１"])
        if kind == 5:
            return [self.number() for _ in range(self.rng.randrange(0, 300))]
        if kind == 6:
            return {self.rng.choice(STRINGS): self.value({}, depth + 1) for _ in range(self.rng.randrange(0, 6))}
        if kind == 7:
            return "x" * self.rng.choice([0, 1, 1000, 70000])
        if kind == 8:
            return [{"time": self.number(), "yaw": self.number(), "pitch": self.number(), "roll": self.number()}
                    for _ in range(self.rng.choice([1, 2, 256, 257, 600]))]
        return self.rng.choice(STRINGS)

    def value(self, schema, depth=0):
        schema = self.resolve(schema) if schema else {}
        if depth > 6 or self.rng.random() < 0.12:
            return self.hostile(depth)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return self.value(self.rng.choice(schema[key]), depth + 1)
        if "enum" in schema:
            return self.rng.choice(schema["enum"]) if self.rng.random() < 0.85 else self.string()
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = self.rng.choice(kind)
        if kind in ("number", "integer"):
            return self.number(schema)
        if kind == "string":
            return self.string(schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            n = self.rng.choice([0, 1, 1, 2, 3, 5, 65, 300])
            items = schema.get("items", {})
            return [self.value(items, depth + 1) for _ in range(n)]
        if kind == "object" or "properties" in schema:
            out = {}
            required = set(schema.get("required", []))
            for name, sub in schema.get("properties", {}).items():
                if name in required or self.rng.random() < 0.6:
                    out[name] = self.value(sub, depth + 1)
            if self.rng.random() < 0.1:
                out[self.rng.choice(STRINGS)] = self.value({}, depth + 1)
            additional = schema.get("additionalProperties")
            if isinstance(additional, dict) and self.rng.random() < 0.7:
                for name in self.rng.sample(["yaw", "pitch", "roll", "tilt", ""], self.rng.randrange(1, 4)):
                    out[name] = self.value(additional, depth + 1)
            return out
        return self.hostile(depth)

    def params(self, method, params):
        out = {}
        for p in params:
            name = p["name"]
            if name in ("device",):
                out[name] = self.rng.choice(DEVICES) if self.rng.random() < 0.9 else self.value(p.get("schema", {}))
                continue
            if name == "stand" and self.rng.random() < 0.7:
                out[name] = self.rng.choice(self.stand_ids)
                continue
            if p.get("required") or self.rng.random() < 0.7:
                out[name] = self.value(p.get("schema", {}))
        return out

    # -- requests -----------------------------------------------------------------------------

    def request(self, request_id):
        """(line bytes, expected reply id text or None for a notification, "null" when unreadable, method)."""
        line, expect, method = self._request(request_id)
        if len(line) > 1 << 20:  # over the line limit: discarded unread, answered with a null id
            return line, "null", None
        return line, expect, method

    def _request(self, request_id):
        name, params = self.rng.choice(self.methods)
        r = self.rng.random()
        if r < 0.05:  # a notification: carried out, never answered
            body = {"jsonrpc": "2.0", "method": name, "params": self.params(name, params)}
            return encode(body).encode(), None, name
        body = {"jsonrpc": "2.0", "id": Raw(str(request_id)), "method": name}
        if self.rng.random() < 0.9:
            body["params"] = self.params(name, params)
        expect = str(request_id)
        if r < 0.15:
            mutation = self.rng.randrange(9)
            if mutation == 0:
                body["id"] = self.rng.choice([[1], {"a": 1}, True, False])
                expect = "null"
            elif mutation == 1:
                body["jsonrpc"] = self.rng.choice(["1.0", 2.0, None, ""])
            elif mutation == 2:
                body["method"] = self.rng.choice([1, None, [], {}, "", "rpc.nope", name + " "])
            elif mutation == 3:
                body["params"] = self.rng.choice([[1], None, "x", 5, True])
            elif mutation == 4:
                line = encode(body).encode()
                cut = self.rng.randrange(1, len(line))
                return line[:cut], "null", None
            elif mutation == 5:
                line = encode(body)[:-1] + ",}"
                return line.encode(), "null", None
            elif mutation == 6:
                return encode(body).encode().replace(b'"2.0"', b'"2.\xff"', 1), "null", None
            elif mutation == 7:
                # the id itself (a bare replace of its digits took the "2" of "2.0" for id 2)
                return encode(body).replace(f'"id":{request_id}', '"id":NaN', 1).encode(), "null", None
            else:
                return ("[" * self.rng.choice([65, 100000])).encode(), "null", None
        line = encode(body).encode()
        return line, expect, body["method"] if isinstance(body.get("method"), str) else None


class Finding(Exception):
    pass


class Fuzzer:
    """Runs generated requests through one dockd at `socket_path` (process `process`)."""

    def __init__(self, socket_path, process, seed, log_path=None, document=None, stand_ids=("SIM-0001",)):
        self.socket_path = str(socket_path)
        self.process = process
        self.seed = seed
        self.log_path = log_path
        self.rng = random.Random(seed)
        self.check = openrpc_check.OpenRPCCheck(document) if document else openrpc_check.shared()
        self.gen = Generator(self.check.document, self.rng, stand_ids)
        self.sent = 0
        self.replies = 0
        self.notifications = 0
        self.codes = {}
        self.batches = 0

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(self.socket_path)
        s.setblocking(False)
        self.inbox = b""
        return s

    def alive(self):
        if self.process is not None and self.process.poll() is not None:
            raise Finding(f"dockd exited with status {self.process.returncode}")

    def batch(self, sock, next_id, size):
        lines, expected, methods = [], {}, {}
        nulls = 0
        for i in range(size):
            line, expect, method = self.gen.request(next_id + i)
            lines.append(line)
            if expect == "null":
                nulls += 1
            elif expect is not None:
                expected[expect] = line
                methods[expect] = method
        # Written while reading: a batch larger than the socket buffers, with notifications flowing
        # back, must not deadlock against dockd's own back-pressure.
        out = memoryview(b"\n".join(lines) + b"\n")
        self.sent += size
        buffer = self.inbox
        deadline = time.monotonic() + 60
        while out or expected or nulls:
            self.alive()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                missing = list(expected.values())[:3]
                raise Finding(f"no reply within 60 s to {len(expected)} request(s) and {nulls} unreadable line(s); e.g. {missing!r}")
            readable, writable, _ = select.select([sock], [sock] if out else [], [], min(remaining, 1))
            if writable:
                sent = sock.send(out[:65536])
                out = out[sent:]
            if not readable:
                continue
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise Finding("dockd closed the connection")
            buffer += chunk
            while b"\n" in buffer:
                text, buffer = buffer.split(b"\n", 1)
                message = json.loads(text)
                if "method" in message:
                    self.check.check_notification(message)
                    self.notifications += 1
                    continue
                self.replies += 1
                code = message["error"]["code"] if "error" in message else 0
                self.codes[code] = self.codes.get(code, 0) + 1
                if message.get("id") is None:
                    if nulls == 0:
                        raise Finding(f"an unexpected reply with a null id: {text[:300]!r}")
                    nulls -= 1
                    self.check.check_reply(message, None, None)
                    continue
                raw_id = str(message["id"])
                if raw_id not in expected:
                    raise Finding(f"a reply to no request of this batch (or a second one): {text[:300]!r}")
                request = expected.pop(raw_id)
                try:
                    self.check.check_reply(message, methods.pop(raw_id), message["id"])
                except AssertionError as e:
                    raise Finding(f"{e}\n  request: {request[:2000]!r}") from None
        self.inbox = buffer

    def run(self, seconds, batch_size=48):
        """Fuzzes for `seconds`; returns a summary dict. A finding raises Finding (the batch is logged)."""
        start = time.monotonic()
        sock = self.connect()
        next_id = 1
        try:
            while time.monotonic() - start < seconds:
                # A fresh connection now and then: leases and subscriptions end, new ones start.
                if self.rng.random() < 0.05:
                    sock.close()
                    sock = self.connect()
                self.batch(sock, next_id, batch_size)
                next_id += batch_size
                self.batches += 1
            self.alive()
        except Finding:
            if self.log_path:
                with open(self.log_path, "a") as log:
                    log.write(f"seed {self.seed}, after {self.sent} requests\n")
            raise
        finally:
            sock.close()
        elapsed = time.monotonic() - start
        return {"seed": self.seed, "requests": self.sent, "replies": self.replies, "notifications": self.notifications,
                "seconds": round(elapsed, 1), "per_second": round(self.sent / elapsed), "codes": dict(sorted(self.codes.items()))}


def main():
    parser = argparse.ArgumentParser(description="Fuzz dockd's API through a running dockd on dock-sim.")
    parser.add_argument("--bin", default=str(HERE.parents[1] / ".build" / "debug"), help="directory of dockd and dock-sim")
    parser.add_argument("--seconds", type=float, default=1800)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=1, help="fresh dockd per round, each with its own seed")
    args = parser.parse_args()
    os.environ["DOCK_BIN"] = args.bin
    import tempfile
    import conftest
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    total = {"requests": 0, "seconds": 0.0}
    for round_ in range(args.rounds):
        tmp = Path(tempfile.mkdtemp(prefix="dockd-api-fuzz-"))
        rig = conftest.Rig(tmp)
        try:
            c = rig.client()
            stand = rig.connected_stand(c)["id"]
            c.close()
            fuzzer = Fuzzer(rig.socket_path, rig.dockd, seed + round_, log_path=tmp / "findings.txt", stand_ids=(stand,))
            try:
                summary = fuzzer.run(args.seconds / args.rounds)
            except Finding as finding:
                print(f"FINDING (seed {seed + round_}, {fuzzer.sent} requests): {finding}", file=sys.stderr)
                print(f"dockd log: {rig.dockd_log}", file=sys.stderr)
                print(rig.log()[-3000:], file=sys.stderr)
                sys.exit(1)
            fatal = [line for line in rig.log().splitlines() if "Fatal error" in line or "Illegal instruction" in line]
            if fatal:
                print(f"FINDING: dockd logged {fatal[:3]}", file=sys.stderr)
                sys.exit(1)
            print(json.dumps(summary))
            total["requests"] += summary["requests"]
            total["seconds"] += summary["seconds"]
        finally:
            rig.stop()
    print(f"api-fuzz: {total['requests']} requests in {total['seconds']:.0f} s through dockd, seed {seed}, "
          f"{args.rounds} round(s), no finding")


if __name__ == "__main__":
    main()
