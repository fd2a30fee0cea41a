// While bodies whose dynamic-update-slice of the loop's state (a scan's stacked outputs) may or
// may not be written in place: the CPU backend's (tst_cpu_backend) and the GPU plan's
// (tst_gpu_emulation) rules checked on the same modules, each run against the interpreter,
// whose own in-place updates tst_evaluator checks on some of them against values worked out
// by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/literal.h"

namespace hloscope::testing {

struct LoopUpdateCase {
    const char* name;
    std::string text;
    int cpuInPlace;  // updates the CPU backend writes in place
    int gpuInPlace;  // updates the GPU plan writes in place (loop state only)
    // Start indices given as arguments (parameters 1 and 2) and a branch selector (3).
    bool argumentStarts = false;
};

// Arguments 1-3 of an argumentStarts case: clamped starts (rows -4 and columns 9 of 6 and 5)
// for seed 3, inside otherwise, and the branch that updates.
inline void setStartArguments(std::vector<Literal>& args, uint64_t seed) {
    args[1] = Literal::scalar(PrimitiveType::S64, seed == 3 ? -4 : 2);
    args[2] = Literal::scalar(PrimitiveType::U32, seed == 3 ? 9 : 1);
    args[3] = Literal::scalar(PrimitiveType::PRED, 1);
}

inline std::vector<LoopUpdateCase> loopUpdateCases() {
    const std::string cond =
        "cond { s = (s32[], f32[8,4]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
        "       n = s32[] constant(10)  ROOT lt = pred[] compare(i, n), direction=LT }\n";
    const std::string head =
        "body { s = (s32[], f32[8,4]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
        "       ys = f32[8,4] get-tuple-element(s), index=1  one = s32[] constant(1)\n"
        "       i1 = s32[] add(i, one)  zero = s32[] constant(0)  f = f32[] convert(i)\n"
        "       y = f32[1,4] broadcast(f), dimensions={}\n";
    // i runs -2 .. 9 over 8 rows: rows -2, -1, 8 and 9 clamp.
    const std::string entry =
        "ENTRY e { p = f32[8,4] parameter(0)  z = s32[] constant(-2)\n"
        "  init = (s32[], f32[8,4]) tuple(z, p)\n"
        "  ROOT w = (s32[], f32[8,4]) while(init), condition=cond, body=body }\n";
    auto oneArray = [&](const std::string& body) {
        return "HloModule m\n" + cond + head + body + entry;
    };
    // A state of two arrays, five steps.
    auto twoArrays = [](const std::string& body) {
        return "HloModule m\n"
               "cond { s = (s32[], f32[8,4], f32[8,4]) parameter(0)\n"
               "       i = s32[] get-tuple-element(s), index=0  n = s32[] constant(5)\n"
               "       ROOT lt = pred[] compare(i, n), direction=LT }\n"
               "body { s = (s32[], f32[8,4], f32[8,4]) parameter(0)\n"
               "       i = s32[] get-tuple-element(s), index=0\n"
               "       ys = f32[8,4] get-tuple-element(s), index=1\n"
               "       other = f32[8,4] get-tuple-element(s), index=2\n"
               "       one = s32[] constant(1)  i1 = s32[] add(i, one)  zero = s32[] constant(0)\n"
               "       f = f32[] convert(i)  y = f32[1,4] broadcast(f), dimensions={}\n"
               "       ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n" +
               body +
               "ENTRY e { p = f32[8,4] parameter(0)  q = f32[8,4] parameter(1)\n"
               "  z = s32[] constant(0)  init = (s32[], f32[8,4], f32[8,4]) tuple(z, p, q)\n"
               "  ROOT w = (s32[], f32[8,4], f32[8,4]) while(init), condition=cond, body=body }\n";
    };
    std::vector<LoopUpdateCase> cases;
    cases.push_back({"scan",
                     oneArray("  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                              "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys1) }\n"),
                     1, 1});
    // The second update's operand is the first's result: in place on the CPU; the GPU plan
    // takes the state element only.
    cases.push_back(
        {"chain",
         oneArray("  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                  "  two = f32[] constant(2)  y2 = f32[1,2] broadcast(two), dimensions={}\n"
                  "  i2 = s32[] multiply(i, i)\n"
                  "  ys2 = f32[8,4] dynamic-update-slice(ys1, y2, i1, i2)\n"
                  "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys2) }\n"),
         2, 1});
    cases.push_back({"read before",
                     oneArray("  r = f32[8,4] negate(ys)\n"
                              "  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                              "  sum = f32[8,4] add(ys1, r)\n"
                              "  ROOT t = (s32[], f32[8,4]) tuple(i1, sum) }\n"),
                     1, 1});
    cases.push_back({"read after",
                     oneArray("  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                              "  sum = f32[8,4] add(ys1, ys)\n"
                              "  ROOT t = (s32[], f32[8,4]) tuple(i1, sum) }\n"),
                     0, 0});
    cases.push_back({"view after",
                     oneArray("  v = f32[32] bitcast(ys)\n"
                              "  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                              "  w = f32[32] bitcast(ys1)  sum = f32[32] add(w, v)\n"
                              "  b = f32[8,4] bitcast(sum)\n"
                              "  ROOT t = (s32[], f32[8,4]) tuple(i1, b) }\n"),
                     0, 0});
    cases.push_back({"another view of the state",
                     oneArray("  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                              "  old = f32[8,4] get-tuple-element(s), index=1\n"
                              "  sum = f32[8,4] add(ys1, old)\n"
                              "  ROOT t = (s32[], f32[8,4]) tuple(i1, sum) }\n"),
                     0, 0});
    // The new and the old state both kept: the old one in the second array.
    cases.push_back(
        {"old value kept",
         twoArrays("       ROOT t = (s32[], f32[8,4], f32[8,4]) tuple(i1, ys1, ys) }\n"), 0, 0});
    // The updated state moves to the other array (the copy back is staged).
    cases.push_back(
        {"moved",
         twoArrays("       ROOT t = (s32[], f32[8,4], f32[8,4]) tuple(i1, other, ys1) }\n"), 1, 1});
    // The body is also called: there its parameter is the caller's value, never updated.
    cases.push_back({"body also called",
                     "HloModule m\n" + cond + head +
                         "  ys1 = f32[8,4] dynamic-update-slice(ys, y, i, zero)\n"
                         "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys1) }\n"
                         "ENTRY e { p = f32[8,4] parameter(0)  z = s32[] constant(3)\n"
                         "  init = (s32[], f32[8,4]) tuple(z, p)\n"
                         "  c = (s32[], f32[8,4]) call(init), to_apply=body\n"
                         "  w = (s32[], f32[8,4]) while(init), condition=cond, body=body\n"
                         "  a = f32[8,4] get-tuple-element(c), index=1\n"
                         "  b = f32[8,4] get-tuple-element(w), index=1\n"
                         "  ROOT r = (f32[8,4], f32[8,4], f32[8,4]) tuple(a, b, p) }\n",
                     1, 1});
    // A kernel's output (here in a conditional's branch: in place on the CPU, not loop state
    // for the GPU plan), s64 and u32 start indices from the arguments, a rank-3 update of the
    // middle rows.
    cases.push_back(
        {"kernel operand",
         "HloModule m\n"
         "fill { x = (f32[], s64[], u32[]) parameter(0)  v = f32[] get-tuple-element(x), index=0\n"
         "       j = s64[] get-tuple-element(x), index=1  k = u32[] get-tuple-element(x), index=2\n"
         "       b = f32[3,6,5] broadcast(v), dimensions={}  e = f32[3,6,5] exponential(b)\n"
         "       u = f32[3,2,5] iota(), iota_dimension=2  zero = s64[] constant(0)\n"
         "       k64 = s64[] convert(k)\n"
         "       ROOT d = f32[3,6,5] dynamic-update-slice(e, u, zero, j, k64) }\n"
         "other { x = (f32[], s64[], u32[]) parameter(0)  ROOT b = f32[3,6,5] constant(0) }\n"
         "ENTRY e { v = f32[] parameter(0)  j = s64[] parameter(1)  k = u32[] parameter(2)\n"
         "  q = pred[] parameter(3)  x = (f32[], s64[], u32[]) tuple(v, j, k)\n"
         "  ROOT r = f32[3,6,5] conditional(q, x, x), true_computation=fill, "
         "false_computation=other }\n",
         1, 0, true});
    // The GPU kernel's own clamping: u32 and s64 starts of a loop-state update, from the state.
    cases.push_back(
        {"unsigned and wide starts",
         "HloModule m\n"
         "cond { s = (u32[], s64[], f32[6,5]) parameter(0)  i = u32[] get-tuple-element(s), "
         "index=0\n"
         "       n = u32[] constant(9)  ROOT lt = pred[] compare(i, n), direction=LT }\n"
         "body { s = (u32[], s64[], f32[6,5]) parameter(0)  i = u32[] get-tuple-element(s), "
         "index=0\n"
         "       j = s64[] get-tuple-element(s), index=1  ys = f32[6,5] get-tuple-element(s), "
         "index=2\n"
         "       one = u32[] constant(1)  i1 = u32[] add(i, one)  two = s64[] constant(-2)\n"
         "       j1 = s64[] add(j, two)  f = f32[] convert(i)\n"
         "       y = f32[2,2] broadcast(f), dimensions={}\n"
         "       ys1 = f32[6,5] dynamic-update-slice(ys, y, i, j)\n"
         "       ROOT t = (u32[], s64[], f32[6,5]) tuple(i1, j1, ys1) }\n"
         "ENTRY e { p = f32[6,5] parameter(0)  z = u32[] constant(0)  j = s64[] constant(7)\n"
         "  init = (u32[], s64[], f32[6,5]) tuple(z, j, p)\n"
         "  ROOT w = (u32[], s64[], f32[6,5]) while(init), condition=cond, body=body }\n",
         1, 1});
    // A kLoop fusion rooted at the update (what the cpu pipeline's fusion makes of a scan's
    // update and its producers): the new row reads the old one at the same start, computed by
    // the fusion's kernel part and then written in place on the CPU; the GPU plan takes only a
    // lone update in place.
    const std::string fusedUpdate =
        "fused_update { buf = f32[8,4] parameter(0)  f = f32[] parameter(1)  i = s32[] parameter(2)\n"
        "       zero = s32[] constant(0)  y = f32[1,4] broadcast(f), dimensions={}\n"
        "       two = f32[] constant(2)  t = f32[1,4] broadcast(two), dimensions={}\n"
        "       old = f32[1,4] dynamic-slice(buf, i, zero), dynamic_slice_sizes={1,4}\n"
        "       m = f32[1,4] multiply(old, t)  v = f32[1,4] add(m, y)\n"
        "       ROOT u = f32[8,4] dynamic-update-slice(buf, v, i, zero) }\n";
    cases.push_back({"fused update",
                     "HloModule m\n" + fusedUpdate + cond + head +
                         "  ys1 = f32[8,4] fusion(ys, f, i), kind=kLoop, calls=fused_update\n"
                         "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys1) }\n" + entry,
                     1, 0});
    // Its start computed inside the fusion: the whole state by the fusion's kernel instead.
    const std::string computedStart =
        "fused_update { buf = f32[8,4] parameter(0)  y = f32[1,4] parameter(1)  i = s32[] parameter(2)\n"
        "       zero = s32[] constant(0)  three = s32[] constant(3)  j = s32[] add(i, three)\n"
        "       ROOT u = f32[8,4] dynamic-update-slice(buf, y, j, zero) }\n";
    cases.push_back({"fused update, start computed inside",
                     "HloModule m\n" + computedStart + cond + head +
                         "  ys1 = f32[8,4] fusion(ys, y, i), kind=kLoop, calls=fused_update\n"
                         "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys1) }\n" + entry,
                     0, 0});
    // The update an operand of the fusion, the starts constants: no kernel part.
    const std::string constantStart =
        "fused_update { buf = f32[8,4] parameter(0)  y = f32[1,4] parameter(1)\n"
        "       two = s32[] constant(2)  zero = s32[] constant(0)\n"
        "       ROOT u = f32[8,4] dynamic-update-slice(buf, y, two, zero) }\n";
    cases.push_back({"fused update, constant starts",
                     "HloModule m\n" + constantStart + cond + head +
                         "  ys1 = f32[8,4] fusion(ys, y), kind=kLoop, calls=fused_update\n"
                         "  ROOT t = (s32[], f32[8,4]) tuple(i1, ys1) }\n" + entry,
                     1, 0});
    return cases;
}

}  // namespace hloscope::testing
