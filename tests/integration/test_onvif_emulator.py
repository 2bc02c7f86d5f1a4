"""The ONVIF PTZ camera emulator (tests/peers/onvif_camera.py), validated by peers no one here wrote:
the PyPI ONVIF client `onvif-zeep` (zeep driven by the WSDLs and schema it ships) for the device,
media and PTZ services, authentication, each motion model and quirk; the PyPI `WSDiscovery` for
WS-Discovery (multicast in a network namespace of the test's own, and a directed Probe on loopback).
Before dockd's onvif driver is tested against the emulator, the emulator must be a camera these
clients accept. Nothing here runs dockd (DOCK_BIN is not needed)."""
import base64
import datetime
import hashlib
import http.client
import json
import logging
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import onvif_camera as oc  # noqa: E402
from conftest import wait_for  # noqa: E402
import network_namespace  # noqa: E402

_root = logging.getLogger()
_level, _handlers = _root.level, list(_root.handlers)
import onvif  # noqa: E402  (the peers: requirements-test.txt; a missing one is a failure, not a skip)
import zeep  # noqa: E402
from onvif import ONVIFCamera, ONVIFError  # noqa: E402
# onvif-zeep calls logging.basicConfig(level=INFO) on import: not for the other suites in this run
_root.setLevel(_level)
for _h in list(_root.handlers):
    if _h not in _handlers:
        _root.removeHandler(_h)
from zeep.exceptions import Fault as ZeepFault  # noqa: E402

USER, PASSWORD = "operator", "correct horse"
TER = "http://www.onvif.org/ver10/error"


@pytest.fixture
def camera():
    servers = []

    def make(**kw):
        kw.setdefault("username", USER)
        kw.setdefault("password", PASSWORD)
        cam = oc.Camera(**kw)
        server = oc.Server(cam).start()
        servers.append(server)
        return cam, server
    yield make
    for s in servers:
        s.stop()


def peer(server, user=USER, password=PASSWORD, **kw):
    """onvif-zeep's camera object on the emulator: GetCapabilities is called on creation."""
    kw.setdefault("adjust_time", True)
    return ONVIFCamera(server.host, server.port, user, password, **kw)


class Ptz:
    """onvif-zeep's PTZ and media services of one camera, with the calls the tests make. `raw` calls
    the zeep service directly so that a SOAP fault arrives as zeep's Fault (with its subcodes)."""

    def __init__(self, server, **kw):
        self.cam = peer(server, **kw)
        self.media = self.cam.create_media_service()
        self.ptz = self.cam.create_ptz_service()
        self.raw = self.ptz.ws_client
        self.profiles = self.media.GetProfiles()
        self.token = next(p.token for p in self.profiles if p.PTZConfiguration is not None)

    def status(self):
        return self.ptz.GetStatus({"ProfileToken": self.token})

    def pose(self):
        s = self.status()
        zoom = s.Position.Zoom.x if s.Position.Zoom is not None else None
        return s.Position.PanTilt.x, s.Position.PanTilt.y, zoom

    def continuous(self, x, y, zoom=None, timeout="PT5S"):
        velocity = {"PanTilt": {"x": x, "y": y}}
        if zoom is not None:
            velocity["Zoom"] = {"x": zoom}
        request = {"ProfileToken": self.token, "Velocity": velocity}
        if timeout is not None:
            request["Timeout"] = timeout
        return self.raw.ContinuousMove(**request)

    def absolute(self, x, y, zoom=None, speed=None):
        position = {"PanTilt": {"x": x, "y": y}}
        if zoom is not None:
            position["Zoom"] = {"x": zoom}
        request = {"ProfileToken": self.token, "Position": position}
        if speed is not None:
            request["Speed"] = {"PanTilt": {"x": speed, "y": speed}}
        return self.raw.AbsoluteMove(**request)

    def relative(self, x, y, zoom=None, space=None):
        pantilt = {"x": x, "y": y}
        if space:
            pantilt["space"] = space
        translation = {"PanTilt": pantilt}
        if zoom is not None:
            translation["Zoom"] = {"x": zoom}
        return self.raw.RelativeMove(ProfileToken=self.token, Translation=translation)

    def stop(self):
        return self.raw.Stop(ProfileToken=self.token, PanTilt=True, Zoom=True)

    def idle(self):
        s = self.status()
        return s.MoveStatus.PanTilt == "IDLE" and (s.MoveStatus.Zoom in (None, "IDLE"))


def fault_of(call, *args, **kw):
    with pytest.raises(ZeepFault) as info:
        call(*args, **kw)
    return info.value


def subcodes(fault):
    return [q.localname for q in (fault.subcodes or [])]


# -- the device, media and PTZ services through onvif-zeep, authenticated with a UsernameToken digest

