#!/usr/bin/env python3
"""XLA's own GPU times for the GPU bandwidth benchmark modules (tests/bench/gpu/*.hlo),
as a baseline for hloscope's GPU backend. Runs on a machine with JAX and a GPU:

    XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text python3 tests/bench/gpu/xla_baseline.py

Each function is jitted, warmed up, then dispatched 50 times back to back and
timed to the last result (so host dispatch overlaps the GPU work); prints one
JSON object {module: {"ms": per-call time, "gbs": input+output bytes / time}}.
"""
import json
import time

import jax
import jax.numpy as jnp

N = 64 * 1024 * 1024
R, C = 65536, 1024
FUNCTIONS = {
    "poly_64m": (lambda x: x * x + 2 * x + 1, (N,), 2 * N * 4),
    "sin_exp_64m": (lambda x: jnp.sin(x) + jnp.exp(x), (N,), 2 * N * 4),
    "row_sum_64m": (lambda x: jnp.sum(x, axis=1), (R, C), N * 4 + R * 4),
    "mean_relu_sq_64m": (lambda x: jnp.mean(jnp.maximum(x, 0) ** 2), (R, C), N * 4),
    "softmax_64m": (lambda x: jax.nn.softmax(x, axis=1), (R, C), 2 * N * 4),
}


def main():
    results = {"device": str(jax.devices()[0].device_kind), "jax": jax.__version__}
    for name, (function, shape, nbytes) in FUNCTIONS.items():
        x = jax.random.uniform(jax.random.PRNGKey(0), shape, jnp.float32, -1.0, 1.0)
        jitted = jax.jit(function)
        jitted(x).block_until_ready()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(50):
                y = jitted(x)
            y.block_until_ready()
            times.append((time.perf_counter() - start) / 50 * 1e3)
        ms = sorted(times)[len(times) // 2]
        results[name] = {"ms": ms, "gbs": nbytes / (ms * 1e-3) / 1e9}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
