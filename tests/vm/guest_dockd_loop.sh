#!/bin/sh
# Runs inside the VM (tests/vm/run.sh) with vptz loaded (profile tiny2) as /dev/video0: the real
# dockd owns it through the v4l2 driver and is driven through its API, the way a client would:
#   1. the zoom: motion.orient to 3x and back to 1x (dockd_rpc.py), ZOOM_ABSOLUTE read with v4l2-ctl;
#   2. a walking subject (walking_subject.py) fed to tracking.observe while v4l2-ctl samples the pan
#      and vptz counts the sets dockd sends (sysfs `sets`: how many, the least gap between two);
#   3. unplug and replug (replug.py): the reattach time, and the camera still after it.
# Records what it sees into OUT for tests/vm/test_dockd_loop.py to judge; nothing is asserted here.
#   guest_dockd_loop.sh OUT BIN
set -u
out=$1
bin=$2
here=$(dirname "$0")
py=/usr/bin/python3
dev=/dev/video0
sock=/tmp/dockd.sock
get() { v4l2-ctl -d $dev -C "$1" 2>&1 | sed 's/^[a-z_]*: //'; }
phase() { echo "$1 $(date +%s.%N)" >>"$out/phases.txt"; }

: >"$out/phases.txt"
phase boot-done
# max_speed 0.3 rad/s (the subject walks at 0.12): at 0.8 the pan hunted about the subject under
# emulation, by up to ±0.6 rad, and lost it once in five runs (BENCHMARKS.md, "A PTZ webcam under a
# real kernel")
. "$here/guest_dockd_conf.sh"
dockd_conf /tmp/dockd.conf "max_speed = 0.3"
"$bin/dockd" --config /tmp/dockd.conf --log-level debug 2>"$out/dockd.log" &
pid=$!

# until dockd lists the camera as connected (an emulated machine is slow: up to 90 s)
end=$(($(date +%s) + 90))
until "$bin/dockctl" list --socket $sock --json 2>/dev/null | grep -q '"connected"'; do
    [ "$(date +%s)" -lt $end ] || break
    sleep 0.5
done
phase connected

# 1. The zoom through dockd: tiny2's ZOOM_ABSOLUTE 100..400 is 1x..4x, so 3x is 300
$py "$here/dockd_rpc.py" $sock orient-zoom 3 >"$out/zoom-3.json" 2>"$out/zoom-3.err"
echo $? >"$out/zoom-3.rc"
get zoom_absolute >"$out/zoom-3.txt"
$py "$here/dockd_rpc.py" $sock orient-zoom 1 >"$out/zoom-1.json" 2>"$out/zoom-1.err"
echo $? >"$out/zoom-1.rc"
get zoom_absolute >"$out/zoom-1.txt"
phase zoomed

# 2. The walking subject; v4l2-ctl samples the pan from a second open every second until the walk
# ends (no faster: the VM has one emulated CPU, and the subject must keep its frame rate)
: >"$out/walk-pan.txt"
(while [ ! -e /tmp/walk-done ]; do echo "$(date +%s.%N) $(get pan_absolute)" >>"$out/walk-pan.txt"; sleep 1; done) &
sampler=$!
# vptz counts the control sets it receives, and the least gap between two (the walk's only setter is dockd)
echo 0 >/sys/module/vptz/parameters/sets
$py "$here/walking_subject.py" $sock "$out/walk.jsonl" 2>"$out/walk.err"
echo $? >"$out/walk.rc"
cat /sys/module/vptz/parameters/sets >"$out/walk-sets.txt"
touch /tmp/walk-done
wait $sampler
phase walked

# 3. Unplug and replug
$py "$here/replug.py" $sock $dev "$out/replug.json" 2>"$out/replug.err"
echo $? >"$out/replug.rc"
phase replugged

kill -TERM $pid
wait $pid
echo $? >"$out/dockd.rc"
phase end