def test_device_service_through_onvif_zeep_with_a_username_token_digest(camera):
    cam, server = camera(auth="wsse")
    c = peer(server)
    info = c.devicemgmt.GetDeviceInformation()
    assert (info.Manufacturer, info.Model, info.SerialNumber) == (cam.manufacturer, cam.model, cam.serial)
    caps = c.devicemgmt.GetCapabilities({"Category": "All"})
    assert caps.PTZ.XAddr == f"http://127.0.0.1:{server.port}/onvif/ptz_service"
    assert caps.Media.XAddr.endswith("/onvif/media_service")
    services = {s.Namespace: s.XAddr for s in c.devicemgmt.GetServices({"IncludeCapability": False})}
    assert set(services) == {oc.TDS, oc.TRT, oc.TPTZ}
    # every authenticated call carried a digest the camera checked; the first, the time, needed none
    assert {entry[3] for entry in cam.log if entry[2] != "GetSystemDateAndTime"} == {"wsse"}
    assert cam.counts["refused_auth"] == 0


def test_media_profiles_and_stream_uri(camera):
    cam, server = camera(auth="wsse")
    p = Ptz(server)
    by_token = {x.token: x for x in p.profiles}
    assert set(by_token) == {oc.PROFILE, oc.PROFILE_NO_PTZ}
    main = by_token[oc.PROFILE]
    assert main.PTZConfiguration.token == oc.PTZ_CONFIG and main.PTZConfiguration.NodeToken == oc.NODE
    assert main.VideoEncoderConfiguration.Resolution.Width == 1920
    assert main.VideoSourceConfiguration.SourceToken == "VideoSource_1"
    assert by_token[oc.PROFILE_NO_PTZ].PTZConfiguration is None
    uri = p.media.GetStreamUri({"ProfileToken": p.token, "StreamSetup": {"Stream": "RTP-Unicast", "Transport": {"Protocol": "RTSP"}}})
    assert uri.Uri.startswith("rtsp://127.0.0.1")
    # the profile without PTZ refuses moves
    f = fault_of(p.raw.ContinuousMove, ProfileToken=oc.PROFILE_NO_PTZ, Velocity={"PanTilt": {"x": 0.1, "y": 0}})
    assert "NoPTZProfile" in subcodes(f)


def test_ptz_node_configuration_and_options(camera):
    cam, server = camera(presets=8, default_timeout=180)
    p = Ptz(server)
    node = p.ptz.GetNodes()[0]
    assert node.token == oc.NODE and node.HomeSupported is True and node.MaximumNumberOfPresets == 8
    spaces = node.SupportedPTZSpaces
    assert spaces.AbsolutePanTiltPositionSpace[0].URI == oc.PT_POSITION
    assert (spaces.AbsolutePanTiltPositionSpace[0].XRange.Min, spaces.AbsolutePanTiltPositionSpace[0].XRange.Max) == (-1, 1)
    assert spaces.AbsoluteZoomPositionSpace[0].XRange.Max == 1
    assert spaces.ContinuousPanTiltVelocitySpace[0].URI == oc.PT_VELOCITY
    assert spaces.RelativePanTiltTranslationSpace[0].URI == oc.PT_TRANSLATION
    assert p.ptz.GetNode({"NodeToken": oc.NODE}).Name == "PTZ"
    config = p.ptz.GetConfigurations()[0]
    assert config.token == oc.PTZ_CONFIG and config.DefaultPTZTimeout == datetime.timedelta(seconds=180)
    assert p.ptz.GetConfiguration({"PTZConfigurationToken": oc.PTZ_CONFIG}).NodeToken == oc.NODE
    options = p.ptz.GetConfigurationOptions({"ConfigurationToken": oc.PTZ_CONFIG})
    assert options.PTZTimeout.Min == datetime.timedelta(seconds=1)
    assert options.Spaces.PanTiltSpeedSpace[0].URI == oc.PT_SPEED


def test_continuous_move_lags_like_a_camera_and_stop_holds_it(camera):
    cam, server = camera(auth="wsse", pan_speed=100.0, tilt_speed=60.0)
    p = Ptz(server)
    assert p.pose() == (0, 0, 0) and p.idle()
    started = time.monotonic()
    p.continuous(0.5, -0.25, zoom=0.2)
    wait_for(lambda: p.pose()[0] > 0.1, 5, "pan to turn right")
    s = p.status()
    assert s.MoveStatus.PanTilt == "MOVING" and s.MoveStatus.Zoom == "MOVING"
    pan, tilt, zoom = p.pose()
    elapsed = time.monotonic() - started
    # 0.5 of 100°/s over a ±170° span: 50/170 generic per second; tilt down at 15°/s of 120° per 2
    # pan: 0.5 × 100°/s over 170° per generic unit; tilt: -0.25 × 60°/s over 60° per unit (-30..90°)
    assert 0 < pan <= 50 / 170 * elapsed + 0.01, (pan, elapsed)
    assert -0.25 * elapsed - 0.01 <= tilt < 0, (tilt, elapsed)
    assert 0 < zoom <= 0.2 * 0.5 * elapsed + 0.01, (zoom, elapsed)
    p.stop()
    wait_for(p.idle, 5, "IDLE after Stop")
    held = p.pose()
    time.sleep(0.3)  # the time it must not move for
    assert p.pose() == held


