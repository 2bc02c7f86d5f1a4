"""Presets dockd also keeps in the camera, through the real dockd and the VISCA camera emulator
(tests/peers/visca_camera.py, CAM_Memory): a save stores the preset in the memory dockd names in
its reply, another controller (visca-over-ip, from PyPI) recalls it there, a delete resets it, a
refusal reaches the caller while dockd's preset is still saved, and the memory numbers survive a
restart of dockd in presets.json; and through the ONVIF camera emulator (tests/peers/onvif_camera.py):
SetPreset's token kept and reused, RemovePreset on delete, a camera without room heard by the caller
(its presets counted only after its fault), a camera listing every slot still storing new ones, and
`home` going to dockd's yaw 0, pitch 0, not to the camera's own home."""
import json
import math
import sys
import time
from pathlib import Path

import pytest

from conftest import Client, wait_for
from test_presets import GENERIC, TENTH_OF_A_DEGREE, ViscaDockd, dockctl, miss, move, settled, truth

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import visca_camera as vc  # noqa: E402

EMULATOR_HOST = "127.0.0.2"
VISCA_PORT = vc.free_udp_port(EMULATOR_HOST)  # visca-over-ip binds 0.0.0.0 at the camera's port


@pytest.fixture
def visca(tmp_path):
    made = []

    def make(**camera_options):
        cam = vc.Camera(vc.load_profile(GENERIC), **camera_options)
        link = vc.PtyLink(cam).start()
        dockd = ViscaDockd(tmp_path, link)
        made.append((link, dockd))
        c = Client(dockd.socket)
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
        return cam, dockd, c
    yield make
    for link, dockd in made:
        dockd.stop()
        link.stop()


def in_memory(cam, number):
    """Where memory `number` of the emulated camera points, in dockd's terms."""
    pan, tilt, _ = cam.memories[number]
    return {"yaw": -math.radians(pan), "pitch": math.radians(tilt)}


def test_a_saved_preset_is_in_the_memory_dockd_names_another_controller_recalls_it_and_delete_resets_it(visca):
    from visca_over_ip import Camera
    cam, dockd, c = visca()
    move(c, "motion.orient", {"yaw": 0.4, "pitch": 0.15, "duration": 1})
    settled(c)
    stage = c.result("preset.save", {"name": "stage"})
    assert stage["camera"] == {"memory": 0} and "camera_error" not in stage, stage
    assert miss(in_memory(cam, 0), stage) < TENTH_OF_A_DEGREE, (cam.memories, stage)
    move(c, "motion.orient", {"yaw": -0.3, "pitch": -0.1, "duration": 1})
    settled(c)
    desk = c.result("preset.save", {"name": "desk"})
    assert desk["camera"] == {"memory": 1}, desk
    listed = {p["name"]: p for p in c.result("preset.list")}
    assert listed["stage"]["camera"] == {"memory": 0} and listed["home"]["camera"] is None, listed

    # Another controller, on the camera's VISCA-over-IP port, recalls dockd's preset by its number.
    udp = vc.UdpLink(cam, EMULATOR_HOST, VISCA_PORT).start()
    controller = Camera(EMULATOR_HOST, VISCA_PORT)
    try:
        controller.recall_preset(0)
        wait_for(lambda: miss(truth(cam), stage) < TENTH_OF_A_DEGREE, 10, "the camera at the stage preset")
    finally:
        controller.close_connection()
        udp.stop()

    assert c.result("preset.save", {"name": "desk"})["camera"] == {"memory": 1}, "a name keeps its memory"
    assert c.result("preset.delete", {"name": "stage"}) == {"ok": True}
    wait_for(lambda: 0 not in cam.memories, 5, "memory 0 reset")
    assert 1 in cam.memories
    assert c.result("preset.save", {"name": "wide"})["camera"] == {"memory": 0}, "the lowest free memory"
    assert c.result("preset.save", {"name": "home"})["camera"] is None, "home is not stored in the camera"
    c.close()


