#!/usr/bin/env bash
# make install: binaries, units, udev rule, sysusers and a default config under DESTDIR/PREFIX.
set -euo pipefail
cd "$(dirname "$0")/.."
destdir=${1:-}
prefix=${2:-/usr/local}
bin=$(swift build -c release --show-bin-path)
install -d "$destdir$prefix/bin" "$destdir/lib/systemd/system" "$destdir/lib/udev/rules.d" \
    "$destdir/usr/lib/sysusers.d" "$destdir/etc/dockd" "$destdir$prefix/share/doc/dockd"
for b in dockd dockctl dock-sim dock-bench; do install -m 0755 "$bin/$b" "$destdir$prefix/bin/$b"; done
sed "s|/usr/local/bin/dockd|$prefix/bin/dockd|" systemd/dockd.service > "$destdir/lib/systemd/system/dockd.service"
chmod 0644 "$destdir/lib/systemd/system/dockd.service"
install -m 0644 systemd/dockd.socket "$destdir/lib/systemd/system/dockd.socket"
install -m 0644 systemd/dockd.sysusers "$destdir/usr/lib/sysusers.d/dockd.conf"
install -m 0644 udev/70-dockd.rules "$destdir/lib/udev/rules.d/70-dockd.rules"
[ -e "$destdir/etc/dockd/dockd.conf" ] || install -m 0644 config/dockd.conf "$destdir/etc/dockd/dockd.conf"
install -m 0644 README.md protocol/PROTOCOL.md "$destdir$prefix/share/doc/dockd/"
install -D -m 0644 protocol/dockd.openrpc.json "$destdir$prefix/share/dockd/dockd.openrpc.json"
echo "installed under ${destdir:-/}$prefix; then: systemd-sysusers; udevadm control --reload; systemctl enable --now dockd.socket"