def test_continuous_move_ends_at_its_timeout_and_without_one_runs_for_the_default(camera):
    cam, server = camera(default_timeout=180)
    p = Ptz(server)
    started = time.monotonic()
    p.continuous(0.2, 0, timeout="PT1S")
    wait_for(p.idle, 5, "the move to end at its Timeout")
    ended = time.monotonic()
    assert 0.9 <= ended - started <= 3, ended - started
    travelled = p.pose()[0]
    assert abs(travelled - 0.2 * 100 / 170) < 0.03, travelled  # one second at 20°/s
    p.continuous(-0.2, 0, timeout=None)
    assert cam.moves[-1][2]["timeout"] == 180
    time.sleep(1.2)  # past the one-second move: still going
    assert p.status().MoveStatus.PanTilt == "MOVING"
    assert cam.deadline - time.monotonic() > 170
    p.stop()
    wait_for(p.idle, 5, "IDLE")


def test_absolute_move_arrives_at_its_speed(camera):
    cam, server = camera(auth="wsse", pan_speed=60.0, tilt_speed=60.0, zoom_speed=0.5)
    p = Ptz(server)
    started = time.monotonic()
    p.absolute(0.5, 0.5, zoom=0.25)
    first = p.status()
    assert first.Position.PanTilt.x < 0.5 and first.MoveStatus.PanTilt == "MOVING", "the position lags the command"
    wait_for(lambda: p.idle() and p.pose() == (0.5, 0.5, 0.25), 5, "arrival")
    took = time.monotonic() - started
    # pan 85° at 60°/s, tilt 30° at 60°/s: 1.42 s for both together
    assert took >= 1.35, took
    # slower at a quarter speed
    started = time.monotonic()
    p.absolute(0.3, 0.5, speed=0.25)  # 34° at 25°/s
    wait_for(lambda: p.pose()[0] == 0.3, 10, "arrival at quarter speed")
    assert time.monotonic() - started >= 1.3
    f = fault_of(p.absolute, 1.5, 0)
    assert "InvalidPosition" in subcodes(f)



def test_a_narrower_advertised_range_is_in_the_spaces_and_limits_and_a_move_beyond_is_refused(camera):
    """A ceiling dome's tilt of -1..0.2: GetNodes, GetConfigurationOptions and the configuration's
    PanTiltLimits all say it; an AbsoluteMove beyond draws InvalidPosition and moves nothing; a
    velocity up stops the head at the range's end."""
    cam, server = camera(auth="wsse", tilt_range=(-1.0, 0.2))
    p = Ptz(server)
    node_space = p.ptz.GetNodes()[0].SupportedPTZSpaces.AbsolutePanTiltPositionSpace[0]
    options_space = p.ptz.GetConfigurationOptions({"ConfigurationToken": oc.PTZ_CONFIG}).Spaces.AbsolutePanTiltPositionSpace[0]
    limits = p.ptz.GetConfigurations()[0].PanTiltLimits.Range
    for space in (node_space, options_space, limits):
        assert (space.XRange.Min, space.XRange.Max, space.YRange.Min, space.YRange.Max) == (-1, 1, -1, 0.2), space
    f = fault_of(p.absolute, 0, 0.5)
    assert subcodes(f) == ["InvalidArgVal", "InvalidPosition"], subcodes(f)
    assert cam.still() and p.pose()[:2] == (0, 0)
    p.absolute(0, 0.2)
    wait_for(lambda: p.idle() and abs(p.pose()[1] - 0.2) < 1e-6, 5, "arrival at the range's end")
    p.continuous(0, 1, timeout="PT3S")
    wait_for(lambda: p.idle(), 5, "a velocity up held at the range's end")
    assert abs(p.pose()[1] - 0.2) < 1e-6, p.pose()
    with pytest.raises(ValueError):
        oc.Camera(tilt_range=(0.5, 0.2))


def test_relative_move_in_generic_and_fov_space(camera):
    cam, server = camera(fov_translation=True, hfov=60.0, vfov=34.0)
    p = Ptz(server)
    p.relative(0.2, -0.1)
    wait_for(lambda: p.idle() and p.pose()[:2] == (0.2, -0.1), 5, "the relative move")
    p.relative(0.1, 0.0)
    wait_for(lambda: p.idle() and abs(p.pose()[0] - 0.3) < 1e-5, 5, "a second relative move")
    # FOV space: 1 = half the field of view (30° at zoom 0) = 30/170 generic
    p.relative(1.0, 0.0, space=oc.PT_FOV)
    wait_for(lambda: p.idle() and abs(p.pose()[0] - (0.3 + 30 / 170)) < 1e-5, 5, "a FOV move")
    spaces = [s.URI for s in p.ptz.GetNodes()[0].SupportedPTZSpaces.RelativePanTiltTranslationSpace]
    assert oc.PT_FOV in spaces


