#!/bin/sh
# Runs inside the VM (tests/vm/run.sh) with vptz loaded (640x360 YUYV at 30 frames/s) as /dev/video0:
# loads v4l2loopback as /dev/video10, and dock-camera captures from vptz and relays to it while
# tests/vm/relay_reader.py, a second program, reads the relayed frames as an app would; the camera
# is panned once a third of them have been read (vptz's square moves 160 px right). Twice: relay
# alone (no dockd: dock-camera detects nothing), then with the real dockd (no stands) and the HOG
# detector running on every frame it can take, relaying YUYV. Records into OUT for
# tests/vm/test_relay.py to judge; nothing is asserted here.
#   guest_relay.sh OUT BIN
set -u
out=$1
bin=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
now() { date +%s.%N; }
phase() { echo "$1 $(now)" >>"$out/phases.txt"; }
: >"$out/phases.txt"
phase boot-done
: "${V4L2LOOPBACK_KO:?V4L2LOOPBACK_KO is not set (run through tests/vm/run.sh)}"
py=/usr/bin/python3
camera="$py $root/camera/dock-camera --source /dev/video0 --pixel-format YUYV --size 640x360 --fps 30 --hfov 80"
frames=${RELAY_FRAMES:-150}

insmod "$V4L2LOOPBACK_KO" video_nr=10 max_buffers=2 card_label="\"dockd camera\"" exclusive_caps=1 \
    || echo "insmod v4l2loopback failed" >>"$out/errors.txt"
v4l2-ctl -d /dev/video10 -D >"$out/loopback-caps.txt" 2>&1
cat /proc/cpuinfo | grep -c ^processor >"$out/cpus.txt"

# Errors: a capture device (vptz itself) and a missing device as the relay's output
phase errors
$camera --socket /tmp/none.sock --relay /dev/video0 --seconds 5 >/dev/null 2>"$out/error-capture.txt"
echo $? >"$out/error-capture.rc"
$camera --socket /tmp/none.sock --relay /dev/video11 --seconds 5 >/dev/null 2>"$out/error-missing.txt"
echo $? >"$out/error-missing.rc"

# relay NAME FORMAT SOCKET DETECTOR: dock-camera relays while the reader reads $frames frames; the
# camera pans once the reader has a third of them; dock-camera is stopped when the reader is done
relay() {
    name=$1
    v4l2-ctl -d /dev/video0 -c pan_absolute=0 >/dev/null 2>&1
    phase "$name"
    $camera --socket "$3" --detector "$4" --relay /dev/video10 --relay-format "$2" \
        --log "$out/$name.jsonl" --stats "$out/$name-stats.json" 2>"$out/$name-camera.txt" &
    cam=$!
    $py "$here/relay_reader.py" /dev/video10 "$frames" "$out/$name-reader.json" >"$out/$name-reader.txt" 2>&1 &
    reader=$!
    end=$(($(date +%s) + 90))
    while [ "$(date +%s)" -lt $end ] && ! grep -q read "$out/$name-reader.txt" && kill -0 $reader 2>/dev/null; do
        sleep 0.05
    done
    echo "pan $(cut -d' ' -f1 /proc/uptime)" >"$out/$name-pan.txt"
    v4l2-ctl -d /dev/video0 -c pan_absolute=-72000 >>"$out/$name-pan.txt" 2>&1
    wait $reader
    echo $? >"$out/$name-reader.rc"
    kill -TERM $cam
    wait $cam
    echo $? >"$out/$name-camera.rc"
}

relay alone YU12 /tmp/none.sock hog

. "$here/guest_dockd_conf.sh"
dockd_daemon_conf /tmp/dockd.conf
"$bin/dockd" --config /tmp/dockd.conf 2>"$out/dockd.log" &
dockd=$!
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt $end ] && ! [ -S /tmp/dockd.sock ]; do sleep 0.1; done
relay detecting YUYV /tmp/dockd.sock hog
kill -TERM $dockd
wait $dockd

# Two stands: a simulated one, attached first, and vptz itself (a PTZ webcam is its own stand).
# dock-camera without --stand sends what it sees in /dev/video0 to the stand driven through
# /dev/video0, not to dockd's first stand.
phase own-stand
"$bin/dock-sim" --unix /tmp/sim.sock --seed 1 >/dev/null 2>"$out/own-stand-sim.txt" &
sim=$!
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt $end ] && ! [ -S /tmp/sim.sock ]; do sleep 0.1; done
cat >>/tmp/dockd.conf <<CONF
[[device]]
unix = "/tmp/sim.sock"
[[device]]
video = "/dev/video0"
driver = "v4l2"
name = "webcam"
CONF
"$bin/dockd" --config /tmp/dockd.conf 2>"$out/own-stand-dockd.log" &
dockd=$!
end=$(($(date +%s) + 90))
while [ "$(date +%s)" -lt $end ] && [ "$("$bin/dockctl" list --json --socket /tmp/dockd.sock 2>/dev/null | grep -c '"connected"')" != 2 ]; do
    sleep 0.5
done
"$bin/dockctl" list --json --socket /tmp/dockd.sock >"$out/own-stand-list.json" 2>&1
$camera --socket /tmp/dockd.sock --detector hog --seconds 15 >/dev/null 2>"$out/own-stand-camera.txt"
echo $? >"$out/own-stand-camera.rc"
kill -TERM $dockd $sim
wait $dockd $sim
phase end
