#!/bin/sh
# Runs inside the VM (tests/vm/run.sh) with vptz loaded (profile tiny2, volatile pose) as
# /dev/video0: the real dockd owns it through the v4l2 driver, dockctl orients it, v4l2-ctl reads
# the pose the kernel holds, sets the zoom for dockd to read back, and dockd is stopped mid-move. Then twice more with the module loaded
# again: the ptzpro2 profile (no absolute pan/tilt, a speed that is only a direction: dockd steers
# it by relative steps), and tiny2 steered by speed (steering = "speed"), stopped mid-move; the
# pose is read from /sys/module/vptz/parameters/pose, the module's ground truth. At each SIGTERM the
# signal's time and vptz's `sets` (when the last set, the stop, arrived) are kept. Records what it
# sees into OUT for tests/vm/test_v4l2_driver.py to judge; nothing is asserted here.
#   guest_dockd_v4l2.sh OUT BIN
set -u
out=$1
bin=$2
here=$(dirname "$0")
dev=/dev/video0
now() { date +%s.%N; }
phase() { echo "$1 $(now)" >>"$out/phases.txt"; }
get() { v4l2-ctl -d $dev -C "$1" 2>&1 | sed 's/^[a-z_]*: //'; }
ctl() { cmd=$1; shift; "$bin/dockctl" "$cmd" --socket /tmp/dockd.sock "$@"; }

: >"$out/phases.txt"
phase boot-done
: "${VPTZ_KO:?VPTZ_KO is not set (run through tests/vm/run.sh)}"
reload() { rmmod vptz && insmod "$VPTZ_KO" "$@" || echo "reload $* failed" >>"$out/errors.txt"; }
truth() { cat /sys/module/vptz/parameters/pose; }
# sigterm FILE: SIGTERM to dockd ($pid) at once (builtins only: with a python3 started to stamp it,
# under load, the move it was to interrupt had ended before the signal); FILE gets /proc/uptime read
# just before, CLOCK_BOOTTIME in 10 ms steps, rounded down: the clock of vptz's `sets` (ktime_get,
# CLOCK_MONOTONIC: the same in a VM never suspended)
sigterm() { read -r up _ </proc/uptime; kill -TERM "$pid"; echo "$up" >"$1"; }
sets() { cat /sys/module/vptz/parameters/sets; }
# on_its_way: until the module's pan is 20000″ past $start (at most 30 s); pan is then where it is.
# Read with builtins: through v4l2-ctl (up to 1.5 s a read under load) the 1.3 s move had ended
# before the signal meant to interrupt it.
on_its_way() {
    end=$(($(date +%s) + 30))
    while :; do
        read -r pan _ </sys/module/vptz/parameters/pose
        [ $((pan - start)) -gt 20000 ] && return 0
        [ "$(date +%s)" -lt $end ] || return 1
    done
}
# at_rest: until the pose reads the same twice 0.5 s apart (at most 30 s), rather than a fixed wait
at_rest() {
    end=$(($(date +%s) + 30))
    last=$(truth)
    while [ "$(date +%s)" -lt $end ]; do
        sleep 0.5
        pose=$(truth)
        [ "$pose" = "$last" ] && return 0
        last=$pose
    done
}

# connected FILE: until dockd lists the camera as connected (an emulated machine is slow: up to 90 s)
connected() {
    end=$(($(date +%s) + 90))
    while [ "$(date +%s)" -lt $end ]; do
        ctl list --json >"$1" 2>/dev/null && grep -q '"connected"' "$1" && return 0
        sleep 0.5
    done
    return 1
}

. "$here/guest_dockd_conf.sh"
dockd_conf /tmp/dockd.conf "max_speed = 0.8"
cat /sys/module/vptz/parameters/ai_mode >"$out/ai-mode-before.txt"
"$bin/dockd" --config /tmp/dockd.conf --log-level debug 2>"$out/dockd.log" &
pid=$!

