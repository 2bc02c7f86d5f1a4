"""dockd.conf as dockd.conf(5) documents it, through `dockd --check-config`: every documented key is
taken, nothing else is, every number is taken as an integer and as a float, and the command line
follows the same rules (issue 13)."""
import json
import math
import re
import subprocess
import sys

import pytest

from conftest import BIN, ROOT

MAN = ROOT / "docs" / "man" / "dockd.conf.5"

# A value of each documented type, and the extra keys a [[device]] needs to be a whole device.
SAMPLES = {"string": '"x"', "boolean": "true", "integer": "2", "number": "2.5"}
STRING_VALUES = {("daemon", "socket_mode"): '"0640"', ("daemon", "log_level"): '"debug"', ("daemon", "socket"): '"/tmp/d.sock"',
                 ("tracking", "lost_behaviour"): '"hold"', ("device", "driver"): '"native"'}
# The keys every [[device]] has (the link, the driver, the link's settings), with the context each needs.
DEVICE_CONTEXT = {"path": "", "unix": "", "bluetooth": "", "udp": "", "tcp": "", "video": 'driver = "v4l2"', "onvif": 'driver = "onvif"', "driver": 'path = "/dev/ttyACM0"',
                  "baud": 'path = "/dev/ttyACM0"', "channel": 'bluetooth = "AA:BB:CC:DD:EE:FF"'}
DEVICE_VALUES = {"driver": '"native"', "path": '"/dev/ttyACM0"', "unix": '"/tmp/stand.sock"', "bluetooth": '"AA:BB:CC:DD:EE:FF"',
                 "udp": '"127.0.0.1:52381"', "tcp": '"127.0.0.1:5678"', "video": '"/dev/video0"', "onvif": '"admin@192.0.2.7:8080"', "baud": "115200", "channel": "3"}


def drivers():
    """The driver table, as dockd lists it: each driver's options come from there, not from this file."""
    out = subprocess.run([str(BIN / "dockd"), "--list-drivers", "--json"], capture_output=True, text=True, timeout=30, check=True)
    return {d["name"]: d for d in json.loads(out.stdout)}


def option_value(option):
    """A value the option takes: its default, else the bottom of its range, else a word."""
    if "default" in option:
        value = option["default"]
        return f'"{value}"' if isinstance(value, str) else str(value)
    if "range" in option:
        return str(option["range"][0])
    return '"CAM"'


def driver_context(driver):
    link = driver["links"][0]  # dockd.conf's key for it
    return f'{link} = {DEVICE_VALUES[link]}\ndriver = "{driver["name"]}"'


def documented_keys():
    """(section, key, type, driver) for every `.It Cm KEY Ar TYPE` under a `.Ss [SECTION]` of
    dockd.conf(5); a driver's options are under `.Ss [[device]] driver = NAME`."""
    keys, section, driver = [], None, None
    for line in MAN.read_text().splitlines():
        if m := re.match(r"\.Ss \[\[?(\w+)\]\]?(?: driver = ([\w-]+))?", line):
            section, driver = m.group(1), m.group(2)
        elif (m := re.match(r"\.It Cm (\w+) Ar (\w+)$", line)) and section:
            keys.append((section, m.group(1), m.group(2), driver))
    return keys


def check(tmp_path, text, *args):
    config = tmp_path / "dockd.conf"
    config.write_text(text)
    return subprocess.run([str(BIN / "dockd"), "--config", str(config), "--check-config", *args],
                          capture_output=True, text=True, timeout=30)


# A [sweep] names its button and both ends together: the others, beside the key under test.
SWEEP_CONTEXT = {"button": "1", "from_deg": "-10", "to_deg": "10"}


def document(section, key, value, driver=None):
    if section == "sweep":
        others = "".join(f"{k} = {v}\n" for k, v in SWEEP_CONTEXT.items() if k != key)
        return f"[sweep]\n{others}{key} = {value}\n"
    if driver:
        return f"[[device]]\n{driver_context(drivers()[driver])}\n{key} = {value}\n"
    if section == "device":
        return f"[[device]]\n{DEVICE_CONTEXT[key]}\n{key} = {value}\n"
    return f"[{section}]\n{key} = {value}\n"


def known_to_dockd(tmp_path, header):
    """The keys dockd knows in a section (or the sections, for the top level), as its refusal lists them."""
    out = check(tmp_path, f"{header}\nzzzzzzzzzzzz = 1\n")
    known = re.search(r"\(known: ([^)]*)\)", out.stderr)
    assert out.returncode == 78 and known, out.stderr
    return set(known.group(1).split(", "))


