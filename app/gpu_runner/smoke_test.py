#!/usr/bin/env python3
"""GPU smoke test of hloscope-gpu-runner: writes small plans (a kernel, a memset, a copy, two
gemms with fallback kernels, inputs and a constant), runs them with cuBLAS and with
--no-cublas, checks every output against a Python reference, checks that a faulting kernel and
bad PTX give exit code 1 with the step named / the JIT log, and runs --info and --probe.

    python3 app/gpu_runner/smoke_test.py RUNNER WORKDIR [--probe-bytes N]

Needs a GPU; pure Python (no numpy). Exit code 0 when every check passed. The kernels below are
nvcc -ptx -arch=sm_80 output of a small CUDA file (add_1024, gemm_a: 1x64x32x128 plain,
gemm_b: 3x48x40x24 with both operands transposed, bad_store: stores to address 0x10).
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys

PTX = """.version 9.0
.target sm_80
.address_size 64

	// .globl	add_1024

.visible .entry add_1024(
	.param .u64 add_1024_param_0,
	.param .u64 add_1024_param_1,
	.param .u64 add_1024_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<11>;


	ld.param.u64 	%rd1, [add_1024_param_0];
	ld.param.u64 	%rd2, [add_1024_param_1];
	ld.param.u64 	%rd3, [add_1024_param_2];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r1, %r2, %r3, %r4;
	setp.gt.s32 	%p1, %r1, 1023;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd3;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd1;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;

$L__BB0_2:
	ret;

}
	// .globl	gemm_a
.visible .entry gemm_a(
	.param .u64 gemm_a_param_0,
	.param .u64 gemm_a_param_1,
	.param .u64 gemm_a_param_2
)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<7>;
	.reg .b32 	%r<31>;
	.reg .b64 	%rd<25>;


	ld.param.u64 	%rd10, [gemm_a_param_0];
	ld.param.u64 	%rd11, [gemm_a_param_1];
	ld.param.u64 	%rd12, [gemm_a_param_2];
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r8, %ctaid.x;
	mov.u32 	%r9, %tid.x;
	mad.lo.s32 	%r29, %r8, %r1, %r9;
	setp.gt.s32 	%p1, %r29, 2047;
	@%p1 bra 	$L__BB1_5;

	mov.u32 	%r10, %nctaid.x;
	mul.lo.s32 	%r3, %r10, %r1;
	cvta.to.global.u64 	%rd1, %rd10;
	cvta.to.global.u64 	%rd2, %rd11;
	cvta.to.global.u64 	%rd3, %rd12;

$L__BB1_2:
	shr.s32 	%r12, %r29, 31;
	shr.u32 	%r13, %r12, 27;
	add.s32 	%r14, %r29, %r13;
	shr.s32 	%r15, %r14, 5;
	shr.s32 	%r16, %r14, 31;
	shr.u32 	%r17, %r16, 26;
	add.s32 	%r18, %r15, %r17;
	and.b32  	%r19, %r18, 33554368;
	sub.s32 	%r20, %r15, %r19;
	shr.u32 	%r21, %r12, 21;
	add.s32 	%r22, %r29, %r21;
	shr.s32 	%r23, %r22, 11;
	shl.b32 	%r24, %r23, 13;
	cvt.s64.s32 	%rd13, %r24;
	shl.b32 	%r25, %r23, 12;
	cvt.s64.s32 	%rd14, %r25;
	shl.b32 	%r26, %r20, 7;
	and.b32  	%r27, %r14, -32;
	sub.s32 	%r28, %r29, %r27;
	cvt.s64.s32 	%rd15, %r28;
	add.s64 	%rd16, %rd15, %rd14;
	shl.b64 	%rd17, %rd16, 2;
	add.s64 	%rd24, %rd3, %rd17;
	cvt.s64.s32 	%rd18, %r26;
	add.s64 	%rd19, %rd18, %rd13;
	shl.b64 	%rd20, %rd19, 2;
	add.s64 	%rd23, %rd2, %rd20;
	mov.f32 	%f6, 0f00000000;
	mov.u32 	%r30, 0;

$L__BB1_3:
	.pragma "nounroll";
	ld.global.f32 	%f4, [%rd24];
	ld.global.f32 	%f5, [%rd23];
	fma.rn.f32 	%f6, %f5, %f4, %f6;
	add.s64 	%rd24, %rd24, 128;
	add.s64 	%rd23, %rd23, 4;
	add.s32 	%r30, %r30, 1;
	setp.ne.s32 	%p2, %r30, 128;
	@%p2 bra 	$L__BB1_3;

	mul.wide.s32 	%rd21, %r29, 4;
	add.s64 	%rd22, %rd1, %rd21;
	st.global.f32 	[%rd22], %f6;
	add.s32 	%r29, %r29, %r3;
	setp.lt.s32 	%p3, %r29, 2048;
	@%p3 bra 	$L__BB1_2;

