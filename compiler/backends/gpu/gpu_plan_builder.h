// The GPU plan's builder (PlanBuilder), internal to the GPU backend (the public interface is
// gpu_plan.h): gpu_plan.cc plans instructions and their kernels, gpu_plan_gemm.cc GEMMs,
// gpu_plan_routing.cc what only passes buffers on, gpu_plan_control_flow.cc while loops and
// conditionals, gpu_plan_fft.cc ffts, gpu_plan_collectives.cc, gpu_plan_ragged.cc and
// gpu_plan_peer.cc what runs across devices.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/backends/gpu/gpu_plan.h"
#include "core/ir/collective_groups.h"

namespace hloscope::gpu_plan_internal {

Status notOnGpu(const HloInstruction& instruction, const std::string& why);
int64_t denseBytes(const Shape& shape);
// The product of `dims` (an array's elements).
int64_t product(const std::vector<int64_t>& dims);
// Array leaves, depth first (tokens and other non-array leaves hold no buffer).
void collectLeaves(const Shape& shape, std::vector<const Shape*>& out);
size_t leafCount(const Shape& shape);
std::vector<const Shape*> leavesOf(const Shape& shape);
// Equal element types and dimensions, recursively (the evaluator's test).
bool sameArrayShape(const Shape& a, const Shape& b);
// As many leaves, pairwise sameArrayShape.
bool sameLeaves(const std::vector<const Shape*>& a, const std::vector<const Shape*>& b);
// Leaves [first, first + count) of element k of a tuple's leaves.
std::pair<size_t, size_t> elementLeaves(const Shape& tuple, int64_t k);

// A kernel step running `info`'s entry for `instruction` on buffers `args`.
GpuPlanStep launchStep(const HloInstruction& instruction, const GpuKernelInfo& info,
                       std::vector<int> args);

class PlanBuilder {
public:
    PlanBuilder(const HloModule& module, const GpuPlanOptions& options)
        : m_module(module), m_options(options), m_emitter(module.name(), options.sm) {}

