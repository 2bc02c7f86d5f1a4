"""`dockctl discover`: WS-Discovery Probes from the real dockctl, answered by the project's ONVIF
camera emulator (tests/peers/onvif_camera.py), by the PyPI WSDiscovery library's own publisher (a
peer not written here), and by a LAN's garbage. Multicast runs in a network namespace of the test's
own (unshare -n, a veth pair): no datagram leaves the machine."""
import json
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from conftest import BIN
import network_namespace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import onvif_camera as oc  # noqa: E402

DOCKCTL = str(BIN / "dockctl")


def discover(*args, timeout=60):
    # Timeouts of 5 s: dockctl waits out the whole of its --timeout, and a loaded machine (CI beside
    # builds) has answered a directed Probe later than 2 s.
    return subprocess.run([DOCKCTL, "discover", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def camera():
    cam = oc.Camera(name="desk cam")
    server = oc.Server(cam, host="127.0.0.1", port=0).start()
    responder = oc.DiscoveryResponder(cam, server, host="127.0.0.1", port=0).start()
    yield cam, server, responder
    responder.stop()
    server.stop()


def test_directed_probe_lists_the_camera_and_its_attach_line(camera):
    cam, server, responder = camera
    p = discover("--address", f"127.0.0.1:{responder.port}", "--timeout", "5")
    assert p.returncode == 0, p.stderr
    host_port = server.xaddr.split("//")[1].split("/")[0]
    assert p.stdout == f'{host_port}  Emulated_PTZ "desk cam"  ptz yes  dockctl attach onvif://USER@{host_port}\n'
    # Each type is probed alone and each Probe sent twice; the camera answers each message once,
    # and the two answers of one camera are one line.
    assert len(responder.probes) == 4 and len(responder.answered) == 2, responder.probes

    j = discover("--address", f"127.0.0.1:{responder.port}", "--timeout", "5", "--json")
    assert j.returncode == 0, j.stderr
    (found,) = [json.loads(line) for line in j.stdout.splitlines()]
    assert found["endpoint"] == f"urn:uuid:{cam.uuid}"
    assert found["addresses"] == [server.xaddr]
    assert found["name"] == "desk cam" and found["hardware"] == "Emulated_PTZ" and found["ptz"] is True
    assert found["attach"] == f"onvif://USER@{host_port}"
    assert set(found["types"]) == {"dn:NetworkVideoTransmitter", "tds:Device"}


def test_nothing_answers_exit_10(camera):
    _, _, responder = camera
    responder.answer = False
    p = discover("--address", f"127.0.0.1:{responder.port}", "--timeout", "0.5")
    assert p.returncode == 10, p
    assert p.stdout == ""
    assert "no ONVIF camera answered within 0.5 s" in p.stderr


@pytest.mark.parametrize("args", [["--timeout", "0"], ["--timeout", "61"], ["--address", "127.0.0.1:0"],
                                  ["--address", "127.0.0.1:x"], ["--address", "[::1"]])
def test_bad_options_exit_64(args):
    p = discover(*args)
    assert p.returncode == 64, p


def answer_first_probe(sock, responder, variants):
    """Reads dockctl's first Probe on `sock`, has the camera answer it, and sends every variant of
    that answer (a function of the answer's bytes) back to back."""
    while True:
        data, source = sock.recvfrom(65536)
        if b"Probe>" in data and b"MessageID" in data:
            break
    relay = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    relay.bind(("127.0.0.1", 0))
    relay.settimeout(30)
    relay.sendto(data, ("127.0.0.1", responder.port))
    reply, _ = relay.recvfrom(65536)
    for variant in variants(reply):
        sock.sendto(variant, source)


def test_garbage_and_foreign_answers_are_told_and_skipped(camera):
    """A LAN carries other datagrams: a reply that is not XML is reported on stderr; a ProbeMatch
    answering someone else's Probe and a Hello are not devices; the camera is still listed."""
    _, server, responder = camera
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(30)
    foreign = (f'<?xml version="1.0"?><s:Envelope xmlns:s="{oc.SOAP}" xmlns:a="{oc.WSA}" xmlns:d="{oc.WSD}"><s:Header>'
               f'<a:RelatesTo>urn:uuid:00000000-0000-4000-8000-000000000000</a:RelatesTo></s:Header><s:Body><d:ProbeMatches>'
               f'<d:ProbeMatch><a:EndpointReference><a:Address>urn:uuid:not-this</a:Address></a:EndpointReference>'
               f'<d:XAddrs>http://10.9.9.9/onvif/device_service</d:XAddrs></d:ProbeMatch></d:ProbeMatches></s:Body></s:Envelope>')

    def garbage_foreign_and_the_answer(reply):
        return [b"\x00garbage, not XML", foreign.encode(), reply]
    t = threading.Thread(target=answer_first_probe, args=(sock, responder, garbage_foreign_and_the_answer), daemon=True)
    t.start()
    p = discover("--address", f"127.0.0.1:{sock.getsockname()[1]}", "--timeout", "5", "--json")
    t.join(30)
    assert p.returncode == 0, (p.stderr, responder.probes)
    (found,) = [json.loads(line) for line in p.stdout.splitlines()]
    assert found["addresses"] == [server.xaddr]
    assert p.stderr.count("ignored a datagram that is not WS-Discovery") == 1, p.stderr
    assert "not XML" in p.stderr


def test_a_burst_of_answers_from_many_cameras_is_all_listed(camera):
    """Sixteen cameras answering one multicast Probe answer within the same millisecond: every
    answer waits in dockctl's receive buffer until it reads them, and none may be dropped (a receive
    buffer shrunk to its minimum kept only the first)."""
    cam, server, responder = camera
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(30)

    def sixteen(reply):
        return [reply.replace(str(cam.uuid).encode(), f"{n:08d}-0000-4000-8000-000000000000".encode())
                     .replace(server.xaddr.encode(), f"http://10.0.0.{n}/onvif/device_service".encode())
                for n in range(1, 17)]
    t = threading.Thread(target=answer_first_probe, args=(sock, responder, sixteen), daemon=True)
    t.start()
    p = discover("--address", f"127.0.0.1:{sock.getsockname()[1]}", "--timeout", "5", "--json")
    t.join(30)
    assert p.returncode == 0, p.stderr
    found = [json.loads(line) for line in p.stdout.splitlines()]
    assert sorted(f["addresses"][0] for f in found) == sorted(f"http://10.0.0.{n}/onvif/device_service" for n in range(1, 17))


def test_an_answer_larger_than_two_kilobytes_is_read_whole(camera):
    """A camera with many scopes answers in a datagram of several kilobytes (SOAP-over-UDP allows up
    to the UDP maximum): it is read whole, not cut at a default buffer's size and called not XML."""
    cam, server, responder = camera
    responder.scopes += [f"onvif://www.onvif.org/location/building/wing-{n:03d}-of-the-east-campus" for n in range(80)]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(30)
    sizes = []

    def as_is(reply):
        sizes.append(len(reply))
        return [reply]
    t = threading.Thread(target=answer_first_probe, args=(sock, responder, as_is), daemon=True)
    t.start()
    p = discover("--address", f"127.0.0.1:{sock.getsockname()[1]}", "--timeout", "5", "--json")
    t.join(30)
    assert sizes and sizes[0] > 4096, sizes
    assert p.returncode == 0, p.stderr
    (found,) = [json.loads(line) for line in p.stdout.splitlines()]
    assert found["addresses"] == [server.xaddr] and found["name"] == "desk cam"
    assert p.stderr == ""


NAMESPACE_SCRIPT = textwrap.dedent("""
    import json, subprocess, sys, time
    sys.path.insert(0, {peers!r})
    import onvif_camera as oc
    from wsdiscovery import QName, Scope
    from wsdiscovery.publishing import ThreadedWSPublishing
    cam = oc.Camera(name="ns-camera")
    server = oc.Server(cam, host="10.77.0.1").start()
    responder = oc.DiscoveryResponder(cam, server, multicast=True, interface="10.77.0.1").start()
    publisher = ThreadedWSPublishing()
    publisher.start()
    publisher.publishService([QName("http://www.onvif.org/ver10/network/wsdl", "NetworkVideoTransmitter", "dn")],
                             [Scope("onvif://www.onvif.org/hardware/Fixed%20Dome"), Scope("onvif://www.onvif.org/name/hall"),
                              Scope("onvif://www.onvif.org/type/video_encoder")],
                             ["http://10.77.0.1:8899/onvif/device_service"])
    p = subprocess.run([{dockctl!r}, "discover", "--json", "--timeout", "5"], capture_output=True, text=True, timeout=60)
    publisher.stop()
    print("RESULT " + json.dumps({{"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "xaddr": server.xaddr}}), flush=True)
""")


def test_multicast_finds_the_emulator_and_an_independent_publisher(tmp_path):
    script = tmp_path / "ns_discover.py"
    script.write_text(NAMESPACE_SCRIPT.format(peers=str(ROOT / "tests" / "peers"), dockctl=DOCKCTL))
    p = network_namespace.run_python(script)
    assert p.returncode == 0, p.stderr[-3000:]
    result = json.loads(next(x for x in p.stdout.splitlines() if x.startswith("RESULT "))[7:])
    assert result["rc"] == 0, result
    found = {d["name"]: d for d in map(json.loads, result["stdout"].splitlines())}
    assert set(found) == {"ns-camera", "hall"}, result
    assert found["ns-camera"]["ptz"] is True and found["ns-camera"]["addresses"] == [result["xaddr"]]
    assert found["hall"]["ptz"] is False and found["hall"]["hardware"] == "Fixed Dome"
    assert found["hall"]["attach"] == "onvif://USER@10.77.0.1:8899"
