#!/usr/bin/env python3
"""hloscope's fused CPU kernels against numpy, numba and torch eager, measured in the same run.

Usage: /usr/bin/python3 tests/bench/peers.py [--cli PATH] [--threads N] [--rounds N] [--only TEXT]

Every example of resources/examples runs in rounds. A round times, in an order that rotates from
round to round, `hloscope-cli run FILE --device cpu --mode fused --threads N --repeat R --json`
(the fused "median_ms": the module's run time, without process start and compilation), then the
same computation in numpy, in a numba fused parallel loop (elementwise, reduction, softmax, layer
norm; '—' where numba adds nothing to a GEMM-bound module) and in torch eager: one warm-up call,
then the median of R calls. The table holds the median over the rounds. All use N threads.
Peers are Debian's python3-numpy, python3-numba and python3-torch; a missing one is skipped.
Before timing, the peers' outputs are compared with numpy's (the BERT modules at a tiny size).
"""
import argparse, ctypes, datetime, importlib, math, json, os, platform, re, statistics
import subprocess, sys, time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'app', 'hloscope-cli'), metavar='PATH',
                help='hloscope-cli (build/app/hloscope-cli)')
ap.add_argument('--threads', type=int, default=2, metavar='N', help='threads for hloscope and every peer (2)')
ap.add_argument('--rounds', type=int, default=3, metavar='N', help='interleaved rounds per module (3)')
ap.add_argument('--only', default='', metavar='TEXT', help='only the modules whose name contains TEXT')
args = ap.parse_args()
for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'NUMBA_NUM_THREADS'):
    os.environ[var] = str(args.threads)  # before the peers load their thread pools


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def peer(name, package):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        log(f'skipping {name}: {e} (install it with apt-get install {package})')
        return None


def blas_of(mapped_before=()):
    """The BLAS libraries mapped into this process (beyond mapped_before), described once each."""
    with open('/proc/self/maps') as f:
        paths = {l.split()[-1] for l in f if re.search(r'/lib(blas|openblas|blis|mkl|atlas)[^/]*\.so', l)}
    found = {}
    for p in sorted(paths - set(mapped_before)):
        try:
            cfg = ctypes.CDLL(p).openblas_get_config
            cfg.restype = ctypes.c_char_p
            found.setdefault(cfg().decode(), p)
        except (OSError, AttributeError):
            found.setdefault(p, p)
    return [d if d == p else f'{d} ({p})' for d, p in found.items()], paths


np = peer('numpy', 'python3-numpy')
blas, mapped = [], set()
if np:
    np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)  # loads the BLAS
    blas, mapped = blas_of()
nb = peer('numba', 'python3-numba') if np else None
torch = peer('torch', 'python3-torch') if np else None
if not np:
    log('skipping numba and torch too: numpy builds every peer\'s inputs')
if nb:
    nb.set_num_threads(args.threads)
if torch:
    torch.set_num_threads(args.threads)
    F = torch.nn.functional

# numba fused parallel loops (f32 throughout, like the HLO)
NB = {}
if nb:
    F0, F1, F2, EPS = np.float32(0), np.float32(1), np.float32(2), np.float32(1e-12)
    jit = nb.njit(parallel=True, fastmath=True)

    ufunc = nb.vectorize(['float32(float32)'], target='parallel', fastmath=True)
    nb_polynomial = ufunc(lambda v: v * v + F2 * v + F1)
    nb_sin_plus_exp = ufunc(lambda v: np.sin(v) + np.exp(v))

    @jit
    def nb_mean_relu_squared(x):
        s = F0
        for i in nb.prange(x.shape[0]):
            for j in range(x.shape[1]):
                v = max(x[i, j], F0)
                s += v * v
        return s / np.float32(x.size)

    @jit
    def nb_softmax_rows(x):
        y = np.empty_like(x)
        for r in nb.prange(x.shape[0]):
            m, s = np.max(x[r]), F0
            for j in range(x.shape[1]):
                y[r, j] = np.exp(x[r, j] - m)
                s += y[r, j]
            y[r] *= F1 / s
        return y

    @jit
    def nb_layernorm_rows(x, g, b):
        y = np.empty_like(x)
        n = np.float32(x.shape[1])
        for r in nb.prange(x.shape[0]):
            s = F0
            for j in range(x.shape[1]):
                s += x[r, j]
            mu = s / n
            q = F0
            for j in range(x.shape[1]):
                d = x[r, j] - mu
                q += d * d
            rs = F1 / np.sqrt(q / n + EPS)
            for j in range(x.shape[1]):
                y[r, j] = (x[r, j] - mu) * rs * g[j] + b[j]
        return y

    NB = dict(polynomial=nb_polynomial, sin_plus_exp=nb_sin_plus_exp,
              mean_relu_squared=nb_mean_relu_squared,
              softmax=lambda x: nb_softmax_rows(x.reshape(-1, x.shape[-1])).reshape(x.shape),
              layernorm=lambda x, g, b: nb_layernorm_rows(x.reshape(-1, x.shape[-1]), g, b).reshape(x.shape))