def test_presets_and_home(camera):
    cam, server = camera(auth="wsse", presets=2)
    p = Ptz(server)
    p.absolute(0.3, 0.2)
    wait_for(lambda: p.pose()[:2] == (0.3, 0.2), 5, "the first spot")
    token = p.ptz.SetPreset({"ProfileToken": p.token, "PresetName": "door"})
    p.raw.SetHomePosition(ProfileToken=p.token)
    p.absolute(-0.4, -0.1)
    wait_for(lambda: p.pose()[:2] == (-0.4, -0.1), 5, "the second spot")
    token2 = p.ptz.SetPreset({"ProfileToken": p.token, "PresetName": "window"})
    presets = {x.token: (x.Name, x.PTZPosition.PanTilt.x) for x in p.ptz.GetPresets({"ProfileToken": p.token})}
    assert presets == {token: ("door", 0.3), token2: ("window", -0.4)}
    f = fault_of(p.raw.SetPreset, ProfileToken=p.token, PresetName="third")
    assert "TooManyPresets" in subcodes(f)
    p.raw.GotoPreset(ProfileToken=p.token, PresetToken=token)
    wait_for(lambda: p.idle() and p.pose()[:2] == (0.3, 0.2), 5, "the preset")
    p.absolute(0, 0)
    wait_for(lambda: p.pose()[:2] == (0, 0), 5, "the middle")
    p.raw.GotoHomePosition(ProfileToken=p.token)
    wait_for(lambda: p.idle() and p.pose()[:2] == (0.3, 0.2), 5, "home (set where the door is)")
    p.raw.RemovePreset(ProfileToken=p.token, PresetToken=token)
    assert [x.token for x in p.ptz.GetPresets({"ProfileToken": p.token})] == [token2]
    f = fault_of(p.raw.GotoPreset, ProfileToken=p.token, PresetToken=token)
    assert "NoToken" in subcodes(f)


def test_a_camera_listing_every_slot_lists_the_unset_ones_too(camera):
    cam, server = camera(auth="wsse", presets=3, lists_every_slot=True)
    p = Ptz(server)
    token = p.ptz.SetPreset({"ProfileToken": p.token, "PresetName": "door"})
    listed = [(x.token, x.Name, x.PTZPosition) for x in p.ptz.GetPresets({"ProfileToken": p.token})]
    assert [(t, n) for t, n, _ in listed] == [(token, "door"), ("Unset2", "Preset 2"), ("Unset3", "Preset 3")], listed
    assert listed[0][2] is not None and listed[1][2] is None and listed[2][2] is None


def test_no_home_no_presets(camera):
    cam, server = camera(home_supported=False, presets=0)
    p = Ptz(server)
    node = p.ptz.GetNodes()[0]
    assert node.HomeSupported is False and node.MaximumNumberOfPresets == 0
    assert "ActionNotSupported" in subcodes(fault_of(p.raw.GotoHomePosition, ProfileToken=p.token))
    assert "TooManyPresets" in subcodes(fault_of(p.raw.SetPreset, ProfileToken=p.token))


# -- authentication

def test_wrong_password_and_no_credentials_are_refused(camera):
    cam, server = camera(auth="wsse")
    with pytest.raises(ONVIFError, match="NotAuthorized|not authorized"):
        peer(server, password="wrong")
    with pytest.raises(ONVIFError, match="not authorized"):
        peer(server, user="intruder")
    # no Security header at all: zeep without wsse
    client = zeep.Client(str(Path(onvif.__file__).parent.parent / "wsdl" / "devicemgmt.wsdl"))
    service = client.create_service("{http://www.onvif.org/ver10/device/wsdl}DeviceBinding", server.xaddr)
    f = fault_of(service.GetDeviceInformation)
    assert subcodes(f) == ["NotAuthorized"] and f.code.endswith("Sender")
    # the time is open to all (a client needs it to make a digest)
    assert service.GetSystemDateAndTime().UTCDateTime.Date.Year >= 2024
    assert cam.counts["refused_auth"] == 3


