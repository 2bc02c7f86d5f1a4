"""An ONVIF PTZ camera (Profile S/T device) emulator for tests.

Written from the published specifications and from what owners wrote down about real cameras, not
from dockd's code nor from any ONVIF library:
- ONVIF Core Specification (v2.x / 16.06): SOAP 1.2 over HTTP, the device service
  (GetSystemDateAndTime, GetCapabilities, GetServices, GetDeviceInformation), SOAP fault codes
  (env:Sender / env:Receiver with ter: subcodes), user authentication: WS-Security UsernameToken
  with PasswordDigest = Base64(SHA-1(nonce + created + password)) checked against the device's own
  clock, replayed nonces refused, HTTP Digest where the device asks for it, GetSystemDateAndTime
  answered without authentication (a client needs the device's time before it can make a digest);
  WS-Discovery for devices (Probe / ProbeMatches on 239.255.255.250:3702, Types
  dn:NetworkVideoTransmitter, onvif:// scopes);
- ONVIF PTZ Service Specification: nodes and their spaces (generic position, translation,
  velocity and speed spaces, TranslationSpaceFov), configurations and their options,
  ContinuousMove with its Timeout (and the configuration's DefaultPTZTimeout when there is none),
  AbsoluteMove, RelativeMove, Stop, GetStatus (Position, MoveStatus, UtcTime), presets, home;
- ONVIF Media Service Specification: GetProfiles (a profile with its PTZConfiguration, video source
  and encoder), GetStreamUri;
- the XML schema and WSDLs ONVIF publishes (onvif.xsd, devicemgmt.wsdl, media.wsdl, ptz.wsdl) for
  the element names and their order;
- WS-Discovery (OASIS, April 2005 namespace, SOAP-over-UDP) for Probe / ProbeMatches, RelatesTo,
  AppSequence and scope matching (rfc3986 and strcmp0);
- RFC 7616 / 2617 for HTTP Digest (MD5, qop=auth);
- owners' notes on real cameras: a Tapo C220 (github.com/skrtk98/tapo-c220, wiki page "PTZ": its pan velocity sign is the opposite of its pan
  position sign; a ContinuousMove Timeout of "PT0.5S" made its HTTP server answer a broken response
  — NUL-separated header text, then "HTTP/1.1 500" — while whole seconds work; without a Timeout it
  runs for 180 s; MoveStatus always UNKNOWN), Hikvision (MoveStatus UNKNOWN), Reolink
  (absolute moves only), and Frigate's issues on cameras without relative moves.

Motion: pan and tilt in the generic spaces (-1..1) and zoom (0..1). The generic position maps
linearly to degrees (`pan_degrees`, default -170..170; `tilt_degrees`, default -30..90); the head
turns at most `pan_speed` / `tilt_speed` degrees per second (zoom at `zoom_speed` units/s), so the
position a client reads lags its commands like a real camera's. A ContinuousMove velocity of 1 is
the full speed; an absolute or relative move goes at its Speed (0..1 of full speed; the
configuration's DefaultPTZSpeed without one). Each new move replaces the motion in force; Stop
stops the components it names. Motion is computed from the time each command arrived (no physics
thread: a starved process still answers where the head is now). The head starts at generic (0, 0),
zoom 0 (with the default ranges: pan 0°, tilt 30° up).

Options (Camera(...) keyword arguments; the command line has the same names):
- `motion`: the moves offered, a subset of {"continuous", "absolute", "relative"} — "continuous"
  only (velocity cameras), "absolute" only (Reolink-like), "relative" only. A move not offered is
  not advertised in the node's spaces and is answered with a SOAP fault env:Receiver /
  ter:ActionNotSupported. `fov_translation`: RelativeMove also in TranslationSpaceFov (a
  translation of 1 moves by half the field of view, `hfov` / `vfov` degrees at zoom 0, narrowing
  `zoom_ratio` times at zoom 1).
- `pan_range`, `tilt_range`: the generic position range the camera advertises for its absolute
  pan/tilt position space (in GetNodes' SupportedPTZSpaces, GetConfigurationOptions' Spaces and the
  configuration's PanTiltLimits), default -1..1; narrower (a ceiling dome's tilt of -1..0.2): the
  head travels no further, and an AbsoluteMove beyond is answered with the fault a camera sends,
  env:Sender / ter:InvalidArgVal / ter:InvalidPosition.
- `zoom` (False: no zoom spaces, no zoom in the status), `presets` (MaximumNumberOfPresets, 0 = none),
  `home_supported`. `lists_every_slot`: GetPresets lists all `presets` slots, the unset ones as
  "Preset N" with no position (Hikvision's defaults; an Ellinet listed its 10 with 2 set).
- `whole_second_timeouts`: a ContinuousMove Timeout with a fraction of a second is not executed: the
  camera writes a broken response (as the Tapo did) and drops the connection; with
  `fraction_kills_for` > 0 its HTTP server then refuses connections for that many seconds.
- `velocity_sign` (pan, tilt): the sign of the head's motion for a positive velocity, against its
  position (the Tapo C220: (-1, 1)). `default_timeout`: how long a ContinuousMove without Timeout
  runs (180 s).
- `move_status_unknown`: MoveStatus always UNKNOWN (Hikvision, Tapo). `position_static`: GetStatus
  reports the position where the last motion began until the head is still again. `no_position`:
  GetStatus has no Position at all (cheap continuous-only cameras; the schema makes it optional),
  and the PTZ service's capabilities say StatusPosition="false". `status_fault`: GetStatus is
  answered with the fault onvif_simple_server (the ONVIF server of many hacked-firmware cameras)
  sends where the camera has no position: HTTP 500, env:Receiver / ter:Action / ter:NoStatus, "No
  PTZ status is available in the requested Media Profile" (StatusPosition="false" too). Both may be
  changed while the server runs (a camera whose position comes later). `position_late` = N: the
  first N GetStatus after each GetSystemDateAndTime (a client's connect) give no Position, the
  rest do (a camera whose position comes and goes, at each connect).
- `latency`: every reply that many seconds late (the request acts when it arrives).
- `Camera.hold`: the actions (e.g. {"GetStatus"}) whose replies are held, the request acted on,
  until `Camera.release_held()` or until the client closes the connection, giving the request up
  (then no reply goes). `Camera.held` and `Camera.given_up` list (time, action) of each held reply
  and of each the client gave up.
- `requests_per_connection`: HTTP/1.1 keeps connections open; with N > 0 the Nth reply on a
  connection says "Connection: close" and the server closes it (0: never). `Server.accepted`
  counts the connections accepted.
- `Server.reboot(down_for, reset_pose)`: connections dropped, connections refused for `down_for`
  seconds, then the camera answers again, stopped, its pose kept or back at home.
- `Camera.inject`: faults for the next requests, in order: "http500", "http401", "close" (connection
  dropped with no reply), "truncated" (a 200 whose envelope is cut off, then the connection closed),
  "malformed" (a 200 whose body is not XML), "huge" (a 200 whose body is `huge_bytes` long).
- `auth`: "none", "wsse" (UsernameToken digest required; refused: HTTP 400 with a SOAP fault
  env:Sender / ter:NotAuthorized), "digest" (HTTP Digest required; refused: 401 and a challenge) or
  "any" (either accepted; refused: 401 with a Digest challenge and the NotAuthorized fault);
  `username` / `password`; `clock_skew` (seconds the camera's clock is ahead of UTC, in
  GetSystemDateAndTime and for checking Created); `created_window` (seconds Created may differ
  from the camera's clock); `password_text` (also accept PasswordText).

Every request (time, client, action, how it was authenticated, the HTTP status answered) is kept in
`Camera.log` and printed to stderr with `--verbose`; every move and Stop accepted, with its time, in
`Camera.moves`; the most requests in flight at once in `Camera.max_in_flight` (a request whose client
closed its connection, giving it up, is no longer in flight for it).

WS-Discovery: `DiscoveryResponder` answers Probes on UDP: bound to 0.0.0.0:3702 and joined to
239.255.255.250 on one interface (multicast: it needs a multicast route; the tests make a network
namespace of their own with a veth pair for it, since WSDiscovery ignores loopback addresses and no
datagram may leave the machine), or on any HOST:PORT for a unicast (directed) Probe, which works
anywhere, loopback included. Each Probe (SOAP-over-UDP repeats them) is answered once, by a
ProbeMatch sent unicast to the Probe's source address and port.

Run alone (answers on http://127.0.0.1:8080/onvif/device_service):
    python onvif_camera.py --port 8080 [--auth wsse --username admin --password secret]
        [--motion continuous] [--whole-second-timeouts] [--velocity-sign -1 1] [--latency 0.2]
        [--move-status-unknown] [--clock-skew 3600] [--discovery 127.0.0.1:3702 | --discovery multicast]
        [--verbose]
Then, e.g. with onvif-zeep: ONVIFCamera("127.0.0.1", 8080, "admin", "secret", adjust_time=True).
"""
import argparse
import base64
import datetime
import hashlib
import io
import math
import re
import secrets
import socket
import struct
import sys
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote
from xml.sax.saxutils import escape

SOAP = "http://www.w3.org/2003/05/soap-envelope"
TDS = "http://www.onvif.org/ver10/device/wsdl"
TRT = "http://www.onvif.org/ver10/media/wsdl"
TPTZ = "http://www.onvif.org/ver20/ptz/wsdl"
TT = "http://www.onvif.org/ver10/schema"
TER = "http://www.onvif.org/ver10/error"
WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
PASSWORD_DIGEST = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
PASSWORD_TEXT = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
WSA = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
WSD = "http://schemas.xmlsoap.org/ws/2005/04/discovery"
DN = "http://www.onvif.org/ver10/network/wsdl"

