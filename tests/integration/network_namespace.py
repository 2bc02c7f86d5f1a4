"""A Python script run in a network namespace of its own (unshare -n, as root or as a user mapped to
root) holding only lo and a veth pair, 10.77.0.1/24 on v0 with multicast routed to it: for
multicast tests (WS-Discovery) where no datagram may leave the machine and peers ignore loopback.
The test is skipped where namespaces or the tools are missing."""
import os
import shutil
import subprocess
import sys

import pytest

ADDRESS = "10.77.0.1"


def run_python(script, timeout=120):
    """Runs `script` (a path) with this interpreter inside the namespace; returns the finished process."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare or ip missing")
    if os.geteuid() != 0 and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("no network namespaces for this user")
    setup = ("ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v1 up && "
             f"ip link set v0 multicast on up && ip addr add {ADDRESS}/24 dev v0 && ip route add 224.0.0.0/4 dev v0 && "
             f'exec "{sys.executable}" "{script}"')
    unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    return subprocess.run([*unshare, "sh", "-c", setup], capture_output=True, text=True, timeout=timeout)