def test_camera_clock_skew_refuses_a_digest_until_the_client_adjusts(camera):
    cam, server = camera(auth="wsse", clock_skew=3600.0)
    with pytest.raises(ONVIFError, match="from the camera's clock"):
        peer(server, adjust_time=False)
    c = peer(server, adjust_time=True)  # onvif-zeep reads GetSystemDateAndTime and shifts Created
    t = c.devicemgmt.GetSystemDateAndTime().UTCDateTime
    camera_time = datetime.datetime(t.Date.Year, t.Date.Month, t.Date.Day, t.Time.Hour, t.Time.Minute, t.Time.Second,
                                    tzinfo=datetime.timezone.utc)
    skew = (camera_time - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 3597 <= skew <= 3601, skew
    assert c.devicemgmt.GetDeviceInformation().Model == cam.model


def test_a_replayed_nonce_is_refused(camera):
    from zeep.wsse.username import UsernameToken
    cam, server = camera(auth="wsse")
    created = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    token = UsernameToken(USER, PASSWORD, use_digest=True, nonce="the same nonce", created=created)
    client = zeep.Client(str(Path(onvif.__file__).parent.parent / "wsdl" / "devicemgmt.wsdl"), wsse=token)
    service = client.create_service("{http://www.onvif.org/ver10/device/wsdl}DeviceBinding", server.xaddr)
    assert service.GetDeviceInformation().Model == cam.model
    f = fault_of(service.GetDeviceInformation)
    assert subcodes(f) == ["NotAuthorized"] and "replayed" in f.message
    # the digest is Base64(SHA-1(nonce + created + password)): check one by hand against the camera
    stamp = created.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    digest = base64.b64encode(hashlib.sha1(b"other nonce" + stamp.encode() + PASSWORD.encode()).digest()).decode()
    ok = cam_check(cam, base64.b64encode(b"other nonce").decode(), stamp, digest)
    assert ok is None, ok
    bad = base64.b64encode(hashlib.sha1(b"third nonce" + stamp.encode() + b"nope").digest()).decode()
    assert cam_check(cam, base64.b64encode(b"third nonce").decode(), stamp, bad) == "wrong password digest"


def cam_check(cam, nonce_b64, created, digest):
    import xml.etree.ElementTree as ET
    header = ET.fromstring(
        f'<h xmlns:wsse="{oc.WSSE}" xmlns:wsu="{oc.WSU}"><wsse:Security><wsse:UsernameToken>'
        f"<wsse:Username>{USER}</wsse:Username><wsse:Password Type=\"{oc.PASSWORD_DIGEST}\">{digest}</wsse:Password>"
        f"<wsse:Nonce>{nonce_b64}</wsse:Nonce><wsu:Created>{created}</wsu:Created></wsse:UsernameToken></wsse:Security></h>")
    return cam.check_wsse(header)


def test_http_digest(camera):
    import requests
    from requests.auth import HTTPDigestAuth
    from zeep.transports import Transport
    cam, server = camera(auth="digest")

    def transport(password):
        session = requests.Session()
        session.auth = HTTPDigestAuth(USER, password)
        return Transport(session=session)
    c = peer(server, transport=transport(PASSWORD), adjust_time=False)
    assert c.devicemgmt.GetDeviceInformation().Model == cam.model
    p = c.create_ptz_service()
    p.GetStatus({"ProfileToken": oc.PROFILE})
    assert {e[3] for e in cam.log if e[4] == 200 and e[2] != "GetSystemDateAndTime"} == {"digest"}
    with pytest.raises(ONVIFError):
        peer(server, transport=transport("wrong"), adjust_time=False)
    # no credentials: a 401 challenge for Digest with qop=auth
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request("POST", "/onvif/device_service", oc.envelope("<tds:GetDeviceInformation/>"),
                 {"Content-Type": "application/soap+xml"})
    r = conn.getresponse()
    r.read()
    assert r.status == 401 and r.getheader("WWW-Authenticate").startswith("Digest ") and 'qop="auth"' in r.getheader("WWW-Authenticate")
    conn.close()


def test_auth_any_takes_either_and_the_time_is_open_under_digest(camera):
    import requests
    from requests.auth import HTTPDigestAuth
    from zeep.transports import Transport
    cam, server = camera(auth="any")
    assert peer(server).devicemgmt.GetDeviceInformation().Model == cam.model  # a UsernameToken
    session = requests.Session()
    session.auth = HTTPDigestAuth(USER, PASSWORD)
    c = peer(server, password="not the token's", transport=Transport(session=session), adjust_time=False)
    assert c.devicemgmt.GetDeviceInformation().Model == cam.model  # HTTP Digest (the token is wrong)
    assert {e[3] for e in cam.log if e[4] == 200 and e[2] == "GetDeviceInformation"} == {"wsse", "digest"}
    with pytest.raises(ONVIFError):
        peer(server, password="wrong")
    cam2, server2 = camera(auth="digest")
    conn = http.client.HTTPConnection(server2.host, server2.port, timeout=5)
    conn.request("POST", "/onvif/device_service", oc.envelope("<tds:GetSystemDateAndTime/>"), {"Content-Type": "application/soap+xml"})
    r = conn.getresponse()
    assert r.status == 200 and b"UTCDateTime" in r.read()
    conn.close()


def test_runs_alone_from_the_command_line(tmp_path):
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "peers" / "onvif_camera.py"), "--port", "0", "--auth", "wsse",
                             "--username", USER, "--password", PASSWORD, "--motion", "absolute", "--verbose"],
                            stdout=subprocess.PIPE, stderr=open(tmp_path / "err", "wb"), text=True)
    try:
        first = proc.stdout.readline().split()
        assert first[0] == "onvif" and first[1].startswith("http://127.0.0.1:")
        port = int(first[1].split(":")[2].split("/")[0])
        c = ONVIFCamera("127.0.0.1", port, USER, PASSWORD, adjust_time=True)
        spaces = c.create_ptz_service().GetNodes()[0].SupportedPTZSpaces
        assert spaces.AbsolutePanTiltPositionSpace and not spaces.ContinuousPanTiltVelocitySpace
    finally:
        proc.terminate()
        proc.wait(10)
    log = (tmp_path / "err").read_text()
    assert "GetNodes auth=wsse -> 200" in log, log


# -- motion models: each refuses the moves it does not have, and does not advertise them

