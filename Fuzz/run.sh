#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of the wire codecs and parsers (see Fuzz/README.md).
# Needs swift on PATH (e.g. /opt/swift/usr/bin) and python3 for the seed corpus.
#
# Environment:
#   FUZZ_SECONDS         time limit of FrameDecoderFuzz (default 120)
#   FUZZ_RUNS            optional execution limit of FrameDecoderFuzz (-runs); whichever comes first
#   FUZZ_RT_SECONDS      time limit of RoundTripFuzz and JSONRPCFuzz (default 30; 0 skips RoundTripFuzz)
#   FUZZ_VISCA_SECONDS   time limit of VISCAFuzz (default 60)
#   FUZZ_MAVLINK_SECONDS time limit of MAVLinkFuzz (default 60)
#   FUZZ_CONFIG_SECONDS  time limit of ConfigFuzz (default 60)
#   FUZZ_ONVIF_SECONDS   time limit of ONVIFFuzz (default 60)
#   FUZZ_DRIVER_SECONDS  time limit of DriverFuzz (every driver of the table; default 60)
#   FUZZ_TARGETS         targets to run (default: every Fuzz/<Target>/ with a main.swift)
#   FUZZ_MAX_LEN         -max_len of the stream targets (default 600: two maximal frames and change;
#                        ConfigFuzz takes 4096, a whole configuration file; ONVIFFuzz 16384, a
#                        camera's setup replies)
# Exit status: 0 when no target crashed, 1 when one did (artifacts in .build-fuzz/artifacts/),
# 2 when the build failed.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.build-fuzz
FUZZ_SECONDS=${FUZZ_SECONDS:-120}
FUZZ_RT_SECONDS=${FUZZ_RT_SECONDS:-30}
FUZZ_VISCA_SECONDS=${FUZZ_VISCA_SECONDS:-60}
FUZZ_MAVLINK_SECONDS=${FUZZ_MAVLINK_SECONDS:-60}
FUZZ_CONFIG_SECONDS=${FUZZ_CONFIG_SECONDS:-60}
FUZZ_ONVIF_SECONDS=${FUZZ_ONVIF_SECONDS:-60}
FUZZ_DRIVER_SECONDS=${FUZZ_DRIVER_SECONDS:-60}
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-600}
FUZZ_TARGETS=${FUZZ_TARGETS:-$(cd Fuzz && ls -d */main.swift | sed 's,/main.swift,,' | tr '\n' ' ')}
# No allocation stacks (Swift allocates a lot; the stacks halve the speed); set ASAN_OPTIONS to override.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
# Swift's own crash backtracer reads memory ASan calls wild and buries the report: leave crashes to ASan.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

if ! command -v swift >/dev/null; then
    echo "run.sh: swift not on PATH (try PATH=/opt/swift/usr/bin:\$PATH)" >&2; exit 2
fi
mkdir -p "$OUT/corpus" "$OUT/artifacts" "$OUT/logs"
# VISCAFuzz loads the repository's camera profiles the way dockd does.
export DOCKD_VISCA_PROFILES=$ROOT/profiles/visca

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

# The targets are SwiftPM executables (Package.swift declares them when DOCKD_FUZZ is set) that
# depend on the project's library targets. They are built in a scratch directory of their own, with
# every module instrumented; -enable-testing lets them use the modules' internals (@testable import).
# (--manifest-cache none: the manifest with the fuzz targets must not be cached for ordinary builds)
build() {
    local target=$1
    echo "== building $target"
    if ! DOCKD_FUZZ=1 swift build -c release --manifest-cache none --scratch-path "$OUT/swiftpm" --product "$target" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing >"$OUT/logs/$target.build.log" 2>&1; then
        grep -v 'ld.gold' "$OUT/logs/$target.build.log" | grep -v 'warning:' | tail -40 >&2
        echo "run.sh: build of $target failed" >&2; exit 2
    fi
    ln -sf "swiftpm/release/$target" "$OUT/$target"
}

# Seeds: the committed ones in Fuzz/seeds/, or for the native codec every vector's wire bytes
# behind each chunking-control byte.
seed() {
    local n committed
    case $1 in
        JSONRPCFuzz) committed=jsonrpc ;;
        VISCAFuzz) committed=visca ;;
        MAVLinkFuzz) committed=mavlink ;;
        ConfigFuzz) committed=config ;;
        ONVIFFuzz) committed=onvif ;;
        DriverFuzz)
            # Every driver target's seeds and the native vectors behind each driver index (byte 0,
            # taken modulo the table's length: 8 covers a table of up to 8 drivers).
            n=$(python3 "$ROOT/Fuzz/seed_corpus.py" --drivers 8 "$ROOT/protocol/vectors" "$ROOT"/Fuzz/seeds/{visca,mavlink,onvif} \
                "$OUT/corpus/$1-seeds") || { echo "run.sh: seeding failed (python3?)" >&2; exit 2; }
            echo "== $n seed inputs in .build-fuzz/corpus/$1-seeds"
            return ;;
    esac
    if [ -n "${committed:-}" ]; then
        mkdir -p "$OUT/corpus/$1-seeds"
        cp "$ROOT/Fuzz/seeds/$committed"/* "$OUT/corpus/$1-seeds/"
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
        VISCAFuzz) run "$target" "$FUZZ_VISCA_SECONDS" ;;
        MAVLinkFuzz) run "$target" "$FUZZ_MAVLINK_SECONDS" ;;
        ConfigFuzz) run "$target" "$FUZZ_CONFIG_SECONDS" -max_len=4096 ;;  # a whole dockd.conf (the later flag wins)
        ONVIFFuzz) run "$target" "$FUZZ_ONVIF_SECONDS" -max_len=16384 ;;  # a camera's setup replies
        DriverFuzz) run "$target" "$FUZZ_DRIVER_SECONDS" -max_len=16384 ;;  # an ONVIF camera's setup replies too
        *) run "$target" "$FUZZ_RT_SECONDS" ;;
    esac
done

echo "== summary (logs in .build-fuzz/logs/)"
printf '%s\n' "${summaries[@]}"
exit $status