    StatusOr<GpuPlan> build();

private:
    struct Interval {
        int64_t start = 0, end = 0;
    };
    int newBuffer(const std::string& name, int64_t bytes, int64_t time) {
        GpuPlanBuffer buffer;
        buffer.id = static_cast<int>(m_plan.buffers.size());
        buffer.bytes = bytes;
        buffer.name = name;
        m_plan.buffers.push_back(buffer);
        m_live.push_back(Interval{time, time});
        return buffer.id;
    }
    void use(int buffer, int64_t time) {
        m_live[static_cast<size_t>(buffer)].end =
            std::max(m_live[static_cast<size_t>(buffer)].end, time);
    }
    std::string entryName() { return "kernel_" + std::to_string(m_entries++); }
    // The first buffer of operand `i` of `instruction` (an array's only one).
    int operandBuffer(const HloInstruction& instruction, int64_t i) {
        return m_leaves[instruction.operand(i)].front();
    }
    Status planInstruction(const HloInstruction& instruction, int64_t time);
    // An entry parameter: a pinned input buffer per array leaf.
    Status planParameter(const HloInstruction& instruction);
    // What needs no kernel of its own (parameters, constants, tuples, views of their operand's
    // bytes, while loops, in-place updates, conditionals, ffts): true when planned.
    StatusOr<bool> planWithoutKernel(const HloInstruction& instruction, int64_t time);
    // New buffers for the instruction's array leaves (its result).
    std::vector<int> newOutputs(const HloInstruction& instruction, int64_t time);
    // What one kernel computes whole: a scatter (after a kernel setting the output to the
    // operand), a scatter of several operands and a sort (after copies of the operands), top-k
    // and rng-bit-generator; true when planned.
    StatusOr<bool> planWholeKernel(const HloInstruction& instruction,
                                   const std::vector<int>& outputs, int64_t time);
    // `scatter` (the instruction or its fusion's root) into buffer `output`: a kernel setting
    // it to the operand, then the scatter kernel.
    Status planScatterRoot(const HloInstruction& instruction, const HloInstruction& scatter,
                           int output, int64_t time);
    // A kernel of `spec` with the instruction as its output on `args`; none without elements.
    Status addWholeKernel(const HloInstruction& instruction, KernelSpec spec,
                          const std::vector<int>& args, int64_t time);
    // A dot, fusion or other kernel op: its GEMM steps where they apply, kernels for the rest.
    Status planKernels(const HloInstruction& instruction, const std::vector<int>& outputs,
                       int64_t time);
    // The distinct operands of `instruction` from operand `first` on as the leaves of `spec`,
    // their buffers appended to `buffers`; a fusion's parameters, with their operands' buffers.
    void bindOperandLeaves(const HloInstruction& instruction, int64_t first, KernelSpec& spec,
                           std::vector<int>& buffers);
    void bindFusionLeaves(const HloInstruction& fusion, KernelSpec& spec,
                          std::vector<int>& buffers);
    // A kernel step and the steps that come with it (`extra`), counted as one kernel.
    void pushKernel(GpuPlanStep step, std::vector<GpuPlanStep>& extra);
    // Leaf buffers with their shapes (array leaves, depth first).
    struct Leaves {
        std::vector<int> ids;
        std::vector<const Shape*> shapes;
        void append(const Leaves& other) {
            ids.insert(ids.end(), other.ids.begin(), other.ids.end());
            shapes.insert(shapes.end(), other.shapes.begin(), other.shapes.end());
        }
        Leaves slice(std::pair<size_t, size_t> range) const {
            Leaves out;
            for (size_t i = range.first; i < range.first + range.second && i < ids.size(); ++i) {
                out.ids.push_back(ids[i]);
                out.shapes.push_back(shapes[i]);
            }
            return out;
        }
    };
    Leaves leavesOfValue(const HloInstruction& value) {
        return Leaves{m_leaves[&value], leavesOf(value.shape())};
    }
    // Instructions that only route buffers, as the interpreter passes values
    // on (collectives on one device, async and copy start/update/done pairs
    // around their computations, calls inlined, set-dimension-size and
    // dynamic-reshape of bounded shapes): true when planned, false for any
    // other instruction.
    StatusOr<bool> planRouting(const HloInstruction& instruction, int64_t time);
    // The instruction being routed, its operands' leaves (all, and per operand).
    struct Routing {
        const HloInstruction& instruction;
        int64_t time;
        Leaves operands;
        std::vector<Leaves> arguments;
    };
    // The result's leaves are `value`'s, whose shapes must be the result's.
    StatusOr<bool> route(const Routing& routing, const Leaves& value);
    // Element 1 of a (operands, result, context...) tuple `start`, or the value itself.
    StatusOr<bool> routeStartResult(const Routing& routing, const HloInstruction& start);
    // A start op's (operands, result, zeros...) tuple.
    StatusOr<bool> routeStartTuple(const Routing& routing, const Leaves& first,
                                   const Leaves& result);
    StatusOr<bool> routeCollectivePermute(const Routing& routing);
    StatusOr<bool> routeAsyncStart(const Routing& routing);
    StatusOr<bool> routeAsyncUpdate(const Routing& routing);
    StatusOr<bool> routeAsyncDone(const Routing& routing);
    // Peer transfers, ragged-all-to-all and collectives between devices: true when planned.
    StatusOr<bool> planAcrossDevices(const HloInstruction& instruction, int64_t time);
    // A fusion around a collective between devices, a sort or a scatter of several operands,
    // planned in place as a call: true when planned.
    StatusOr<bool> planFusionAsCall(const Routing& routing);
    // `computation`'s instructions planned in place, its parameters bound to
    // `arguments`; the root's leaves.
    StatusOr<Leaves> planCalled(const HloInstruction& caller, const HloComputation* computation,
                                const std::vector<Leaves>& arguments);
    // Buffers of `shape`'s array leaves set to zero by memset steps.
    Leaves zeroLeaves(const HloInstruction& instruction, const Shape& shape, int64_t time);
    // Emits spec as kernel steps writing `outputs` (buffer per spec output)
    // and reading `leafBuffers` (per spec leaf).
    Status addKernel(const HloInstruction& instruction, KernelSpec spec,
                     const std::vector<int>& outputs, const std::vector<int>& leafBuffers,
                     int64_t time);
    // The kernel step of `spec` (a split reduction's combine step in `extra`). On several
    // devices, a kernel that reads replica-id or partition-id is emitted once per device,
    // each step pinned to its device (the others in `extra`).
    StatusOr<GpuPlanStep> kernelStep(const HloInstruction& instruction, const KernelSpec& spec,
                                     const std::vector<int>& args, int64_t time,
                                     std::vector<GpuPlanStep>& extra);
    StatusOr<GpuPlanStep> kernelStepOnce(const HloInstruction& instruction,
                                         const KernelSpec& spec, const std::vector<int>& args,
                                         int64_t time, std::vector<GpuPlanStep>& extra);
    // A collective between the devices of a multi-device plan (gpu_plan_collectives.cc): its
    // result in new buffers, written on each device by steps pinned to it that read the
    // group's operands from the other devices' arenas (kernels for reductions, gathers and
    // all-to-all, copies for permutes and broadcasts).
    Status planCollective(const HloInstruction& instruction, int64_t time);
    struct Exchange;  // one collective's state while it is planned (gpu_plan_collectives.cc)
    // A ragged-all-to-all, on one device or several (gpu_plan_ragged.cc): a kernel launched
    // per receiver that reads its group's row ranges from device memory and copies the rows.
    Status planRaggedAllToAll(const HloInstruction& instruction, int64_t time);
    struct RaggedKernels;  // one ragged-all-to-all's kernels while it is planned
    // send, recv and their done halves between devices (gpu_plan_peer.cc): a recv-done copies
    // from the send paired with its recv on each device's link.
    Status planPeerTransfer(const HloInstruction& instruction, int64_t time);
    // The built steps repeated per device (gpu_plan_collectives.cc): a step for every device
    // (-1) becomes one per device, pinned steps stay, branches and jumps stay single with
    // their targets renumbered; inputs and outputs are repeated per device.
    void expandForDevices();
    // A gemm step computing `dot` (of `instruction`) into `outBuffer` (gpu_plan_gemm.cc), with
    // our tiled GEMM kernel as its fallback.
    Status planGemm(const HloInstruction& instruction, const HloInstruction& dot,
                    const GpuGemmShape& gemm, const std::vector<int>& operandBuffers, int outBuffer,
                    int64_t time);
    // A dot as gemm steps (plain or permuted), when the plan takes GEMMs: true when planned.
    StatusOr<bool> planDotGemm(const HloInstruction& dot, int outBuffer, int64_t time);
    // A kOutput fusion's float32 dot with an elementwise epilogue (dot_plan.h) as gemm steps:
    // true when the dot is the whole fusion (planned); else, when its GEMM is planned, the
    // product becomes a leaf of `spec` (its buffer appended to `leafBuffers`) for the
    // epilogue's kernel, and false.
    StatusOr<bool> planEpilogueGemm(const HloInstruction& fusion, KernelSpec& spec,
                                    std::vector<int>& leafBuffers, const std::vector<int>& outputs,
                                    int64_t time);
    // A float32 dot whose batch or contracting dimensions are not where a
    // GEMM wants them (attention's [b, s, h, d] x [b, s, h, d]): each operand
    // transposed into [batch, free, contracting] / [batch, contracting, free]
    // order by a kernel into a temporary, then a gemm step, as the CPU
    // backend does. Nothing planned (false) when it does not apply.
    StatusOr<bool> planPermutedGemm(const HloInstruction& instruction, const HloInstruction& dot,
                                    const std::vector<int>& operandBuffers, int outBuffer,
                                    int64_t time);
    // A while loop (gpu_plan_control_flow.cc): state buffers set from the init value, the
    // condition's steps, a branch out of the loop on its pred[] result, the body's steps, copies
    // of the body's result into the state and a jump back to the condition; the result is the
    // state. Everything the loop makes or reads stays live through all of it.
    Status planWhile(const HloInstruction& loop, int64_t time);
    // A while body's dynamic-update-slice of its own state element, written into the state
    // buffer by a kernel over the update (gpu_plan_control_flow.cc), where nothing reads the
    // old value afterwards; false: an ordinary kernel writing a new buffer.
    StatusOr<bool> planUpdateInPlace(const HloInstruction& update, int64_t time);
    // A conditional (gpu_plan_control_flow.cc): a switch step on the selector, then each
    // branch's steps (its parameter bound to its operand), copies of its result into the
    // conditional's own buffers and a jump past the branches after it.
    Status planConditional(const HloInstruction& conditional, int64_t time);
    // An fft (gpu_plan_fft.cc): one kernel per transformed axis (GpuFftAxis), the first reading
    // the operand, the last writing the result, temporaries between them, and a twiddle table
    // per axis length as a constant.
    Status planFft(const HloInstruction& fft, int64_t time);
    // Buffers made since `firstBuffer`, and older ones read since `start`, live from `start`
    // to the current step (a loop's or a conditional's whole extent).
    void liveThroughout(size_t firstBuffer, int64_t start);
    // A copy step of `bytes` bytes from buffer `src` to `dst` (no step for 0 bytes or a copy
    // onto itself); on `device` (-1: every device), reading `src` in `srcDevice`'s arena (-1:
    // the same device's).
    void addCopy(const HloInstruction& instruction, const std::string& name, int src, int dst,
                 int64_t bytes, int64_t device = -1, int64_t srcDevice = -1);
    // A memset step setting `bytes` bytes of `dst` to `value` on `device` (-1: every device);
    // no step for 0 bytes.
    void addMemset(const HloInstruction& instruction, const std::string& name, int dst,
                   int64_t bytes, int value, int64_t device);
    HloInstruction* synthetic(std::unique_ptr<HloInstruction> instruction) {
        m_synthetic.push_back(std::move(instruction));
        return m_synthetic.back().get();
    }