# numpy
GC = math.sqrt(2.0 / math.pi)
ADAM = dict(lr=1e-4, b1=0.9, b2=0.999, eps=1e-8)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_ln(x, g, b, eps):
    xc = x - x.mean(-1, keepdims=True)
    r = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    xh = xc * r
    return xh * g + b, (xh, r)


def np_ln_bwd(dy, g, cache):
    xh, r = cache
    dxh = dy * g
    dx = r * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    return dx, (dy * xh).sum(0), dy.sum(0)


def np_gelu(u):  # tanh approximation, as the HLO; also returns tanh(.) for the backward pass
    t = np.tanh(GC * (u + 0.044715 * (u * u * u)))
    return 0.5 * u * (1 + t), t


def np_gelu_grad(u, t):
    return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * GC * (1 + 3 * 0.044715 * (u * u))


def np_mlp(x, w0, b0, w1, b1, w2, b2):
    h = np.maximum(x @ w0 + b0, 0)
    h = np.maximum(h @ w1 + b1, 0)
    return np_softmax(h @ w2 + b2)


def np_encoder(c, P, ids, tt, mask, tape=None):
    """BERT encoder on [B*S, H] rows; `tape` collects what the backward pass needs."""
    B, S, H, NH, eps = c['batch'], c['seq'], c['hidden'], c['heads'], c['eps']
    T, D = B * S, H // NH
    heads = lambda t: t.reshape(B, S, NH, D).transpose(0, 2, 1, 3)
    x0 = (P['word'][ids] + P['pos'][:S] + P['type'][tt]).reshape(T, H)
    x, ln0 = np_ln(x0, P['emb_g'], P['emb_b'], eps)
    bias = np.where(mask > 0, 0, -10000).astype(np.float32)[:, None, None, :]
    if tape is not None:
        tape.append(ln0)
    for l in range(c['layers']):
        w = lambda n: P[f'{l}{n}']
        q = heads(x @ w('q_w') + w('q_b')) * np.float32(1 / math.sqrt(D))
        k, v = heads(x @ w('k_w') + w('k_b')), heads(x @ w('v_w') + w('v_b'))
        p = np_softmax(q @ k.transpose(0, 1, 3, 2) + bias)
        ctx = (p @ v).transpose(0, 2, 1, 3).reshape(T, H)
        a, ln1 = np_ln(ctx @ w('o_w') + w('o_b') + x, w('ln1_g'), w('ln1_b'), eps)
        u = a @ w('i_w') + w('i_b')
        h, t = np_gelu(u)
        y, ln2 = np_ln(h @ w('f_w') + w('f_b') + a, w('ln2_g'), w('ln2_b'), eps)
        if tape is not None:
            tape.append((x, q, k, v, p, ctx, a, ln1, u, t, h, ln2))
        x = y
    return x


