#!/usr/bin/env python3
"""CPU backend benchmarks: fused vs unfused vs the memory-bandwidth bound.

Usage: tests/bench/cpu_bench.py [CLI] [--threads N] [--repeat N] [--rounds N] [--only TEXT]
Runs each module with `hloscope-cli run --device cpu --mode both --json` and
compares the fused median with two bounds: the bytes that must move / triad
bandwidth from `hloscope-cli calibrate --quick`, measured just before each
module, and the compute bound of tests/bench/compute_bound.py (the fused kernels'
vector loops through llvm-mca over the cycles per second its micro-benchmark
measures at the start of each round; "-" without llc-19 and llvm-mca-19).
Medians over the rounds. Prints a Markdown table.
"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compute_bound

cli = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('--') else 'build/app/hloscope-cli'
threads = '2'
repeat = '10'
rounds = 3
args = sys.argv[1:]
if '--threads' in args: threads = args[args.index('--threads') + 1]
if '--repeat' in args: repeat = args[args.index('--repeat') + 1]
if '--rounds' in args: rounds = int(args[args.index('--rounds') + 1])
only = args[args.index('--only') + 1] if '--only' in args else ''

N = 16 * 1024 * 1024
ADD = 'add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n'
MAX = 'max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }\n'
modules = {
    'x*x+2*x+1 (16M)': (f'''HloModule poly
ENTRY e {{ x = f32[{N}] parameter(0)  xx = f32[{N}] multiply(x, x)  c2 = f32[] constant(2)
  b2 = f32[{N}] broadcast(c2), dimensions={{}}  tx = f32[{N}] multiply(b2, x)  s = f32[{N}] add(xx, tx)
  c1 = f32[] constant(1)  b1 = f32[{N}] broadcast(c1), dimensions={{}}  ROOT r = f32[{N}] add(s, b1) }}''', 8 * N),
    'sin(x)+exp(x) (16M)': (f'''HloModule sinexp
ENTRY e {{ x = f32[{N}] parameter(0)  s = f32[{N}] sine(x)  e = f32[{N}] exponential(x)
  ROOT r = f32[{N}] add(s, e) }}''', 8 * N),
    'gelu tanh (16M)': (f'''HloModule gelu
ENTRY e {{ x = f32[{N}] parameter(0)  h = f32[] constant(0.5)  hb = f32[{N}] broadcast(h), dimensions={{}}
  a = f32[] constant(0.044715)  ab = f32[{N}] broadcast(a), dimensions={{}}
  k = f32[] constant(0.7978845608)  kb = f32[{N}] broadcast(k), dimensions={{}}
  one = f32[] constant(1)  ob = f32[{N}] broadcast(one), dimensions={{}}
  x2 = f32[{N}] multiply(x, x)  x3 = f32[{N}] multiply(x2, x)  ax3 = f32[{N}] multiply(ab, x3)
  in = f32[{N}] add(x, ax3)  kin = f32[{N}] multiply(kb, in)  t = f32[{N}] tanh(kin)
  t1 = f32[{N}] add(ob, t)  hx = f32[{N}] multiply(hb, x)  ROOT y = f32[{N}] multiply(hx, t1) }}''', 8 * N),
    'mean(relu(x)**2) (16M)': (ADD + f'''ENTRY e {{ x = f32[{N}] parameter(0)  z = f32[] constant(0)
  zb = f32[{N}] broadcast(z), dimensions={{}}  r = f32[{N}] maximum(x, zb)  q = f32[{N}] multiply(r, r)
  s = f32[] reduce(q, z), dimensions={{0}}, to_apply=add  n = f32[] constant({N})
  ROOT m = f32[] divide(s, n) }}''', 4 * N),
    'softmax 8192x1024': (ADD + MAX + '''ENTRY e { x = f32[8192,1024] parameter(0)  mi = f32[] constant(-inf)
  m = f32[8192] reduce(x, mi), dimensions={1}, to_apply=max  mb = f32[8192,1024] broadcast(m), dimensions={0}
  d = f32[8192,1024] subtract(x, mb)  e = f32[8192,1024] exponential(d)  z = f32[] constant(0)
  s = f32[8192] reduce(e, z), dimensions={1}, to_apply=add  sb = f32[8192,1024] broadcast(s), dimensions={0}
  ROOT r = f32[8192,1024] divide(e, sb) }''', 8 * 8192 * 1024),
    'layernorm 8192x768': (ADD + '''ENTRY e { x = f32[8192,768] parameter(0)  g = f32[768] parameter(1)  b = f32[768] parameter(2)
  z = f32[] constant(0)  n = f32[] constant(768)  nb = f32[8192] broadcast(n), dimensions={}
  s = f32[8192] reduce(x, z), dimensions={1}, to_apply=add  mean = f32[8192] divide(s, nb)
  mb = f32[8192,768] broadcast(mean), dimensions={0}  d = f32[8192,768] subtract(x, mb)
  d2 = f32[8192,768] multiply(d, d)  v = f32[8192] reduce(d2, z), dimensions={1}, to_apply=add
  var = f32[8192] divide(v, nb)  eps = f32[] constant(1e-5)  eb = f32[8192] broadcast(eps), dimensions={}
  ve = f32[8192] add(var, eb)  r = f32[8192] rsqrt(ve)  rb = f32[8192,768] broadcast(r), dimensions={0}
  y = f32[8192,768] multiply(d, rb)  gb = f32[8192,768] broadcast(g), dimensions={1}
  bb = f32[8192,768] broadcast(b), dimensions={1}  yg = f32[8192,768] multiply(y, gb)
  ROOT o = f32[8192,768] add(yg, bb) }''', 8 * 8192 * 768),
    'relu(x@w+b) 4096x1024x1024': ('''HloModule rmb
ENTRY e { x = f32[4096,1024] parameter(0)  w = f32[1024,1024] parameter(1)  b = f32[1024] parameter(2)
  d = f32[4096,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4096,1024] broadcast(b), dimensions={1}  s = f32[4096,1024] add(d, bb)  z = f32[] constant(0)
  zb = f32[4096,1024] broadcast(z), dimensions={}  ROOT r = f32[4096,1024] maximum(s, zb) }''', 0),
    'x@w alone 4096x1024x1024': ('''HloModule gemm
ENTRY e { x = f32[4096,1024] parameter(0)  w = f32[1024,1024] parameter(1)
  ROOT d = f32[4096,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0} }''', 0),
    'relu(conv3x3(x,w)+b) 8x56x56x64': ('''HloModule convr
ENTRY e { x = f32[8,56,56,64] parameter(0)  w = f32[3,3,64,64] parameter(1)  b = f32[64] parameter(2)
  c = f32[8,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[8,56,56,64] broadcast(b), dimensions={3}  s = f32[8,56,56,64] add(c, bb)  z = f32[] constant(0)
  zb = f32[8,56,56,64] broadcast(z), dimensions={}  ROOT r = f32[8,56,56,64] maximum(s, zb) }''', 0),
    'conv3x3 alone 8x56x56x64': ('''HloModule conv
ENTRY e { x = f32[8,56,56,64] parameter(0)  w = f32[3,3,64,64] parameter(1)
  ROOT c = f32[8,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f }''', 0),
}

# The BERT-like encoder layer at the size (batch 8, seq 128, hidden
# 768, one layer), built by the examples' generator.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'resources', 'examples'))
import generate_examples as gen
bert_cfg = dict(gen.BERT_BASE, layers=1, batch=8)
bert_graph, bert_root = gen.build_bert_forward(bert_cfg)
modules['BERT layer b8 s128 h768'] = (gen.emit_module(bert_graph, bert_root, 'jit_bert_layer')[0], 0)

def triad():
    """All-cores and one-core STREAM triad bandwidth, bytes/s (hloscope-cli calibrate --quick)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'cpu.json')
        subprocess.run([cli, 'calibrate', '--quick', '--output', out], capture_output=True, text=True, check=True)
        cal = json.load(open(out))
    return cal['memoryBandwidthAllCoresBytesPerSecond']['value'], cal['memoryBandwidthBytesPerSecond']['value']