$L__BB1_5:
	ret;

}
	// .globl	gemm_b
.visible .entry gemm_b(
	.param .u64 gemm_b_param_0,
	.param .u64 gemm_b_param_1,
	.param .u64 gemm_b_param_2
)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<7>;
	.reg .b32 	%r<34>;
	.reg .b64 	%rd<25>;


	ld.param.u64 	%rd10, [gemm_b_param_0];
	ld.param.u64 	%rd11, [gemm_b_param_1];
	ld.param.u64 	%rd12, [gemm_b_param_2];
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r8, %ctaid.x;
	mov.u32 	%r9, %tid.x;
	mad.lo.s32 	%r32, %r8, %r1, %r9;
	setp.gt.s32 	%p1, %r32, 5759;
	@%p1 bra 	$L__BB2_5;

	mov.u32 	%r10, %nctaid.x;
	mul.lo.s32 	%r3, %r10, %r1;
	cvta.to.global.u64 	%rd1, %rd10;
	cvta.to.global.u64 	%rd2, %rd11;
	cvta.to.global.u64 	%rd3, %rd12;

$L__BB2_2:
	mul.hi.s32 	%r12, %r32, 1717986919;
	shr.u32 	%r13, %r12, 31;
	shr.s32 	%r14, %r12, 4;
	add.s32 	%r15, %r14, %r13;
	mul.hi.s32 	%r16, %r15, 715827883;
	shr.u32 	%r17, %r16, 31;
	shr.s32 	%r18, %r16, 3;
	add.s32 	%r19, %r18, %r17;
	mul.lo.s32 	%r20, %r19, 48;
	sub.s32 	%r21, %r15, %r20;
	mul.hi.s32 	%r22, %r32, -2004318071;
	add.s32 	%r23, %r22, %r32;
	shr.u32 	%r24, %r23, 31;
	shr.s32 	%r25, %r23, 10;
	add.s32 	%r26, %r25, %r24;
	mul.lo.s32 	%r27, %r26, 1152;
	cvt.s64.s32 	%rd13, %r27;
	mul.lo.s32 	%r28, %r26, 960;
	cvt.s64.s32 	%rd14, %r28;
	mul.lo.s32 	%r29, %r15, 40;
	sub.s32 	%r30, %r32, %r29;
	mul.lo.s32 	%r31, %r30, 24;
	cvt.s64.s32 	%rd15, %r21;
	add.s64 	%rd16, %rd15, %rd13;
	shl.b64 	%rd17, %rd16, 2;
	add.s64 	%rd24, %rd2, %rd17;
	cvt.s64.s32 	%rd18, %r31;
	add.s64 	%rd19, %rd14, %rd18;
	shl.b64 	%rd20, %rd19, 2;
	add.s64 	%rd23, %rd3, %rd20;
	mov.f32 	%f6, 0f00000000;
	mov.u32 	%r33, 0;

$L__BB2_3:
	.pragma "nounroll";
	ld.global.f32 	%f4, [%rd23];
	ld.global.f32 	%f5, [%rd24];
	fma.rn.f32 	%f6, %f5, %f4, %f6;
	add.s64 	%rd24, %rd24, 192;
	add.s64 	%rd23, %rd23, 4;
	add.s32 	%r33, %r33, 1;
	setp.ne.s32 	%p2, %r33, 24;
	@%p2 bra 	$L__BB2_3;

	mul.wide.s32 	%rd21, %r32, 4;
	add.s64 	%rd22, %rd1, %rd21;
	st.global.f32 	[%rd22], %f6;
	add.s32 	%r32, %r32, %r3;
	setp.lt.s32 	%p3, %r32, 5760;
	@%p3 bra 	$L__BB2_2;

$L__BB2_5:
	ret;

}
	// .globl	bad_store
