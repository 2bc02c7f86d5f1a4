"""The package as built (make deb), on this host: `make install` gives the same files, one binary is
every tool and needs no Swift toolchain, and the maintainer scripts run sysusers before the udev
trigger."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def deb():
    path = os.environ.get("DOCKD_DEB")
    if not path or not Path(path).is_file():
        pytest.fail(f"no package at DOCKD_DEB={path!r}: run `make box-test` (it builds it with `make deb`)")
    return path


def package_files(deb):
    listing = subprocess.run(["dpkg-deb", "--contents", deb], capture_output=True, text=True, check=True).stdout
    return {line.split()[5].removeprefix(".") for line in listing.splitlines() if not line.startswith("d")}


def installed_files(destdir, prefix):
    subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), str(destdir), prefix], check=True, capture_output=True,
                   env=dict(os.environ, BIN_DIR=release_bin(), MAN_DIR=str(ROOT / ".build" / "man")))
    return {"/" + str(p.relative_to(destdir)) for p in destdir.rglob("*") if not p.is_dir()}


def release_bin():
    return str(ROOT / ".build" / "release")  # what make build-static built the package from


def test_make_install_gives_the_packages_files(deb, tmp_path):
    assert installed_files(tmp_path / "prefix-usr", "/usr") == package_files(deb)
    local = installed_files(tmp_path / "local", "/usr/local")
    # Under /usr/local the same files, except what udev and systemd read only from /usr/lib.
    assert {p.replace("/usr/local/", "/usr/") for p in local} == package_files(deb)
    unit = (tmp_path / "local" / "usr/lib/systemd/system/dockd.service").read_text()
    assert "\nExecStart=/usr/local/bin/dockd\n" in unit


def test_the_binaries_need_no_swift_toolchain(deb, tmp_path):
    subprocess.run(["dpkg-deb", "-x", deb, str(tmp_path)], check=True)
    for tool in ("dockd", "dockctl", "dock-sim", "dock-bench", "dock-driver-probe"):
        binary = tmp_path / "usr" / "bin" / tool
        dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
        assert "/opt/swift" not in dynamic and "swift" not in dynamic.lower(), (tool, dynamic)
        ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
        assert "swift" not in ldd and "not found" not in ldd, (tool, ldd)


def test_one_binary_is_every_tool(deb, tmp_path):
    """The Swift runtime and the libraries once in the package (issue 26): dockd is the only
    executable file; the tools are its other names, each running as the tool."""
    subprocess.run(["dpkg-deb", "-x", deb, str(tmp_path)], check=True)
    bin_dir = tmp_path / "usr" / "bin"
    elf = sorted(p.name for p in bin_dir.iterdir() if not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF")
    assert elf == ["dockd"]
    for tool in ("dockctl", "dock-sim", "dock-bench", "dock-driver-probe"):
        assert os.readlink(bin_dir / tool) == "dockd", tool
        help_text = subprocess.run([str(bin_dir / tool), "--help"], capture_output=True, text=True, check=True).stdout
        assert f"USAGE: {tool}" in help_text, (tool, help_text)


def test_postinst_runs_sysusers_before_the_udev_trigger():
    script = (ROOT / "debian" / "postinst").read_text()
    assert 0 < script.index("systemd-sysusers dockd.conf") < script.index("udevadm trigger")