    const HloModule& m_module;
    const GpuPlanOptions& m_options;
    DeviceGrid m_grid;
    GpuKernelEmitter m_emitter;
    GpuPlan m_plan;
    std::vector<Interval> m_live;
    std::unordered_map<const HloInstruction*, std::vector<int>> m_leaves;  // array leaves' buffers
    std::vector<int> m_pinned;  // inputs, constants, outputs: live the whole run
    // Instructions the plan makes (stand-ins for operands, transposes,
    // canonical dots); they only feed the kernel emitter, never the module.
    std::vector<std::unique_ptr<HloInstruction>> m_synthetic;
    int m_entries = 0;
    // Peer transfers: each link's (source, target) sends in plan order, how many receives it
    // has booked, and each recv's booking per device (-1: nothing to receive).
    struct PeerSend {
        int buffer = -1;  // its data
        const HloInstruction* instruction = nullptr;
    };
    std::map<std::pair<int64_t, int64_t>, std::vector<PeerSend>> m_peerSends;
    std::map<std::pair<int64_t, int64_t>, int64_t> m_peerBooked;
    std::unordered_map<const HloInstruction*, std::vector<int64_t>> m_peerBookings;
    int64_t m_time = 1;  // the step of the instruction being planned (live ranges)
    // Parameters of the while bodies being planned: their buffers are the loop's own state.
    std::unordered_set<const HloInstruction*> m_loopStates;
};

}  // namespace hloscope::gpu_plan_internal
