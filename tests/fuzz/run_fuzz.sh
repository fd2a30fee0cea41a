#!/usr/bin/env bash
# Runs the libFuzzer targets on their seed corpora.
#
#   tests/fuzz/run_fuzz.sh [--seconds S] [--seeds N] [--jobs J] [TARGET...]
#
# TARGET: hlo_text stablehlo json literal pipeline layer_tree history dump session
# (default: all nine).
# --seconds S  fuzzing time per target (default 60: the CI smoke run; 3600 for
#              the long run)
# --seeds N    seed files taken from each seed source (default 200; 0 = all)
# --jobs J     parallel fuzzing processes per target (default 1)
# --smoke      the CI smoke run, one sequence of inputs on any machine with the same seeds,
#              so what passed here cannot fail in CI: -seed=1, a fresh work corpus, no
#              compared-value mutations (-use_cmp=0), edges without hit counts
#              (-use_counters=0), no corpus rescans (-reload=0), no address randomisation
#              (setarch -R, where allowed), at most SMOKE_RUNS inputs. Why each is needed:
#              README, Reliability (CI). Finding new bugs is the long runs' work.
# Environment: HLOSCOPE_FUZZ_BUILD (default build-asan: the asan preset builds the
# targets), HLOSCOPE_CORPUS (default ../shared/corpus beside the checkout).
#
# Seeds: ../shared/corpus (HLO text and StableHLO modules), resources/examples,
# tests/fuzz/seeds, and hloscope JSON written from the HLO seeds (fuzz_seeds --to-json).
# Work files go to BUILD/fuzz/TARGET/ (corpus/ grows across runs, artifacts/
# holds crashing inputs; --smoke runs use BUILD/fuzz/smoke/TARGET/). Prints one summary
# line per target (executions, coverage, features, corpus size) and exits 1 when any target
# found a crash, a leak, a timeout or an out-of-memory; the input to reproduce it is named,
# and printed (base64) when small.
# A found input becomes a regression test: copy it to
# tests/fuzz/regressions/TARGET/ (tst_fuzz_regressions replays those).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${HLOSCOPE_FUZZ_BUILD:-$ROOT/build-asan}"
CORPUS="${HLOSCOPE_CORPUS:-$ROOT/../shared/corpus}"
SECONDS_PER_TARGET=60
# Seconds one input may take (libFuzzer's -timeout, wall clock). XLA's deep_chained_calls
# (65,536 instructions once inlined) takes 5.5 s of CPU through a pipeline under ASan, over
# 20 s of wall time on a loaded 2-core machine; a hang or a quadratic pass still exceeds 60.
TIMEOUT=60
SEEDS=200
# Inputs a smoke run tries at most: about what each target runs in 60 s under ASan on an
# idle core of the development machine (1,500 to 6,500 inputs/s); for the targets that write
# files for each input (history, dump, session: 200 to 600 inputs/s) and layer_tree, about 25 s.
declare -A SMOKE_RUNS=([hlo_text]=360000 [stablehlo]=90000 [json]=120000 [literal]=560000 [pipeline]=120000
                       [layer_tree]=100000 [history]=12000 [dump]=5000 [session]=4000)
JOBS=1
SMOKE=0
TARGETS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
        --seeds) SEEDS="$2"; shift 2 ;;
        --jobs) JOBS="$2"; shift 2 ;;
        --smoke) SMOKE=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}"; exit 0 ;;
        -*) echo "run_fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) TARGETS+=("$1"); shift ;;
    esac
done
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=(hlo_text stablehlo json literal pipeline layer_tree history dump session)

if [[ ! -d "$CORPUS" ]]; then
    echo "run_fuzz.sh: note: $CORPUS is absent; seeding from the examples and tests/fuzz/seeds only" >&2
fi

# take N FILE...: the first N of a sorted, evenly strided selection (0 = all).
take() {
    local n="$1"; shift
    local count=$#
    if [[ "$n" -eq 0 || "$count" -le "$n" ]]; then printf '%s\n' "$@"; return; fi
    local stride=$(( (count + n - 1) / n )) i=0 f
    for f in "$@"; do
        (( i % stride == 0 )) && printf '%s\n' "$f"
        i=$((i + 1))
    done
}

