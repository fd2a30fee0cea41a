#!/usr/bin/env python3
"""Times a model through a target's whole pipeline as a user meets it: the whole
`hloscope-cli opt` process (parse, verifier after every changing pass, change checks,
snapshots and diffs, printing the result), interleaved over targets and repeated.

    python3 tests/bench/pipeline_time.py [--model FILE] [--targets cpu,gpu] [--runs 5]

Prints per target the minimum and median of the whole process, of the time in the passes
and of the time with checks and snapshots, the peak RSS, and the passes over 100 ms
(median). Skips with a message when the model (by default Mixtral 8x7B 1x8 from
../shared/corpus) is absent.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_MODEL = os.path.normpath(
    os.path.join(ROOT, "..", "shared", "corpus", "hlo", "models", "xla",
                 "hlo_mixtral_8x7b_bf16_1x8.hlo"))

TOTAL = re.compile(r"pipeline \S+: (\d+) passes, ([\d.]+) ms in passes, ([\d.]+) ms with checks "
                   r"and snapshots; snapshots hold ([\d.]+) MB of text; peak RSS ([\d.]+) MB")
PASS = re.compile(r"^\s*(\d+) (\S+)\s+(changed|unchanged|disabled)\s+([\d.]+) ms")


def run_once(cli, model, target):
    start = time.perf_counter()
    proc = subprocess.run([cli, "opt", model, "--target", target, "--verbose"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"hloscope-cli opt --target {target} failed:\n{proc.stderr[-2000:]}")
    total = TOTAL.search(proc.stderr)
    if not total:
        sys.exit("no pipeline summary in the output of hloscope-cli opt --verbose")
    passes = {}
    for line in proc.stderr.splitlines():
        m = PASS.match(line)
        if m:
            passes[f"{int(m.group(1)):2d} {m.group(2)}"] = float(m.group(4)) / 1e3
    return {
        "wall": wall,
        "passes": float(total.group(2)) / 1e3,
        "checked": float(total.group(3)) / 1e3,
        "text_mb": float(total.group(4)),
        "rss_mb": float(total.group(5)),
        "per_pass": passes,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--targets", default="cpu,gpu")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "hloscope-cli"))
    args = parser.parse_args()
    if not os.path.exists(args.model):
        print(f"skipped: {args.model} is absent (the corpus is in ../shared/corpus)")
        return 0
    if not os.path.exists(args.cli):
        sys.exit(f"{args.cli} not found: build first (cmake --build build)")
    targets = [t for t in args.targets.split(",") if t]
    results = {t: [] for t in targets}
    for _ in range(args.runs):
        for target in targets:  # interleaved: machine noise spreads over every target
            results[target].append(run_once(args.cli, args.model, target))
    print(f"model {os.path.basename(args.model)}, {args.runs} runs per target, interleaved")
    print(f"{'target':<7} {'whole process':>20} {'in passes':>16} {'with checks':>16} "
          f"{'text MB':>8} {'peak RSS MB':>12}")
    for target, runs in results.items():
        def span(key):
            values = [r[key] for r in runs]
            return f"{min(values):.2f} / {statistics.median(values):.2f} s"
        print(f"{target:<7} {span('wall'):>20} {span('passes'):>16} {span('checked'):>16} "
              f"{runs[0]['text_mb']:>8.1f} {max(r['rss_mb'] for r in runs):>12.1f}")
    print("(min / median)")
    for target, runs in results.items():
        names = runs[0]["per_pass"].keys()
        slow = [(statistics.median(r["per_pass"].get(n, 0) for r in runs), n) for n in names]
        slow = [(t, n) for t, n in slow if t > 0.1]
        if slow:
            print(f"{target} passes over 100 ms (median): " +
                  ", ".join(f"{n.split()[1]} {t * 1e3:.0f} ms" for t, n in slow))
    return 0


if __name__ == "__main__":
    sys.exit(main())