connected "$out/list.json"
phase connected
# The camera's own tracking: the profile matched by the card (obsbot-tiny-2) switches it off once the
# camera holds still (at most 20 s)
end=$(($(date +%s) + 20))
while [ "$(date +%s)" -lt $end ] && [ "$(cat /sys/module/vptz/parameters/ai_mode)" != 0 ]; do sleep 0.2; done
cat /sys/module/vptz/parameters/ai_mode >"$out/ai-mode-after.txt"

# An orientation: yaw 0.3 rad left (pan −0.3 rad = −61880″), pitch 0.1 rad up (tilt 20626″)
ctl orient --yaw 0.3 --pitch 0.1 --wait --json >"$out/orient.json" 2>"$out/orient.err"
echo $? >"$out/orient.rc"
echo "$(get pan_absolute) $(get tilt_absolute)" >"$out/pose-after-orient.txt"
ctl list --json >"$out/list-after.json" 2>&1
phase oriented

# The zoom (the profile's 4x over ZOOM_ABSOLUTE 100..400): turned by someone else, read back
v4l2-ctl -d $dev -c zoom_absolute=250 2>>"$out/errors.txt"
get zoom_absolute >"$out/zoom-set.txt"
ctl watch motion --json --rate 10 --seconds 3 >"$out/watch-zoom.json" 2>&1
phase zoom-read

# dockd stopped mid-move: the camera must hold where it was, not run on to the target
start=$(get pan_absolute)
ctl orient --yaw=-1.5 --wait --json >"$out/second-orient.json" 2>&1 &
# until the camera is on its way (dockctl starts slowly under emulation), at most 30 s
on_its_way
echo "$pan" >"$out/pan-before-term.txt"
sigterm "$out/term-uptime.txt"
wait $pid
echo $? >"$out/dockd.rc"
sets >"$out/sets-at-exit.txt"
echo "$(get pan_absolute)" >"$out/pan-at-exit.txt"
cat /sys/module/vptz/parameters/ai_mode >"$out/ai-mode-at-exit.txt"
sleep 2
echo "$(get pan_absolute)" >"$out/pan-2s-later.txt"

# start_dockd NAME EXTRA: dockd again on the reloaded camera, with EXTRA lines in its [[device]]
start_dockd() {
    dockd_conf /tmp/dockd-$1.conf "max_speed = 1.0472" "$2"  # vptz's 60°/s
    "$bin/dockd" --config /tmp/dockd-$1.conf --log-level debug 2>"$out/dockd-$1.log" &
    pid=$!
    connected "$out/list-$1.json"
}

# The ptzpro2 profile: no PAN/TILT_ABSOLUTE, PAN/TILT_SPEED of ±1: relative steps, pose estimated
phase relative
reload profile=ptzpro2
start_dockd relative ""
ctl orient --yaw 0.3 --pitch 0.1 --wait --json >"$out/orient-relative.json" 2>"$out/orient-relative.err"
echo $? >"$out/orient-relative.rc"
at_rest  # the estimate ends the move when the camera should be there; a slow VM's is later
truth >"$out/pose-relative.txt"
kill -TERM $pid
wait $pid
echo $? >"$out/dockd-relative.rc"

# tiny2 steered by speed: dockd closes the loop on the pose it reads back; SIGTERM mid-move stops
# a camera that would otherwise run on at its last speed to its end stop
phase speed
reload
start_dockd speed 'steering = "speed"'
ctl orient --yaw 0.3 --pitch 0.1 --wait --json >"$out/orient-speed.json" 2>"$out/orient-speed.err"
echo $? >"$out/orient-speed.rc"
truth >"$out/pose-speed.txt"
start=$(get pan_absolute)
ctl orient --yaw=-1.5 --wait --json >"$out/second-orient-speed.json" 2>&1 &
on_its_way
echo "$pan" >"$out/speed-pan-before-term.txt"
sigterm "$out/speed-term-uptime.txt"
wait $pid
echo $? >"$out/dockd-speed.rc"
sets >"$out/speed-sets-at-exit.txt"
truth >"$out/speed-at-exit.txt"
sleep 2
truth >"$out/speed-2s-later.txt"
phase end