@pytest.mark.parametrize("model", ["continuous", "absolute", "relative"])
def test_motion_model_offers_only_its_moves(camera, model):
    cam, server = camera(auth="wsse", motion=[model])
    p = Ptz(server)
    spaces = p.ptz.GetNodes()[0].SupportedPTZSpaces
    advertised = {"continuous": bool(spaces.ContinuousPanTiltVelocitySpace), "absolute": bool(spaces.AbsolutePanTiltPositionSpace),
                  "relative": bool(spaces.RelativePanTiltTranslationSpace)}
    assert advertised == {m: m == model for m in advertised}
    calls = {"continuous": lambda: p.continuous(0.3, 0, timeout="PT1S"), "absolute": lambda: p.absolute(0.3, 0),
             "relative": lambda: p.relative(0.3, 0)}
    for other, call in calls.items():
        if other == model:
            continue
        f = fault_of(call)
        assert "ActionNotSupported" in subcodes(f) and f.code.endswith("Receiver"), (other, f.code, f.subcodes)
    assert p.pose() == (0, 0, 0), "a refused move does not move the camera"
    calls[model]()
    wait_for(lambda: p.pose()[0] > 0.05, 5, f"the {model} move")
    p.stop()


# -- quirks

def test_whole_second_timeouts_fraction_kills_the_connection(camera):
    import requests
    # the connection dropped after a broken answer; the next request is answered
    cam0, server0 = camera(whole_second_timeouts=True)
    p0 = Ptz(server0)
    with pytest.raises((requests.exceptions.ConnectionError, http.client.HTTPException)):
        p0.continuous(0.3, 0, timeout="PT0.5S")
    assert p0.pose() == (0, 0, 0) and not cam0.moves and not server0.reboots
    # and one whose HTTP server dies for a second
    cam, server = camera(auth="wsse", whole_second_timeouts=True, fraction_kills_for=1.0)
    p = Ptz(server)
    with pytest.raises((requests.exceptions.ConnectionError, http.client.HTTPException)):
        p.continuous(0.3, 0, timeout="PT0.5S")
    # the HTTP server died: refused, then back
    wait_for(lambda: server.reboots, 5, "the server to come back")
    p2 = Ptz(server)
    assert p2.pose() == (0, 0, 0), "the fractional move was not executed"
    p2.continuous(0.3, 0, timeout="PT1S")  # whole seconds work
    wait_for(lambda: p2.pose()[0] > 0.05, 5, "the whole-second move")
    wait_for(p2.idle, 5, "its end")
    assert [m[2]["timeout"] for m in cam.moves if m[1] == "ContinuousMove"] == [1.0]


def test_fractional_timeout_works_on_a_camera_without_the_quirk(camera):
    cam, server = camera()
    p = Ptz(server)
    p.continuous(0.3, 0, timeout="PT0.5S")
    wait_for(p.idle, 5, "the half-second move's end")
    assert abs(p.pose()[0] - 0.5 * 30 / 170) < 0.02


def test_velocity_sign_differs_from_position_sign(camera):
    cam, server = camera(velocity_sign=(-1, 1))  # a Tapo C220: positive pan velocity, pan position falls
    p = Ptz(server)
    p.continuous(0.5, 0.5, timeout="PT1S")
    wait_for(lambda: p.pose()[0] < -0.05 and p.pose()[1] > 0.05, 5, "pan down, tilt up")
    wait_for(p.idle, 5, "the end")
    p.absolute(0.5, 0.5)
    wait_for(lambda: p.pose()[:2] == (0.5, 0.5), 5, "positions keep their sign")


def test_move_status_unknown_and_position_static(camera):
    cam, server = camera(move_status_unknown=True)
    p = Ptz(server)
    p.continuous(0.5, 0, timeout="PT1S")
    wait_for(lambda: p.pose()[0] > 0.05, 5, "the position moving")
    assert p.status().MoveStatus.PanTilt == "UNKNOWN"
    wait_for(cam.still, 5, "the move's end")
    assert p.status().MoveStatus.PanTilt == "UNKNOWN"

    cam2, server2 = camera(position_static=True)
    q = Ptz(server2)
    q.continuous(0.5, 0, timeout="PT10S")
    wait_for(lambda: cam2.pose()[0] > 10, 5, "the head to turn 10°")
    assert q.pose()[0] == 0 and q.status().MoveStatus.PanTilt == "MOVING"
    q.stop()
    wait_for(lambda: q.pose()[0] > 10 / 170, 5, "the position once still")
    assert q.idle()


def test_no_position_status_moves_the_head_all_the_same(camera):
    """A cheap continuous-only camera whose GetStatus has no Position at all (PTZStatus's Position
    is optional in the schema): onvif-zeep reads a status without one, and the moves still turn
    the head and Stop holds it. (The emulator's PTZ capabilities also say StatusPosition="false";
    the ptz.wsdl onvif-zeep ships predates that attribute, so zeep does not read it.)"""
    cam, server = camera(motion=("continuous",), no_position=True)
    p = Ptz(server)
    status = p.status()
    assert status.Position is None and status.MoveStatus.PanTilt == "IDLE", status
    p.continuous(0.5, -0.5, timeout="PT5S")
    wait_for(lambda: cam.pose()[0] > 10 and cam.pose()[1] < 20, 5, "the head turning right and down")
    assert p.status().Position is None and p.status().MoveStatus.PanTilt == "MOVING"
    p.stop()
    assert cam.still() and p.idle()


