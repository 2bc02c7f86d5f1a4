"""dockd.conf as dockd.conf(5) documents it, through `dockd --check-config`: every documented key is
taken, nothing else is, every number is taken as an integer and as a float, and the command line
follows the same rules (issue 13)."""
import re
import subprocess

import pytest

from conftest import BIN, ROOT

MAN = ROOT / "docs" / "man" / "dockd.conf.5"

# A value of each documented type, and the extra keys a [[device]] needs to be a whole device.
SAMPLES = {"string": '"x"', "boolean": "true", "integer": "2", "number": "2.5"}
STRING_VALUES = {("daemon", "socket_mode"): '"0640"', ("daemon", "log_level"): '"debug"', ("daemon", "socket"): '"/tmp/d.sock"',
                 ("tracking", "lost_behaviour"): '"hold"', ("device", "driver"): '"native"'}
# Each key inside a [[device]] that makes sense for it: the endpoint and driver a key belongs to.
DEVICE_CONTEXT = {
    "path": "", "unix": "", "bluetooth": "", "udp": "", "tcp": "", "driver": 'path = "/dev/ttyACM0"',
    "baud": 'path = "/dev/ttyACM0"', "channel": 'bluetooth = "AA:BB:CC:DD:EE:FF"',
    "address": 'udp = "127.0.0.1:52381"\ndriver = "visca"', "profile": 'udp = "127.0.0.1:52381"\ndriver = "visca"',
    "transport": 'udp = "127.0.0.1:52381"\ndriver = "visca"', "poll_hz": 'udp = "127.0.0.1:52381"\ndriver = "visca"',
    "name": 'udp = "127.0.0.1:52381"\ndriver = "visca"',
    "system_id": 'udp = "127.0.0.1:14550"\ndriver = "mavlink"', "component_id": 'udp = "127.0.0.1:14550"\ndriver = "mavlink"',
    "target_component": 'udp = "127.0.0.1:14550"\ndriver = "mavlink"', "feedback_hz": 'udp = "127.0.0.1:14550"\ndriver = "mavlink"',
    "max_speed": 'udp = "127.0.0.1:14550"\ndriver = "mavlink"',
}
DEVICE_VALUES = {"driver": '"native"', "path": '"/dev/ttyACM0"', "unix": '"/tmp/stand.sock"', "bluetooth": '"AA:BB:CC:DD:EE:FF"',
                 "udp": '"127.0.0.1:52381"', "tcp": '"127.0.0.1:5678"', "baud": "115200", "channel": "3", "address": "2",
                 "profile": '"generic-ptzoptics"', "transport": '"ip"', "poll_hz": "20", "name": '"CAM"', "system_id": "2",
                 "component_id": "190", "target_component": "154", "feedback_hz": "50", "max_speed": "2"}


def documented_keys():
    """(section, key, type) for every `.It Cm KEY Ar TYPE` under a `.Ss [SECTION]` of dockd.conf(5)."""
    keys, section = [], None
    for line in MAN.read_text().splitlines():
        if m := re.match(r"\.Ss \[\[?(\w+)\]\]?", line):
            section = m.group(1)
        elif (m := re.match(r"\.It Cm (\w+) Ar (\w+)$", line)) and section:
            keys.append((section, m.group(1), m.group(2)))
    return keys


def check(tmp_path, text, *args):
    config = tmp_path / "dockd.conf"
    config.write_text(text)
    return subprocess.run([str(BIN / "dockd"), "--config", str(config), "--check-config", *args],
                          capture_output=True, text=True, timeout=30)


def document(section, key, value):
    if section == "device":
        context = DEVICE_CONTEXT[key]
        return f"[[device]]\n{context}\n{key} = {value}\n"
    return f"[{section}]\n{key} = {value}\n"


def known_to_dockd(tmp_path, header):
    """The keys dockd knows in a section (or the sections, for the top level), as its refusal lists them."""
    out = check(tmp_path, f"{header}\nzzzzzzzzzzzz = 1\n")
    known = re.search(r"\(known: ([^)]*)\)", out.stderr)
    assert out.returncode == 78 and known, out.stderr
    return set(known.group(1).split(", "))


def test_the_manual_documents_exactly_what_dockd_takes(tmp_path):
    documented = documented_keys()
    assert known_to_dockd(tmp_path, "") == {s for s, _, _ in documented}
    for section in ("daemon", "hotplug", "camera", "tracking"):
        assert known_to_dockd(tmp_path, f"[{section}]") == {k for s, k, _ in documented if s == section}, section
    device = known_to_dockd(tmp_path, '[[device]]\npath = "/dev/ttyACM0"')
    assert device == {k for s, k, _ in documented if s == "device"}


