"""dockd, dockctl, dock-driver-probe and dock-sim link neither Foundation nor its ICU data (issue 26):
they made each packaged binary tens of MB and a third of dockd's resident memory. FoundationEssentials
(swift-argument-parser's, a few MB, no ICU) is allowed. Checked on the binaries the tests run: the
libraries each needs (a debug build links the Swift runtime dynamically) and every symbol it defines or
refers to (a static build has them inside). dock-bench and dock-mot still link Foundation (the scenario
runner and plots of EngineSimulation, dock-mot's files)."""
import re
import subprocess

import pytest

from conftest import BIN

FORBIDDEN_LIBRARIES = re.compile(r"\[lib(Foundation|FoundationInternationalization|_FoundationICU|icu\w*)\.so")
# Mangled Swift names of the Foundation module (FoundationEssentials is `20FoundationEssentials`),
# the modules that carry ICU, and ICU's own C++ namespace (icu_76).
FORBIDDEN_SYMBOLS = re.compile(r"10Foundation|FoundationInternationalization|_FoundationICU|N6icu_\d")


@pytest.mark.parametrize("program", ["dockd", "dockctl", "dock-driver-probe", "dock-sim"])
def test_links_no_foundation_and_no_icu(program):
    binary = str(BIN / program)
    dynamic = subprocess.run(["readelf", "--dynamic", binary], capture_output=True, text=True, timeout=60, check=True).stdout
    needed = [line.strip() for line in dynamic.splitlines() if "(NEEDED)" in line and FORBIDDEN_LIBRARIES.search(line)]
    assert not needed, f"{program} needs {needed}"
    symbols = subprocess.run(["nm", binary], capture_output=True, text=True, timeout=120, check=True).stdout
    found = [line.split()[-1] for line in symbols.splitlines() if FORBIDDEN_SYMBOLS.search(line)]
    assert not found, f"{program} has {len(found)} Foundation or ICU symbols, e.g. {found[:5]}"