def np_train_step(c, P, M, V, step, ids, tt, mask, labels):
    """Loss, gradients by hand (the HLO's reverse mode), Adam: (loss, new P, new M, new V)."""
    B, S, H, NH, eps = c['batch'], c['seq'], c['hidden'], c['heads'], c['eps']
    T, D = B * S, H // NH
    tape = []
    x = np_encoder(c, P, ids, tt, mask, tape)
    u0 = x @ P['t_w'] + P['t_b']
    g0, t0 = np_gelu(u0)
    h, lnt = np_ln(g0, P['t_g'], P['t_bb'], eps)
    z = h @ P['word'].T + P['dec_b']
    z -= z.max(-1, keepdims=True)
    e = np.exp(z)
    se = e.sum(-1, keepdims=True)
    rows, lab = np.arange(T), labels.reshape(T)
    loss = -(z[rows, lab] - np.log(se[:, 0])).mean()
    dz = e / se
    dz[rows, lab] -= 1
    dz /= T
    G = {'dec_b': dz.sum(0), 'word': dz.T @ h}
    dg0, G['t_g'], G['t_bb'] = np_ln_bwd(dz @ P['word'], P['t_g'], lnt)
    du0 = dg0 * np_gelu_grad(u0, t0)
    G['t_w'], G['t_b'], dx = x.T @ du0, du0.sum(0), du0 @ P['t_w'].T
    heads = lambda t: t.reshape(B, S, NH, D).transpose(0, 2, 1, 3)
    for l in reversed(range(c['layers'])):
        w = lambda n: P[f'{l}{n}']
        xin, q, k, v, p, ctx, a, ln1, u, t, h, ln2 = tape[l + 1]
        dy, G[f'{l}ln2_g'], G[f'{l}ln2_b'] = np_ln_bwd(dx, w('ln2_g'), ln2)
        G[f'{l}f_w'], G[f'{l}f_b'] = h.T @ dy, dy.sum(0)
        du = (dy @ w('f_w').T) * np_gelu_grad(u, t)
        G[f'{l}i_w'], G[f'{l}i_b'] = a.T @ du, du.sum(0)
        dr, G[f'{l}ln1_g'], G[f'{l}ln1_b'] = np_ln_bwd(dy + du @ w('i_w').T, w('ln1_g'), ln1)
        G[f'{l}o_w'], G[f'{l}o_b'] = ctx.T @ dr, dr.sum(0)
        dc = heads(dr @ w('o_w').T)
        dp = dc @ v.transpose(0, 1, 3, 2)
        ds = p * (dp - (dp * p).sum(-1, keepdims=True))
        grads = {'q': (ds @ k) * np.float32(1 / math.sqrt(D)),
                 'k': ds.transpose(0, 1, 3, 2) @ q, 'v': p.transpose(0, 1, 3, 2) @ dc}
        dx = dr
        for n, d in grads.items():
            d = d.transpose(0, 2, 1, 3).reshape(T, H)
            G[f'{l}{n}_w'], G[f'{l}{n}_b'] = xin.T @ d, d.sum(0)
            dx = dx + d @ w(f'{n}_w').T
    dx0, G['emb_g'], G['emb_b'] = np_ln_bwd(dx, P['emb_g'], tape[0])
    np.add.at(G['word'], ids.reshape(T), dx0)
    G['pos'], G['type'] = np.zeros_like(P['pos']), np.zeros_like(P['type'])
    G['pos'][:S] = dx0.reshape(B, S, H).sum(0)
    np.add.at(G['type'], tt.reshape(T), dx0)
    b1, b2, lr, ae = ADAM['b1'], ADAM['b2'], ADAM['lr'], ADAM['eps']
    bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
    out = ({}, {}, {})
    for n in P:
        m = b1 * M[n] + (1 - b1) * G[n]
        v = b2 * V[n] + (1 - b2) * (G[n] * G[n])
        out[0][n], out[1][n], out[2][n] = P[n] - lr * (m / bc1) / (np.sqrt(v / bc2) + ae), m, v
    return (loss,) + out


# torch eager (weights in the HLO's [in, out] layout)
def t_mlp(x, w0, b0, w1, b1, w2, b2):
    h = torch.relu(x @ w0 + b0)
    h = torch.relu(h @ w1 + b1)
    return torch.softmax(h @ w2 + b2, -1)


