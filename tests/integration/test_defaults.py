"""The stands' defaults: set by an administrator with dockctl, in force while no client controls a
stand, what a lease's end returns to, and kept across a restart of dockd."""
import json
import subprocess

from conftest import BIN, Client, Rig, wait_for
from test_leases_and_auth import open_dir, run_as_nobody, start_dockd  # noqa: F401 (fixture)


def dockctl(rig, *args):
    return subprocess.run([str(BIN / "dockctl"), *args, "--socket", str(rig.socket_path)], capture_output=True, text=True, timeout=20)


def control(client):
    stand = client.result("stand.get")
    return stand["system_tracking"], stand["control"]["framing"]


def test_defaults_hold_while_nobody_controls_the_stand_and_survive_a_restart(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    config = tmp_path / "dockd.conf"
    config.write_text(f'[daemon]\nstate_directory = "{state}"\n')
    rig = Rig(tmp_path, dockd_config=config)
    try:
        c = rig.client()
        rig.connected_stand(c)
        assert control(c) == (True, "automatic")
        c.result("subscribe", {"topics": ["events"]})
        done = dockctl(rig, "defaults", "set", "--tracking", "off", "--framing", "left", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["framing"] == "left"
        assert control(c) == (False, "left"), "applied at once: nobody holds the stand"
        # Said as the document says it (every notification is checked against it).
        changed = c.wait_notification(lambda m: m.get("method") == "tracking.changed")
        assert changed["params"]["source"] == "defaults" and changed["params"]["enabled"] is False
        # A client changes it and goes: the stand returns to the stored defaults, not DockKit's.
        other = rig.client()
        other.result("tracking.framing", {"mode": "right"})
        other.result("tracking.set", {"enabled": True})
        assert control(c) == (True, "right")
        other.close()
        wait_for(lambda: control(c) == (False, "left"), 5, "the defaults after the lease ended")
        assert json.loads((state / "defaults.json").read_text())["framing"] == "left"
        # A restarted dockd starts with them.
        rig.restart_dockd()
        c = rig.client()
        rig.connected_stand(c)
        assert control(c) == (False, "left")
        assert dockctl(rig, "defaults", "reset").returncode == 0
        assert control(c) == (True, "automatic")
    finally:
        rig.stop()


def test_the_state_directory_option_wins_over_the_file_and_dockd_makes_the_directory(tmp_path):
    """`dockd --state-directory DIR` (the README's simulated stand) over `[daemon] state_directory`; a
    missing DIR whose parent exists is made at the first save, mode 0750, as systemd's
    StateDirectory= would make it (not at start: a dockd that saves nothing leaves nothing behind)."""
    config = tmp_path / "dockd.conf"
    config.write_text(f'[daemon]\nstate_directory = "{tmp_path / "from-file"}"\n')
    state = tmp_path / "dockd-state"
    rig = Rig(tmp_path, dockd_config=config, dockd_args=["--state-directory", str(state)])
    try:
        rig.connected_stand(rig.client())
        assert not state.exists()
        saved = dockctl(rig, "preset", "save", "stage")
        assert saved.returncode == 0, saved
        assert oct(state.stat().st_mode & 0o777) == "0o750"
        assert "stage" in json.loads((state / "presets.json").read_text())["stands"]["SIM-0001"]
        assert dockctl(rig, "defaults", "set", "--framing", "left").returncode == 0
        assert json.loads((state / "defaults.json").read_text())["framing"] == "left"
        assert not (tmp_path / "from-file").exists()
    finally:
        rig.stop()


def test_a_state_directory_that_cannot_be_made_is_named_at_start_and_when_a_save_fails(tmp_path):
    config = tmp_path / "dockd.conf"
    config.write_text("")
    state = tmp_path / "no-such-parent" / "state"
    rig = Rig(tmp_path, dockd_config=config, dockd_args=["--state-directory", str(state)])
    try:
        rig.connected_stand(rig.client())
        assert f"the state directory {state} is missing and cannot be made: {state.parent}: No such file or directory" in rig.log(), rig.log()
        saved = dockctl(rig, "preset", "save", "stage")
        assert saved.returncode == 1 and f"cannot write {state}/presets.json" in saved.stderr, saved
        assert "--state-directory" in saved.stderr and "[daemon] state_directory" in saved.stderr, saved.stderr
    finally:
        rig.stop()


def test_only_an_administrator_sets_the_defaults(open_dir):  # noqa: F811
    proc, socket_path = start_dockd(open_dir, "0666")
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "defaults.set", "params": {"tracking": False}}
        reply = run_as_nobody(socket_path, request)
        assert reply["error"]["code"] == -32007, reply
        client = Client(socket_path)
        assert client.result("defaults.get")["tracking"] is True
        client.close()
    finally:
        proc.terminate(); proc.wait(5)