# seeds TARGET DIR: fills DIR with the target's seed files (at most 64 KiB each).
seeds() {
    local target="$1" dir="$2" f n=0
    rm -rf "$dir"; mkdir -p "$dir"
    local files=()
    case "$target" in
        hlo_text|pipeline|json|layer_tree)
            mapfile -t files < <( { find "$ROOT/resources/examples" -name '*.hlo' -size -64k;
                                    [[ -d "$CORPUS/hlo" ]] && find "$CORPUS/hlo" -name '*.hlo' -size -64k; } | sort) ;;
        stablehlo)
            mapfile -t files < <( { find "$ROOT/tests/fuzz/seeds/stablehlo" -name '*.mlir';
                                    [[ -d "$CORPUS/stablehlo" ]] && find "$CORPUS/stablehlo" -name '*.mlir' -size -64k; } | sort) ;;
        literal|history|dump|session)
            mapfile -t files < <(find "$ROOT/tests/fuzz/seeds/$target" -type f | sort) ;;
    esac
    # 100 random modules from tests/random_hlo for the HLO-reading targets.
    if [[ "$target" == hlo_text || "$target" == pipeline || "$target" == json || "$target" == layer_tree ]]; then
        mkdir -p "$dir/.random"
        "$BUILD/tests/fuzz/fuzz_seeds" "$dir/.random" 100
        mapfile -t -O "${#files[@]}" files < <(find "$dir/.random" -name '*.hlo' | sort)
    fi
    [[ ${#files[@]} -gt 0 ]] || return 0
    local chosen
    mapfile -t chosen < <(take "$SEEDS" "${files[@]}")
    if [[ "$target" == json ]]; then
        printf '%s\n' "${chosen[@]}" | "$BUILD/tests/fuzz/fuzz_seeds" --to-json "$dir"
        cp "$ROOT"/tests/fuzz/seeds/json/*.json "$dir/"
    else
        for f in "${chosen[@]}"; do
            n=$((n + 1))
            cp "$f" "$dir/$n.${f##*.}"
        done
    fi
    rm -rf "$dir/.random"
}

# What a finding looks like in a log.
FINDING='ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:'

# report LOG UNIT EXE: what a finding was, short enough for a CI log's tail: the sanitizer's
# or the invariant's message, the first frames in our code, and the input UNIT itself (base64,
# when it is small) so that it can be replayed where the work folder is gone.
report() {
    local log="$1" unit="$2" exe="$3"
    { grep -m1 -E "$FINDING" "$log" || true
      awk '/fuzz invariant failed/ {n = 4} n > 0 && /^==|^ +#/ {n = 0} n > 0 {print substr($0, 1, 300); n--}' "$log"
      grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in .*hloscope' "$log" | head -8 | sed -E 's/^ +#([0-9]+) 0x[0-9a-f]+ in /  #\1 /' | cut -c1-200 || true
      grep -m1 '^SUMMARY:' "$log" || true; } | sed 's/^/    /'
    [[ -n "$unit" && -f "$unit" ]] || return 0
    local bytes; bytes=$(stat -c %s "$unit")
    if [[ "$bytes" -le 6144 ]]; then
        echo "    input ($bytes bytes; base64 -d > input, then: ${exe##*/} input):"
        base64 -w 100 "$unit" | sed 's/^/    /'
    else
        echo "    input: $bytes bytes, in $unit"
    fi
}

# Smoke runs go without address randomisation where the machine allows it: the JSON
# import's coverage depends on heap addresses.
norandom=()
if [[ "$SMOKE" -eq 1 ]] && setarch "$(uname -m)" -R true 2> /dev/null; then
    norandom=(setarch "$(uname -m)" -R)
fi

status=0
printf '%-10s %10s %8s %8s %8s %9s  %s\n' target executions cov ft corpus exec/s result
for target in "${TARGETS[@]}"; do
    exe="$BUILD/tests/fuzz/fuzz_$target"
    [[ -x "$exe" ]] || { echo "run_fuzz.sh: $exe not built (cmake --preset asan && cmake --build --preset asan)" >&2; exit 2; }
    work="$BUILD/fuzz/$target"
    corpus_dir="$work/corpus"
    smoke_flags=()
    if [[ "$SMOKE" -eq 1 ]]; then
        # A work folder of its own: a smoke run (ctest -L fuzz) beside a long run of the
        # same target must not rewrite the long run's seeds, log or artifacts.
        work="$BUILD/fuzz/smoke/$target"
        corpus_dir="$work/corpus"
        rm -rf "$corpus_dir"
        smoke_flags=(-seed=1 -use_cmp=0 -use_counters=0 -reload=0 -runs="${SMOKE_RUNS[$target]}")
    fi
    mkdir -p "$corpus_dir" "$work/artifacts"
    seeds "$target" "$work/seeds"
    parallel=()
    [[ "$JOBS" -gt 1 ]] && parallel=(-jobs="$JOBS" -workers="$JOBS")
    dict=()
    [[ -f "$ROOT/tests/fuzz/$target.dict" ]] && dict=(-dict="$ROOT/tests/fuzz/$target.dict")
    log="$work/fuzz.log"
    set +e
    # detect_leaks: a parser that leaks on an error path is a finding too.
    (cd "$work" && HLOSCOPE_AUDIT_MUTATIONS=1 ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1" \
    "${norandom[@]}" "$exe" "$corpus_dir" "$work/seeds" "${dict[@]}" "${smoke_flags[@]}" \
        -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -rss_limit_mb=2560 -malloc_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
        "${parallel[@]}") > "$log" 2>&1
    rc=$?
    set -e
    # Executions: libFuzzer prints its final statistics once at the end and again when it stops
    # at a finding, so each process counts once (its largest figure). With -jobs, each job logs
    # to fuzz-N.log in the current directory (here: $work); their counts add up.
    executed() { grep -o 'stat::number_of_executed_units: *[0-9]*' "$1" | awk '$2 > m {m = $2} END {print m + 0}' || true; }
    if [[ "$JOBS" -gt 1 ]]; then
        execs=0
        for job_log in "$work"/fuzz-*.log; do
            [[ -f "$job_log" ]] && execs=$((execs + $(executed "$job_log")))
        done
        cat "$work"/fuzz-*.log >> "$log" 2>/dev/null; rm -f "$work"/fuzz-*.log
    else
        execs=$(executed "$log")
    fi
    last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<< "$last")
    rate=$(sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p' <<< "$last")
    result=ok unit=
    if [[ $rc -ne 0 ]] || grep -qE "$FINDING|fuzz invariant failed" "$log"; then
        # The finding's input (crash-, leak-, timeout-, oom-), not a slow one written before it.
        unit=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | grep -v '/slow-unit-' | tail -1 || true)
        result="FOUND ($unit; log $log)"
        status=1
    fi
    printf '%-10s %10s %8s %8s %8s %9s  %s\n' "$target" "$execs" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rate:-?}" "$result"
    [[ "$result" == ok ]] || report "$log" "$unit" "$exe"
done
exit $status
