#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of the protocol codec (see Fuzz/README.md).
# Needs only swiftc on PATH (e.g. /opt/swift/usr/bin) and python3 for the seed corpus.
#
# Environment:
#   FUZZ_SECONDS     time limit of FrameDecoderFuzz (default 120)
#   FUZZ_RUNS        optional execution limit of FrameDecoderFuzz (-runs); whichever comes first
#   FUZZ_RT_SECONDS  time limit of RoundTripFuzz (default 30; 0 skips it)
#   FUZZ_TARGETS     targets to run (default "FrameDecoderFuzz RoundTripFuzz JSONRPCFuzz")
#   FUZZ_MAX_LEN     -max_len (default 600: two maximal frames and change)
# Exit status: 0 when no target crashed, 1 when one did (artifacts in .build-fuzz/artifacts/),
# 2 when the build failed.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.build-fuzz
FUZZ_SECONDS=${FUZZ_SECONDS:-120}
FUZZ_RT_SECONDS=${FUZZ_RT_SECONDS:-30}
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-600}
FUZZ_TARGETS=${FUZZ_TARGETS:-"FrameDecoderFuzz RoundTripFuzz JSONRPCFuzz"}
# No allocation stacks (Swift allocates a lot; the stacks halve the speed); set ASAN_OPTIONS to override.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}

if ! command -v swiftc >/dev/null; then
    echo "run.sh: swiftc not on PATH (try PATH=/opt/swift/usr/bin:\$PATH)" >&2; exit 2
fi
mkdir -p "$OUT/corpus" "$OUT/artifacts" "$OUT/logs"

# A libFuzzer probe: the toolchain ships libclang_rt.fuzzer and asan; linking also needs a C++
# runtime (libstdc++-12-dev) and a linker (binutils-gold / lld) from apt.
probe() {
    local dir; dir=$(mktemp -d)
    printf '@_cdecl("LLVMFuzzerTestOneInput") public func f(_ d: UnsafePointer<UInt8>?, _ n: Int) -> CInt { 0 }\n' > "$dir/p.swift"
    # (run from .build-fuzz: with -wmo -g swiftc drops <module>-1.swiftmodule files into the cwd)
    if ! swiftc -sanitize=fuzzer,address -parse-as-library "$dir/p.swift" -o "$dir/p" >"$dir/log" 2>&1; then
        echo "run.sh: swiftc -sanitize=fuzzer,address cannot build a libFuzzer binary here:" >&2
        grep -v 'ld.gold' "$dir/log" | head -20 >&2
        echo "run.sh: on Debian 12 install the linker and C++ runtime it needs:" \
             "apt-get install -y binutils-gold libstdc++-12-dev libgcc-12-dev" >&2
        rm -rf "$dir"; exit 2
    fi
    rm -rf "$dir"
}
probe

SOURCES=("$ROOT"/Sources/DockProtocol/*.swift)
# The API's request parser is pure Swift + Foundation: its three files compile on their own.
API_SOURCES=("$ROOT"/Sources/dockd/JSONValue.swift "$ROOT"/Sources/dockd/RPCError.swift "$ROOT"/Sources/dockd/JSONRPCRequest.swift)
build() {
    local target=$1
    local sources=("${SOURCES[@]}")
    [ "$target" = JSONRPCFuzz ] && sources=("${API_SOURCES[@]}")
    echo "== building $target"
    # One module with the codec's sources: -wmo lets the generic decoder specialize; ld.gold warnings are harmless.
    # (run from .build-fuzz: with -wmo -g swiftc drops <module>-1.swiftmodule files into the cwd)
    if ! (cd "$OUT" && swiftc -sanitize=fuzzer,address -parse-as-library -O -wmo -g -module-name "$target" \
            "$ROOT/Fuzz/$target.swift" "${sources[@]}" -o "$OUT/$target") >"$OUT/logs/$target.build.log" 2>&1; then
        grep -v 'ld.gold' "$OUT/logs/$target.build.log" >&2
        echo "run.sh: build of $target failed" >&2; exit 2
    fi
}

# Seeds: every vector's wire bytes, behind each chunking-control byte.
seed() {
    local n
    if [ "$1" = JSONRPCFuzz ]; then
        mkdir -p "$OUT/corpus/$1-seeds"
        cp "$ROOT"/Fuzz/seeds/jsonrpc/* "$OUT/corpus/$1-seeds/"
        echo "== $(ls "$OUT/corpus/$1-seeds" | wc -l) seed inputs in .build-fuzz/corpus/$1-seeds"
        return
    fi
    n=$(python3 "$ROOT/Fuzz/seed_corpus.py" "$ROOT/protocol/vectors" "$OUT/corpus/$1-seeds") || {
        echo "run.sh: seeding failed (python3?)" >&2; exit 2; }
    echo "== $n seed inputs in .build-fuzz/corpus/$1-seeds"
}

status=0
summaries=()
run() {
    local target=$1 seconds=$2; shift 2
    local log=$OUT/logs/$target.log
    mkdir -p "$OUT/corpus/$target" "$OUT/artifacts/$target"
    local cmd=("$OUT/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1
               -max_len="$FUZZ_MAX_LEN" -artifact_prefix="$OUT/artifacts/$target/" "$@"
               "$OUT/corpus/$target" "$OUT/corpus/$target-seeds")
    echo "== ${cmd[*]#$ROOT/}"
    local started=$SECONDS
    "${cmd[@]}" >"$log" 2>&1
    local rc=$? elapsed=$((SECONDS - started))
    local execs rate cov ft crashes
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    crashes=$(find "$OUT/artifacts/$target" -type f | wc -l)
    local kinds
    kinds=$(find "$OUT/artifacts/$target" -type f -printf '%f\n' | sed 's/-.*//' | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
    local summary="$target: ${execs:-?} executions in ${elapsed} s, ${rate:-?} exec/s, ${crashes} crash/timeout/leak artifacts${kinds:+ (${kinds%, })}, ${cov:-cov: ?}, exit ${rc}"
    # SIGINT (exit 72) stops a run early with its stats; that is not a finding.
    if [ "$rc" -eq 72 ] && grep -q 'run interrupted' "$log"; then summary+=" (interrupted)"; rc=0; fi
    summaries+=("$summary")
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        status=1
        grep -E 'ERROR|violated|Fatal error|runtime failure|Test unit written' "$log" | head -10 >&2
    fi
}

for target in $FUZZ_TARGETS; do
    [ "$target" = RoundTripFuzz ] && [ "$FUZZ_RT_SECONDS" = 0 ] && continue
    build "$target"
    seed "$target"
    case $target in
        FrameDecoderFuzz) run "$target" "$FUZZ_SECONDS" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} ;;
        *) run "$target" "$FUZZ_RT_SECONDS" ;;
    esac
done

echo "== summary (logs in .build-fuzz/logs/)"
printf '%s\n' "${summaries[@]}"
exit $status