SPACE = "http://www.onvif.org/ver10/tptz/"
PT_POSITION = SPACE + "PanTiltSpaces/PositionGenericSpace"
PT_TRANSLATION = SPACE + "PanTiltSpaces/TranslationGenericSpace"
PT_FOV = SPACE + "PanTiltSpaces/TranslationSpaceFov"
PT_VELOCITY = SPACE + "PanTiltSpaces/VelocityGenericSpace"
PT_SPEED = SPACE + "PanTiltSpaces/GenericSpeedSpace"
Z_POSITION = SPACE + "ZoomSpaces/PositionGenericSpace"
Z_TRANSLATION = SPACE + "ZoomSpaces/TranslationGenericSpace"
Z_VELOCITY = SPACE + "ZoomSpaces/VelocityGenericSpace"
Z_SPEED = SPACE + "ZoomSpaces/ZoomGenericSpeedSpace"

PROFILE, PROFILE_NO_PTZ = "Profile_1", "Profile_2"
PTZ_CONFIG, NODE = "PTZConfig_1", "PTZNode_1"
EPS = 1e-6


class Fault(Exception):
    """A SOAP 1.2 fault: code env:Sender / env:Receiver, ter: subcodes, a reason."""

    def __init__(self, code, subcodes, reason, status=None):
        super().__init__(reason)
        self.code, self.subcodes, self.reason = code, list(subcodes), reason
        self.status = status or (400 if code == "Sender" else 500)

    def xml(self):
        sub = ""
        for s in reversed(self.subcodes):
            sub = f"<env:Subcode><env:Value>ter:{s}</env:Value>{sub}</env:Subcode>"
        return (f'<env:Fault><env:Code><env:Value>env:{self.code}</env:Value>{sub}</env:Code>'
                f'<env:Reason><env:Text xml:lang="en">{escape(self.reason)}</env:Text></env:Reason></env:Fault>')


def envelope(body, header=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope xmlns:env="{SOAP}" xmlns:tds="{TDS}" '
            f'xmlns:trt="{TRT}" xmlns:tptz="{TPTZ}" xmlns:tt="{TT}" xmlns:ter="{TER}">'
            f'<env:Header>{header}</env:Header><env:Body>{body}</env:Body></env:Envelope>').encode()


def parse_duration(text):
    """xs:duration (PnDTnHnMnS, no years or months) → seconds; ValueError when it is not one."""
    m = re.fullmatch(r"\s*(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d*)?)S)?)?\s*", text or "")
    if not m or text.strip() in ("P", "PT") or text.strip().endswith("T"):
        raise ValueError(text)
    sign, d, h, mi, s = m.groups()
    total = int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)
    return -total if sign else total


def whole_seconds(text):
    m = re.search(r"(\d+(?:\.\d*)?)S", text or "")
    return not m or float(m.group(1)) == int(float(m.group(1)))


def duration(seconds):
    return f"PT{seconds:g}S"


def local(tag):
    return tag.rsplit("}", 1)[-1]


def child(el, name, ns=None):
    if el is None:
        return None
    for c in el:
        if local(c.tag) == name and (ns is None or c.tag == f"{{{ns}}}{name}"):
            return c
    return None


def text_of(el, name):
    c = child(el, name)
    return None if c is None or c.text is None else c.text.strip()


def number(value, what):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise Fault("Sender", ["InvalidArgVal", what], f"{what}: {value!r} is not a number") from None
    if not math.isfinite(v):
        raise Fault("Sender", ["InvalidArgVal", what], f"{what}: {value!r} is not finite")
    return v


class Axis:
    """One axis of the head, in degrees (zoom: in its generic units). `lo`..`hi` is the generic
    space's -1..1 (zoom 0..1) mapped to degrees; `low`..`high` where the head stops, narrower where
    the camera advertises a narrower range (`travel`, generic)."""

    def __init__(self, lo, hi, speed, generic=(-1.0, 1.0), travel=None):
        self.lo, self.hi, self.speed, self.generic = float(lo), float(hi), float(speed), generic
        ends = sorted(self.to_units(g) for g in (travel or generic))
        self.low, self.high = max(min(self.lo, self.hi), ends[0]), min(max(self.lo, self.hi), ends[1])
        self.pos = min(self.high, max(self.low, self.to_units(0.0) if generic[0] < 0 else self.lo))
        self.vel = 0.0  # units/s while a velocity move runs
        self.target = None  # (units, units/s)

    def to_units(self, g):
        g0, g1 = self.generic
        return self.lo + (g - g0) / (g1 - g0) * (self.hi - self.lo)

    def to_generic(self, units):
        g0, g1 = self.generic
        return g0 + (units - self.lo) / (self.hi - self.lo) * (g1 - g0)

    @property
    def moving(self):
        if self.target is not None:
            return True
        if self.vel > 0:
            return self.pos < self.high - EPS
        if self.vel < 0:
            return self.pos > self.low + EPS
        return False

    def advance(self, dt):
        if dt <= 0:
            return
        if self.target is not None:
            goal, rate = self.target
            d = goal - self.pos
            step = min(abs(d), rate * dt)
            self.pos += step if d > 0 else -step
            if abs(goal - self.pos) < 1e-9:
                self.pos, self.target = goal, None
        else:
            self.pos += self.vel * dt
        self.pos = min(self.high, max(self.low, self.pos))

    def stop(self):
        self.vel, self.target = 0.0, None


