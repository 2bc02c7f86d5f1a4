"""A connection to dockd's JSON-RPC socket (newline-delimited JSON-RPC 2.0, protocol/API.md) that
keeps itself up: it reconnects with backoff when dockd restarts or goes away, subscribes again, and
hands every notification and reply to the owner from one reader thread."""
import json
import socket
import threading
import time

BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0


class NotConnected(Exception):
    pass


class DockdLink:
    def __init__(self, path, topics, motion_rate, on_notification, on_connect=None, log=print):
        self.path = str(path)
        self.topics = topics
        self.motion_rate = motion_rate
        self.on_notification = on_notification
        self.on_connect = on_connect
        self.log = log
        self.sock = None
        self.send_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.next_id = 1
        self.waiting = {}        # id -> [event, reply] for blocking calls
        self.reply_handlers = {}  # id -> callable(reply) for calls not waited for
        self.connections = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="dockd-link", daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(5)

    @property
    def connected(self):
        return self.sock is not None

    def send(self, method, params, on_reply=None):
        """Sends a request without waiting; `on_reply(reply)` runs on the reader thread. Returns the
        local monotonic time the line was written; raises NotConnected."""
        with self.state_lock:
            sock = self.sock
            if sock is None:
                raise NotConnected()
            request_id = self.next_id
            self.next_id += 1
            if on_reply is not None:
                self.reply_handlers[request_id] = on_reply
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        try:
            with self.send_lock:
                sock.sendall(line.encode())
                return time.monotonic()
        except OSError as error:
            self._drop(sock)
            raise NotConnected() from error

    def call(self, method, params=None, timeout=5.0):
        """Sends a request and waits for its reply object (with 'result' or 'error')."""
        done = threading.Event()
        box = {}

        def keep(reply):
            box["reply"] = reply
            done.set()

        self.send(method, params or {}, keep)
        if not done.wait(timeout):
            raise NotConnected(f"no reply to {method} within {timeout} s")
        return box["reply"]

    def _run(self):
        backoff = BACKOFF_FIRST
        while not self.stopping:
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(self.path)
            except OSError as error:
                sock.close()
                if self.connections == 0 and backoff == BACKOFF_FIRST:
                    self.log(f"dock-camera: cannot connect to dockd at {self.path} ({error.strerror}); retrying")
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            backoff = BACKOFF_FIRST
            self.connections += 1
            with self.state_lock:
                self.sock = sock
            if self.connections > 1:
                self.log(f"dock-camera: connected to dockd again ({self.path})")
            try:
                self.send("subscribe", {"topics": self.topics, "motion_rate": self.motion_rate}, self._subscribed)
                if self.on_connect is not None:
                    self.on_connect()
                self._read(sock)
            except (OSError, NotConnected):
                pass
            self._drop(sock)
            if not self.stopping:
                self.log("dock-camera: lost dockd; reconnecting")

    def _subscribed(self, reply):
        if "error" in reply:
            self.log(f"dock-camera: subscribe failed: {reply['error'].get('message')}")

    def _read(self, sock):
        buffer = b""
        while not self.stopping:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                arrival = time.monotonic()
                try:
                    message = json.loads(line)
                except ValueError:
                    self.log("dock-camera: dockd sent a line that is not JSON; ignored")
                    continue
                if "id" in message and "method" not in message:
                    with self.state_lock:
                        handler = self.reply_handlers.pop(message["id"], None)
                    if handler is not None:
                        handler(message)
                elif "method" in message:
                    self.on_notification(message["method"], message.get("params", {}), arrival)

    def _drop(self, sock):
        with self.state_lock:
            if self.sock is sock:
                self.sock = None
            handlers = list(self.reply_handlers.values())
            self.reply_handlers.clear()
        try:
            sock.close()
        except OSError:
            pass
        for handler in handlers:  # callers waiting on a reply learn the link went away
            handler({"error": {"code": None, "message": "connection to dockd lost"}})
