#!/bin/sh
# Runs inside the VM (tests/vm/run.sh --modules dummy_hcd,cdc_acm,libcomposite,usb_f_acm): a real
# USB-serial link under a real kernel. A USB gadget made in configfs (one ACM function) is plugged
# into dummy_hcd's virtual host controller, where cdc_acm makes it /dev/ttyACM0; the VISCA camera
# emulator (tests/peers/visca_camera.py) answers on the gadget's side, /dev/ttyGS0. dockd keeps a
# stand configured on /dev/ttyACM0. The adapter is unplugged and another adapter (another serial
# number) gets /dev/ttyACM0; then the stand's own comes back there.
# Records what it sees into OUT for tests/vm/test_usb_serial.py to judge; nothing is asserted here.
#   guest_usb_serial.sh OUT BIN
set -u
out=$1
bin=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
sock=/tmp/dockd.sock
gadget=/sys/kernel/config/usb_gadget/adapter
camera=""

# until_within SECONDS CONDITION: until CONDITION (shell code) holds, at most SECONDS (an emulated
# machine is slow); 1 if it never did
until_within() {
    end=$(($(date +%s) + $1)); shift
    until eval "$1" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt $end ] || return 1
        sleep 0.2
    done
}
connected() { "$bin/dockctl" list --socket $sock --json 2>/dev/null | grep -q '"connected"'; }

mount -t configfs none /sys/kernel/config
mkdir -p $gadget/strings/0x409 $gadget/configs/c.1 $gadget/functions/acm.usb0
echo 0x0403 >$gadget/idVendor
echo 0x6001 >$gadget/idProduct
echo "dockd tests" >$gadget/strings/0x409/manufacturer
echo "USB-serial adapter" >$gadget/strings/0x409/product
ln -s $gadget/functions/acm.usb0 $gadget/configs/c.1/

# plug SERIAL: the adapter with that serial number appears as /dev/ttyACM0, the camera answers on it
plug() {
    echo "$1" >$gadget/strings/0x409/serialnumber
    ls /sys/class/udc | head -1 >$gadget/UDC
    until_within 60 "[ -e /dev/ttyACM0 ] && [ -e /dev/ttyGS0 ]" || echo "plug $1: no /dev/ttyACM0" >>"$out/errors.txt"
    $py "$root/tests/peers/visca_camera.py" --profile "$root/profiles/visca/generic-ptzoptics.json" --tty /dev/ttyGS0 \
        >>"$out/camera.log" 2>&1 &
    camera=$!
    echo "$1 $(cat /sys/class/tty/ttyACM0/device/../serial 2>/dev/null)" >>"$out/plugged.txt"
}

unplug() {
    kill $camera 2>/dev/null; wait $camera 2>/dev/null
    echo "" >$gadget/UDC
    until_within 60 "[ ! -e /dev/ttyACM0 ]" || echo "unplug: /dev/ttyACM0 stayed" >>"$out/errors.txt"
}

. "$here/guest_dockd_conf.sh"
dockd_daemon_conf /tmp/dockd.conf
cat >>/tmp/dockd.conf <<CONF
[[device]]
path = "/dev/ttyACM0"
driver = "visca"
address = 1
profile = "generic-ptzoptics"
CONF

plug A1
"$bin/dockd" --config /tmp/dockd.conf 2>"$out/dockd.log" &
pid=$!
until_within 90 connected; echo $? >"$out/own-connected.rc"

unplug
until_within 60 "! \"$bin/dockctl\" list --socket $sock --json | grep -q '\"connected\"'"
plug B2
# Two refusals in a row (the second after a reconnection wait), or the other adapter connected.
until_within 90 "[ \$(grep -c 'is now another device' $out/dockd.log) -ge 2 ] || \"$bin/dockctl\" list --socket $sock --json | grep -q '\"connected\"'"
"$bin/dockctl" list --socket $sock --json >"$out/other.json" 2>&1

unplug
plug A1
# (what dockctl printed when it showed the stand connected: a slow emulated machine may lose the
# link again soon after, to a reply later than the link's timeout)
until_within 90 "\"$bin/dockctl\" list --socket $sock --json >$out/own-again.json 2>&1 && grep -q '\"connected\"' $out/own-again.json"
echo $? >"$out/own-again-connected.rc"

kill $pid; wait $pid
unplug