class Camera:
    """The device's logic, apart from HTTP: `handle(action_ns, action, body_element)` → reply body XML,
    or raises Fault. Thread-safe (one lock)."""

    def __init__(self, motion=("continuous", "absolute", "relative"), fov_translation=False, zoom=True,
                 presets=16, lists_every_slot=False, home_supported=True, pan_range=(-1.0, 1.0), tilt_range=(-1.0, 1.0),
                 pan_degrees=(-170.0, 170.0), tilt_degrees=(-30.0, 90.0),
                 pan_speed=100.0, tilt_speed=60.0, zoom_speed=0.5, hfov=60.0, vfov=34.0, zoom_ratio=10.0,
                 velocity_sign=(1, 1), default_timeout=180.0, max_timeout=None, whole_second_timeouts=False,
                 fraction_kills_for=0.0, move_status_unknown=False, position_static=False, no_position=False, status_fault=False,
                 position_late=0, latency=0.0, auth="none", username="admin", password="admin", clock_skew=0.0, created_window=5.0,
                 password_text=False, huge_bytes=32 << 20, name="dockd-emulator", manufacturer="dockd tests",
                 model="Emulated PTZ", serial="EMU-0001", requests_per_connection=0, speed_space=True, verbose=False):
        self.motion = set(motion)
        unknown = self.motion - {"continuous", "absolute", "relative"}
        if unknown:
            raise ValueError(f"unknown motion models {unknown}")
        self.fov_translation = fov_translation and "relative" in self.motion
        self.has_zoom = zoom
        self.speed_space = speed_space  # False: no PanTiltSpeedSpace listed, a move's Speed ignored
        self.max_presets = presets
        self.lists_every_slot = lists_every_slot
        self.home_supported = home_supported
        for what, (lo, hi) in (("pan_range", pan_range), ("tilt_range", tilt_range)):
            if not -1 <= lo < hi <= 1:
                raise ValueError(f"{what} {lo}..{hi}: within -1..1, its minimum below its maximum")
        self.position_range = (tuple(map(float, pan_range)), tuple(map(float, tilt_range)))
        self.pan = Axis(*pan_degrees, pan_speed, travel=pan_range)
        self.tilt = Axis(*tilt_degrees, tilt_speed, travel=tilt_range)
        self.zoom = Axis(0.0, 1.0, zoom_speed, generic=(0.0, 1.0))
        self.hfov, self.vfov, self.zoom_ratio = hfov, vfov, zoom_ratio
        self.velocity_sign = tuple(velocity_sign)
        self.default_timeout = default_timeout
        self.max_timeout = max_timeout if max_timeout is not None else max(default_timeout, 3600.0)
        self.whole_second_timeouts = whole_second_timeouts
        self.fraction_kills_for = fraction_kills_for
        self.move_status_unknown = move_status_unknown
        self.position_static = position_static
        self.no_position = no_position
        self.status_fault = status_fault
        self.position_late = position_late
        self.statuses_since_clock = 0  # GetStatus requests since the last GetSystemDateAndTime
        self.requests_per_connection = requests_per_connection
        self.latency = latency
        if auth not in ("none", "wsse", "digest", "any"):
            raise ValueError(f"auth {auth!r}")
        self.auth, self.username, self.password = auth, username, password
        self.clock_skew, self.created_window, self.password_text = clock_skew, created_window, password_text
        self.huge_bytes = huge_bytes
        self.name, self.manufacturer, self.model, self.serial = name, manufacturer, model, serial
        self.verbose = verbose
        self.uuid = uuid.uuid4()
        self.lock = threading.RLock()
        self.deadline = None  # when the running velocity move ends (its Timeout)
        self.last_step = time.monotonic()
        self.reported = None  # position_static: the pose GetStatus reports while moving
        self.home = (0.0, 0.0, 0.0)  # generic pan, tilt, zoom
        self.presets = {}  # token -> (name, (pan, tilt, zoom) generic)
        self.next_preset = 1
        self.inject = []  # faults for the next requests: "http500", "http401", "close", "truncated", "malformed", "huge"
        self.log = []  # (time, client, action, auth, status)
        self.moves = []  # (time, action, details) for every move accepted
        self.seen_nonces = {}  # wsse nonce -> when it was used
        self.counts = {"requests": 0, "faults": 0, "refused_auth": 0}
        self.in_flight = {}  # the connection of each request received and not yet answered
        self.max_in_flight = 0  # the most at once whose client still waits for them (a client should keep it at one)
        self.hold = set()  # actions whose replies wait for release_held() or the client's giving up
        self.released = threading.Event()
        self.held = []  # (time, action) of each reply held
        self.given_up = []  # (time, action) of each held reply its client gave up (closed its connection)
        self.xaddr_base = "http://127.0.0.1:80"

    def release_held(self):
        """Sends the replies held, and every later one."""
        with self.lock:
            self.hold = set()
        self.released.set()

    # -- time
    def camera_now(self):
        """The camera's clock: UTC plus its skew."""
        return datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=self.clock_skew)

    # -- motion
    def step(self, now=None):
        """Brings the head up to `now` (monotonic) with the motion in force since the last step; a
        velocity move ends at its deadline (its Timeout)."""
        with self.lock:
            now = time.monotonic() if now is None else now
            if self.deadline is not None and self.deadline <= now:
                dt = self.deadline - self.last_step
                for a in (self.pan, self.tilt, self.zoom):
                    a.advance(dt)
                    a.vel = 0.0
                self.last_step = max(self.last_step, self.deadline)
                self.deadline = None
            for a in (self.pan, self.tilt, self.zoom):
                a.advance(now - self.last_step)
            self.last_step = max(self.last_step, now)
            if self.reported is not None and not self.moving():
                self.reported = None

    def moving(self):
        """Whether the head moves (as of the last step)."""
        return self.pan.moving or self.tilt.moving or self.zoom.moving

    def still(self):
        """Whether the head is still now."""
        with self.lock:
            self.step()
            return not self.moving()

    def pose(self):
        """(pan°, tilt°, zoom) now."""
        self.step()
        return self.pan.pos, self.tilt.pos, self.zoom.pos

    def generic(self):
        self.step()
        return self.pan.to_generic(self.pan.pos), self.tilt.to_generic(self.tilt.pos), self.zoom.pos

    def set_generic(self, pan, tilt, zoom=None):
        with self.lock:
            self.step()
            self.stop_all()
            self.pan.pos, self.tilt.pos = self.pan.to_units(pan), self.tilt.to_units(tilt)
            if zoom is not None:
                self.zoom.pos = zoom

    def stop_all(self):
        for a in (self.pan, self.tilt, self.zoom):
            a.stop()
        self.deadline = None

    def begin_move(self):
        """A new move replaces the motion in force (the pose up to now is kept)."""
        self.step()
        if self.position_static and self.reported is None:
            self.reported = self.generic()
        self.stop_all()

    # -- requests
    def handle(self, ns, action, body):
        with self.lock:
            self.step()
            handler = self.handlers().get((ns, action))
            if handler is None:
                raise Fault("Receiver", ["ActionNotSupported"], f"{action} is not supported by this device")
            return handler(body)

    def handlers(self):
        h = {}
        for name in ("GetSystemDateAndTime", "GetCapabilities", "GetServices", "GetDeviceInformation",
                     "GetServiceCapabilities"):
            h[(TDS, name)] = getattr(self, "device_" + name)
        for name in ("GetProfiles", "GetProfile", "GetStreamUri"):
            h[(TRT, name)] = getattr(self, "media_" + name)
        for name in ("GetNodes", "GetNode", "GetConfigurations", "GetConfiguration", "GetConfigurationOptions",
                     "GetServiceCapabilities", "ContinuousMove", "AbsoluteMove", "RelativeMove", "Stop",
                     "GetStatus", "GetPresets", "GotoPreset", "SetPreset", "RemovePreset", "GotoHomePosition",
                     "SetHomePosition"):
            h[(TPTZ, name)] = getattr(self, "ptz_" + name)
        return h

    # -- device service
    def device_GetSystemDateAndTime(self, body):
        now = self.camera_now()
        self.statuses_since_clock = 0

        def dt(t):
            return (f"<tt:Time><tt:Hour>{t.hour}</tt:Hour><tt:Minute>{t.minute}</tt:Minute><tt:Second>{t.second}</tt:Second></tt:Time>"
                    f"<tt:Date><tt:Year>{t.year}</tt:Year><tt:Month>{t.month}</tt:Month><tt:Day>{t.day}</tt:Day></tt:Date>")
        return (f"<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>Manual</tt:DateTimeType>"
                f"<tt:DaylightSavings>false</tt:DaylightSavings><tt:TimeZone><tt:TZ>UTC0</tt:TZ></tt:TimeZone>"
                f"<tt:UTCDateTime>{dt(now)}</tt:UTCDateTime><tt:LocalDateTime>{dt(now)}</tt:LocalDateTime>"
                f"</tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>")

    def device_GetCapabilities(self, body):
        categories = [c.text.strip() for c in body if local(c.tag) == "Category" and c.text] or ["All"]
        known = {"All", "Device", "Media", "PTZ", "Analytics", "Events", "Imaging"}
        for c in categories:
            if c not in known:
                raise Fault("Sender", ["InvalidArgVal", "NoSuchService"], f"unknown category {c}")
        want = lambda c: "All" in categories or c in categories  # noqa: E731
        if not any(want(c) for c in ("Device", "Media", "PTZ")):
            raise Fault("Receiver", ["ActionNotSupported", "NoSuchService"], f"no {categories} service")
        parts = []
        if want("Device"):
            parts.append(f"<tt:Device><tt:XAddr>{self.xaddr('device')}</tt:XAddr>"
                         "<tt:Network><tt:IPFilter>false</tt:IPFilter><tt:ZeroConfiguration>false</tt:ZeroConfiguration>"
                         "<tt:IPVersion6>false</tt:IPVersion6><tt:DynDNS>false</tt:DynDNS></tt:Network>"
                         "<tt:System><tt:DiscoveryResolve>false</tt:DiscoveryResolve><tt:DiscoveryBye>false</tt:DiscoveryBye>"
                         "<tt:RemoteDiscovery>false</tt:RemoteDiscovery><tt:SystemBackup>false</tt:SystemBackup>"
                         "<tt:SystemLogging>false</tt:SystemLogging><tt:FirmwareUpgrade>false</tt:FirmwareUpgrade>"
                         "<tt:SupportedVersions><tt:Major>2</tt:Major><tt:Minor>60</tt:Minor></tt:SupportedVersions></tt:System>"
                         "<tt:Security><tt:TLS1.1>false</tt:TLS1.1><tt:TLS1.2>false</tt:TLS1.2>"
                         "<tt:OnboardKeyGeneration>false</tt:OnboardKeyGeneration><tt:AccessPolicyConfig>false</tt:AccessPolicyConfig>"
                         "<tt:X.509Token>false</tt:X.509Token><tt:SAMLToken>false</tt:SAMLToken>"
                         "<tt:KerberosToken>false</tt:KerberosToken><tt:RELToken>false</tt:RELToken></tt:Security></tt:Device>")
        if want("Media"):
            parts.append(f"<tt:Media><tt:XAddr>{self.xaddr('media')}</tt:XAddr><tt:StreamingCapabilities>"
                         "<tt:RTPMulticast>false</tt:RTPMulticast><tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true</tt:RTP_RTSP_TCP>"
                         "</tt:StreamingCapabilities></tt:Media>")
        if want("PTZ"):
            parts.append(f"<tt:PTZ><tt:XAddr>{self.xaddr('ptz')}</tt:XAddr></tt:PTZ>")
        return f"<tds:GetCapabilitiesResponse><tds:Capabilities>{''.join(parts)}</tds:Capabilities></tds:GetCapabilitiesResponse>"

    def device_GetServices(self, body):
        services = [(TDS, "device", 2, 60), (TRT, "media", 2, 60), (TPTZ, "ptz", 2, 60)]
        return "<tds:GetServicesResponse>" + "".join(
            f"<tds:Service><tds:Namespace>{ns}</tds:Namespace><tds:XAddr>{self.xaddr(kind)}</tds:XAddr>"
            f"<tds:Version><tt:Major>{ma}</tt:Major><tt:Minor>{mi}</tt:Minor></tds:Version></tds:Service>"
            for ns, kind, ma, mi in services) + "</tds:GetServicesResponse>"

    def device_GetServiceCapabilities(self, body):
        return ("<tds:GetServiceCapabilitiesResponse><tds:Capabilities><tds:Network/>"
                f'<tds:Security UsernameToken="true" HttpDigest="{str(self.auth in ("digest", "any")).lower()}"/>'
                "<tds:System/></tds:Capabilities></tds:GetServiceCapabilitiesResponse>")

    def device_GetDeviceInformation(self, body):
        return (f"<tds:GetDeviceInformationResponse><tds:Manufacturer>{escape(self.manufacturer)}</tds:Manufacturer>"
                f"<tds:Model>{escape(self.model)}</tds:Model><tds:FirmwareVersion>1.0.0</tds:FirmwareVersion>"
                f"<tds:SerialNumber>{escape(self.serial)}</tds:SerialNumber><tds:HardwareId>EMU-PTZ</tds:HardwareId>"
                "</tds:GetDeviceInformationResponse>")

    def xaddr(self, kind):
        return f"{self.xaddr_base}/onvif/{kind}_service"

    # -- media service
    def profile_xml(self, token, tag="trt:Profiles"):
        main = token == PROFILE
        width, height = (1920, 1080) if main else (640, 360)
        ptz = f'<tt:PTZConfiguration token="{PTZ_CONFIG}">{self.configuration_body()}</tt:PTZConfiguration>' if main else ""
        return (f'<{tag} token="{token}" fixed="true"><tt:Name>{"MainStream" if main else "SubStream"}</tt:Name>'
                '<tt:VideoSourceConfiguration token="VideoSourceConfig_1"><tt:Name>VideoSource</tt:Name><tt:UseCount>2</tt:UseCount>'
                '<tt:SourceToken>VideoSource_1</tt:SourceToken><tt:Bounds x="0" y="0" width="1920" height="1080"/></tt:VideoSourceConfiguration>'
                f'<tt:VideoEncoderConfiguration token="VideoEncoder_{token[-1]}"><tt:Name>Encoder</tt:Name><tt:UseCount>1</tt:UseCount>'
                f'<tt:Encoding>H264</tt:Encoding><tt:Resolution><tt:Width>{width}</tt:Width><tt:Height>{height}</tt:Height></tt:Resolution>'
                '<tt:Quality>5</tt:Quality><tt:RateControl><tt:FrameRateLimit>25</tt:FrameRateLimit><tt:EncodingInterval>1</tt:EncodingInterval>'
                '<tt:BitrateLimit>4096</tt:BitrateLimit></tt:RateControl><tt:H264><tt:GovLength>50</tt:GovLength><tt:H264Profile>Main</tt:H264Profile></tt:H264>'
                '<tt:Multicast><tt:Address><tt:Type>IPv4</tt:Type><tt:IPv4Address>0.0.0.0</tt:IPv4Address></tt:Address><tt:Port>0</tt:Port>'
                '<tt:TTL>1</tt:TTL><tt:AutoStart>false</tt:AutoStart></tt:Multicast><tt:SessionTimeout>PT60S</tt:SessionTimeout>'
                f'</tt:VideoEncoderConfiguration>{ptz}</{tag}>')

    def media_GetProfiles(self, body):
        return ("<trt:GetProfilesResponse>" + self.profile_xml(PROFILE) + self.profile_xml(PROFILE_NO_PTZ)
                + "</trt:GetProfilesResponse>")

    def media_GetProfile(self, body):
        token = text_of(body, "ProfileToken")
        if token not in (PROFILE, PROFILE_NO_PTZ):
            raise Fault("Sender", ["InvalidArgVal", "NoProfile"], f"no profile {token!r}")
        return f"<trt:GetProfileResponse>{self.profile_xml(token, 'trt:Profile')}</trt:GetProfileResponse>"

    def media_GetStreamUri(self, body):
        token = text_of(body, "ProfileToken")
        if token not in (PROFILE, PROFILE_NO_PTZ):
            raise Fault("Sender", ["InvalidArgVal", "NoProfile"], f"no profile {token!r}")
        host = self.xaddr_base.split("//", 1)[1].rsplit(":", 1)[0]
        return (f"<trt:GetStreamUriResponse><trt:MediaUri><tt:Uri>rtsp://{host}:554/{token}</tt:Uri>"
                "<tt:InvalidAfterConnect>false</tt:InvalidAfterConnect><tt:InvalidAfterReboot>false</tt:InvalidAfterReboot>"
                "<tt:Timeout>PT0S</tt:Timeout></trt:MediaUri></trt:GetStreamUriResponse>")

    # -- PTZ: node, configuration
    def spaces_xml(self):
        def s2(tag, uri, x=(-1, 1), y=(-1, 1)):
            return (f"<tt:{tag}><tt:URI>{uri}</tt:URI><tt:XRange><tt:Min>{x[0]}</tt:Min><tt:Max>{x[1]}</tt:Max></tt:XRange>"
                    f"<tt:YRange><tt:Min>{y[0]}</tt:Min><tt:Max>{y[1]}</tt:Max></tt:YRange></tt:{tag}>")

        def s1(tag, uri, x=(0, 1)):
            return f"<tt:{tag}><tt:URI>{uri}</tt:URI><tt:XRange><tt:Min>{x[0]}</tt:Min><tt:Max>{x[1]}</tt:Max></tt:XRange></tt:{tag}>"
        z = self.has_zoom
        out = []
        if "absolute" in self.motion:
            out.append(s2("AbsolutePanTiltPositionSpace", PT_POSITION, *self.position_range))
            if z:
                out.append(s1("AbsoluteZoomPositionSpace", Z_POSITION))
        if "relative" in self.motion:
            out.append(s2("RelativePanTiltTranslationSpace", PT_TRANSLATION))
            if self.fov_translation:
                out.append(s2("RelativePanTiltTranslationSpace", PT_FOV))
            if z:
                out.append(s1("RelativeZoomTranslationSpace", Z_TRANSLATION, (-1, 1)))
        if "continuous" in self.motion:
            out.append(s2("ContinuousPanTiltVelocitySpace", PT_VELOCITY))
            if z:
                out.append(s1("ContinuousZoomVelocitySpace", Z_VELOCITY, (-1, 1)))
        if self.speed_space:
            out.append(s1("PanTiltSpeedSpace", PT_SPEED))
        if z:
            out.append(s1("ZoomSpeedSpace", Z_SPEED))
        return "".join(out)

    def node_xml(self, tag="tptz:PTZNode"):
        return (f'<{tag} token="{NODE}" FixedHomePosition="false"><tt:Name>PTZ</tt:Name>'
                f"<tt:SupportedPTZSpaces>{self.spaces_xml()}</tt:SupportedPTZSpaces>"
                f"<tt:MaximumNumberOfPresets>{self.max_presets}</tt:MaximumNumberOfPresets>"
                f"<tt:HomeSupported>{str(self.home_supported).lower()}</tt:HomeSupported></{tag}>")

    def configuration_body(self):
        z = self.has_zoom
        parts = ["<tt:Name>PTZ</tt:Name><tt:UseCount>1</tt:UseCount>", f"<tt:NodeToken>{NODE}</tt:NodeToken>"]
        if "absolute" in self.motion:
            parts.append(f"<tt:DefaultAbsolutePantTiltPositionSpace>{PT_POSITION}</tt:DefaultAbsolutePantTiltPositionSpace>")
            if z:
                parts.append(f"<tt:DefaultAbsoluteZoomPositionSpace>{Z_POSITION}</tt:DefaultAbsoluteZoomPositionSpace>")
        if "relative" in self.motion:
            parts.append(f"<tt:DefaultRelativePanTiltTranslationSpace>{PT_TRANSLATION}</tt:DefaultRelativePanTiltTranslationSpace>")
            if z:
                parts.append(f"<tt:DefaultRelativeZoomTranslationSpace>{Z_TRANSLATION}</tt:DefaultRelativeZoomTranslationSpace>")
        if "continuous" in self.motion:
            parts.append(f"<tt:DefaultContinuousPanTiltVelocitySpace>{PT_VELOCITY}</tt:DefaultContinuousPanTiltVelocitySpace>")
            if z:
                parts.append(f"<tt:DefaultContinuousZoomVelocitySpace>{Z_VELOCITY}</tt:DefaultContinuousZoomVelocitySpace>")
        parts.append(f'<tt:DefaultPTZSpeed><tt:PanTilt x="1" y="1" space="{PT_SPEED}"/>'
                     + (f'<tt:Zoom x="1" space="{Z_SPEED}"/>' if z else "") + "</tt:DefaultPTZSpeed>")
        if "continuous" in self.motion:
            parts.append(f"<tt:DefaultPTZTimeout>{duration(self.default_timeout)}</tt:DefaultPTZTimeout>")
        (x0, x1), (y0, y1) = self.position_range
        parts.append(f"<tt:PanTiltLimits><tt:Range><tt:URI>{PT_POSITION}</tt:URI><tt:XRange><tt:Min>{x0}</tt:Min><tt:Max>{x1}</tt:Max></tt:XRange>"
                     f"<tt:YRange><tt:Min>{y0}</tt:Min><tt:Max>{y1}</tt:Max></tt:YRange></tt:Range></tt:PanTiltLimits>")
        if z:
            parts.append(f"<tt:ZoomLimits><tt:Range><tt:URI>{Z_POSITION}</tt:URI><tt:XRange><tt:Min>0</tt:Min><tt:Max>1</tt:Max></tt:XRange>"
                         "</tt:Range></tt:ZoomLimits>")
        return "".join(parts)

    def ptz_GetNodes(self, body):
        return f"<tptz:GetNodesResponse>{self.node_xml()}</tptz:GetNodesResponse>"

    def ptz_GetNode(self, body):
        if text_of(body, "NodeToken") != NODE:
            raise Fault("Sender", ["InvalidArgVal", "NoEntity"], f"no node {text_of(body, 'NodeToken')!r}")
        return f"<tptz:GetNodeResponse>{self.node_xml('tptz:PTZNode')}</tptz:GetNodeResponse>"

    def ptz_GetConfigurations(self, body):
        return (f'<tptz:GetConfigurationsResponse><tptz:PTZConfiguration token="{PTZ_CONFIG}">{self.configuration_body()}'
                "</tptz:PTZConfiguration></tptz:GetConfigurationsResponse>")

    def ptz_GetConfiguration(self, body):
        if text_of(body, "PTZConfigurationToken") != PTZ_CONFIG:
            raise Fault("Sender", ["InvalidArgVal", "NoConfig"], "no such configuration")
        return (f'<tptz:GetConfigurationResponse><tptz:PTZConfiguration token="{PTZ_CONFIG}">{self.configuration_body()}'
                "</tptz:PTZConfiguration></tptz:GetConfigurationResponse>")

    def ptz_GetConfigurationOptions(self, body):
        if text_of(body, "ConfigurationToken") != PTZ_CONFIG:
            raise Fault("Sender", ["InvalidArgVal", "NoConfig"], "no such configuration")
        timeout = ""
        if "continuous" in self.motion:
            timeout = f"<tt:PTZTimeout><tt:Min>PT1S</tt:Min><tt:Max>{duration(self.max_timeout)}</tt:Max></tt:PTZTimeout>"
        return (f"<tptz:GetConfigurationOptionsResponse><tptz:PTZConfigurationOptions><tt:Spaces>{self.spaces_xml()}</tt:Spaces>"
                f"{timeout}</tptz:PTZConfigurationOptions></tptz:GetConfigurationOptionsResponse>")

    def ptz_GetServiceCapabilities(self, body):
        return ('<tptz:GetServiceCapabilitiesResponse><tptz:Capabilities EFlip="false" Reverse="false" '
                f'GetCompatibleConfigurations="false" MoveStatus="{str(not self.move_status_unknown).lower()}" '
                f'StatusPosition="{str(not (self.no_position or self.status_fault)).lower()}"/></tptz:GetServiceCapabilitiesResponse>')

    # -- PTZ: moves
    def profile(self, body):
        token = text_of(body, "ProfileToken")
        if token == PROFILE_NO_PTZ:
            raise Fault("Sender", ["InvalidArgVal", "NoPTZProfile"], f"profile {token} has no PTZ configuration")
        if token != PROFILE:
            raise Fault("Sender", ["InvalidArgVal", "NoProfile"], f"no profile {token!r}")
        return token

    def offered(self, model, action):
        if model not in self.motion:
            raise Fault("Receiver", ["ActionNotSupported"], f"{action}: this camera has no {model} moves")

    @staticmethod
    def vector(el, name, spaces, what, rng, axes=("x", "y")):
        """A PanTilt (x, y) or Zoom (x) element: its values (ranges checked) and its space."""
        c = child(el, name)
        if c is None:
            return None, None
        space = c.get("space")
        if space is not None and space not in spaces:
            raise Fault("Sender", ["InvalidArgVal", "SpaceNotSupported"], f"{what}: space {space} not supported")
        values = []
        for a in axes:
            if c.get(a) is None:
                raise Fault("Sender", ["InvalidArgVal", what], f"{what}: no {a}")
            v = number(c.get(a), what)
            lo, hi = rng(space or spaces[0])
            if v < lo - EPS or v > hi + EPS:
                raise Fault("Sender", ["InvalidArgVal", what], f"{what}: {a}={v} outside {lo}..{hi}")
            values.append(v)
        return values, space or spaces[0]

    def speeds(self, body):
        """The Speed element's pan/tilt and zoom fractions of full speed (DefaultPTZSpeed: 1, 1)."""
        sp = child(body, "Speed")
        pt, _ = self.vector(sp, "PanTilt", [PT_SPEED], "InvalidSpeed", lambda s: (0, 1))
        z, _ = self.vector(sp, "Zoom", [Z_SPEED], "InvalidSpeed", lambda s: (0, 1), axes=("x",))
        # GenericSpeedSpace is one number for the combined pan/tilt move, in x (ONVIF PTZ Service
        # Specification 5.7.4); each axis turns at that fraction of its own top speed.
        pt = [pt[0], pt[0]] if pt and self.speed_space else [1.0, 1.0]
        z = z or [1.0]
        return pt[0], pt[1], z[0]

    def go_to(self, pan, tilt, zoom, speeds):
        """Targets in degrees / zoom units, each axis at its fraction of full speed; the axes
        arrive together as on most heads (each at most at its own full speed)."""
        sp, st, sz = speeds
        targets = []
        for axis, goal, frac in ((self.pan, pan, sp), (self.tilt, tilt, st), (self.zoom, zoom, sz)):
            if goal is None:
                continue
            goal = min(axis.high, max(axis.low, goal))
            if frac <= 0:
                frac = 1.0  # a speed of 0 means the default (full) speed here
            targets.append((axis, goal, axis.speed * frac))
        if not targets:
            return
        # pan and tilt arrive together: the slower one sets the time
        pt = [t for t in targets if t[0] is not self.zoom]
        if len(pt) == 2:
            times = [abs(g - a.pos) / r for a, g, r in pt if r > 0]
            span = max(times) if times else 0.0
            for i, (a, g, r) in enumerate(targets):
                if a is not self.zoom and span > 0:
                    targets[i] = (a, g, max(abs(g - a.pos) / span, 1e-9))
        for a, g, r in targets:
            a.target = (g, r)

    def ptz_ContinuousMove(self, body):
        self.profile(body)
        self.offered("continuous", "ContinuousMove")
        vel = child(body, "Velocity")
        if vel is None:
            raise Fault("Sender", ["InvalidArgVal", "InvalidVelocity"], "no Velocity")
        pt, _ = self.vector(vel, "PanTilt", [PT_VELOCITY], "InvalidVelocity", lambda s: (-1, 1))
        z = None
        if self.has_zoom:
            z, _ = self.vector(vel, "Zoom", [Z_VELOCITY], "InvalidVelocity", lambda s: (-1, 1), axes=("x",))
        timeout_text = text_of(body, "Timeout")
        if timeout_text is not None:
            try:
                timeout = parse_duration(timeout_text)
            except ValueError:
                raise Fault("Sender", ["InvalidArgVal", "InvalidTimeout"], f"Timeout {timeout_text!r}") from None
            if timeout <= 0:
                raise Fault("Sender", ["InvalidArgVal", "InvalidTimeout"], f"Timeout {timeout_text!r}")
            timeout = min(timeout, self.max_timeout)
        else:
            timeout = self.default_timeout
        self.begin_move()
        if pt is not None:
            self.pan.vel = self.velocity_sign[0] * pt[0] * self.pan.speed
            self.tilt.vel = self.velocity_sign[1] * pt[1] * self.tilt.speed
        if z is not None:
            self.zoom.vel = z[0] * self.zoom.speed
        self.deadline = time.monotonic() + timeout
        self.moves.append((time.monotonic(), "ContinuousMove", {"pantilt": pt, "zoom": z, "timeout": timeout}))
        return "<tptz:ContinuousMoveResponse/>"

    def ptz_AbsoluteMove(self, body):
        self.profile(body)
        self.offered("absolute", "AbsoluteMove")
        pos = child(body, "Position")
        if pos is None:
            raise Fault("Sender", ["InvalidArgVal", "InvalidPosition"], "no Position")
        pt, _ = self.vector(pos, "PanTilt", [PT_POSITION], "InvalidPosition", lambda s: (-1, 1))
        for (lo, hi), v, a in zip(self.position_range, pt or (), "xy"):
            if not lo - EPS <= v <= hi + EPS:
                raise Fault("Sender", ["InvalidArgVal", "InvalidPosition"], f"InvalidPosition: {a}={v} outside {lo}..{hi}")
        z = None
        if self.has_zoom:
            z, _ = self.vector(pos, "Zoom", [Z_POSITION], "InvalidPosition", lambda s: (0, 1), axes=("x",))
        speeds = self.speeds(body)
        self.begin_move()
        self.go_to(self.pan.to_units(pt[0]) if pt else None, self.tilt.to_units(pt[1]) if pt else None,
                   z[0] if z else None, speeds)
        self.moves.append((time.monotonic(), "AbsoluteMove", {"pantilt": pt, "zoom": z}))
        return "<tptz:AbsoluteMoveResponse/>"

    def fov(self):
        """The field of view (h°, v°) at the zoom now: wide at 0, `zoom_ratio` times narrower at 1."""
        k = self.zoom_ratio ** self.zoom.pos if self.has_zoom else 1.0
        return self.hfov / k, self.vfov / k

    def ptz_RelativeMove(self, body):
        self.profile(body)
        self.offered("relative", "RelativeMove")
        tr = child(body, "Translation")
        if tr is None:
            raise Fault("Sender", ["InvalidArgVal", "InvalidTranslation"], "no Translation")
        spaces = [PT_TRANSLATION] + ([PT_FOV] if self.fov_translation else [])
        pt, space = self.vector(tr, "PanTilt", spaces, "InvalidTranslation", lambda s: (-1, 1))
        z = None
        if self.has_zoom:
            z, _ = self.vector(tr, "Zoom", [Z_TRANSLATION], "InvalidTranslation", lambda s: (-1, 1), axes=("x",))
        speeds = self.speeds(body)
        self.begin_move()
        # from where the head is aiming now (or where a move in progress was going: cancelled above,
        # so from the pose reached)
        pan = tilt = None
        if pt is not None:
            if space == PT_FOV:
                h, v = self.fov()
                pan, tilt = self.pan.pos + pt[0] * h / 2, self.tilt.pos + pt[1] * v / 2
            else:
                pan = self.pan.to_units(self.pan.to_generic(self.pan.pos) + pt[0])
                tilt = self.tilt.to_units(self.tilt.to_generic(self.tilt.pos) + pt[1])
        self.go_to(pan, tilt, (self.zoom.pos + z[0]) if z else None, speeds)
        self.moves.append((time.monotonic(), "RelativeMove", {"pantilt": pt, "space": space, "zoom": z}))
        return "<tptz:RelativeMoveResponse/>"

    def ptz_Stop(self, body):
        self.profile(body)
        flag = lambda n: (text_of(body, n) or "true").lower() in ("true", "1")  # noqa: E731
        stop_pt, stop_z = flag("PanTilt"), flag("Zoom")
        if stop_pt:
            self.pan.stop()
            self.tilt.stop()
        if stop_z:
            self.zoom.stop()
        if not self.moving():
            self.deadline = None
        self.moves.append((time.monotonic(), "Stop", {"pantilt": stop_pt, "zoom": stop_z}))
        return "<tptz:StopResponse/>"

    def ptz_GetStatus(self, body):
        self.profile(body)
        if self.status_fault:
            raise Fault("Receiver", ["Action", "NoStatus"], "No PTZ status is available in the requested Media Profile")
        self.step()
        pan, tilt, zoom = self.reported if self.reported is not None else self.generic()
        self.statuses_since_clock += 1

        def status(moving):
            return "UNKNOWN" if self.move_status_unknown else ("MOVING" if moving else "IDLE")
        z_pos = f'<tt:Zoom x="{zoom:.6f}" space="{Z_POSITION}"/>' if self.has_zoom else ""
        z_st = f"<tt:Zoom>{status(self.zoom.moving)}</tt:Zoom>" if self.has_zoom else ""
        utc = self.camera_now().strftime("%Y-%m-%dT%H:%M:%SZ")
        position = "" if self.no_position or self.statuses_since_clock <= self.position_late else (
            f'<tt:Position><tt:PanTilt x="{pan:.6f}" y="{tilt:.6f}" space="{PT_POSITION}"/>{z_pos}</tt:Position>')
        return (f"<tptz:GetStatusResponse><tptz:PTZStatus>{position}<tt:MoveStatus><tt:PanTilt>{status(self.pan.moving or self.tilt.moving)}</tt:PanTilt>{z_st}"
                f"</tt:MoveStatus><tt:UtcTime>{utc}</tt:UtcTime></tptz:PTZStatus></tptz:GetStatusResponse>")

    # -- presets and home
    def position_xml(self, p):
        z = f'<tt:Zoom x="{p[2]:.6f}" space="{Z_POSITION}"/>' if self.has_zoom else ""
        return f'<tt:PTZPosition><tt:PanTilt x="{p[0]:.6f}" y="{p[1]:.6f}" space="{PT_POSITION}"/>{z}</tt:PTZPosition>'

    def ptz_GetPresets(self, body):
        self.profile(body)
        return "<tptz:GetPresetsResponse>" + "".join(
            f'<tptz:Preset token="{t}"><tt:Name>{escape(n)}</tt:Name>{self.position_xml(p)}</tptz:Preset>'
            for t, (n, p) in self.presets.items()) + "".join(
            f'<tptz:Preset token="Unset{i}"><tt:Name>Preset {i}</tt:Name></tptz:Preset>'
            for i in range(len(self.presets) + 1, self.max_presets + 1) if self.lists_every_slot) + "</tptz:GetPresetsResponse>"

    def ptz_SetPreset(self, body):
        self.profile(body)
        name, token = text_of(body, "PresetName"), text_of(body, "PresetToken")
        if token is not None and token not in self.presets:
            raise Fault("Sender", ["InvalidArgVal", "NoToken"], f"no preset {token!r}")
        if name is not None and any(n == name and t != token for t, (n, _) in self.presets.items()):
            raise Fault("Sender", ["InvalidArgVal", "PresetExist"], f"a preset is already named {name!r}")
        if token is None:
            if len(self.presets) >= self.max_presets:
                raise Fault("Receiver", ["Action", "TooManyPresets"], "no room for another preset")
            token = f"Preset{self.next_preset}"
            self.next_preset += 1
        if name is None:
            name = self.presets.get(token, (token, None))[0]
        self.presets[token] = (name, self.generic())
        return f"<tptz:SetPresetResponse><tptz:PresetToken>{token}</tptz:PresetToken></tptz:SetPresetResponse>"

    def ptz_RemovePreset(self, body):
        self.profile(body)
        token = text_of(body, "PresetToken")
        if token not in self.presets:
            raise Fault("Sender", ["InvalidArgVal", "NoToken"], f"no preset {token!r}")
        del self.presets[token]
        return "<tptz:RemovePresetResponse/>"

    def go_generic(self, p, body):
        speeds = self.speeds(body)
        self.begin_move()
        self.go_to(self.pan.to_units(p[0]), self.tilt.to_units(p[1]), p[2] if self.has_zoom else None, speeds)

    def ptz_GotoPreset(self, body):
        self.profile(body)
        token = text_of(body, "PresetToken")
        if token not in self.presets:
            raise Fault("Sender", ["InvalidArgVal", "NoToken"], f"no preset {token!r}")
        self.go_generic(self.presets[token][1], body)
        self.moves.append((time.monotonic(), "GotoPreset", {"token": token}))
        return "<tptz:GotoPresetResponse/>"

    def ptz_GotoHomePosition(self, body):
        self.profile(body)
        if not self.home_supported:
            raise Fault("Receiver", ["ActionNotSupported", "NoHomePosition"], "no home position")
        self.go_generic(self.home, body)
        self.moves.append((time.monotonic(), "GotoHomePosition", {}))
        return "<tptz:GotoHomePositionResponse/>"

    def ptz_SetHomePosition(self, body):
        self.profile(body)
        if not self.home_supported:
            raise Fault("Receiver", ["ActionNotSupported", "NoHomePosition"], "no home position")
        self.home = self.generic()
        return "<tptz:SetHomePositionResponse/>"

    # -- authentication
    def check_wsse(self, header):
        """None when the UsernameToken is good, else why not."""
        sec = child(header, "Security", WSSE)
        token = child(sec, "UsernameToken", WSSE)
        if token is None:
            return "no UsernameToken"
        user = text_of(token, "Username")
        pw = child(token, "Password", WSSE)
        nonce_el, created_el = child(token, "Nonce", WSSE), child(token, "Created", WSU)
        if user != self.username or pw is None or pw.text is None:
            return "unknown user"
        kind = pw.get("Type", PASSWORD_TEXT)
        if kind == PASSWORD_TEXT:
            if not self.password_text:
                return "PasswordText refused"
            return None if pw.text == self.password else "wrong password"
        if kind != PASSWORD_DIGEST:
            return f"password type {kind}"
        if nonce_el is None or created_el is None or not nonce_el.text or not created_el.text:
            return "digest without Nonce or Created"
        try:
            nonce = base64.b64decode(nonce_el.text.strip(), validate=True)
        except ValueError:
            return "bad nonce"
        created_text = created_el.text.strip()
        expected = base64.b64encode(hashlib.sha1(nonce + created_text.encode() + self.password.encode()).digest()).decode()
        if not secrets.compare_digest(expected, pw.text.strip()):
            return "wrong password digest"
        try:
            created = datetime.datetime.fromisoformat(created_text.replace("Z", "+00:00"))
        except ValueError:
            return f"bad Created {created_text!r}"
        if created.tzinfo is None:
            created = created.replace(tzinfo=datetime.timezone.utc)
        now = self.camera_now()
        off = (created - now).total_seconds()
        if abs(off) > self.created_window:
            return f"Created {created_text} is {off:+.1f} s from the camera's clock"
        t = time.monotonic()
        for n, when in list(self.seen_nonces.items()):
            if t - when > 4 * self.created_window + 60:
                del self.seen_nonces[n]
        if nonce in self.seen_nonces:
            return "nonce replayed"
        self.seen_nonces[nonce] = t
        return None


