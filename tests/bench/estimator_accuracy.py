#!/usr/bin/env python3
"""How accurate is the estimator on this machine's CPU?

For the bundled examples and a fixed set of corpus modules
(tests/bench/estimator_corpus.txt), predicts and measures the fused speedup
and the peak-memory reduction with `hloscope-cli estimate --measure`, and
reports the error of the prediction against the measurement.

The efficiency factors are fitted out of sample (2-fold cross-validation):
the modules are split into two folds; each fold's measured kernels go into
its own history database, `calibrate --from-history` fits one target per
fold, and every module is then predicted with the target fitted on the
*other* fold and measured again (fresh runs). So no module's own timings
set the factors its prediction uses.

  python3 tests/bench/estimator_accuracy.py [--threads N] [--repeat N]
      [--cli build/app/hloscope-cli] [--target FILE.json] [--json OUT]

--target: the starting cpu target (default: this machine's calibration,
made with `hloscope-cli calibrate` when missing). Corpus modules are read
from ../shared/corpus beside the checkout; missing ones are skipped.

  python3 tests/bench/estimator_accuracy.py --out-of-box [--threads N] [--repeat N]

What a new user gets: an empty calibration cache and no history, then
`estimate FILE --measure` on every module as it comes (the first one
measures the machine with the quick calibration, as `estimate` does on a
fresh machine); prints each module's error and the median.

  python3 tests/bench/estimator_accuracy.py --fit-shipped [--threads N] [--repeat N]

The efficiency factors hloscope ships (kShippedEfficiency in
compiler/backends/cpu/cpu_calibration.cc): a fresh quick calibration, the
corpus modules only (the examples stay held out) measured into one history,
and `calibrate --from-history` over them; prints the factors.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'corpus'))


def modules():
    examples = os.path.join(ROOT, 'resources', 'examples')
    paths = []
    for name in sorted(os.listdir(examples)):
        # The training step runs two scatters in the interpreter (no compiled
        # scatter yet): the model predicts compiled kernels only.
        if name.endswith('.hlo') and 'train_step' not in name:
            paths.append(os.path.join(examples, name))
    listed = os.path.join(ROOT, 'tests', 'bench', 'estimator_corpus.txt')
    missing = 0
    with open(listed) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            path = os.path.join(CORPUS, line)
            if os.path.exists(path):
                paths.append(path)
            else:
                missing += 1
    if missing:
        print('note: %d corpus modules not found under %s (skipped)' % (missing, CORPUS), file=sys.stderr)
    return paths


def estimate(cli, path, target, args, history, cache=None):
    env = dict(os.environ, HLOSCOPE_HISTORY=history or 'off')
    if cache:
        env['XDG_CACHE_HOME'] = cache
    command = [cli, 'estimate', path, '--target', target, '--measure', '--repeat', str(args.repeat),
               '--warmup', '2', '--json']
    if args.threads:
        command += ['--threads', str(args.threads)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if result.returncode != 0:
        print('  %s: estimate failed: %s' % (os.path.basename(path), result.stderr.strip()[:300]), file=sys.stderr)
        return None
    return json.loads(result.stdout)


def fit(cli, target, history, output):
    env = dict(os.environ, HLOSCOPE_HISTORY=history)
    result = subprocess.run([cli, 'calibrate', '--from-history', '--target', target, '--machine', 'any',
                             '--output', output, '--json'], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit('calibrate --from-history failed: ' + result.stderr)
    return json.loads(result.stdout)


def summary(errors):
    values = [abs(e) for e in errors if e is not None]
    if not values:
        return 'n/a'
    return 'median |error| %.1f%%, worst %.1f%% (%d modules)' % (statistics.median(values), max(values), len(values))


def out_of_box(args):
    cache = tempfile.mkdtemp(prefix='hloscope-fresh-cache-')
    rows = []
    calibration = ''
    print('%-36s %9s %9s %8s' % ('module', 'predicted', 'measured', 'error'))
    for path in modules():
        d = estimate(args.cli, path, 'cpu', args, None, cache)
        if not d:
            continue
        calibration = d.get('calibration', calibration)
        p, m, e = d['predicted'], d['measured'], d['error']
        example = path.startswith(ROOT)
        rows.append((example, e['speedup_pct']))
        print('%-36s %8.2fx %8.2fx %+7.1f%%' % (os.path.basename(path)[:36], p['speedup'], m['speedup'],
                                               e['speedup_pct']))
    print('target figures: ' + calibration)
    print('speedup, examples:        ' + summary([r[1] for r in rows if r[0]]))
    print('speedup, corpus modules:  ' + summary([r[1] for r in rows if not r[0]]))
    print('speedup, all:             ' + summary([r[1] for r in rows]))
    shutil.rmtree(cache, ignore_errors=True)


def fit_shipped(args):
    work = tempfile.mkdtemp(prefix='hloscope-shipped-')
    cache = os.path.join(work, 'cache')
    history = os.path.join(work, 'history.sqlite')
    corpus = [p for p in modules() if not p.startswith(ROOT)]
    for path in corpus:
        estimate(args.cli, path, 'cpu', args, history, cache)
    env = dict(os.environ, HLOSCOPE_HISTORY=history, XDG_CACHE_HOME=cache)
    result = subprocess.run([args.cli, 'calibrate', '--from-history', '--machine', 'any', '--dry-run', '--json'],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit('calibrate --from-history failed: ' + result.stderr)
    fitted = json.loads(result.stdout)
    print('%d corpus modules; %s' % (len(corpus), result.stderr.strip()))
    for op, f in fitted['efficiency'].items():
        print('  %-15s %.3f -> %.3f (%s kernels%s)' % (op, f['before'], f['after'], f.get('kernels', '?'),
                                                      '' if f.get('fitted', True) else ', not fitted'))
    print(json.dumps({op: round(f['after'], 3) for op, f in fitted['efficiency'].items()}))
    shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--cli', default=os.path.join(ROOT, 'build', 'app', 'hloscope-cli'))
    parser.add_argument('--target', default='')
    parser.add_argument('--threads', type=int, default=0)
    parser.add_argument('--repeat', type=int, default=9)
    parser.add_argument('--json', default='')
    parser.add_argument('--out-of-box', action='store_true')
    parser.add_argument('--fit-shipped', action='store_true')
    args = parser.parse_args()
    if args.out_of_box:
        return out_of_box(args)
    if args.fit_shipped:
        return fit_shipped(args)

    work = tempfile.mkdtemp(prefix='hloscope-accuracy-')
    target = args.target
    if not target:
        cache = os.path.join(os.environ.get('XDG_CACHE_HOME', os.path.expanduser('~/.cache')), 'hloscope',
                             'cpu-%s.json' % socket.gethostname())
        if not os.path.exists(cache):
            print('calibrating this CPU first (hloscope-cli calibrate)...', file=sys.stderr)
            subprocess.run([args.cli, 'calibrate'], check=True, stdout=subprocess.DEVNULL)
        target = cache
    base = os.path.join(work, 'base.json')
    shutil.copy(target, base)

    paths = modules()
    folds = [paths[0::2], paths[1::2]]
    before = {}
    print('pass 1: measuring %d modules into two histories (threads %s, repeat %d)' %
          (len(paths), args.threads or 'all', args.repeat), file=sys.stderr)
    for k, fold in enumerate(folds):
        for path in fold:
            result = estimate(args.cli, path, base, args, os.path.join(work, 'history%d.sqlite' % k))
            if result:
                before[path] = result
    fits = []
    for k in range(2):
        fits.append(fit(args.cli, base, os.path.join(work, 'history%d.sqlite' % k),
                        os.path.join(work, 'fit%d.json' % k)))
    print('pass 2: each fold predicted with the other fold\'s fit, measured again', file=sys.stderr)
    after = {}
    for k, fold in enumerate(folds):
        for path in fold:
            result = estimate(args.cli, path, os.path.join(work, 'fit%d.json' % (1 - k)), args, None)
            if result:
                after[path] = result

    rows = []
    print('%-36s %9s %9s %8s | %8s %8s %8s' % ('module', 'predicted', 'measured', 'error', 'mem pred', 'mem meas',
                                               'error'))
    for path in paths:
        if path not in after:
            continue
        d = after[path]
        p, m, e = d['predicted'], d['measured'], d['error']
        name = os.path.basename(path)
        rows.append({'module': os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.relpath(path, CORPUS),
                     'predicted_speedup': p['speedup'], 'measured_speedup': m['speedup'],
                     'speedup_error_pct': e['speedup_pct'],
                     'predicted_memory_reduction': p['memory_reduction'],
                     'measured_memory_reduction': m['memory_reduction'],
                     'memory_error_pct': e.get('memory_reduction_pct'),
                     'speedup_error_pct_before_fit': before.get(path, {}).get('error', {}).get('speedup_pct')})
        print('%-36s %8.2fx %8.2fx %+7.1f%% | %7.2fx %7.2fx %+7.1f%%' % (
            name[:36], p['speedup'], m['speedup'], e['speedup_pct'], p['memory_reduction'], m['memory_reduction'],
            e.get('memory_reduction_pct') or 0))
    print()
    print('fitted efficiency factors (fold 0 | fold 1):')
    for op in fits[0]['efficiency']:
        print('  %-15s %.3f | %.3f' % (op, fits[0]['efficiency'][op]['after'], fits[1]['efficiency'][op]['after']))
    print('speedup, calibrate micro-benchmarks only: ' + summary([r['speedup_error_pct_before_fit'] for r in rows]))
    print('speedup, factors fitted on the other fold: ' + summary([r['speedup_error_pct'] for r in rows]))
    print('peak-memory reduction:                    ' + summary([r['memory_error_pct'] for r in rows]))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'threads': args.threads, 'repeat': args.repeat, 'modules': rows,
                       'fits': fits}, f, indent=2)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
