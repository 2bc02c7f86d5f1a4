#!/usr/bin/env bash
# Runs a command under a real Linux kernel (Debian 12's, in qemu, through vmbox) with kernel/vptz's
# virtual PTZ webcam loaded as /dev/video0, and v4l2loopback built for the same kernel (not loaded:
# a command loads it with its own parameters, from $V4L2LOOPBACK_KO).
#
#   tests/vm/run.sh [--params 'profile=link busy_ms=300'] [--modules a,b] [--rw DIR]... [--timeout SEC]
#                   [--console FILE] -- CMD [ARG...]
#   tests/vm/run.sh --build-only          prepare and build; print the module's path
#
# --modules: more of the kernel's own modules to load (names as in lsmod; e.g. dummy_hcd for USB gadgets).
# Installs what it needs when missing (apt: qemu-system-x86, busybox-static, cpio, the kernel's
# linux-headers, v4l-utils, kmod, make, gcc), prepares vmbox's kernel into $DOCKD_VMBOX_DIR
# (/var/tmp/dockd-vmbox-k) once, builds vptz.ko for that kernel into .build/vptz-KERNEL (a folder
# the VM sees, so a command can rmmod and insmod it again with other parameters), then boots.
# In the VM the command runs as root in the directory run.sh was started from, with VPTZ_KO set to
# the module's path; its output and exit status are run.sh's. One boot costs 10-40 s here (TCG).
# v4l2loopback (Debian's v4l2loopback-dkms, for its source) is built the same way into
# .build/v4l2loopback-KERNEL; in the VM V4L2LOOPBACK_KO is its path (insmod it after videodev).
#
# vmbox: $VMBOX, else shared/tools/vmbox beside the repository, else /work/shared/tools/vmbox.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${DOCKD_VMBOX_DIR:-/var/tmp/dockd-vmbox-k}

vmbox=""
for c in "${VMBOX:-}" "$root/../shared/tools/vmbox" /work/shared/tools/vmbox; do
    if [ -n "$c" ] && [ -x "$c" ]; then vmbox=$c; break; fi
done
[ -n "$vmbox" ] || { echo "run.sh: vmbox not found (\$VMBOX, $root/../shared/tools/vmbox, /work/shared/tools/vmbox)" >&2; exit 2; }

params="" build_only=0 vmargs=() modules=
while [ $# -gt 0 ]; do
    case $1 in
        --params) params=$2; shift 2 ;;
        --modules) modules=,$2; shift 2 ;;
        --rw|--timeout|--console) vmargs+=("$1" "$2"); shift 2 ;;
        --build-only) build_only=1; shift ;;
        --) shift; break ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $build_only = 1 ] || [ $# -gt 0 ] || { echo "run.sh: no command (run.sh [options] -- CMD...)" >&2; exit 2; }

apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "run.sh: installing ${missing[*]}" >&2
    local sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

apt_install qemu-system-x86 busybox-static cpio binutils v4l-utils kmod make gcc v4l2loopback-dkms
"$vmbox" prepare "$cache" >&2
kernel=$("$vmbox" kernel "$cache")
apt_install "linux-headers-$kernel"

# Built out of the source tree (Kbuild writes beside its sources), in a folder the VM sees.
build="$root/.build/vptz-$kernel"
mkdir -p "$build"
for f in vptz.c Kbuild; do cmp -s "$root/kernel/vptz/$f" "$build/$f" || cp "$root/kernel/vptz/$f" "$build/$f"; done
set +o pipefail
make -s -C "/usr/src/linux-headers-$kernel" M="$build" modules 2>&1 | { grep -v 'Skipping BTF' >&2 || true; }
[ "${PIPESTATUS[0]}" = 0 ] && [ -f "$build/vptz.ko" ] || { echo "run.sh: building vptz.ko failed" >&2; exit 2; }
set -o pipefail
ko="$build/vptz.ko"

# v4l2loopback from the source v4l2loopback-dkms installs (/usr/src/v4l2loopback-VERSION), built like
# vptz rather than taken from DKMS's tree, so that its place does not depend on DKMS having run for
# this kernel.
src=$(ls -d /usr/src/v4l2loopback-* 2>/dev/null | sort -V | tail -1)
[ -n "$src" ] || { echo "run.sh: no /usr/src/v4l2loopback-* (apt install v4l2loopback-dkms)" >&2; exit 2; }
loopbuild="$root/.build/v4l2loopback-$kernel"
mkdir -p "$loopbuild"
for f in "$src"/*.c "$src"/*.h; do cmp -s "$f" "$loopbuild/$(basename "$f")" || cp "$f" "$loopbuild/"; done
echo 'obj-m := v4l2loopback.o' | cmp -s - "$loopbuild/Kbuild" || echo 'obj-m := v4l2loopback.o' >"$loopbuild/Kbuild"
set +o pipefail
make -s -C "/usr/src/linux-headers-$kernel" M="$loopbuild" modules 2>&1 | { grep -v 'Skipping BTF' >&2 || true; }
[ "${PIPESTATUS[0]}" = 0 ] && [ -f "$loopbuild/v4l2loopback.ko" ] || { echo "run.sh: building v4l2loopback.ko failed" >&2; exit 2; }
set -o pipefail
loopko="$loopbuild/v4l2loopback.ko"
if [ $build_only = 1 ]; then echo "$ko"; echo "$loopko"; exit 0; fi

# In the VM /tmp, /run, /var/tmp and /dev/shm are empty: a checkout under them is shared explicitly.
case $root/ in /tmp/*|/run/*|/var/tmp/*|/dev/shm/*) vmargs+=(--rw "$root") ;; esac

# vmbox loads the module without parameters; vm-load.sh loads it again with --params. (Arguments go
# through vmbox's quoting for the guest's shell: no '$' in them, so the wrapper is a file.)
exec "$vmbox" run "$cache" --modules "videodev,videobuf2-vmalloc,videobuf2-v4l2$modules" --ko "$ko" "${vmargs[@]}" -- \
    env "V4L2LOOPBACK_KO=$loopko" sh "$root/tests/vm/vm-load.sh" "$ko" "$params" "$@"
