"""A small JSON-RPC client for dockd's API socket, for the VM's guest scripts (standard library only:
it runs under Debian's /usr/bin/python3 in the VM).

    dockd_rpc.py SOCKET orient-zoom Z     motion.orient to zoom Z; waits for the move's final
                                          motion.progress (at most 60 s) and prints it as JSON
Exit status: 0 when the move completed, 1 otherwise (the reason on stderr).
"""
import json
import socket
import sys
import time


class RPCError(Exception):
    pass


class Connection:
    """One connection: requests answered in order, notifications kept for whoever waits for them."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.notifications = []
        self.next_id = 1

    def _line(self, deadline):
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("dockd did not answer in time")
            self.sock.settimeout(left)
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("dockd closed the connection")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def send(self, method, params=None):
        """Sends a request without waiting for its answer; returns its id."""
        request_id = self.next_id
        self.next_id += 1
        self.sock.sendall(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                      "params": params or {}}).encode() + b"\n")
        return request_id

    def answers(self):
        """The answers that have arrived, without waiting (notifications are kept)."""
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError("dockd closed the connection")
                self.buffer += data
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)
        *lines, self.buffer = self.buffer.split(b"\n")
        messages = [json.loads(line) for line in lines]
        self.notifications += [m for m in messages if "method" in m]
        return [m for m in messages if "id" in m]

    def call(self, method, params=None, timeout=30):
        request_id = self.send(method, params)
        deadline = time.monotonic() + timeout
        while True:
            message = self._line(deadline)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RPCError(f"{method}: {message['error']}")
                return message["result"]
            if "method" in message:
                self.notifications.append(message)

    def notification(self, accept, timeout):
        """The first notification (kept or arriving) for which accept(message) is true."""
        deadline = time.monotonic() + timeout
        while True:
            for i, message in enumerate(self.notifications):
                if accept(message):
                    return self.notifications.pop(i)
            self.notifications.clear()
            message = self._line(deadline)
            if "method" in message:
                self.notifications.append(message)


def orient_zoom(path, zoom):
    connection = Connection(path)
    connection.call("subscribe", {"topics": ["motion"]})
    motion = connection.call("motion.orient", {"zoom": zoom})["id"]
    final = connection.notification(lambda m: m["method"] == "motion.progress" and m["params"]["id"] == motion
                                    and m["params"]["state"] != "running", timeout=60)["params"]
    print(json.dumps(final))
    return final["state"] == "completed"


def main(argv):
    if len(argv) == 4 and argv[2] == "orient-zoom":
        return 0 if orient_zoom(argv[1], float(argv[3])) else 1
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (RPCError, OSError, TimeoutError) as error:
        print(f"dockd_rpc.py: {error}", file=sys.stderr)
        sys.exit(1)