@pytest.mark.parametrize("section,key,kind", documented_keys(), ids=lambda v: str(v))
def test_every_documented_key_is_taken(tmp_path, section, key, kind):
    value = DEVICE_VALUES[key] if section == "device" else STRING_VALUES.get((section, key), SAMPLES[kind])
    if kind in ("integer", "number") and section != "device":
        value = str(WHOLE[(section, key)])
    out = check(tmp_path, document(section, key, value))
    assert out.returncode == 0, out.stdout + out.stderr


NUMERIC = [(s, k, t) for s, k, t in documented_keys() if t in ("integer", "number")]
WHOLE = {("daemon", "heartbeat_timeout_ms"): 600, ("device", "baud"): 9600, ("device", "channel"): 3, ("device", "address"): 2,
         ("device", "poll_hz"): 20, ("device", "system_id"): 2, ("device", "component_id"): 190,
         ("device", "target_component"): 154, ("device", "feedback_hz"): 50, ("device", "max_speed"): 2,
         ("hotplug", "baud"): 9600, ("camera", "horizontal_fov_deg"): 60, ("camera", "vertical_fov_deg"): 40,
         ("tracking", "lost_hold_s"): 2}


@pytest.mark.parametrize("section,key,kind", NUMERIC, ids=lambda v: str(v))
def test_every_numeric_key_takes_an_integer_and_a_float(tmp_path, section, key, kind):
    whole = WHOLE[(section, key)]
    for value in (f"{whole}", f"{whole}.0"):
        out = check(tmp_path, document(section, key, value))
        assert out.returncode == 0, f"{key} = {value}: {out.stdout}{out.stderr}"
    if kind == "integer":  # a fraction is refused, with its line
        out = check(tmp_path, document(section, key, f"{whole}.5"))
        assert out.returncode == 78 and "must be a whole number" in out.stderr, out.stderr


def test_numeric_keys_are_all_covered():
    assert {(s, k) for s, k, _ in NUMERIC} == set(WHOLE)


def test_unknown_keys_and_sections_are_refused_with_their_lines(tmp_path):
    out = check(tmp_path, '[daemon]\nlog_levle = "debug"\n\n[trackin]\nlost_hold_s = 1\n')
    assert out.returncode == 78, out
    assert "dockd.conf:2:1: unknown key daemon.log_levle (did you mean log_level?)" in out.stderr, out.stderr
    assert "dockd.conf:4:1: unknown section trackin (did you mean tracking?)" in out.stderr, out.stderr
    # The daemon refuses it the same way at start.
    config = tmp_path / "dockd.conf"
    start = subprocess.run([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock")],
                           capture_output=True, text=True, timeout=30)
    assert start.returncode == 78 and "unknown key daemon.log_levle" in start.stderr


def test_the_log_level_has_one_rule_in_the_file_and_on_the_command_line(tmp_path):
    in_file = check(tmp_path, '[daemon]\nlog_level = "verbose"\n')
    on_line = check(tmp_path, "", "--log-level", "verbose")
    assert in_file.returncode == 78 and "'verbose' is not one of trace, debug, info" in in_file.stderr, in_file
    assert on_line.returncode == 64 and "'verbose' is not one of trace, debug, info" in on_line.stderr, on_line
    assert check(tmp_path, "", "--log-level", "debug").returncode == 0


def test_a_named_configuration_must_exist_and_ignore_missing_config_allows_it(tmp_path):
    missing = str(tmp_path / "nowhere.conf")
    out = subprocess.run([str(BIN / "dockd"), "--config", missing, "--check-config"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 78 and f"{missing}: cannot read" in out.stderr, out
    out = subprocess.run([str(BIN / "dockd"), "--config", missing, "--ignore-missing-config", "--check-config"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "no configuration file (the defaults): good" in out.stdout, out


def test_check_config_builds_each_driver_and_names_what_the_address_filter_blocks(tmp_path):
    out = check(tmp_path, '[[device]]\nudp = "192.0.2.10:52381"\ndriver = "visca"\nprofile = "no-such-camera"\n')
    assert out.returncode == 78 and "VISCA profile not found: no-such-camera" in out.stdout, out
    assert "192.0.2.10 is outside dockd.service's IPAddressAllow=" in out.stdout, out
    out = check(tmp_path, '[[device]]\nudp = "192.168.1.20:52381"\ndriver = "visca"\n')
    assert out.returncode == 0 and "IPAddressAllow" not in out.stdout, out


def test_every_tool_tells_its_version():
    version = re.search(r'static let string = "(.*)"', (ROOT / "Sources/DockVersion/DockVersion.swift").read_text()).group(1)
    changelog = (ROOT / "debian" / "changelog").read_text().splitlines()[0]
    assert changelog.startswith(f"dockd ({version})"), f"debian/changelog has no entry for {version}: {changelog}"
    for tool in ("dockd", "dockctl", "dock-sim", "dock-bench", "dock-mot", "dock-driver-probe"):
        out = subprocess.run([str(BIN / tool), "--version"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and out.stdout.strip() == version, (tool, out)
