#!/bin/sh
# Runs inside the VM (tests/vm/run.sh) with vptz loaded (profile tiny2, volatile pose) as
# /dev/video0: the real dockd owns it through the v4l2 driver, dockctl orients it, v4l2-ctl reads
# the pose the kernel holds, and dockd is stopped mid-move. Records what it sees into OUT for
# tests/vm/test_v4l2_driver.py to judge; nothing is asserted here.
#   guest_dockd_v4l2.sh OUT BIN
set -u
out=$1
bin=$2
dev=/dev/video0
now() { date +%s.%N; }
phase() { echo "$1 $(now)" >>"$out/phases.txt"; }
get() { v4l2-ctl -d $dev -C "$1" 2>&1 | sed 's/^[a-z_]*: //'; }
ctl() { cmd=$1; shift; "$bin/dockctl" "$cmd" --socket /tmp/dockd.sock "$@"; }

: >"$out/phases.txt"
phase boot-done
mkdir -p /tmp/state
cat >/tmp/dockd.conf <<CONF
[daemon]
socket = "/tmp/dockd.sock"
socket_group = ""
state_directory = "/tmp/state"
[hotplug]
enabled = false
[[device]]
video = "$dev"
driver = "v4l2"
max_speed = 0.8
CONF
"$bin/dockd" --config /tmp/dockd.conf --log-level debug 2>"$out/dockd.log" &
pid=$!

# Connected (an emulated machine is slow: up to 90 s)
end=$(($(date +%s) + 90))
while [ "$(date +%s)" -lt $end ]; do
    ctl list --json >"$out/list.json" 2>/dev/null && grep -q '"connected"' "$out/list.json" && break
    sleep 0.5
done
phase connected

# An orientation: yaw 0.3 rad left (pan −0.3 rad = −61880″), pitch 0.1 rad up (tilt 20626″)
ctl orient --yaw 0.3 --pitch 0.1 --wait --json >"$out/orient.json" 2>"$out/orient.err"
echo $? >"$out/orient.rc"
echo "$(get pan_absolute) $(get tilt_absolute)" >"$out/pose-after-orient.txt"
ctl list --json >"$out/list-after.json" 2>&1
phase oriented

# dockd stopped mid-move: the camera must hold where it was, not run on to the target
start=$(get pan_absolute)
ctl orient --yaw=-1.5 --wait --json >"$out/second-orient.json" 2>&1 &
# until the camera is on its way (dockctl starts slowly under emulation), at most 30 s
end=$(($(date +%s) + 30))
while [ "$(date +%s)" -lt $end ]; do
    pan=$(get pan_absolute)
    [ $((pan - start)) -gt 20000 ] && break
done
echo "$pan" >"$out/pan-before-term.txt"
kill -TERM $pid
wait $pid
echo $? >"$out/dockd.rc"
echo "$(get pan_absolute)" >"$out/pan-at-exit.txt"
sleep 2
echo "$(get pan_absolute)" >"$out/pan-2s-later.txt"
phase end