def test_status_fault_answers_get_status_with_no_status_and_the_moves_still_turn_the_head(camera):
    """`status_fault`: GetStatus answered with the fault onvif_simple_server sends where the camera
    has no position (HTTP 500, env:Receiver / ter:Action / ter:NoStatus), read by onvif-zeep as a
    SOAP fault with its subcodes; the moves still turn the head and Stop holds it; switched off
    while the server runs, GetStatus gives the position."""
    cam, server = camera(motion=("continuous",), status_fault=True)
    p = Ptz(server)
    f = fault_of(p.raw.GetStatus, ProfileToken=p.token)
    assert subcodes(f) == ["Action", "NoStatus"] and f.message == "No PTZ status is available in the requested Media Profile", (f.code, f.message)
    p.continuous(0.5, 0, timeout="PT5S")
    wait_for(lambda: cam.pose()[0] > 10, 5, "the head turning right")
    assert "NoStatus" in subcodes(fault_of(p.raw.GetStatus, ProfileToken=p.token))
    p.stop()
    assert cam.still()
    cam.status_fault = False
    assert p.pose()[0] > 10 / 170 and p.idle()


def test_latency_delays_every_reply(camera):
    cam, server = camera(auth="wsse", latency=0.5)
    p = Ptz(server)
    for _ in range(2):
        started = time.monotonic()
        p.status()
        assert time.monotonic() - started >= 0.5
    # a move acts when it arrives, its reply comes late
    p.continuous(0.5, 0, timeout="PT5S")
    replied = time.monotonic()
    assert replied - cam.moves[-1][0] >= 0.4, replied - cam.moves[-1][0]
    p.stop()
    assert cam.max_in_flight == 1
    # two clients at once: both in flight together (what a driver must not do to one camera)
    import threading
    q = Ptz(server)
    t = threading.Thread(target=q.status)
    t.start()
    p.status()
    t.join(10)
    assert cam.max_in_flight == 2


def test_reboot_drops_connections_refuses_then_answers_with_the_pose_kept_or_reset(camera):
    import requests
    cam, server = camera(auth="wsse")
    p = Ptz(server)
    p.continuous(0.5, 0, timeout="PT30S")
    wait_for(lambda: p.pose()[0] > 0.1, 5, "moving")
    import threading
    rebooter = threading.Thread(target=server.reboot, kwargs={"down_for": 1.5})
    rebooter.start()
    wait_for(server.down.is_set, 5, "the reboot")
    with pytest.raises(requests.exceptions.ConnectionError):
        p.raw.GetStatus(ProfileToken=p.token)
    rebooter.join(10)
    kept = cam.pose()[0]
    p2 = Ptz(server)
    assert p2.idle(), "a reboot stops the head"
    assert abs(p2.pose()[0] - cam.pan.to_generic(kept)) < 1e-5 and p2.pose()[0] > 0.1
    server.reboot(down_for=0.2, reset_pose=True)
    assert Ptz(server).pose() == (0, 0, 0)
    assert len(server.reboots) == 2


def test_injected_http_errors_bad_and_huge_replies(camera):
    import requests
    cam, server = camera(auth="wsse", huge_bytes=4 << 20)
    p = Ptz(server)
    cam.inject.append("http500")
    with pytest.raises(Exception):  # zeep 4.3.3 fails on a 500 with no XML body (an AttributeError)
        p.raw.GetStatus(ProfileToken=p.token)
    assert cam.log[-1][2:] == ("GetStatus", "-", 500)
    cam.inject.append("http401")
    with pytest.raises(Exception):  # the same for a 401 with a text body
        p.raw.GetStatus(ProfileToken=p.token)
    assert cam.log[-1][2:] == ("GetStatus", "-", 401)
    for fault, status in (("http500", 500), ("http401", 401)):  # the status line itself
        cam.inject.append(fault)
        conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
        conn.request("POST", "/onvif/ptz_service", oc.envelope("<tptz:GetNodes/>"), {"Content-Type": "application/soap+xml"})
        assert conn.getresponse().status == status
        conn.close()
    cam.inject.append("malformed")
    with pytest.raises(Exception):
        p.raw.GetStatus(ProfileToken=p.token)
    assert cam.log[-1][2:] == ("GetStatus", "wsse", 200)
    # zeep (lxml) recovers what it can from a cut-off envelope: an empty status, no error. A client
    # must check that what it needs is there.
    cam.inject.append("truncated")
    cut = p.raw.GetStatus(ProfileToken=p.token)
    assert cut.Position is None and cut.MoveStatus is None
    cam.inject.append("close")
    with pytest.raises(requests.exceptions.ConnectionError):
        p.raw.GetStatus(ProfileToken=p.token)
    cam.inject.append("huge")
    started = time.monotonic()
    with pytest.raises(Exception):
        p.raw.GetStatus(ProfileToken=p.token)
    assert time.monotonic() - started < 20
    # the camera is fine afterwards
    assert p.idle()
    assert not cam.inject


# -- WS-Discovery