class Digest:
    """HTTP Digest (RFC 7616 / 2617, MD5, qop=auth) for one realm."""

    def __init__(self, cam, realm="dockd-emulator"):
        self.cam, self.realm = cam, realm
        self.nonces = {}  # nonce -> (issued, last nc)
        self.lock = threading.Lock()

    def challenge(self, stale=False):
        nonce = secrets.token_hex(16)
        with self.lock:
            self.nonces[nonce] = (time.monotonic(), 0)
        return (f'Digest realm="{self.realm}", qop="auth", nonce="{nonce}", opaque="{secrets.token_hex(8)}", '
                f'algorithm=MD5{", stale=true" if stale else ""}')

    def check(self, header, method):
        """(ok, stale)."""
        if not header or not header.startswith("Digest "):
            return False, False
        fields = dict((k, v1 if v1 else v2) for k, v1, v2 in re.findall(r'(\w+)=(?:"([^"]*)"|([^\s,]*))', header[7:]))
        if fields.get("username") != self.cam.username or fields.get("realm") != self.realm:
            return False, False
        nonce, nc, cnonce, qop = fields.get("nonce"), fields.get("nc", ""), fields.get("cnonce", ""), fields.get("qop")
        if fields.get("algorithm", "MD5").upper() != "MD5" or qop != "auth":
            return False, False
        with self.lock:
            entry = self.nonces.get(nonce)
            if entry is None or time.monotonic() - entry[0] > 300:
                return False, entry is not None
            try:
                count = int(nc, 16)
            except ValueError:
                return False, False
            md5 = lambda s: hashlib.md5(s.encode()).hexdigest()  # noqa: E731
            ha1 = md5(f"{self.cam.username}:{self.realm}:{self.cam.password}")
            ha2 = md5(f"{method}:{fields.get('uri', '')}")
            expected = md5(f"{ha1}:{nonce}:{nc}:{cnonce}:{qop}:{ha2}")
            if not secrets.compare_digest(expected, fields.get("response", "")):
                return False, False
            if count <= entry[1]:
                return False, False  # a replayed nonce count
            self.nonces[nonce] = (entry[0], count)
        return True, False


