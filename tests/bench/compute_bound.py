#!/usr/bin/env python3
"""The compute bound of a CPU kernel: its vector instructions per element, weighed by the
machine model of LLVM's scheduler, over the cycles per second a micro-benchmark measures in
the same run.

Usage: tests/bench/compute_bound.py [--cli CLI] [--threads N] FILE.hlo ELEMENTS
       (or imported by cpu_bench.py)

How: the module runs fused once with HLOSCOPE_CPU_DUMP_IR, so every kernel's optimised LLVM
module is written out; llc-19 compiles it for the CPU the JIT targets (the run prints it:
"LLVM ORC JIT for znver3"), and every innermost vectorised loop (the element loop, the
hoisted row reductions, the streaming copy) goes through llvm-mca-19, whose block
reciprocal throughput is the loop's cycles per iteration when only the execution ports
limit it (no dependency, cache or memory stall). Divided by the elements an iteration
covers (the induction step in the IR) and summed over the loops, that is cycles per
element; the scalar remainder loops are left out (a kernel that LLVM did not vectorise counts
its scalar element loop). The cycles per second come from a
micro-benchmark run in the same process tree: an in-cache kernel of 16 independent
multiplies summed in a tree (16 multiplies, 15 adds per element, no dependency between
elements), its measured time against its own llvm-mca cycles. The bound is then
cycles per element x elements / threads / (cycles per second): what the kernel would take
if every core issued its instructions at the machine model's port limit.
Needs llc-19 and llvm-mca-19 (package llvm-19, a dependency of llvm-19-dev).
"""
import json, os, re, shutil, subprocess, sys, tempfile

LLC = 'llc-19'
MCA = 'llvm-mca-19'


def available():
    return shutil.which(LLC) is not None and shutil.which(MCA) is not None


