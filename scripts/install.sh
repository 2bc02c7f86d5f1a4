#!/usr/bin/env bash
# make install (and make deb, which packages this same tree): the tools, the units, the udev rule,
# sysusers, the default configuration, the VISCA and V4L2 camera profiles, the API description, man pages, shell
# completions and the documentation, under DESTDIR.
#   scripts/install.sh DESTDIR PREFIX
# One binary, dockd, from the release build with the Swift runtime linked in (make build-static) or
# $BIN_DIR: it is also every tool, installed as its other names (symlinks; Sources/dockd/main.swift),
# so the runtime and the libraries are in the package once. Man pages from make man (.build/man) or
# $MAN_DIR. Units, the udev rule and sysusers go
# to /usr/lib whatever PREFIX is (udev and systemd-sysusers look nowhere under /usr/local); the unit
# starts PREFIX/bin/dockd. /etc/dockd/dockd.conf is installed only where none exists.
set -euo pipefail
cd "$(dirname "$0")/.."
destdir=${1:-}
prefix=${2:-/usr/local}
bin=${BIN_DIR:-$(swift build -c release --static-swift-stdlib --show-bin-path)}
man=${MAN_DIR:-.build/man}
tools=(dockctl dock-sim dock-bench dock-driver-probe)  # dockd's other names
root=$destdir$prefix
lib=$destdir/usr/lib

[ -x "$bin/dockd" ] || { echo "install.sh: $bin/dockd is missing (make build-static)" >&2; exit 1; }
[ -f "$man/dockd.8" ] && [ -f "$man/completions/dock-camera.bash" ] || { echo "install.sh: no man pages or completions in $man (make man)" >&2; exit 1; }

install -d "$root/bin" "$lib/systemd/system" "$lib/udev/rules.d" "$lib/sysusers.d" "$destdir/etc/dockd" \
    "$root/share/dockd/profiles/visca" "$root/share/dockd/profiles/v4l2" "$root/share/doc/dockd/examples" \
    "$root/share/man/man1" "$root/share/man/man5" "$root/share/man/man8" \
    "$root/share/bash-completion/completions" "$root/share/zsh/vendor-completions" "$root/share/fish/vendor_completions.d"
install -m 0755 --strip "$bin/dockd" "$root/bin/dockd"
for t in "${tools[@]}"; do ln -sfn dockd "$root/bin/$t"; done
# dock-camera: a Python sidecar (camera/README.md); the launcher finds its package in ../lib/dockd/camera.
install -d "$root/lib/dockd/camera/dock_camera"
install -m 0644 camera/dock_camera/*.py "$root/lib/dockd/camera/dock_camera/"
install -m 0755 camera/dock-camera "$root/bin/dock-camera"
sed "s|/usr/local/bin/dock-camera|$prefix/bin/dock-camera|" systemd/dock-camera@.service > "$lib/systemd/system/dock-camera@.service"
chmod 0644 "$lib/systemd/system/dock-camera@.service"

sed "s|^ExecStart=/usr/bin/dockd|ExecStart=$prefix/bin/dockd|" systemd/dockd.service > "$lib/systemd/system/dockd.service"
chmod 0644 "$lib/systemd/system/dockd.service"
install -m 0644 systemd/dockd.socket "$lib/systemd/system/dockd.socket"
sed "s|/usr/bin/dockd --uvc-controls|$prefix/bin/dockd --uvc-controls|" udev/70-dockd.rules > "$lib/udev/rules.d/70-dockd.rules"
chmod 0644 "$lib/udev/rules.d/70-dockd.rules"
install -m 0644 systemd/dockd.sysusers "$lib/sysusers.d/dockd.conf"
[ -e "$destdir/etc/dockd/dockd.conf" ] || install -m 0644 config/dockd.conf "$destdir/etc/dockd/dockd.conf"

install -m 0644 protocol/dockd.openrpc.json "$root/share/dockd/dockd.openrpc.json"
install -m 0644 profiles/visca/*.json profiles/visca/README.md "$root/share/dockd/profiles/visca/"
install -m 0644 profiles/v4l2/*.json profiles/v4l2/README.md "$root/share/dockd/profiles/v4l2/"

# gzip -n: no name or time stamp inside, so the same sources give the same bytes.
for page in "$man"/*.[158] docs/man/*.[158]; do
    section=${page##*.}
    gzip -9n < "$page" > "$root/share/man/man$section/$(basename "$page").gz"
done

for t in dockd "${tools[@]}"; do
    # From the installed names, as people run them. bash-completion sources these: no #! line.
    "$root/bin/$t" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/share/bash-completion/completions/$t"
    "$root/bin/$t" --generate-completion-script zsh > "$root/share/zsh/vendor-completions/_$t"
    "$root/bin/$t" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/$t.fish"
done
install -m 0644 "$man/completions/dock-camera.bash" "$root/share/bash-completion/completions/dock-camera"
install -m 0644 "$man/completions/_dock-camera" "$root/share/zsh/vendor-completions/_dock-camera"
install -m 0644 "$man/completions/dock-camera.fish" "$root/share/fish/vendor_completions.d/dock-camera.fish"

install -m 0644 README.md LICENSE protocol/PROTOCOL.md protocol/API.md docs/HARDWARE.md "$root/share/doc/dockd/"
install -m 0644 debian/copyright "$root/share/doc/dockd/copyright"
gzip -9n < debian/changelog > "$root/share/doc/dockd/changelog.gz"
install -m 0644 systemd/network-drop-in.conf "$root/share/doc/dockd/examples/dockd.service.d-network.conf"
echo "installed under ${destdir:-/} (prefix $prefix); then: systemd-sysusers dockd.conf; udevadm control --reload; systemctl daemon-reload; systemctl enable --now dockd.socket"
