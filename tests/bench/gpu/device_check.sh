#!/usr/bin/env bash
# The GPU check of what no device has run yet, in three steps: plans written here, run on a
# GPU machine, read back and checked against the interpreter here.
#
#   tests/bench/gpu/device_check.sh emit  [FILE...]  here: GPU plans (unfused and fused) of FILEs,
#        by default the corpus modules (of tst_gpu_corpus's folders) with while loops,
#        conditionals, sort, top-k, fft, scaled-dot or rng-bit-generator, and XLA:GPU's
#        (valid/gpu) with ragged-dot or cuBLAS / cuDNN calls, that get a plan,
#        into build-device/plans/<name>/{unfused,fused}; nlohmann/json.hpp copied to
#        build-device/include for the runner's build there
#   tests/bench/gpu/device_check.sh run   OUT        on the GPU machine: builds hloscope-gpu-runner
#        from app/gpu_runner (cmake, no Qt, no LLVM), runs every plan (--sample 4096) and copies
#        results.json and outputs/ to OUT/<name>/<mode>/; prints one line per plan
#   tests/bench/gpu/device_check.sh check RESULTS    here: puts RESULTS/<name>/<mode>/ back
#        beside the plans and runs hloscope-cli import-run on each; prints one line per module
#        and exits 1 when any module failed or mismatched
#
# With the `device` tool: emit here, then run with carry ["build-device"] and
# command "tests/bench/gpu/device_check.sh run $OUT", then check the files it returns.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
work="$root/build-device"
plans="$work/plans"
cli="${HLOSCOPE_CLI:-$root/build/app/hloscope-cli}"
corpus="${HLOSCOPE_CORPUS:-$root/../shared/corpus}/hlo/valid"

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 64
}

emit() {
    local files=("$@")
    if [ ${#files[@]} -eq 0 ]; then
        [ -d "$corpus" ] || { echo "device_check: no corpus at $corpus" >&2; exit 1; }
        # The folders tst_gpu_corpus covers.
        mapfile -t files < <( (grep -lE '[ =](while|conditional|sort|topk|fft|scaled-dot|rng-bit-generator|scan)\(|"TopK"' -r "$corpus/xla_tests" \
            "$corpus/evaluator" "$corpus/fusion" --include='*.hlo'
            grep -lE '[ =](ragged-dot|scan)\(|"__cublas\$|"__cudnn\$conv|"__op\$block_scaled|"xla\.gpu\.ext\.cub_sort' -r "$corpus/gpu" --include='*.hlo') | sort)
    fi
    [ -x "$cli" ] || { echo "device_check: build hloscope-cli first ($cli)" >&2; exit 1; }
    rm -rf "$plans"
    mkdir -p "$plans" "$work/include/nlohmann"
    cp /usr/include/nlohmann/json.hpp "$work/include/nlohmann/" || exit 1
    local written=0 skipped=0
    for file in "${files[@]}"; do
        local name
        name=$(basename "$file" .hlo)
        if HLOSCOPE_HISTORY=off "$cli" run "$file" --device gpu --emit-plan "$plans/$name" \
            > "$plans/$name.log" 2>&1; then
            # The device tool carries 64 MiB in all.
            if [ "$(du -sm "$plans/$name" | cut -f1)" -gt 8 ]; then
                echo "skipped $name: its plans take $(du -sh "$plans/$name" | cut -f1) (over 8 MB)"
                rm -rf "${plans:?}/$name" "$plans/$name.log"
                skipped=$((skipped + 1))
                continue
            fi
            written=$((written + 1))
        else
            skipped=$((skipped + 1))
            echo "skipped $name: $(grep -m1 'GPU plan' "$plans/$name.log" || tail -1 "$plans/$name.log")"
            rm -rf "${plans:?}/$name"
        fi
        rm -f "$plans/$name.log"
    done
    echo "device_check: plans for $written modules in $plans ($skipped without one), $(du -sh "$work" | cut -f1)"
}

run() {
    local out="$1"
    local build=/tmp/hloscope-runner-build
    cmake -S "$root/app/gpu_runner" -B "$build" -DHLOSCOPE_JSON_INCLUDE_DIR="$work/include" \
        > /tmp/runner-cmake.log 2>&1 && cmake --build "$build" -j 8 > /tmp/runner-build.log 2>&1 ||
        { cat /tmp/runner-cmake.log /tmp/runner-build.log >&2; exit 1; }
    local runner="$build/hloscope-gpu-runner"
    "$runner" --info | head -c 600; echo
    local ok=0 failed=0
    for dir in "$plans"/*/*/; do
        dir=${dir%/}
        local mode name
        mode=$(basename "$dir")
        name=$(basename "$(dirname "$dir")")
        mkdir -p "$out/$name/$mode"
        if timeout 120 "$runner" "$dir" --output "$out/$name/$mode" --sample 4096 --quiet \
            --repeat 3 --warmup 1 2> "$out/$name/$mode/stderr.txt"; then
            ok=$((ok + 1))
        else
            failed=$((failed + 1))
            echo "FAILED $name/$mode: $(head -c 400 "$out/$name/$mode/stderr.txt")"
        fi
    done
    echo "device_check: $ok plans ran, $failed failed"
}

check() {
    local results="$1"
    local ok=0 bad=0
    for dir in "$plans"/*/; do
        dir=${dir%/}
        local name
        name=$(basename "$dir")
        for mode in unfused fused; do
            [ -d "$results/$name/$mode" ] && cp -r "$results/$name/$mode/." "$dir/$mode/"
        done
        local log
        if log=$(HLOSCOPE_HISTORY=off "$cli" import-run "$dir" --no-history 2>&1); then
            ok=$((ok + 1))
            echo "ok       $name"
        else
            bad=$((bad + 1))
            echo "MISMATCH $name: $(echo "$log" | grep -m3 -iE 'mismatch|differ|error|fail|cannot' | tr '\n' ' ')"
        fi
    done
    echo "device_check: $ok modules matched the interpreter, $bad did not"
    [ "$bad" -eq 0 ]
}

case "${1:-}" in
    emit) shift; emit "$@" ;;
    run) [ $# -eq 2 ] || usage; run "$2" ;;
    check) [ $# -eq 2 ] || usage; check "$2" ;;
    *) usage ;;
esac
