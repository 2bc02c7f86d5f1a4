"""Every shell example in protocol/API.md, run verbatim (only the socket path changed to the test's)
with the tools it names (socat, nc), against the real dockd on dock-sim: each gets its reply, every
line it prints is a valid reply or notification per the OpenRPC document, and a reply shown in
API.md after `# ` has the same shape as the real one."""
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import openrpc_check
from conftest import ROOT

API_MD = ROOT / "protocol" / "API.md"
DEFAULT_SOCKET = "/run/dockd/dockd.sock"


def examples():
    """(command, shown reply or None) for each example command in API.md's ```sh blocks."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", API_MD.read_text(), re.S):
        lines = block.replace("\\\n", " ").splitlines()
        for i, line in enumerate(lines):
            if DEFAULT_SOCKET not in line or line.lstrip().startswith("#"):
                continue
            shown = None
            if i + 1 < len(lines) and lines[i + 1].startswith("# {"):
                shown = json.loads(lines[i + 1][2:])
            found.append((line.strip(), shown))
    return found


def shape(value):
    """The keys and JSON types, recursively (values vary from run to run)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def test_api_md_has_examples_for_socat_and_nc():
    commands = [c for c, _ in examples()]
    assert len(commands) >= 6
    assert any("socat" in c for c in commands) and any(re.search(r"\bnc\b", c) for c in commands)


@pytest.mark.parametrize("command, shown", examples(), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_the_example_works_as_documented(rig, command, shown):
    tool = "socat" if "socat" in command else "nc"
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed (scripts/install-deps.sh installs it)")
    c = rig.client()
    rig.connected_stand(c)
    c.close()
    time.sleep(1.1)  # motion.orient and animation.play allow 2 calls per second between them
    run = subprocess.run(["bash", "-c", command.replace(DEFAULT_SOCKET, str(rig.socket_path))],
                         capture_output=True, timeout=30)
    assert run.returncode == 0, run.stderr.decode()
    requests = [json.loads(m) for m in re.findall(r"'(\{.*?\})'", command)]
    pending = {}
    openrpc_check.note_requests(b"\n".join(json.dumps(r).encode() for r in requests), pending)
    replies = []
    for line in run.stdout.decode().splitlines():
        message = json.loads(line)
        openrpc_check.shared().check_message(message, pending)
        if "id" in message:
            replies.append(message)
    assert [r["id"] for r in replies] == [r["id"] for r in requests if "id" in r], run.stdout.decode()
    for reply in replies:
        assert "result" in reply, reply
    if shown is not None:
        assert shape(replies[0]) == shape(shown), f"API.md shows {shown}, dockd said {replies[0]}"