def _run(cli, hlo_text, args, env=None):
    """hloscope-cli run of the module (written to a temporary file) fused on the CPU; stdout."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'module.hlo')
        with open(path, 'w') as f:
            f.write(hlo_text)
        out = subprocess.run([cli, 'run', path, '--device', 'cpu', '--mode', 'fused'] + args,
                             capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f'hloscope-cli run failed: {out.stderr.strip()[:200]}')
    return out.stdout


def dump_kernels(cli, hlo_text, threads):
    """Runs the module fused once; returns (CPU name, [LLVM IR text of each kernel module])."""
    with tempfile.TemporaryDirectory() as ir:
        stdout = _run(cli, hlo_text, ['--repeat', '1', '--warmup', '0', '--threads', str(threads)],
                      env=dict(os.environ, HLOSCOPE_CPU_DUMP_IR=ir))
        m = re.search(r'LLVM ORC JIT for (\S+?)[,)]', stdout)
        if not m:
            raise RuntimeError('the run did not name the JIT target CPU')
        modules = []
        for name in sorted(os.listdir(ir)):
            with open(os.path.join(ir, name)) as f:
                modules.append(f.read())
        return m.group(1), modules


def _ir_steps(ir):
    """IR block name -> elements per iteration of the loop that block heads (vector loops:
    the induction's constant step; the streaming copy's line loop: its bytes / 4)."""
    steps = {}
    block = None
    defs = {}
    phis = []
    for line in ir.splitlines():
        m = re.match(r'^([A-Za-z0-9_.]+):', line)
        if m:
            block = m.group(1)
            continue
        m = re.match(r'\s*%([\w.]+) = phi i64 \[ 0, %[\w.]+ \], \[ %([\w.]+), %([\w.]+) \]', line)
        if m and block:
            phis.append((block, m.group(1), m.group(2)))
        m = re.match(r'\s*%([\w.]+) = (?:add|or)(?: nuw| nsw| disjoint)* i64 %([\w.]+), (\d+)', line)
        if m:
            defs[m.group(1)] = (m.group(2), int(m.group(3)))
    for block, var, nxt in phis:
        d = defs.get(nxt)
        if d and d[0] == var:
            step = d[1]
            if block.startswith('lines'):
                step = step / 4  # bytes of f32 elements
            steps.setdefault(block, step)
    return steps


def _asm_inner_loops(asm):
    """[(IR name of the header block, [instruction lines])] for every innermost loop: its
    header block and the blocks llc marks as in it ("in Loop: Header=BB0_3")."""
    loops = []
    current = None
    lines = asm.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^(?:\.L(BB\d+_\d+)|# %bb\.\d+):\s*(?:#\s*%([\w.]+))?', line)
        if m:
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith('#'):
                j += 1
            text = ' '.join(lines[i:j])
            if 'This Inner Loop Header' in text and m.group(1):
                current = {'header': m.group(1), 'name': m.group(2) or '', 'body': []}
                loops.append(current)
            elif not (current and f'Header={current["header"]} ' in text + ' '):
                current = None
            i = j
            continue
        if current is not None:
            s = line.split('#')[0].strip()
            if s and not s.startswith('.'):
                current['body'].append(s)
        i += 1
    return [(l['name'], l['body']) for l in loops if l['body']]


def _mca(cpu, body):
    """(block reciprocal throughput, simulated cycles per iteration) of a loop body."""
    out = subprocess.run([MCA, f'-mcpu={cpu}', '-iterations=200'], input='\n'.join(body) + '\n',
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f'llvm-mca: {out.stderr.strip()[:200]}')
    rt = float(re.search(r'Block RThroughput:\s*([\d.]+)', out.stdout).group(1))
    total = float(re.search(r'Total Cycles:\s*(\d+)', out.stdout).group(1))
    return rt, total / 200


def cycles_per_element(cpu, modules, simulated=False):
    """Sum over the kernels' innermost vector loops of cycles per iteration / elements per
    iteration: port-bound (llvm-mca's block reciprocal throughput) or, with simulated, llvm-mca's
    timeline with dependencies. Returns (cycles per element, [(loop, step, cycles)])."""
    total = 0.0
    detail = []
    for ir in modules:
        steps = _ir_steps(ir)
        out = subprocess.run([LLC, '-O3', f'-mcpu={cpu}', '-', '-o', '-'], input=ir,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f'llc: {out.stderr.strip()[:200]}')
        loops = _asm_inner_loops(out.stdout)
        vectorised = any(name.startswith('vector.body') for name, _ in loops)
        for name, body in loops:
            step = steps.get(name)
            if name.startswith('element') and not vectorised:
                step = 1  # a kernel LLVM did not vectorise: its scalar element loop is the work
            elif not step or name.startswith('element') or 'epil' in name:
                continue  # scalar remainder loops
            rt, sim = _mca(cpu, body)
            cycles = sim if simulated else rt
            total += cycles / step
            detail.append((name, step, cycles))
    return total, detail


N_FREQ = 16384


def _freq_module():
    """x times 16 constants, the 16 products summed pairwise in a tree (f32[N_FREQ])."""
    lines = [f'  x = f32[{N_FREQ}] parameter(0)']
    terms = []
    for k in range(16):
        lines.append(f'  c{k} = f32[] constant({1.0 + k / 64:.6f})  '
                     f'b{k} = f32[{N_FREQ}] broadcast(c{k}), dimensions={{}}')
        lines.append(f'  m{k} = f32[{N_FREQ}] multiply(x, b{k})')
        terms.append(f'm{k}')
    while len(terms) > 1:
        pairs = [(terms[j], terms[j + 1]) for j in range(0, len(terms), 2)]
        terms = [f's{len(terms)}_{j}' for j in range(len(pairs))]
        root = 'ROOT ' if len(terms) == 1 else ''
        lines += [f'  {root}{t} = f32[{N_FREQ}] add({a}, {b})' for t, (a, b) in zip(terms, pairs)]
    return 'HloModule freq\nENTRY e {\n' + '\n'.join(lines) + '\n}\n'


def cycles_per_second(cli, repeat=2000):
    """The micro-benchmark: llvm-mca's simulated cycles of the in-cache multiply-add tree over
    its fastest measured run on one thread. Returns (cycles per second, cycles per element)."""
    text = _freq_module()
    cpe, _ = cycles_per_element(*dump_kernels(cli, text, 1), simulated=True)
    stdout = _run(cli, text, ['--json', '--threads', '1', '--repeat', str(repeat), '--warmup', '20'])
    seconds = json.loads(stdout)['fused']['min_ms'] * 1e-3
    return cpe * N_FREQ / seconds, cpe


def kernel_cycles(cli, hlo_text, threads):
    """Cycles per element of the module's fused kernels, port-bound, and the loops behind it."""
    return cycles_per_element(*dump_kernels(cli, hlo_text, threads))


def bound_ms(cli, hlo_text, elements, threads, hz):
    """The compute bound of the module's fused kernels, ms; and the cycles per element."""
    cpe, detail = kernel_cycles(cli, hlo_text, threads)
    return cpe * elements / int(threads) / hz * 1e3, cpe, detail


def main(argv):
    cli = 'build/app/hloscope-cli'
    threads = 2
    args = list(argv)
    if '--cli' in args:
        i = args.index('--cli'); cli = args[i + 1]; del args[i:i + 2]
    if '--threads' in args:
        i = args.index('--threads'); threads = int(args[i + 1]); del args[i:i + 2]
    if len(args) != 2 or not available():
        print(__doc__)
        return 2 if len(args) != 2 else 0
    text = open(args[0]).read()
    hz, freq_cpe = cycles_per_second(cli)
    ms, cpe, detail = bound_ms(cli, text, int(args[1]), threads, hz)
    print(f'micro-benchmark: {hz / 1e9:.2f} G cycles/s ({freq_cpe:.3f} cycles per element of the multiply-add tree)')
    for name, step, cycles in detail:
        print(f'  loop {name}: {cycles:.2f} cycles per iteration of {step:g} elements')
    print(f'{cpe:.3f} cycles per element; compute bound {ms:.3f} ms on {threads} threads')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
