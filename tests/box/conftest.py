"""A Debian 12 container booted with its own systemd as PID 1 (shared/tools/sdbox), with dockd's
.deb installed in it: the package and its units under a real systemd, journald and udev rules
(udevadm test under umockdev). Never systemd on this machine's own root: sdbox boots only its own
image, a directory under /var/tmp, with every change kept in RAM.

Needs root (systemd-nspawn), the .deb in $DOCKD_DEB (make box-test builds it), and sdbox: $SDBOX,
else shared/tools/sdbox beside the repository, else /work/shared/tools/sdbox. The image is built
once (about a minute, from this machine's Debian mirror) and cached in $DOCKD_BOX_IMAGE."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The image's extra packages: what the .deb depends on beyond a minimal Debian with systemd.
# Changing them needs a new image directory (sdbox refuses to reuse one built without them).
IMAGE_PACKAGES = "libbluetooth3"
IMAGE = Path(os.environ.get("DOCKD_BOX_IMAGE", "/var/tmp/dockd-sdbox-bookworm-1"))


def find_sdbox():
    candidates = [os.environ.get("SDBOX"), ROOT.parent / "shared" / "tools" / "sdbox", "/work/shared/tools/sdbox"]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    pytest.fail(f"sdbox not found (tried $SDBOX, {candidates[1]}, {candidates[2]})")


class Box:
    """One booted container: `run` executes a command inside as root."""

    def __init__(self, sdbox, name):
        self.sdbox = sdbox
        self.name = name

    def run(self, *argv, input=None, check=True, timeout=60):
        out = subprocess.run([self.sdbox, "run", self.name, *argv], input=input, capture_output=True, text=True,
                             timeout=timeout)
        if check and out.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {out.returncode}\nstdout: {out.stdout[-3000:]}\n"
                                 f"stderr: {out.stderr[-3000:]}")
        return out

    def sh(self, script, **kwargs):
        return self.run("sh", "-c", script, **kwargs)

    def write(self, path, text):
        self.run("sh", "-c", f'mkdir -p "$(dirname {path})" && cat > {path}', input=text)

    def prop(self, unit, name):
        return self.run("systemctl", "show", "-p", name, "--value", unit).stdout.strip()

    def wait(self, what, predicate, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture(scope="session")
def box():
    if os.geteuid() != 0:
        pytest.skip("the systemd container needs root (systemd-nspawn)")
    deb = os.environ.get("DOCKD_DEB")
    if not deb or not Path(deb).is_file():
        pytest.fail(f"no package at DOCKD_DEB={deb!r}: run `make box-test` (it builds it with `make deb`)")
    sdbox = find_sdbox()
    subprocess.run(["bash", str(ROOT / "scripts" / "install-deps.sh"), "--no-venv"], check=True)
    created = subprocess.run([sdbox, "create", str(IMAGE), "--include", IMAGE_PACKAGES], capture_output=True, text=True,
                             timeout=900)
    assert created.returncode == 0, created.stderr[-3000:]
    name = f"dockd-test-{os.getpid()}"
    staging = Path(f"/var/tmp/{name}")  # the binds: the package and the test's device recordings and peers
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "deb").mkdir(parents=True)
    shutil.copy(deb, staging / "deb" / "dockd.deb")
    shutil.copytree(ROOT / "tests" / "box" / "devices", staging / "devices")
    shutil.copytree(ROOT / "tests" / "peers", staging / "peers", ignore=shutil.ignore_patterns("__pycache__"))
    booted = subprocess.run([sdbox, "boot", str(IMAGE), name, "--bind-ro", f"{staging}:/srv/dockd-test"],
                            capture_output=True, text=True, timeout=120)
    assert booted.returncode == 0, booted.stderr[-3000:]
    try:
        yield Box(sdbox, name)
    finally:
        subprocess.run([sdbox, "stop", name], capture_output=True, timeout=120)
        shutil.rmtree(staging, ignore_errors=True)