def test_the_manual_documents_exactly_what_dockd_takes(tmp_path):
    documented = documented_keys()
    assert known_to_dockd(tmp_path, "") == {s for s, _, _, _ in documented}
    for section in ("daemon", "hotplug", "camera", "tracking", "sweep"):
        assert known_to_dockd(tmp_path, f"[{section}]") == {k for s, k, _, _ in documented if s == section}, section
    common = {k for s, k, _, d in documented if s == "device" and d is None}
    for name, driver in drivers().items():
        device = known_to_dockd(tmp_path, f"[[device]]\n{driver_context(driver)}")
        assert device == common | {k for s, k, _, d in documented if d == name}, name


def test_the_manuals_driver_sections_are_written_from_the_driver_table():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "driver_manual.py"), "--bin", str(BIN)],
                         capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() in MAN.read_text(), "run: python3 scripts/driver_manual.py --write"


def test_the_udev_rule_marks_what_the_hotplug_table_matches():
    rule = (ROOT / "udev" / "70-dockd.rules").read_text()
    for name, driver in drivers().items():
        if hotplug := driver.get("hotplug"):
            assert f'SUBSYSTEM!="{hotplug["subsystem"]}"' in rule or f'SUBSYSTEM=="{hotplug["subsystem"]}", GOTO=' in rule, name
            assert f'ENV{{{hotplug["marker"]}}}' in rule, name
            for usb in hotplug["usb"]:
                vendor, product = usb.split(":")
                assert f'ATTRS{{idVendor}}=="{vendor}", ATTRS{{idProduct}}=="{product}", ENV{{{hotplug["marker"]}}}="1"' in rule, name


@pytest.mark.parametrize("section,key,kind,driver", documented_keys(), ids=lambda v: str(v))
def test_every_documented_key_is_taken(tmp_path, section, key, kind, driver):
    if driver:
        option = next(o for o in drivers()[driver]["options"] if o["key"] == key)
        value = option_value(option)
    elif section == "device":
        value = DEVICE_VALUES[key]
    else:
        value = STRING_VALUES.get((section, key), SAMPLES[kind])
    if kind in ("integer", "number") and section != "device":
        value = str(WHOLE[(section, key)])
    out = check(tmp_path, document(section, key, value, driver))
    assert out.returncode == 0, out.stdout + out.stderr


NUMERIC = [(s, k, t, d) for s, k, t, d in documented_keys() if t in ("integer", "number")]
WHOLE = {("daemon", "heartbeat_timeout_ms"): 600, ("device", "baud"): 9600, ("device", "channel"): 3,
         ("hotplug", "baud"): 9600, ("camera", "horizontal_fov_deg"): 60, ("camera", "vertical_fov_deg"): 40,
         ("tracking", "lost_hold_s"): 2, ("sweep", "button"): 1, ("sweep", "from_deg"): -20, ("sweep", "to_deg"): 20,
         ("sweep", "rate_deg_s"): 5}


def whole(section, key, driver):
    if driver:
        option = next(o for o in drivers()[driver]["options"] if o["key"] == key)
        return math.ceil(option["range"][0])  # the smallest whole number it takes
    return WHOLE[(section, key)]


@pytest.mark.parametrize("section,key,kind,driver", NUMERIC, ids=lambda v: str(v))
def test_every_numeric_key_takes_an_integer_and_a_float(tmp_path, section, key, kind, driver):
    n = whole(section, key, driver)
    for value in (f"{n}", f"{n}.0"):
        out = check(tmp_path, document(section, key, value, driver))
        assert out.returncode == 0, f"{key} = {value}: {out.stdout}{out.stderr}"
    if kind == "integer":  # a fraction is refused, with its line
        out = check(tmp_path, document(section, key, f"{n}.5", driver))
        assert out.returncode == 78 and "must be a whole number" in out.stderr, out.stderr


def test_numeric_keys_are_all_covered():
    assert {(s, k) for s, k, _, d in NUMERIC if d is None} == set(WHOLE)


def test_another_drivers_option_and_a_link_the_driver_lacks_are_named(tmp_path):
    out = check(tmp_path, '[[device]]\npath = "/dev/ttyACM0"\npoll_hz = 20\n')
    assert out.returncode == 78 and "is an option of the visca driver; the native driver takes none" in out.stderr, out.stderr
    out = check(tmp_path, '[[device]]\nunix = "/run/cam.sock"\ndriver = "mavlink"\n')
    assert out.returncode == 78 and "the mavlink driver runs over path, udp, tcp, not unix" in out.stderr, out.stderr


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


def test_a_sections_key_at_the_top_level_is_refused_with_the_section_it_belongs_under(tmp_path):
    out = check(tmp_path, 'log_levle = "debug"\nsocket = "/tmp/d.sock"\n')
    assert out.returncode == 78, out
    assert "dockd.conf:1:1: unknown key log_levle (did you mean log_level? it belongs under [daemon]: the top level has no keys)" in out.stderr, out.stderr
    assert "dockd.conf:2:1: unknown key socket (it belongs under [daemon]: the top level has no keys)" in out.stderr, out.stderr


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