def probe_bytes(types):
    """A Probe made by WSDiscovery itself (its constructProbe and createSOAPMessage)."""
    from wsdiscovery.actions import constructProbe
    from wsdiscovery.message import createSOAPMessage
    env = constructProbe(types, [])
    return env, createSOAPMessage(env).encode("utf-8")


def test_directed_probe_on_loopback_parsed_by_wsdiscovery(camera):
    """A unicast (directed) Probe to the responder's address. WSDiscovery 2.1.2 sends a directed
    Probe from a socket it never reads (its searchServices(address=, port=) cannot see the answer),
    so the Probe and the parsing of the ProbeMatch are the library's, the UDP socket is ours."""
    from wsdiscovery import QName
    from wsdiscovery.message import parseSOAPMessage
    from wsdiscovery.namespaces import NS_ACTION_PROBE_MATCH
    cam, server = camera()
    responder = oc.DiscoveryResponder(cam, server, host="127.0.0.1", port=0).start()
    try:
        env, data = probe_bytes([QName(oc.DN, "NetworkVideoTransmitter", "dn")])
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(data, ("127.0.0.1", responder.port))
            reply, source = s.recvfrom(65536)
            assert source == ("127.0.0.1", responder.port)
            parsed = parseSOAPMessage(reply, source[0])
            assert parsed.getAction() == NS_ACTION_PROBE_MATCH
            assert parsed.getRelatesTo() == env.getMessageId()
            match = parsed.getProbeResolveMatches()[0]
            assert match.getXAddrs() == [server.xaddr]
            assert {(t.getNamespace(), t.getLocalname()) for t in match.getTypes()} >= {(oc.DN, "NetworkVideoTransmitter")}
            scopes = [str(x) for x in match.getScopes()]
            assert "onvif://www.onvif.org/type/ptz" in scopes and f"onvif://www.onvif.org/name/{cam.name}" in scopes
            assert any(x.startswith("onvif://www.onvif.org/hardware/") for x in scopes)
            # the same Probe again (SOAP-over-UDP repeats) is not answered twice; a Probe for
            # another type is not answered at all
            s.sendto(data, ("127.0.0.1", responder.port))
            _, other = probe_bytes([QName("http://example.com/none", "Printer", "p")])
            s.sendto(other, ("127.0.0.1", responder.port))
            wait_for(lambda: len(responder.probes) == 3, 5, "three Probes")
            s.settimeout(0.3)
            with pytest.raises(socket.timeout):
                s.recvfrom(65536)
        assert [m for _, _, _, m in responder.probes] == [True, True, False]
    finally:
        responder.stop()


NAMESPACE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {peers!r})
    import onvif_camera as oc
    from wsdiscovery.discovery import ThreadedWSDiscovery
    from wsdiscovery import QName
    from onvif import ONVIFCamera
    cam = oc.Camera(username="u", password="p", auth="wsse", name="ns-camera")
    server = oc.Server(cam, host="10.77.0.1").start()
    responder = oc.DiscoveryResponder(cam, server, multicast=True, interface="10.77.0.1").start()
    wsd = ThreadedWSDiscovery()
    wsd.start()
    found = []
    deadline = time.monotonic() + 20
    while not found and time.monotonic() < deadline:
        found = wsd.searchServices(types=[QName(oc.DN, "NetworkVideoTransmitter")], timeout=1)
    wsd.stop()
    assert found, "no ProbeMatch"
    xaddr = found[0].getXAddrs()[0]
    scopes = [str(s) for s in found[0].getScopes()]
    host, port = xaddr.split("//")[1].split("/")[0].split(":")
    model = ONVIFCamera(host, int(port), "u", "p", adjust_time=True).devicemgmt.GetDeviceInformation().Model
    print("FOUND " + json.dumps({{"xaddr": xaddr, "model": model, "scopes": scopes, "answered": len(responder.answered),
                                  "probes": len(responder.probes)}}), flush=True)
""")


def test_multicast_probe_in_a_network_namespace_found_by_wsdiscovery(tmp_path):
    """WSDiscovery probes 239.255.255.250:3702 the way a client on a LAN would. The test runs in a
    network namespace of its own (unshare -n) holding only lo and a veth pair (10.77.0.1 on one end,
    multicast routed to it): WSDiscovery ignores loopback addresses, and no datagram may leave the
    machine. onvif-zeep then connects to the XAddr found."""
    script = tmp_path / "ns_discovery.py"
    script.write_text(NAMESPACE_SCRIPT.format(peers=str(ROOT / "tests" / "peers")))
    p = network_namespace.run_python(script, timeout=60)
    assert p.returncode == 0, p.stderr[-3000:]
    found = json.loads(next(x for x in p.stdout.splitlines() if x.startswith("FOUND "))[6:])
    assert found["xaddr"].startswith("http://10.77.0.1:") and found["xaddr"].endswith("/onvif/device_service")
    assert found["model"] == "Emulated PTZ"
    assert "onvif://www.onvif.org/name/ns-camera" in found["scopes"]
    assert found["answered"] == 1 and found["probes"] >= 2, found  # WSDiscovery repeats its Probe: one answer