def in_one_write(c, *requests):
    """Sends (id, method, params) requests in one write; their replies by id."""
    c.send_raw(b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode() + b"\n"
                        for i, m, p in requests))
    replies = {}
    while len(replies) < len(requests):
        message = c.read_message(10)
        if "id" in message:
            replies[message["id"]] = message
    return replies


def test_a_save_sent_right_behind_a_delete_of_its_name_is_in_the_camera_memory_it_names(visca):
    """A delete and a save of one name in one write: the save's memory still holds the preset once
    both are answered. (With the file written off the event loop, the save took the memory the
    delete, still on its way, then reset: presets.json named a memory the camera had emptied.)"""
    cam, dockd, c = visca()
    move(c, "motion.orient", {"yaw": 0.4, "pitch": 0.15, "duration": 1})
    settled(c)
    assert c.result("preset.save", {"name": "stage"})["camera"] == {"memory": 0}
    move(c, "motion.orient", {"yaw": -0.3, "pitch": -0.1, "duration": 1})
    settled(c)
    replies = in_one_write(c, ("delete", "preset.delete", {"name": "stage"}), ("save", "preset.save", {"name": "stage"}))
    assert replies["delete"]["result"] == {"ok": True}, replies
    saved = replies["save"]["result"]
    assert "camera_error" not in saved, saved
    memory = saved["camera"]["memory"]
    # Both answered: the delete's Reset, if it was of this memory, has been done.
    assert memory in cam.memories, (memory, cam.memories)
    assert miss(in_memory(cam, memory), saved) < TENTH_OF_A_DEGREE, (cam.memories, saved)
    listed = {p["name"]: p for p in c.result("preset.list")}
    assert listed["stage"]["camera"] == {"memory": memory}, listed
    c.close()


