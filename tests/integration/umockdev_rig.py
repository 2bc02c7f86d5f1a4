"""What the umockdev hotplug scripts (umockdev_hotplug.py, umockdev_video_hotplug.py) share: a
JSON-RPC call to the dockd started in the testbed, and a wait for what it does. They run under
Debian's /usr/bin/python3 (for gi), not the test venv, so they cannot use conftest's Client."""
import json
import socket
import time


def call(sock_path, method, params=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock_path)
    s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}).encode() + b"\n")
    buf = b""
    while b"\n" not in buf:
        buf += s.recv(65536)
    s.close()
    return json.loads(buf.split(b"\n")[0])["result"]


def wait(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