.visible .entry bad_store(
	.param .u64 bad_store_param_0
)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;


	ld.param.u64 	%rd1, [bad_store_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	mov.u32 	%r2, 1065353216;
	st.volatile.u32 	[%rd3+16], %r2;
	mov.u32 	%r3, 1073741824;
	st.global.u32 	[%rd2], %r3;
	ret;

}
"""

FAILED = []


def check(ok, what):
    print(("ok:     " if ok else "FAILED: ") + what, flush=True)
    if not ok:
        FAILED.append(what)


def floats(n, rng):
    return [rng.uniform(-1, 1) for _ in range(n)]


def pack(values):
    return struct.pack("<%df" % len(values), *values)


def unpack(data):
    return list(struct.unpack("<%df" % (len(data) // 4), data))


def matmul(batch, m, n, k, lhs, rhs, lhs_t, rhs_t):
    out = []
    for b in range(batch):
        l = lhs[b * m * k:(b + 1) * m * k]
        r = rhs[b * k * n:(b + 1) * k * n]
        for i in range(m):
            for j in range(n):
                acc = 0.0
                for kk in range(k):
                    lv = l[kk * m + i] if lhs_t else l[i * k + kk]
                    rv = r[j * k + kk] if rhs_t else r[kk * n + j]
                    acc += lv * rv
                out.append(acc)
    return out


def close(got, want, tol=1e-4):
    return len(got) == len(want) and all(abs(g - w) <= tol * (1 + abs(w)) for g, w in zip(got, want))


def write_plan(plan_dir, ptx=PTX, extra_steps=()):
    """The smoke plan; returns the expected outputs {index: bytes or float list}."""
    rng = random.Random(7)
    shutil.rmtree(plan_dir, ignore_errors=True)
    os.makedirs(plan_dir + "/inputs")
    os.makedirs(plan_dir + "/constants")
    with open(plan_dir + "/kernels.ptx", "w") as f:
        f.write(ptx)
    sizes = {  # buffer id: float count
        0: 1024, 1: 1024, 3: 1024, 4: 1024, 5: 1024,
        6: 64 * 128, 7: 128 * 32, 8: 64 * 32,
        9: 3 * 24 * 48, 10: 3 * 40 * 24, 11: 3 * 48 * 40, 12: 1,
    }
    buffers, offset = [], 0
    for bid, count in sizes.items():
        buffers.append({"id": bid, "offset": offset, "bytes": count * 4, "name": "%%b%d" % bid})
        offset += (count * 4 + 255) // 256 * 256
    data = {bid: floats(sizes[bid], rng) for bid in (0, 1, 6, 7, 9, 10)}
    inputs, constants = [], []
    for param, bid in enumerate((0, 1, 6, 7, 9)):
        name = "inputs/%d.bin" % param
        with open(plan_dir + "/" + name, "wb") as f:
            f.write(pack(data[bid]))
        inputs.append({"parameter": param, "name": "p%d" % param, "buffer": bid, "file": name,
                       "bytes": sizes[bid] * 4, "type": "f32", "dims": [sizes[bid]]})
    with open(plan_dir + "/constants/0.bin", "wb") as f:
        f.write(pack(data[10]))
    constants.append({"buffer": 10, "file": "constants/0.bin", "bytes": sizes[10] * 4})

    def kernel(name, entry, blocks, args):
        return {"kind": "kernel", "name": name, "entry": entry, "grid": [blocks, 1, 1],
                "block": [256, 1, 1], "shared_bytes": 0, "args": args}

    steps = [
        {"kind": "memset", "name": "init.1", "buffer": 4, "bytes": 4096, "value": 0x3f},
        kernel("add.2", "add_1024", 4, [3, 0, 1]),
        {"kind": "copy", "name": "copy.3", "src": 3, "dst": 5, "bytes": 4096},
        {"kind": "gemm", "name": "dot.4", "type": "f32", "batch": 1, "m": 64, "n": 32, "k": 128,
         "lhs": 6, "rhs": 7, "out": 8, "lhs_transposed": False, "rhs_transposed": False,
         "fallback": kernel("dot.4.fallback", "gemm_a", 8, [8, 6, 7])},
        {"kind": "gemm", "name": "dot.5", "type": "f32", "batch": 3, "m": 48, "n": 40, "k": 24,
         "lhs": 9, "rhs": 10, "out": 11, "lhs_transposed": True, "rhs_transposed": True,
         "fallback": kernel("dot.5.fallback", "gemm_b", 24, [11, 9, 10])},
    ] + list(extra_steps)
    plan = {
        "format": "hloscope-gpu-plan", "version": 1, "module": "smoke", "mode": "fused",
        "sm": "sm_80", "ptx": "kernels.ptx", "arena_bytes": offset, "buffers": buffers,
        "inputs": inputs, "constants": constants,
        "outputs": [{"index": 0, "buffer": 5, "bytes": 4096, "type": "f32", "dims": [1024]},
                    {"index": 1, "buffer": 4, "bytes": 4096, "type": "u8", "dims": [4096]},
                    {"index": 2, "buffer": 8, "bytes": 64 * 32 * 4, "type": "f32", "dims": [64, 32]},
                    {"index": 3, "buffer": 11, "bytes": 3 * 48 * 40 * 4, "type": "f32",
                     "dims": [3, 48, 40]}],
        "steps": steps, "warmup": 2, "repeat": 5,
    }
    with open(plan_dir + "/plan.json", "w") as f:
        json.dump(plan, f, indent=1)
    return {
        0: [a + b for a, b in zip(data[0], data[1])],
        1: b"\x3f" * 4096,
        2: matmul(1, 64, 32, 128, data[6], data[7], False, False),
        3: matmul(3, 48, 40, 24, data[9], data[10], True, True),
    }


def run(runner, *args, env=None):
    proc = subprocess.run([runner, *args], capture_output=True, text=True, env=env, timeout=300)
    print("$ %s %s -> %d" % (os.path.basename(runner), " ".join(args), proc.returncode))
    for line in (proc.stdout + proc.stderr).splitlines()[:40]:
        print("    " + line)
    return proc


def check_outputs(out_dir, expected, used_gemm):
    for index, want in expected.items():
        with open("%s/outputs/%d.bin" % (out_dir, index), "rb") as f:
            got = f.read()
        ok = got == want if isinstance(want, bytes) else close(unpack(got), want)
        check(ok, "%s: output %d matches the reference" % (out_dir, index))
    with open(out_dir + "/results.json") as f:
        results = json.load(f)
    used = [s["used"] for s in results["steps"]]
    check(used == ["memset", "kernel", "copy", used_gemm, used_gemm], "%s: used %s" % (out_dir, used))
    check(results["format"] == "hloscope-gpu-results" and len(results["run_ms"]) == 5
          and results["median_ms"] > 0 and results["device"]["sm_count"] > 0,
          "%s: results.json fields" % out_dir)
    print(json.dumps(results, indent=1)[:3000])
    return results


def main():
    runner, work = sys.argv[1], sys.argv[2]
    probe_bytes = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--probe-bytes" else None
    os.makedirs(work, exist_ok=True)
    plan_dir = work + "/plan"
    expected = write_plan(plan_dir)

    r = run(runner, "--info")
    check(r.returncode == 0 and json.loads(r.stdout)["device"]["sm_count"] > 0, "--info")

    r = run(runner, plan_dir)
    check(r.returncode == 0, "run with cuBLAS exits 0")
    if r.returncode == 0:
        results = check_outputs(plan_dir, expected, "cublas")
        check(results["cublas"] is not None, "cuBLAS loaded: %s" % results["cublas"])

    out2 = work + "/nocublas"
    r = run(runner, plan_dir, "--no-cublas", "--output", out2, "--quiet")
    check(r.returncode == 0 and r.stdout == "", "--no-cublas run exits 0 quietly")
    if r.returncode == 0:
        check_outputs(out2, expected, "kernel")

    out3 = work + "/badcublas"
    env = dict(os.environ, HLOSCOPE_CUBLAS_LIBRARY="/nonexistent/libcublas.so")
    r = run(runner, plan_dir, "--output", out3, "--warmup", "0", "--repeat", "3", env=env)
    check(r.returncode == 0, "run without cuBLAS falls back")

    bad_dir = work + "/fault"
    write_plan(bad_dir, extra_steps=[{"kind": "kernel", "name": "fault.6", "entry": "bad_store",
                                      "grid": [1, 1, 1], "block": [32, 1, 1], "args": [12]}])
    r = run(runner, bad_dir)
    check(r.returncode == 1 and "steps[5] (fault.6)" in r.stderr
          and "CUDA_ERROR" in r.stderr, "faulting kernel: exit 1 naming the step")

    jit_dir = work + "/badptx"
    write_plan(jit_dir, ptx=PTX.replace("add.f32", "add.f99", 1))
    r = run(runner, jit_dir)
    check(r.returncode == 1 and "JIT error log" in r.stderr, "bad PTX: exit 1 with the JIT log")

    probe = work + "/probe.json"
    r = run(runner, "--probe", probe, *(["--bytes", probe_bytes] if probe_bytes else []))
    check(r.returncode == 0, "--probe exits 0")
    if r.returncode == 0:
        with open(probe) as f:
            p = json.load(f)
        print(json.dumps(p, indent=1))
        check(p["format"] == "hloscope-gpu-probe" and p["copy_bandwidth_gbs"] > 0
              and p["copy_kernel_bandwidth_gbs"] > 0 and p["launch_overhead_us"] > 0
              and p["launch_sync_us"] > 0, "probe fields")

    print("%d checks failed" % len(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