def test_a_list_sent_right_behind_a_save_shows_the_preset(visca):
    """A save and a list in one write: the list shows the new preset. (The save ends once the
    camera memory and presets.json hold it; the list used to read the table at once, before it.)"""
    cam, dockd, c = visca()
    move(c, "motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1})
    settled(c)
    replies = in_one_write(c, ("save", "preset.save", {"name": "desk"}), ("list", "preset.list", {}))
    saved = replies["save"]["result"]
    listed = {p["name"]: p for p in replies["list"]["result"]}
    assert listed.get("desk", {}).get("camera") == saved["camera"] == {"memory": 0}, replies
    c.close()


def test_a_camera_that_refuses_says_so_in_the_reply_and_the_preset_is_saved_all_the_same(visca):
    cam, dockd, c = visca(memories=2)
    for name in ("one", "two"):
        assert c.result("preset.save", {"name": name})["camera"] is not None
    full = c.result("preset.save", {"name": "three"})
    assert full["camera"] is None and "syntax error" in full["camera_error"], full
    assert full["saved"] is True
    cam.refuse_memory = True
    refused = c.result("preset.save", {"name": "one"})
    assert refused["camera"] == {"memory": 0} and "not executable" in refused["camera_error"], refused
    listed = {p["name"]: p for p in c.result("preset.list")}
    # The camera kept its old copy of "one" in memory 0, which stays the name's: the next save
    # overwrites it and a delete resets it, rather than leaving it in the camera for good.
    assert listed["three"]["saved"] and listed["three"]["camera"] is None and listed["one"]["camera"] == {"memory": 0}, listed
    stored = json.loads((dockd.state / "presets.json").read_text())["stands"]["ptz-1"]
    assert stored["three"]["camera"] is None and stored["two"]["camera"] == {"memory": 1}, stored
    c.close()


def test_the_camera_memories_are_kept_in_presets_json_across_a_restart_of_dockd(visca):
    cam, dockd, c = visca()
    assert c.result("preset.save", {"name": "stage"})["camera"] == {"memory": 0}
    move(c, "motion.orient", {"yaw": -0.3, "pitch": -0.1, "duration": 1})
    settled(c)
    assert c.result("preset.save", {"name": "desk"})["camera"] == {"memory": 1}
    c.close()
    dockd.stop()
    c = dockd.start()
    stored = json.loads((dockd.state / "presets.json").read_text())["stands"]["ptz-1"]
    assert stored["stage"]["camera"] == {"memory": 0} and stored["desk"]["camera"] == {"memory": 1}, stored
    listed = {p["name"]: p for p in c.result("preset.list")}
    assert listed["desk"]["camera"] == {"memory": 1}, listed
    printed = dockctl(dockd.socket, "preset", "list")
    assert printed.returncode == 0 and "camera memory 1" in printed.stdout.splitlines()[0], printed
    assert c.result("preset.delete", {"name": "desk"}) == {"ok": True}
    wait_for(lambda: 1 not in cam.memories, 5, "memory 1 reset after the restart")
    assert 0 in cam.memories
    assert c.result("preset.save", {"name": "desk"})["camera"] == {"memory": 1}
    c.close()


# -- an ONVIF camera (tests/peers/onvif_camera.py): SetPreset answers the token, RemovePreset takes it

@pytest.fixture
def onvif(tmp_path):
    from test_onvif_driver import Rig
    rigs = []

    def make(**camera):
        state = tmp_path / "state"
        state.mkdir()
        r = Rig(tmp_path, options=f'\n[daemon]\nstate_directory = "{state}"\n', **camera)
        rigs.append(r)
        r.connected()
        r.client.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
        return r
    yield make
    for r in rigs:
        r.close()


def test_an_onvif_camera_keeps_the_preset_under_the_token_dockd_reports_and_delete_removes_it(onvif):
    r = onvif()
    c = r.client
    move(c, "motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1.5})
    stage = c.result("preset.save", {"name": "stage"})
    token = stage["camera"]["token"]
    with r.cam.lock:
        assert r.cam.presets[token][0] == "stage", r.cam.presets
        assert r.cam.presets[token][1][:2] == r.cam.generic()[:2]
    assert c.result("preset.save", {"name": "stage"})["camera"] == {"token": token}, "saved again in its own token"
    with r.cam.lock:
        assert len(r.cam.presets) == 1, r.cam.presets
    assert c.result("preset.delete", {"name": "stage"}) == {"ok": True}
    with r.cam.lock:
        assert token not in r.cam.presets, r.cam.presets


def test_the_built_in_home_on_an_onvif_camera_is_dockds_forward_and_level_pose_not_the_cameras_own_home(onvif):
    """The camera's home (SetHomePosition, or its maker's) is wherever its owner set it, and ONVIF
    gives no way to read it without going there: `home` recalls dockd's yaw 0, pitch 0 by an
    AbsoluteMove and never sends GotoHomePosition (docs/HARDWARE.md, ONVIF, "Home")."""
    r = onvif()
    c = r.client
    with r.cam.lock:
        r.cam.home = (0.4, 0.2, 0.0)  # generic: 68° right, 42° up
    move(c, "motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1})
    move(c, "preset.recall", {"name": "home", "duration": 1})
    pan, tilt, _ = r.cam.pose()
    assert abs(pan) < 0.1 and abs(tilt) < 0.1, (pan, tilt)
    with r.cam.lock:
        assert not any(action == "GotoHomePosition" for _, action, _ in r.cam.moves), r.cam.moves


def test_home_on_an_onvif_camera_giving_no_position_is_where_it_was_at_connect(onvif):
    """A camera whose GetStatus gives no position is steered on a pose dead-reckoned from yaw 0,
    pitch 0 where it was at connect: `home` takes it back there on that estimate, not to the
    camera's own home (GotoHomePosition is not sent: docs/HARDWARE.md, ONVIF, "Home")."""
    r = onvif(motion=("continuous",), no_position=True)
    c = r.client
    with r.cam.lock:
        r.cam.home = (0.4, 0.2, 0.0)
    at_connect = r.cam.pose()
    move(c, "motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1})
    assert r.cam.pose()[0] < at_connect[0] - 10, (r.cam.pose(), at_connect)  # 17° to the left
    move(c, "preset.recall", {"name": "home", "duration": 1})
    wait_for(r.cam.still, 10, "the head at rest")
    back = [math.radians(now - then) for now, then in zip(r.cam.pose()[:2], at_connect[:2])]
    print(f"\nhome on a camera giving no position: {back[0]:.4f}, {back[1]:.4f} rad from where it was at connect")
    assert abs(back[0]) < 0.02 and abs(back[1]) < 0.02, back
    with r.cam.lock:
        assert not any(action == "GotoHomePosition" for _, action, _ in r.cam.moves), r.cam.moves


def preset_requests(cam):
    """The preset requests the emulated camera was sent, in order, each with the HTTP status answered."""
    with cam.lock:
        return [(entry[2], entry[4]) for entry in cam.log if entry[2] in ("SetPreset", "GetPresets", "RemovePreset")]


def test_an_onvif_camera_with_no_room_is_asked_and_the_caller_hears_its_fault_with_the_count_and_the_limit(onvif):
    """A new preset goes to the camera without counting its presets first (some list every slot, and
    a count before each save costs a round trip); its fault (ter:TooManyPresets) comes back with the
    count GetPresets gives after it and the node's limit."""
    r = onvif(presets=1)
    c = r.client
    assert c.result("preset.save", {"name": "one"})["camera"] is not None
    two = c.result("preset.save", {"name": "two"})
    assert two["camera"] is None, two
    assert "TooManyPresets" in two["camera_error"] and "lists 1 presets" in two["camera_error"], two
    assert "MaximumNumberOfPresets 1" in two["camera_error"], two
    assert preset_requests(r.cam) == [("SetPreset", 200), ("SetPreset", 500), ("GetPresets", 200)], r.cam.log
    assert {p["name"] for p in c.result("preset.list")} == {"home", "one", "two"}
    assert c.result("preset.save", {"name": "one"})["camera"] is not None, "saved again in its own token: no room needed"


def test_an_onvif_camera_listing_every_slot_stores_new_presets(onvif):
    """A camera whose GetPresets lists all its slots, set or not (Hikvision's "Preset N"): as many
    entries as its MaximumNumberOfPresets, yet room for new ones."""
    r = onvif(presets=3, lists_every_slot=True)
    c = r.client
    one = c.result("preset.save", {"name": "one"})
    two = c.result("preset.save", {"name": "two"})
    assert one["camera"] is not None and two["camera"] is not None, (one, two)
    with r.cam.lock:
        assert sorted(n for n, _ in r.cam.presets.values()) == ["one", "two"], r.cam.presets
    assert preset_requests(r.cam) == [("SetPreset", 200)] * 2, "one request per new preset stored"


def test_an_onvif_camera_whose_node_takes_no_presets_is_asked_to_store_none(onvif):
    r = onvif(presets=0)
    c = r.client
    saved = c.result("preset.save", {"name": "one"})
    assert saved["camera"] is None and "camera_error" not in saved, saved
    with r.cam.lock:
        assert not any(entry[2] in ("SetPreset", "GetPresets") for entry in r.cam.log), r.cam.log


def test_a_save_past_the_hundred_presets_is_refused_before_the_camera_stores_it(onvif):
    r = onvif(presets=200)
    c = r.client
    for i in range(99):  # with the built-in home's own slot... home is not stored: 99 + "home" saved = 100
        c.result("preset.save", {"name": f"p{i}"})
    c.result("preset.save", {"name": "home"})
    with r.cam.lock:
        stored = len(r.cam.presets)
    reply = c.call("preset.save", {"name": "one-too-many"})
    assert reply["error"]["code"] == -32003 and "100 presets" in reply["error"]["message"], reply
    with r.cam.lock:
        assert len(r.cam.presets) == stored, "the camera was asked to store a preset dockd refused"
