#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/Targets) with coverage and AddressSanitizer, and fuzzes
# each for SECONDS (default 60), starting from Fuzz/Corpus/<target>. Prints executions per
# target; exits 1 if any input crashed, leaving it in .build/fuzz/crash-<target>-*: copy it
# into Fuzz/Corpus/<target>/ once fixed, and FuzzRegressionTests replays it forever after.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: header attributes cache presence payload arguments state sync query daemon
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(header attributes cache presence payload arguments state sync query daemon)

build=.build/fuzz
# One -sanitize= flag with both: given as two flags, the Swift driver keeps only the last one
# (address), and the modules get no coverage counters at all.
flags=(-Xswiftc -sanitize=fuzzer,address)
# SwiftPM does not rebuild when only flags change: start over when they differ from last time.
if [ "$(cat "$build/flags" 2>/dev/null)" != "${flags[*]}" ]; then rm -rf "$build"; fi
swift build --scratch-path "$build" --target KeychainFuzzTargets "${flags[@]}" >/dev/null
echo "${flags[*]}" > "$build/flags"
# The objects of the fuzz targets' module and of every module it depends on, as SwiftPM's
# output file maps list them (so stale objects of deleted sources stay out), and the C shim.
modules="KeychainFuzzTargets KeychainCore KeychainSystem ValetNaming KeychainCLI KeychainServe Locksmith Security LocalAuthentication"
objects=""
for module in $modules; do
    objects="$objects $(grep -o '"object" *: *"[^"]*"' "$build/debug/$module.build/output-file-map.json" | sed 's/.*"\([^"]*\)"$/\1/' | sort -u)"
done
objects="$objects $(find "$build/debug/" -path '*/CKeyring.build/*.o' -o -path '*/CSystem.build/*.o' -o -path '*/CCurl.build/*.o' -o -path '*/CSDBus.build/*.o')"
# shellcheck disable=SC2086
swiftc -sanitize=fuzzer,address $objects -lsqlite3 -lcrypto -o "$build/keychain-fuzz" >"$build/link.log" 2>&1 || { cat "$build/link.log"; exit 1; }

failed=0
for target in "${targets[@]}"; do
    corpus="$build/corpus-$target"
    mkdir -p "$corpus"
    log="$build/fuzz-$target.log"
    # The time and memory property: an input that takes over 2 s, or makes the process pass
    # 2 GiB (AddressSanitizer's quarantine included), or one allocation pass 256 MiB, is a
    # failure like a crash. The payload target
    # also checks, for each input, that the reader's work stays proportional to its size.
    if LSAN_OPTIONS="suppressions=$PWD/Fuzz/leak-suppressions.txt" FUZZ_TARGET=$target "$build/keychain-fuzz" -max_total_time="$seconds" -print_final_stats=1 \
        -timeout=2 -rss_limit_mb=2048 -malloc_limit_mb=256 \
        -artifact_prefix="$build/crash-$target-" "$corpus" "Fuzz/Corpus/$target" >"$log" 2>&1; then
        runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
        echo "fuzz $target: ${seconds}s, $runs executions, no crash"
    else
        echo "fuzz $target: CRASH (see $log and $build/crash-$target-*)"
        tail -30 "$log"
        failed=1
    fi
done
exit $failed