def median(values):
    values = sorted(values)
    return values[len(values) // 2]

# Several rounds; in each, every module right after a triad measurement, so a
# module's bound comes from the bandwidth of that moment (a virtual machine's memory
# bandwidth can drift by tens of percent within a minute). Per module: medians
# over the rounds.
# Elements the compute bound counts per module: the fused kernels' loops iterate over these
# (the output's elements; the input's for a full reduction).
compute_elements = {'x*x+2*x+1 (16M)': N, 'sin(x)+exp(x) (16M)': N, 'gelu tanh (16M)': N,
                    'mean(relu(x)**2) (16M)': N, 'softmax 8192x1024': 8192 * 1024,
                    'layernorm 8192x768': 8192 * 768}
modules = {name: m for name, m in modules.items() if only in name}
results = {name: [] for name in modules}
bandwidths = []
cycles = {}  # module -> cycles per element (static: the same code every round)
hz_values = []
for _ in range(rounds):
    hz = compute_bound.cycles_per_second(cli)[0] if compute_bound.available() else 0
    hz_values.append(hz)
    for name, (text, nbytes) in modules.items():
        if not text.startswith('HloModule'): text = 'HloModule m\n' + text
        if hz and name in compute_elements and name not in cycles:
            cycles[name] = compute_bound.kernel_cycles(cli, text, threads)[0]
        compute_ms = cycles[name] * compute_elements[name] / int(threads) / hz * 1e3 if name in cycles else 0
        bandwidth, one_core = triad()
        bandwidths.append((bandwidth, one_core))
        with tempfile.NamedTemporaryFile('w', suffix='.hlo', delete=False) as f:
            f.write(text)
        out = subprocess.run([cli, 'run', f.name, '--device', 'cpu', '--mode', 'both', '--json', '--threads', threads,
                              '--repeat', repeat, '--warmup', '2'], capture_output=True, text=True)
        os.unlink(f.name)
        if out.returncode != 0:
            results[name].append(('error', out.stderr.strip()[:80])); continue
        r = json.loads(out.stdout)
        results[name].append((r['unfused']['median_ms'], r['fused']['median_ms'], r['fused']['compile_ms'],
                              nbytes / bandwidth * 1e3 if nbytes else 0, compute_ms))

all_cores = sorted(b for b, _ in bandwidths)
print(f"triad bandwidth (hloscope-cli calibrate --quick, {len(all_cores)} measurements): all cores "
      f"{all_cores[0] / 1e9:.1f}-{all_cores[-1] / 1e9:.1f} GB/s (median {median(all_cores) / 1e9:.1f}); "
      f"threads {threads}, {rounds} rounds of --repeat {repeat}")
if any(hz_values):
    print(f"compute bound: the micro-benchmark measured {min(hz_values) / 1e9:.2f}-{max(hz_values) / 1e9:.2f} G cycles/s; "
          "cycles per element: " + ', '.join(f'{n} {c:.3f}' for n, c in cycles.items()))
print()
print('| module | unfused ms | fused ms | speedup | bandwidth bound ms | compute bound ms | fused / larger bound | compile ms |')
print('|---|---|---|---|---|---|---|---|')
for name, rows in results.items():
    errors = [r for r in rows if r[0] == 'error']
    if errors:
        print(f'| {name} | error: {errors[0][1]} |'); continue
    u = median([r[0] for r in rows]); fz = median([r[1] for r in rows])
    compile_ms = median([r[2] for r in rows]); bound = median([r[3] for r in rows])
    compute = median([r[4] for r in rows])
    ratio = f"{median([r[1] / max(r[3], r[4]) for r in rows]):.2f}x" if bound or compute else '-'
    bound_text = f'{bound:.2f}' if bound else '-'
    compute_text = f'{compute:.2f}' if compute else '-'
    print(f"| {name} | {u:.2f} | {fz:.2f} | {u / fz:.2f}x | {bound_text} | {compute_text} | {ratio} | {compile_ms:.0f} |")
