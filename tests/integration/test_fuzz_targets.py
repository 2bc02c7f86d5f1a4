"""The fuzz targets are declared in one place each: Package.swift lists the targets (with what they
depend on), Fuzz/run.sh runs every Fuzz/<Target>/ with a main.swift, and DriverFuzz takes the
drivers from DriverTable.all, so a driver added to the table is fuzzed with no list to extend."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_package_declares_exactly_the_fuzz_folders_with_a_main():
    manifest = (ROOT / "Package.swift").read_text()
    block = manifest[manifest.index("let fuzzTargets"):manifest.index("package.targets +=")]
    declared = set(re.findall(r'\("(\w+Fuzz)"', block))
    folders = {p.parent.name for p in (ROOT / "Fuzz").glob("*/main.swift")}
    assert declared == folders and "DriverFuzz" in folders


def test_driver_fuzz_reads_the_table_and_names_no_driver():
    source = (ROOT / "Fuzz/DriverFuzz/DriverFuzz.swift").read_text()
    assert "DriverTable.all" in source
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    table = (ROOT / "Sources/DockDrivers/DriverTable.swift").read_text()
    for driver in re.findall(r"(\w+Driver)\.definition", table):
        assert driver not in code, driver