def t_encoder(c, P, ids, tt, mask):
    """BERT encoder (the forward module's parameters need no gradient: no graph is recorded)."""
    B, S, H, NH, eps = c['batch'], c['seq'], c['hidden'], c['heads'], c['eps']
    heads = lambda t: t.view(B, S, NH, H // NH).transpose(1, 2)
    x = F.embedding(ids, P['word']) + P['pos'][:S] + F.embedding(tt, P['type'])
    x = F.layer_norm(x, (H,), P['emb_g'], P['emb_b'], eps)
    bias = ((mask <= 0).float() * -10000.0)[:, None, None, :]
    for l in range(c['layers']):
        w = lambda n: P[f'{l}{n}']
        q = heads(x @ w('q_w') + w('q_b')) * (1 / math.sqrt(H // NH))
        k, v = heads(x @ w('k_w') + w('k_b')), heads(x @ w('v_w') + w('v_b'))
        p = torch.softmax(q @ k.transpose(-1, -2) + bias, -1)
        ctx = (p @ v).transpose(1, 2).reshape(B, S, H)
        x = F.layer_norm(ctx @ w('o_w') + w('o_b') + x, (H,), w('ln1_g'), w('ln1_b'), eps)
        h = F.gelu(x @ w('i_w') + w('i_b'), approximate='tanh')
        x = F.layer_norm(h @ w('f_w') + w('f_b') + x, (H,), w('ln2_g'), w('ln2_b'), eps)
    return x


def t_train_step(c, P, M, V, step, ids, tt, mask, labels):
    params = [p.requires_grad_() for p in P.values()]
    x = t_encoder(c, P, ids, tt, mask)
    h = F.gelu(x @ P['t_w'] + P['t_b'], approximate='tanh')
    h = F.layer_norm(h, (c['hidden'],), P['t_g'], P['t_bb'], c['eps'])
    logits = h @ P['word'].t() + P['dec_b']
    loss = F.cross_entropy(logits.view(-1, c['vocab']), labels.view(-1))
    grads = torch.autograd.grad(loss, params)
    b1, b2, lr, ae = ADAM['b1'], ADAM['b2'], ADAM['lr'], ADAM['eps']
    bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
    out = ({}, {}, {})
    with torch.no_grad():
        for (n, p), g in zip(P.items(), grads):
            m = b1 * M[n] + (1 - b1) * g
            v = b2 * V[n] + (1 - b2) * (g * g)
            out[0][n], out[1][n], out[2][n] = p - lr * (m / bc1) / ((v / bc2).sqrt() + ae), m, v
    return (loss.detach(),) + out


# Inputs and the module table
def rnd(rng, *shape, scale=1.0):
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)


def bert_inputs(rng, small, train):
    c = dict(vocab=30522, hidden=768, heads=12, inter=3072, layers=2, batch=32, seq=128,
             max_pos=512, type_vocab=2, eps=1e-12)  # generate_examples.py's BERT_BASE
    if small:
        c.update(vocab=97, hidden=32, heads=4, inter=64, batch=2, seq=8, max_pos=16)
    H, I, B, S, Vo = c['hidden'], c['inter'], c['batch'], c['seq'], c['vocab']
    shapes = [('word', (Vo, H)), ('pos', (c['max_pos'], H)), ('type', (2, H)), ('emb_g', (H,)),
              ('emb_b', (H,))]
    for l in range(c['layers']):
        shapes += [(f'{l}{n}', s) for n, s in [
            ('q_w', (H, H)), ('q_b', (H,)), ('k_w', (H, H)), ('k_b', (H,)), ('v_w', (H, H)),
            ('v_b', (H,)), ('o_w', (H, H)), ('o_b', (H,)), ('ln1_g', (H,)), ('ln1_b', (H,)),
            ('i_w', (H, I)), ('i_b', (I,)), ('f_w', (I, H)), ('f_b', (H,)), ('ln2_g', (H,)),
            ('ln2_b', (H,))]]
    if train:  # the masked-LM head; its decoder is tied to the word embeddings
        shapes += [('t_w', (H, H)), ('t_b', (H,)), ('t_g', (H,)), ('t_bb', (H,)), ('dec_b', (Vo,))]
    P = {n: rnd(rng, *s, scale=0.1) + (1 if n.endswith('_g') else 0) if n.endswith(('_g', '_b', '_bb'))
         else rnd(rng, *s, scale=0.02) for n, s in shapes}
    ids = rng.integers(0, Vo, (B, S), dtype=np.int32)
    tt = rng.integers(0, 2, (B, S), dtype=np.int32)
    mask = (rng.random((B, S)) < 0.9).astype(np.int32)
    if not train:
        return [c, P, ids, tt, mask]
    M = {n: rnd(rng, *p.shape, scale=1e-3) for n, p in P.items()}
    V = {n: rng.random(p.shape, dtype=np.float32) * np.float32(1e-6) for n, p in P.items()}
    return [c, P, M, V, 1, ids, tt, mask, rng.integers(0, Vo, (B, S), dtype=np.int32)]


poly = lambda x: x * x + 2 * x + 1
# name, timed calls per round, inputs(rng, small), numpy, numba, torch
MODULES = [
    ('polynomial', 200, lambda r, s: [rnd(r, 1024)], poly, 'polynomial', poly),
    ('sin_plus_exp', 200, lambda r, s: [rnd(r, 1024)], lambda x: np.sin(x) + np.exp(x),
     'sin_plus_exp', lambda x: torch.sin(x) + torch.exp(x)),
    ('mean_relu_squared', 50, lambda r, s: [rnd(r, 1024, 1024)],
     lambda x: np.square(np.maximum(x, 0)).mean(), 'mean_relu_squared',
     lambda x: torch.square(torch.relu(x)).mean()),
    ('softmax', 20, lambda r, s: [rnd(r, 32, 128, 1000)], np_softmax, 'softmax',
     lambda x: torch.softmax(x, -1)),
    ('layernorm', 20, lambda r, s: [rnd(r, 32, 128, 768), 1 + rnd(r, 768, scale=0.1), rnd(r, 768)],
     lambda x, g, b: np_ln(x, g, b, 1e-12)[0], 'layernorm', lambda x, g, b: F.layer_norm(x, (768,), g, b, 1e-12)),
    ('relu_matmul_bias', 50, lambda r, s: [rnd(r, 128, 256), rnd(r, 256, 512, scale=0.06), rnd(r, 512)],
     lambda x, w, b: np.maximum(x @ w + b, 0), None, lambda x, w, b: torch.relu(x @ w + b)),
    ('mlp', 50, lambda r, s: [rnd(r, 64, 784), rnd(r, 784, 512, scale=0.04), rnd(r, 512),
                              rnd(r, 512, 256, scale=0.04), rnd(r, 256), rnd(r, 256, 10, scale=0.06),
                              rnd(r, 10)], np_mlp, None, t_mlp),
    ('bert_encoder_forward', 3, lambda r, s: bert_inputs(r, s, False),
     lambda c, *a: np_encoder(c, *a).reshape(c['batch'], c['seq'], c['hidden']), None, t_encoder),
    ('bert_encoder_train_step', 1, lambda r, s: bert_inputs(r, s, True), np_train_step, None,
     t_train_step),
]


def to_torch(a):
    if isinstance(a, dict) and 'vocab' not in a:
        return {k: to_torch(v) for k, v in a.items()}
    if isinstance(a, np.ndarray):
        t = torch.from_numpy(a)
        return t.long() if a.dtype == np.int32 else t
    return a


def leaves(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in leaves(o)]
    if isinstance(out, dict):
        return leaves(list(out.values()))
    return [np.asarray(out.detach().numpy() if torch and isinstance(out, torch.Tensor) else out)]


def check(name, make, fns, tol=2e-3):
    """Compare every peer's outputs with numpy's on small inputs."""
    ins = make(np.random.default_rng(1), True)
    ref = leaves(fns['numpy'](*ins))
    for p, fn in fns.items():
        if p == 'numpy' or not callable(fn):
            continue
        got = leaves(fn(*([to_torch(a) for a in ins] if p == 'torch' else ins)))
        err = max(float(np.abs(g - r).max() / max(float(np.abs(r).max()), 1e-30)) for g, r in zip(got, ref))
        log(f'  check {p} vs numpy: max relative error {err:.1e} {"ok" if err <= tol else "MISMATCH"}')
        if err > tol:
            sys.exit(f'{name}: {p} and numpy disagree')


def time_calls(fn, ins, repeat):
    fn(*ins)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*ins)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def time_hloscope(path, repeat):
    cmd = [args.cli, 'run', path, '--device', 'cpu', '--mode', 'fused', '--threads',
           str(args.threads), '--repeat', str(repeat), '--warmup', '1', '--json']
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)['fused']['median_ms']


