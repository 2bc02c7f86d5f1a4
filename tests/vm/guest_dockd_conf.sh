# Sourced by the guest scripts that start dockd in the VM.
# dockd_daemon_conf FILE: writes FILE, the part of a dockd.conf they all share: the API on
# /tmp/dockd.sock, the state in /tmp/state, no hotplug (no udev runs in the VM).
dockd_daemon_conf() {
    mkdir -p /tmp/state
    cat >"$1" <<CONF
[daemon]
socket = "/tmp/dockd.sock"
socket_group = ""
state_directory = "/tmp/state"
[hotplug]
enabled = false
CONF
}

# dockd_conf FILE [LINE]...: that, and one [[device]], vptz's /dev/video0 through the v4l2 driver,
# ending in the LINEs given (max_speed, steering; empty ones are left out).
dockd_conf() {
    conf=$1
    shift
    dockd_daemon_conf "$conf"
    cat >>"$conf" <<CONF
[[device]]
video = "/dev/video0"
driver = "v4l2"
CONF
    for line in "$@"; do
        [ -z "$line" ] || echo "$line" >>"$conf"
    done
}
