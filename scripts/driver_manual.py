#!/usr/bin/env python3
"""dockd.conf(5)'s driver options, written from the driver table (`dockd --list-drivers --json`):
the part of docs/man/dockd.conf.5 between the DRIVERS markers. `--write` rewrites it in place
(after adding or changing a driver); without it, prints the section. The integration tests fail
when the page and the table disagree.

    python3 scripts/driver_manual.py --bin .build/debug --write
"""
import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "man" / "dockd.conf.5"
BEGIN = '.\\" BEGIN DRIVERS: written by scripts/driver_manual.py from dockd --list-drivers; do not edit by hand'
END = '.\\" END DRIVERS'


def number(x):
    return str(int(x)) if float(x).is_integer() else str(x)


def escape(text):
    """A line of text as roff reads it: no line may start with a dot or a quote."""
    text = text.replace("\\", "\\e")
    return "\\&" + text if text[:1] in (".", "'") else text


def section(drivers):
    lines = [BEGIN]
    for d in drivers:
        lines.append(f".Ss [[device]] driver = {d['name']}")
        lines.append(escape(d["summary"] + "."))
        links = d["links"]  # as dockd.conf names them
        lines.append("Runs over")
        if "path" in links:
            lines.append(".Cm " + " , ".join(links) + " ;")
            lines.append(f"a serial rate of {d['default_baud']} unless")
            lines.append(".Cm baud")
            lines.append("says.")
        else:
            lines.append(".Cm " + " , ".join(links) + " .")
        lines.append("It can: " + ", ".join(d["capabilities"]) + ".")
        if d.get("hotplug"):
            h = d["hotplug"]
            lines.append(f"Attached without configuration when udev announces a {h['subsystem']} device with")
            lines.append(f".Ev {h['marker']}=1")
            if h["usb"]:
                lines.append("or USB ids " + ", ".join(h["usb"]))
            if h.get("uvc_pan_tilt"):
                lines.append("or that is a USB video class camera whose descriptors list pan/tilt controls")
            lines.append("(see")
            lines.append(".Sx [hotplug] ) .")
        if not d["options"]:
            lines.append("It takes no options.")
            continue
        lines.append(".Bl -tag -width Ds")
        for o in d["options"]:
            lines.append(f".It Cm {o['key']} Ar {o['type']}")
            text = o["doc"][0].upper() + o["doc"][1:]
            if "range" in o:
                low, high = (number(v) for v in o["range"])
                text += f": {low} to {high}"
            if "choices" in o:
                text += ": one of " + ", ".join(o["choices"])
            lines.append(escape(text + "."))
            if "default" in o:
                default = o["default"]
                lines.append(f"Default {number(default) if isinstance(default, (int, float)) else default}.")
        lines.append(".El")
    lines.append(END)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / ".build" / "debug"))
    parser.add_argument("--write", action="store_true", help="rewrite the section in docs/man/dockd.conf.5")
    args = parser.parse_args()
    drivers = json.loads(subprocess.run([str(Path(args.bin) / "dockd"), "--list-drivers", "--json"],
                                        check=True, capture_output=True, text=True).stdout)
    lines = section(drivers)
    if not args.write:
        print("\n".join(lines))
        return
    page = PAGE.read_text().splitlines()
    start, end = page.index(BEGIN), page.index(END)
    PAGE.write_text("\n".join(page[:start] + lines + page[end + 1:]) + "\n")


if __name__ == "__main__":
    main()
