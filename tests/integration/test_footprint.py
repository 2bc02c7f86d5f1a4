"""The package installs one binary, dockd, that is every tool under the tool's name (issue 26), and
it links neither Foundation nor its ICU data: they made each packaged binary tens of MB and a third of
dockd's resident memory. FoundationEssentials (swift-argument-parser's, a few MB, no ICU) is allowed.
Checked on the binaries the tests run: the libraries each needs (a debug build links the Swift
runtime dynamically) and every symbol it defines or refers to (a static build has them inside).
dock-mot, not in the package, still links Foundation (its files)."""
import re
import subprocess

import pytest

from conftest import BIN

FORBIDDEN_LIBRARIES = re.compile(r"\[lib(Foundation|FoundationInternationalization|_FoundationICU|icu\w*)\.so")
# Mangled Swift names of the Foundation module (FoundationEssentials is `20FoundationEssentials`),
# the modules that carry ICU, and ICU's own C++ namespace (icu_76).
FORBIDDEN_SYMBOLS = re.compile(r"10Foundation|FoundationInternationalization|_FoundationICU|N6icu_\d")
# What the package installs as names of dockd (scripts/install.sh).
TOOLS = ["dockctl", "dock-sim", "dock-bench", "dock-driver-probe"]


@pytest.mark.parametrize("program", ["dockd", *TOOLS])
def test_links_no_foundation_and_no_icu(program):
    binary = str(BIN / program)
    dynamic = subprocess.run(["readelf", "--dynamic", binary], capture_output=True, text=True, timeout=60, check=True).stdout
    needed = [line.strip() for line in dynamic.splitlines() if "(NEEDED)" in line and FORBIDDEN_LIBRARIES.search(line)]
    assert not needed, f"{program} needs {needed}"
    symbols = subprocess.run(["nm", binary], capture_output=True, text=True, timeout=120, check=True).stdout
    found = [line.split()[-1] for line in symbols.splitlines() if FORBIDDEN_SYMBOLS.search(line)]
    assert not found, f"{program} has {len(found)} Foundation or ICU symbols, e.g. {found[:5]}"


def run(path, *args):
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("tool", TOOLS)
def test_dockd_called_by_a_tools_name_is_that_tool(tool, tmp_path):
    name = tmp_path / tool
    name.symlink_to(BIN / "dockd")
    own = run(BIN / tool, "--help")
    called = run(name, "--help")
    assert (called.returncode, called.stdout, called.stderr) == (own.returncode, own.stdout, own.stderr)
    assert f"USAGE: {tool}" in called.stdout
    # A mistake is the tool's too: its message and its exit status.
    own_error, called_error = run(BIN / tool, "--no-such-option"), run(name, "--no-such-option")
    assert (called_error.returncode, called_error.stderr) == (own_error.returncode, own_error.stderr) != (0, "")


def test_dockd_called_by_any_other_name_is_dockd(tmp_path):
    name = tmp_path / "my-dockd"
    name.symlink_to(BIN / "dockd")
    assert run(name, "--help").stdout == run(BIN / "dockd", "--help").stdout
    assert "USAGE: dockd" in run(name, "--help").stdout
