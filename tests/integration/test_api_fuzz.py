"""A bounded run of the API fuzzer (api_fuzz.py) through the real dockd on dock-sim: generated
requests from the OpenRPC document with hostile numbers, types and envelopes; dockd must stay up and
answer each as the document says. `make api-fuzz` runs it for longer (BENCHMARKS.md has the runs)."""
import os
import random

from api_fuzz import Finding, Fuzzer

SECONDS = float(os.environ.get("API_FUZZ_TEST_SECONDS", "75"))


def test_generated_requests_never_kill_dockd_and_every_reply_follows_the_document(rig):
    c = rig.client()
    stand = rig.connected_stand(c)["id"]
    seed = int(os.environ.get("API_FUZZ_SEED", random.randrange(1 << 32)))
    fuzzer = Fuzzer(rig.socket_path, rig.dockd, seed, stand_ids=(stand,))
    try:
        summary = fuzzer.run(SECONDS)
    except Finding as finding:
        raise AssertionError(f"seed {seed} (API_FUZZ_SEED={seed} reproduces it), after {fuzzer.sent} requests: {finding}\n"
                             f"dockd's log ends: {rig.log()[-2000:]}") from None
    print(summary)
    assert summary["requests"] > 1000
    assert c.result("dockd.version")["daemon"] == "dockd"
    assert "Fatal error" not in rig.log()