def client_waits(conn):
    """Whether the client of a request in flight on `conn` still has the connection open: one
    that closed it gave the request up."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "EmulatedONVIF/1.0"

    def log_message(self, fmt, *args):
        if self.server.owner.cam.verbose:
            sys.stderr.write("%.3f %s\n" % (time.time(), fmt % args))

    def setup(self):
        super().setup()
        self.server.owner.track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.owner.track(self.connection, False)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except ConnectionResetError:  # a client that gave up a request the reply of which went after it closed
            self.close_connection = True

    def do_GET(self):
        self.reply(405, b"SOAP over POST only\n", "text/plain")

    def reply(self, status, data, ctype="application/soap+xml; charset=utf-8", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        owner, cam = self.server.owner, self.server.owner.cam
        arrived = time.monotonic()
        with cam.lock:
            waiting = sum(1 for conn in cam.in_flight.values() if client_waits(conn))
            cam.in_flight[id(self)] = self.connection
            cam.max_in_flight = max(cam.max_in_flight, waiting + 1)
        try:
            self.respond(owner, cam, arrived)
        finally:
            self.answering(cam)

    def answering(self, cam):
        """The request is no longer in flight once its reply goes: the client may send its next
        before this thread has finished (a thread descheduled after writing counted it twice)."""
        with cam.lock:
            cam.in_flight.pop(id(self), None)

    def held_until_released(self, cam, action):
        """Holds the reply of an action in `Camera.hold`: True once released, False when the client
        closed the connection first (it gave the request up)."""
        with cam.lock:
            if action not in cam.hold:
                return True
            cam.held.append((time.monotonic(), action))
        while not cam.released.wait(0.005):
            if not client_waits(self.connection):
                with cam.lock:
                    cam.given_up.append((time.monotonic(), action))
                return False
        return True

    def respond(self, owner, cam, arrived):
        length = int(self.headers.get("Content-Length") or 0)
        if length > 1 << 20:
            self.close_connection = True
            return self.reply(413, b"too large\n", "text/plain")
        data = self.rfile.read(length)
        action, auth, status = "?", "-", 200
        try:
            status, action, auth, out = self.process(cam, data)
        except Exception as e:  # a bug of the emulator's: a fault, not a dead connection
            status, out = 500, ("xml", envelope(Fault("Receiver", ["Action"], f"emulator error: {e!r}").xml()), ())
            raise_later = e
        else:
            raise_later = None
        finally:
            entry = (arrived, self.client_address, action, auth, status)
            with cam.lock:
                cam.log.append(entry)
                cam.counts["requests"] += 1
            if cam.verbose:
                sys.stderr.write(f"{time.time():.3f} {self.client_address[0]}:{self.client_address[1]} {self.path} "
                                 f"{action} auth={auth} -> {status}\n")
        if raise_later is not None and cam.verbose:
            sys.stderr.write(f"{time.time():.3f} emulator error: {raise_later!r}\n")
        if out is None or not self.held_until_released(cam, action):  # the connection is dropped, or given up
            self.close_connection = True
            return
        delay = arrived + cam.latency - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        kind, payload, extra = out
        self.answering(cam)
        if kind == "raw":
            self.close_connection = True
            try:
                self.wfile.write(payload)
                self.wfile.flush()
            except OSError:
                pass
            return
        if kind == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/soap+xml; charset=utf-8")
            self.send_header("Content-Length", str(cam.huge_bytes))
            self.end_headers()
            head = envelope("<tptz:GetStatusResponse><tt:Junk>")[:-60]
            chunk = b"<tt:Pad>" + b"x" * 65000 + b"</tt:Pad>"
            sent = 0
            try:
                self.wfile.write(head)
                sent = len(head)
                while sent < cam.huge_bytes:
                    piece = chunk[:cam.huge_bytes - sent]
                    self.wfile.write(piece)
                    sent += len(piece)
            except OSError:
                self.close_connection = True
            return
        # A server that serves so many requests on a connection, then says "Connection: close"
        # with the last (lighttpd's max-keep-alive-requests, many cameras' embedded servers).
        self.served = getattr(self, "served", 0) + 1
        if cam.requests_per_connection and self.served >= cam.requests_per_connection:
            extra = tuple(extra) + (("Connection", "close"),)
            self.close_connection = True
        self.reply(status, payload, extra=extra)

    def process(self, cam, data):
        """(status, action, auth, out) where out is None (drop), ("raw", bytes, ()), ("huge", ...) or
        ("xml", body bytes, extra headers)."""
        with cam.lock:
            injected = cam.inject.pop(0) if cam.inject else None
        try:
            root = ET.fromstring(data)
        except ET.ParseError as e:
            return 400, "?", "-", ("xml", envelope(Fault("Sender", ["WellFormed"], f"not XML: {e}").xml()), ())
        if root.tag != f"{{{SOAP}}}Envelope":
            return 400, "?", "-", ("xml", envelope(Fault("VersionMismatch", [], "SOAP 1.2 only").xml()), ())
        header, body = child(root, "Header", SOAP), child(root, "Body", SOAP)
        request = body[0] if body is not None and len(body) else None
        if request is None:
            return 400, "?", "-", ("xml", envelope(Fault("Sender", ["InvalidArgVal"], "empty Body").xml()), ())
        ns, action = request.tag[1:].split("}", 1) if request.tag.startswith("{") else ("", request.tag)
        if injected == "close":
            return 0, action, "-", None
        if injected == "http500":
            return 500, action, "-", ("raw", b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                                      b"Content-Length: 22\r\nConnection: close\r\n\r\nInternal Server Error\n", ())
        if injected == "http401":
            return 401, action, "-", ("raw", b"HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\n"
                                      b"Content-Length: 13\r\nConnection: close\r\n\r\nUnauthorized\n", ())
        # authentication: GetSystemDateAndTime is open to all (the spec's PRE_AUTH)
        auth = "none"
        if cam.auth != "none" and not (ns == TDS and action == "GetSystemDateAndTime"):
            digest_ok = wsse_why = None
            stale = False
            if cam.auth in ("digest", "any"):
                digest_ok, stale = self.server.owner.digest.check(self.headers.get("Authorization"), "POST")
            if cam.auth in ("wsse", "any"):
                with cam.lock:
                    wsse_why = cam.check_wsse(header)
            if digest_ok:
                auth = "digest"
            elif cam.auth in ("wsse", "any") and wsse_why is None:
                auth = "wsse"
            else:
                with cam.lock:
                    cam.counts["refused_auth"] += 1
                challenge = [("WWW-Authenticate", self.server.owner.digest.challenge(stale))]
                if cam.auth == "digest":
                    return 401, action, "refused", ("xml", b"", challenge)
                fault = Fault("Sender", ["NotAuthorized"], f"Sender not authorized: {wsse_why}")
                if cam.auth == "any":  # a Digest challenge, the token's fault in the body
                    return 401, action, f"refused ({wsse_why})", ("xml", envelope(fault.xml()), challenge)
                return 400, action, f"refused ({wsse_why})", ("xml", envelope(fault.xml()), ())
        # a fractional Timeout on a camera that takes whole seconds only
        if (cam.whole_second_timeouts and ns == TPTZ and action == "ContinuousMove"
                and not whole_seconds(text_of(request, "Timeout"))):
            if cam.fraction_kills_for > 0:
                threading.Thread(target=self.server.owner.reboot, args=(cam.fraction_kills_for, False, 0.05), daemon=True).start()
            junk = (b"Content-Type: application/soap+xml\x00Content-Length: 0\x00Connection: close\x00"
                    b"HTTP/1.1 500 Internal Server Error\r\n\r\n")
            return 0, action, auth, ("raw", junk, ())
        if injected == "truncated":  # an envelope cut off inside the reply, then the connection closed
            return 200, action, auth, ("raw", b"HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nConnection: close\r\n\r\n"
                                       + envelope("<tptz:GetStatusResponse><tptz:PTZStatus><tt:Position><tt:PanTilt x=")[:-40], ())
        if injected == "malformed":  # a 200 whose body is not XML at all
            junk = b"\x00\x13\x37<<not xml>> {\"error\": true}\xff\xfe"
            return 200, action, auth, ("xml", junk, ())
        if injected == "huge":
            return 200, action, auth, ("huge", b"", ())
        try:
            out = cam.handle(ns, action, request)
            return 200, action, auth, ("xml", envelope(out), ())
        except Fault as f:
            with cam.lock:
                cam.counts["faults"] += 1
            return f.status, action, auth, ("xml", envelope(f.xml()), ())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


class Server:
    """The camera's HTTP server on host:port (port 0: any free port, kept across reboots)."""

    def __init__(self, cam, host="127.0.0.1", port=0):
        self.cam, self.host, self.port = cam, host, port
        self.httpd = None
        self.thread = None
        self.connections = set()
        self.accepted = 0  # connections accepted, all told
        self.lock = threading.Lock()
        self.digest = Digest(cam)
        self.reboots = []  # (went down, came back)
        self.up = threading.Event()  # set while it serves
        self.down = threading.Event()  # set once a reboot has dropped everything

    @property
    def xaddr(self):
        return f"http://{self.host}:{self.port}/onvif/device_service"

    def track(self, conn, add):
        with self.lock:
            (self.connections.add if add else self.connections.discard)(conn)
            self.accepted += 1 if add else 0

    def start(self):
        self.httpd = _HTTPServer((self.host, self.port), Handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.cam.xaddr_base = f"http://{self.host}:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.down.clear()
        self.up.set()
        return self

    def drop_connections(self):
        with self.lock:
            conns = list(self.connections)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def halt(self):
        self.up.clear()
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
        self.drop_connections()
        self.down.set()

    def stop(self):
        self.halt()

    def reboot(self, down_for=2.0, reset_pose=False, after=0.0):
        """Drops every connection, refuses connections for `down_for` s, then answers again; the pose
        is kept (a camera that holds its position) or back at home (one that recalibrates). Blocks
        until the camera is back."""
        if after:
            time.sleep(after)
        went = time.monotonic()
        self.halt()
        with self.cam.lock:
            self.cam.step()
            self.cam.stop_all()
            self.cam.reported = None
            if reset_pose:
                self.cam.pan.pos = self.cam.pan.to_units(self.cam.home[0])
                self.cam.tilt.pos = self.cam.tilt.to_units(self.cam.home[1])
                self.cam.zoom.pos = self.cam.home[2]
        time.sleep(down_for)
        for _ in range(100):
            try:
                self.start()
                break
            except OSError:
                time.sleep(0.05)
        self.reboots.append((went, time.monotonic()))


class DiscoveryResponder:
    """WS-Discovery target service for the camera: answers Probes (SOAP 1.2 over UDP) whose Types and
    Scopes match with a ProbeMatch, unicast to the Probe's source. multicast=True binds port 3702 on
    all addresses and joins 239.255.255.250 on `interface` (an IPv4 address); else binds host:port."""

    GROUP = "239.255.255.250"

    def __init__(self, cam, server, host="127.0.0.1", port=3702, multicast=False, interface="127.0.0.1",
                 scopes=None, answer=True):
        self.cam, self.server = cam, server
        self.multicast, self.interface = multicast, interface
        self.host, self.port = ("0.0.0.0" if multicast else host), port
        self.scopes = scopes or ["onvif://www.onvif.org/type/ptz", "onvif://www.onvif.org/type/video_encoder",
                                 "onvif://www.onvif.org/Profile/Streaming",
                                 f"onvif://www.onvif.org/name/{quote(cam.name)}", f"onvif://www.onvif.org/hardware/{cam.model.replace(' ', '_')}",
                                 "onvif://www.onvif.org/location/country/nowhere"]
        self.types = [(DN, "NetworkVideoTransmitter"), (TDS, "Device")]
        self.answer = answer
        self.probes = []  # (time, source, message id, matched) for every Probe received
        self.answered = set()  # the MessageIDs of the Probes answered
        self.sock = None
        self.message_number = 0
        self.instance = int(time.time())
        self.running = False

    def start(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.port))
        if self.multicast:
            # Linux hands a socket bound to INADDR_ANY every group any socket of the host joined
            # (IP_MULTICAST_ALL): off, so that the camera hears only the group it joined itself, as
            # a separate device would (the client on this host joins 239.255.255.250 too).
            s.setsockopt(socket.IPPROTO_IP, getattr(socket, "IP_MULTICAST_ALL", 49), 0)
            mreq = struct.pack("4s4s", socket.inet_aton(self.GROUP), socket.inet_aton(self.interface))
            s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
        self.port = s.getsockname()[1]
        s.settimeout(0.1)
        self.sock, self.running = s, True
        threading.Thread(target=self.run, daemon=True).start()
        return self

    def stop(self):
        self.running = False
        if self.sock:
            self.sock.close()

    def run(self):
        while self.running:
            try:
                data, source = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                reply = self.handle(data, source)
            except Exception as e:  # a bad datagram is ignored, as the spec says
                if self.cam.verbose:
                    sys.stderr.write(f"{time.time():.3f} discovery: ignored datagram from {source}: {e}\n")
                continue
            if reply is not None and self.answer:
                try:
                    self.sock.sendto(reply, source)
                except OSError:
                    pass

    def handle(self, data, source):
        prefixes = {}
        for event, item in ET.iterparse(io.BytesIO(data), events=("start-ns",)):
            prefixes.setdefault(item[0], item[1])
        root = ET.fromstring(data)
        header, body = child(root, "Header"), child(root, "Body")
        probe = child(body, "Probe", WSD)
        message_id = text_of(header, "MessageID")
        if probe is None or message_id is None:
            return None
        wanted = []
        for q in (text_of(probe, "Types") or "").split():
            prefix, _, name = q.rpartition(":")
            wanted.append((prefixes.get(prefix, ""), name))
        scopes_el = child(probe, "Scopes")
        want_scopes = (scopes_el.text or "").split() if scopes_el is not None else []
        match_by = scopes_el.get("MatchBy", WSD + "/rfc3986") if scopes_el is not None else None
        matched = all(t in self.types for t in wanted) and all(self.scope_match(s, match_by) for s in want_scopes)
        repeat = message_id in self.answered
        self.probes.append((time.monotonic(), source, message_id, matched))
        if repeat:  # SOAP-over-UDP sends each message several times: answered once
            return None
        self.answered.add(message_id)
        if self.cam.verbose:
            sys.stderr.write(f"{time.time():.3f} discovery: Probe {message_id} from {source} matched={matched}\n")
        if not matched:
            return None
        self.message_number += 1
        xaddrs = self.server.xaddr
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope xmlns:env="{SOAP}" xmlns:wsa="{WSA}" xmlns:d="{WSD}" '
                f'xmlns:dn="{DN}" xmlns:tds="{TDS}"><env:Header>'
                f"<wsa:MessageID>urn:uuid:{uuid.uuid4()}</wsa:MessageID><wsa:RelatesTo>{escape(message_id)}</wsa:RelatesTo>"
                f"<wsa:To>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</wsa:To>"
                f"<wsa:Action>{WSD}/ProbeMatches</wsa:Action>"
                f'<d:AppSequence InstanceId="{self.instance}" MessageNumber="{self.message_number}"/></env:Header><env:Body>'
                f"<d:ProbeMatches><d:ProbeMatch><wsa:EndpointReference><wsa:Address>urn:uuid:{self.cam.uuid}</wsa:Address>"
                f"</wsa:EndpointReference><d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>"
                f"<d:Scopes>{escape(' '.join(self.scopes))}</d:Scopes><d:XAddrs>{escape(xaddrs)}</d:XAddrs>"
                f"<d:MetadataVersion>1</d:MetadataVersion></d:ProbeMatch></d:ProbeMatches></env:Body></env:Envelope>").encode()

    def scope_match(self, wanted, match_by):
        if match_by == WSD + "/strcmp0":
            return wanted in self.scopes
        if match_by != WSD + "/rfc3986":
            return False
        w = wanted.rstrip("/").split("/")
        for s in self.scopes:
            parts = s.rstrip("/").split("/")
            if len(w) <= len(parts) and [p.lower() if i < 3 else p for i, p in enumerate(parts[:len(w)])] == \
                    [p.lower() if i < 3 else p for i, p in enumerate(w)]:
                return True
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--motion", nargs="+", default=["continuous", "absolute", "relative"],
                    choices=["continuous", "absolute", "relative"])
    ap.add_argument("--fov-translation", action="store_true")
    ap.add_argument("--no-zoom", action="store_true")
    ap.add_argument("--presets", type=int, default=16)
    ap.add_argument("--no-home", action="store_true")
    ap.add_argument("--pan-range", type=float, nargs=2, default=(-1.0, 1.0), help="the advertised absolute pan position range (generic)")
    ap.add_argument("--tilt-range", type=float, nargs=2, default=(-1.0, 1.0))
    ap.add_argument("--pan-degrees", type=float, nargs=2, default=(-170.0, 170.0))
    ap.add_argument("--tilt-degrees", type=float, nargs=2, default=(-30.0, 90.0))
    ap.add_argument("--pan-speed", type=float, default=100.0, help="degrees/s at velocity 1")
    ap.add_argument("--tilt-speed", type=float, default=60.0)
    ap.add_argument("--zoom-speed", type=float, default=0.5)
    ap.add_argument("--velocity-sign", type=int, nargs=2, default=(1, 1), choices=(-1, 1))
    ap.add_argument("--default-timeout", type=float, default=180.0)
    ap.add_argument("--whole-second-timeouts", action="store_true")
    ap.add_argument("--fraction-kills-for", type=float, default=0.0)
    ap.add_argument("--move-status-unknown", action="store_true")
    ap.add_argument("--position-static", action="store_true")
    ap.add_argument("--no-position", action="store_true", help="GetStatus gives no Position")
    ap.add_argument("--status-fault", action="store_true", help="GetStatus answered with ter:NoStatus (onvif_simple_server)")
    ap.add_argument("--position-late", type=int, default=0, help="the first N GetStatus after each GetSystemDateAndTime give no Position")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--auth", choices=["none", "wsse", "digest", "any"], default="none")
    ap.add_argument("--username", default="admin")
    ap.add_argument("--password", default="admin")
    ap.add_argument("--password-text", action="store_true")
    ap.add_argument("--clock-skew", type=float, default=0.0)
    ap.add_argument("--created-window", type=float, default=5.0)
    ap.add_argument("--discovery", help="HOST:PORT for unicast Probes, or 'multicast' (0.0.0.0:3702, 239.255.255.250)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    cam = Camera(motion=a.motion, fov_translation=a.fov_translation, zoom=not a.no_zoom, presets=a.presets,
                 home_supported=not a.no_home, pan_range=a.pan_range, tilt_range=a.tilt_range, pan_degrees=a.pan_degrees, tilt_degrees=a.tilt_degrees,
                 pan_speed=a.pan_speed, tilt_speed=a.tilt_speed, zoom_speed=a.zoom_speed,
                 velocity_sign=a.velocity_sign, default_timeout=a.default_timeout,
                 whole_second_timeouts=a.whole_second_timeouts, fraction_kills_for=a.fraction_kills_for,
                 move_status_unknown=a.move_status_unknown, position_static=a.position_static, no_position=a.no_position, status_fault=a.status_fault,
                 position_late=a.position_late, latency=a.latency,
                 auth=a.auth, username=a.username, password=a.password, password_text=a.password_text,
                 clock_skew=a.clock_skew, created_window=a.created_window, verbose=a.verbose)
    server = Server(cam, a.host, a.port).start()
    print(f"onvif {server.xaddr}", flush=True)
    if a.discovery:
        if a.discovery == "multicast":
            d = DiscoveryResponder(cam, server, multicast=True, interface=a.host).start()
        else:
            h, p = a.discovery.rsplit(":", 1)
            d = DiscoveryResponder(cam, server, host=h, port=int(p)).start()
        print(f"discovery {d.host}:{d.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
