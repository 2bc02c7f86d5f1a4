# Sourced by the guest scripts that start dockd in the VM (guest_dockd_loop.sh, guest_dockd_v4l2.sh).
# dockd_conf FILE [LINE]...: writes FILE, a dockd.conf with the API on /tmp/dockd.sock, the state in
# /tmp/state, no hotplug, and one [[device]], vptz's /dev/video0 through the v4l2 driver, ending in
# the LINEs given (max_speed, steering; empty ones are left out).
dockd_conf() {
    conf=$1
    shift
    cat >"$conf" <<CONF
[daemon]
socket = "/tmp/dockd.sock"
socket_group = ""
state_directory = "/tmp/state"
[hotplug]
enabled = false
[[device]]
video = "/dev/video0"
driver = "v4l2"
CONF
    for line in "$@"; do
        [ -z "$line" ] || echo "$line" >>"$conf"
    done
}
