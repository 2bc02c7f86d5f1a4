#!/usr/bin/env bash
# `make demo` and `make test`, each RUNS times (10 by default) beside a CPU hog on every core
# (stress-ng --cpu N), as on a user's busy machine: the pass rate, the wall time of each run and,
# for a failed run, its first failure, written to out/load/ and into BENCHMARKS.md (section `load`).
# TARGETS picks the make targets ("demo test" by default). Takes about RUNS × 12 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-10}"
targets="${TARGETS:-demo test}"
out=out/load
mkdir -p "$out"
command -v stress-ng >/dev/null || { echo "stress-ng is missing: make deps installs it" >&2; exit 1; }

cores="$(nproc)"
stress-ng --cpu "$cores" --timeout 0 --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null' EXIT
revision="$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+changes')"

summary="$out/summary.md"
{
    echo "Measured $(date -u +%F) at $revision by \`make under-load\` (scripts/under-load.sh): each target run"
    echo "$runs times back to back beside \`stress-ng --cpu $cores\` (a busy loop on every core, at the same"
    echo "priority), on this $cores-core machine; logs in out/load/."
    echo
    echo "| target | passed | wall time per run (s) | failures |"
    echo "|---|---|---|---|"
} > "$summary"

status=0
for target in $targets; do
    passed=0 times=() failures=()
    for i in $(seq 1 "$runs"); do
        log="$out/$target-$i.log"
        started=$(date +%s)
        if make "$target" > "$log" 2>&1; then
            passed=$((passed + 1))
        else
            status=1
            # The first failing test or error line says what broke.
            first=$(grep -m1 -E '^(FAILED|ERROR) |✘ Test|error:|Error [0-9]+' "$log" | cut -c1-160)
            failures+=("run $i: ${first:-see $log}")
        fi
        times+=($(( $(date +%s) - started )))
        echo "make $target, run $i of $runs: $passed passed so far (${times[-1]} s)"
    done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')
    failed_text=$(IFS='; '; echo "${failures[*]:-none}")
    echo "| \`make $target\` | $passed/$runs | $sorted| $failed_text |" >> "$summary"
done

python3 scripts/replace_section.py BENCHMARKS.md load < "$summary"
cat "$summary"
exit $status