def header():
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
    versions = ', '.join(f'{m.__name__} {m.__version__}' for m in (np, nb, torch) if m) or 'no peers'
    tblas = ''
    if torch:
        info = re.search(r'BLAS_INFO=(\w+)', torch.__config__.show())
        tblas = f'; torch: BLAS_INFO={info.group(1) if info else "?"}'
        more, _ = blas_of(mapped)
        tblas += f', {"; ".join(more)}' if more else ' (the same libblas.so.3 as numpy)'
    return (f'{datetime.date.today()} · {platform.machine()}, nproc {os.cpu_count()}, {cpu} · '
            f'{args.threads} threads · {versions} · BLAS: numpy: {"; ".join(blas) or "none found"}{tblas}')


def fmt(ms):
    return ms if isinstance(ms, str) else f'{ms:.0f}' if ms >= 1000 else f'{ms:.3g}'


def main():
    if not os.access(args.cli, os.X_OK):
        sys.exit(f'{args.cli}: not an executable hloscope-cli (build it, or pass --cli PATH)')
    load0 = os.getloadavg()
    rows = []
    for name, repeat, make, np_fn, nb_key, t_fn in MODULES:
        if args.only not in name:
            continue
        log(f'{name}:')
        fns = {'numpy': np_fn, 'numba': '—' if nb_key is None else NB.get(nb_key)} if np else {}
        if torch:
            fns['torch'] = t_fn
        if 'numpy' in fns:
            check(name, make, fns)
            ins = make(np.random.default_rng(0), False)
            tins = [to_torch(a) for a in ins] if torch else None
        runners = [('hloscope', lambda: time_hloscope(os.path.join(ROOT, 'resources', 'examples', name + '.hlo'), repeat))]
        runners += [(p, lambda fn=fn, p=p: time_calls(fn, tins if p == 'torch' else ins, repeat))
                    for p, fn in fns.items() if callable(fn)]
        times = {p: [] for p, _ in runners}
        for r in range(args.rounds):
            for p, run in runners[r % len(runners):] + runners[:r % len(runners)]:
                time.sleep(0.1)  # let the previous runner's spinning threads park
                times[p].append(run())
            log(f'  round {r + 1}: ' + ', '.join(f'{p} {fmt(t[-1])} ms' for p, t in times.items()))
        med = {p: statistics.median(t) for p, t in times.items()}
        ins = tins = None
        cells = [fmt(med[p]) if p in med else (fns.get(p) or 'n/a') for p in ('numpy', 'numba', 'torch')]
        best = min((t, p) for p, t in med.items() if p != 'hloscope') if len(med) > 1 else None
        ratio = f'{best[0] / med["hloscope"]:.2f}x ({best[1]})' if best else '—'
        rows.append(f'| {name} | {fmt(med["hloscope"])} | ' + ' | '.join(cells) + f' | {ratio} |')
    load1 = os.getloadavg()
    print(header() + f' · load average {load0[0]:.2f} before, {load1[0]:.2f} after')
    print(f'(median over {args.rounds} interleaved rounds; ratio > 1: hloscope is faster)\n')
    print('| module | hloscope fused (ms) | numpy (ms) | numba (ms) | torch eager (ms) | best peer / hloscope |')
    print('|---|---:|---:|---:|---:|---:|')
    print('\n'.join(rows))


if __name__ == '__main__':
    main()
