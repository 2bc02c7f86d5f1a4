#!/usr/bin/env bash
# Tracking benchmark: builds dock-bench in release, runs the scenario suite (ours vs naive vs oracle)
# in virtual time, writes one SVG per scenario under Benchmarks/plots/, and rewrites the section of
# BENCHMARKS.md between <!-- bench:tracking:start --> and <!-- bench:tracking:end -->.
set -euo pipefail
cd "$(dirname "$0")/.."
SEED="${SEED:-1}"
swift build -c release --product dock-bench
report="$(mktemp)"
.build/release/dock-bench scenario --suite --seed "$SEED" --plots Benchmarks/plots --markdown "$report"
python3 - "$report" "$SEED" <<'PY'
import sys, datetime
report, seed = open(sys.argv[1]).read(), sys.argv[2]
start, end = "<!-- bench:tracking:start -->", "<!-- bench:tracking:end -->"
text = open("BENCHMARKS.md").read()
body = (f"{start}\nMeasured {datetime.date.today()} (release build). Reproduce: `bash scripts/bench-tracking.sh` "
        f"(or `swift build -c release --product dock-bench && .build/release/dock-bench scenario --suite --seed {seed} --plots Benchmarks/plots`).\n\n"
        + report + (open("Benchmarks/tracking-notes.md").read() if __import__("os").path.exists("Benchmarks/tracking-notes.md") else "") + end)
if start in text:
    text = text[:text.index(start)] + body + text[text.index(end) + len(end):]
else:
    text = text.rstrip("\n") + "\n\n## Auto-tracking scenarios (`dock-bench scenario`)\n\n" + body + "\n"
open("BENCHMARKS.md", "w").write(text)
PY
rm -f "$report"
echo "BENCHMARKS.md updated (tracking section)"
