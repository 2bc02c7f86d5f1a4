"""What the VM test files share: one boot of Debian's kernel (tests/vm/run.sh) per test file, running
one guest script that records into a shared folder for the file's tests to judge."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def dock_bin():
    """The dockd build the guest scripts run: $DOCK_BIN, else .build/debug."""
    return Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))


@pytest.fixture(scope="module")
def boot(tmp_path_factory):
    """boot(NAME, SCRIPT, ARG..., modules=None): boots the VM once to run `sh tests/vm/SCRIPT OUT ARG...`,
    OUT a new folder (named after NAME) the guest may write, with the kernel's own `modules` (e.g.
    "dummy_hcd,cdc_acm") loaded beside vptz; returns OUT. A run.sh that exits other than 0 fails the
    test with the end of its output."""
    def run(name, script, *args, modules=None):
        out = tmp_path_factory.mktemp(name)
        extra = ["--modules", modules] if modules else []
        done = subprocess.run(["bash", str(HERE / "run.sh"), *extra, "--rw", str(out), "--timeout", "400", "--console", str(out / "console.txt"),
                               "--", "sh", str(HERE / script), str(out), *map(str, args)],
                              cwd=ROOT, capture_output=True, text=True, timeout=580)
        if done.returncode != 0:
            pytest.fail(f"run.sh exited {done.returncode}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}")
        return out
    return run
