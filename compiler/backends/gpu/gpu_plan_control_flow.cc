// While loops and conditionals in a GPU plan (docs/gpu_plan_format.md, "Control flow"). The
// step list stays flat: the runner moves its program counter at a branch step (a loop
// condition's pred[] read back after the stream is synchronised), at a switch step (a
// conditional's selector, read back the same way) and at a jump step.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/in_place_update.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_conditional.h"
#include "core/ir/hlo_instruction.h"

namespace hloscope::gpu_plan_internal {
namespace {

// A step of `kind` named `name` for `instruction` (its opcode and name recorded for the times).
GpuPlanStep stepOf(const HloInstruction& instruction, GpuStepKind kind, std::string name) {
    GpuPlanStep step;
    step.kind = kind;
    step.name = std::move(name);
    step.opcode = std::string(hloOpcodeString(instruction.opcode()));
    step.instruction = instruction.name();
    return step;
}

GpuPlanStep controlStep(const HloInstruction& loop, GpuStepKind kind, const std::string& suffix) {
    return stepOf(loop, kind, loop.name() + suffix);
}

}  // namespace

void PlanBuilder::addCopy(const HloInstruction& instruction, const std::string& name, int src,
                          int dst, int64_t bytes, int64_t device, int64_t srcDevice) {
    if (bytes <= 0 || (src == dst && (srcDevice < 0 || srcDevice == device))) return;
    GpuPlanStep step = stepOf(instruction, GpuStepKind::kCopy, name);
    step.src = src;
    step.dst = dst;
    step.bytes = bytes;
    step.device = device;
    step.srcDevice = srcDevice;
    m_plan.steps.push_back(std::move(step));
}

void PlanBuilder::addMemset(const HloInstruction& instruction, const std::string& name, int dst,
                            int64_t bytes, int value, int64_t device) {
    if (bytes <= 0) return;
    GpuPlanStep step = stepOf(instruction, GpuStepKind::kMemset, name);
    step.dst = dst;
    step.bytes = bytes;
    step.value = value;
    step.device = device;
    m_plan.steps.push_back(std::move(step));
}

Status PlanBuilder::planWhile(const HloInstruction& loop, int64_t time) {
    const HloComputation* condition = loop.whileCondition();
    const HloComputation* body = loop.whileBody();
    if (!condition || !body) return notOnGpu(loop, "while without a condition or a body");
    if (loop.operandCount() != 1) return notOnGpu(loop, "while with several operands");
    const std::vector<const Shape*> stateShapes = leavesOf(loop.shape());
    const Leaves init = leavesOfValue(*loop.operand(0));
    if (!sameLeaves(stateShapes, init.shapes))
        return notOnGpu(loop, "while whose init value differs from its shape");
    const size_t firstBuffer = m_plan.buffers.size();

    // The loop state: its own buffers, as the body's result is copied into them each iteration
    // (the init value's buffers may be read after the loop, or be inputs).
    Leaves state;
    for (size_t k = 0; k < stateShapes.size(); ++k) {
        const int64_t bytes = denseBytes(*stateShapes[k]);
        const int buffer =
            newBuffer("%" + loop.name() + ".state." + std::to_string(k), bytes, time);
        addCopy(loop, loop.name() + ".init." + std::to_string(k), init.ids[k], buffer, bytes);
        state.ids.push_back(buffer);
        state.shapes.push_back(stateShapes[k]);
    }
    const std::unordered_set<int> stateBuffers(state.ids.begin(), state.ids.end());

    const int conditionStep = static_cast<int>(m_plan.steps.size());
    HLO_ASSIGN_OR_RETURN(const Leaves predicate, planCalled(loop, condition, {state}));
    if (predicate.ids.size() != 1 || predicate.shapes[0]->elementType() != PrimitiveType::PRED ||
        predicate.shapes[0]->elementCount() != 1)
        return notOnGpu(loop, "while condition %" + condition->name() + " does not return pred[]");
    const size_t branchStep = m_plan.steps.size();
    GpuPlanStep branch = controlStep(loop, GpuStepKind::kBranch, ".test");
    branch.predicate = predicate.ids[0];
    m_plan.steps.push_back(std::move(branch));

    // The body's parameter is the state: updated in place where safe (planUpdateInPlace).
    const HloInstruction* parameter = body->parameterCount() == 1 ? body->parameter(0) : nullptr;
    const bool marked = parameter && m_loopStates.insert(parameter).second;
    auto planned = planCalled(loop, body, {state});
    if (marked) m_loopStates.erase(parameter);
    HLO_ASSIGN_OR_RETURN(const Leaves result, std::move(planned));
    if (!sameLeaves(stateShapes, result.shapes))
        return notOnGpu(loop, "while body %" + body->name() + " returns another shape");
    // The body's result into the state. A result leaf that is another leaf's state buffer
    // (a swap, a rotation) goes through a temporary first, so no copy reads a state buffer
    // another copy has already overwritten.
    std::vector<int> sources = result.ids;
    for (size_t k = 0; k < sources.size(); ++k) {
        if (sources[k] == state.ids[k] || !stateBuffers.count(sources[k])) continue;
        const int64_t bytes = denseBytes(*stateShapes[k]);
        const int temporary =
            newBuffer("%" + loop.name() + ".carry." + std::to_string(k), bytes, time);
        addCopy(loop, loop.name() + ".carry." + std::to_string(k), sources[k], temporary, bytes);
        sources[k] = temporary;
    }
    for (size_t k = 0; k < sources.size(); ++k)
        addCopy(loop, loop.name() + ".next." + std::to_string(k), sources[k], state.ids[k],
                denseBytes(*stateShapes[k]));
    GpuPlanStep jump = controlStep(loop, GpuStepKind::kJump, ".loop");
    jump.target = conditionStep;
    jump.limit = m_options.maxWhileIterations;
    m_plan.steps.push_back(std::move(jump));
    m_plan.steps[branchStep].target = static_cast<int>(m_plan.steps.size());
    m_leaves[&loop] = state.ids;

    // The state is written again in every iteration and read in the next one.
    liveThroughout(firstBuffer, time);
    return Status::ok();
}

StatusOr<bool> PlanBuilder::planUpdateInPlace(const HloInstruction& update, int64_t time) {
    // One state element of a body being planned (its parameter in m_loopStates), viewed once.
    if (!isInPlaceUpdateForm(update, false) || !update.parent()) return false;
    const HloInstruction* operand = update.operand(0);
    if (!isOnlyViewOfParameterElement(*operand) || !m_loopStates.count(operand->operand(0)))
        return false;
    const std::vector<int>& leaves = m_leaves[operand];
    if (leaves.size() != 1) return false;
    const int state = leaves.front();
    // Every other reader ran before, and none holds the buffer as its own value (the plan's
    // copies, bitcasts, tuples and calls pass buffers on).
    const std::vector<const HloInstruction*> sequence =
        executionSequence(*update.parent(), m_module.isScheduled());
    const bool first = otherReadersRunFirst(
        update,
        [&](const HloInstruction* i) -> int64_t {
            auto it = std::find(sequence.begin(), sequence.end(), i);
            return it == sequence.end() ? -1 : it - sequence.begin();
        },
        [&](const HloInstruction* user) {
            auto it = m_leaves.find(user);
            return it == m_leaves.end() ||
                   std::find(it->second.begin(), it->second.end(), state) != it->second.end();
        });
    if (!first) return false;
    m_leaves[&update] = {state};
    if (update.operand(1)->shape().elementCount() == 0) return true;
    KernelSpec spec;
    spec.name = entryName();
    spec.outputs = {&update};
    spec.updateInPlace = true;
    std::vector<int> args = {state};
    std::unordered_set<const HloInstruction*> seen;
    for (int64_t i = 1; i < update.operandCount(); ++i)
        if (seen.insert(update.operand(i)).second) {
            spec.leaves.push_back(update.operand(i));
            args.push_back(m_leaves[update.operand(i)].front());
        }
    std::vector<GpuPlanStep> extra;
    HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(update, spec, args, time, extra));
    step.name = update.name() + ".in_place";
    pushKernel(std::move(step), extra);
    return true;
}

void PlanBuilder::liveThroughout(size_t firstBuffer, int64_t start) {
    const int64_t end = m_time;
    for (size_t b = 0; b < m_live.size(); ++b) {
        if (b >= firstBuffer)
            m_live[b] = Interval{start, std::max(m_live[b].end, end)};
        else if (m_live[b].end >= start)
            m_live[b].end = std::max(m_live[b].end, end);
    }
}

Status PlanBuilder::planConditional(const HloInstruction& conditional, int64_t time) {
    const std::vector<HloComputation*> branches = conditionalBranches(conditional);
    if (branches.empty() || std::count(branches.begin(), branches.end(), nullptr))
        return notOnGpu(conditional, "conditional without its branch computations");
    if (conditional.operandCount() != static_cast<int64_t>(branches.size()) + 1)
        return notOnGpu(conditional, "conditional whose operands do not match its branches");
    const Shape& selector = conditional.operand(0)->shape();
    const bool pred = selector.elementType() == PrimitiveType::PRED;
    if (!selector.isArray() || selector.elementCount() != 1 ||
        (!pred && selector.elementType() != PrimitiveType::S32) || (pred && branches.size() != 2))
        return notOnGpu(conditional, "conditional selector of shape " + selector.toString(false) +
                                         " (pred[] for two branches or s32[])");
    const size_t firstBuffer = m_plan.buffers.size();
    const std::vector<const Shape*> resultShapes = leavesOf(conditional.shape());
    std::vector<int> result;
    for (size_t k = 0; k < resultShapes.size(); ++k)
        result.push_back(newBuffer(
            "%" + conditional.name() + (resultShapes.size() > 1 ? "." + std::to_string(k) : ""),
            denseBytes(*resultShapes[k]), time));

    const size_t switchStep = m_plan.steps.size();
    GpuPlanStep choose = controlStep(conditional, GpuStepKind::kSwitch, ".switch");
    choose.predicate = m_leaves[conditional.operand(0)].front();
    choose.indexType = pred ? "pred" : "s32";
    m_plan.steps.push_back(std::move(choose));
    std::vector<int> targets;
    std::vector<size_t> jumps;
    for (size_t b = 0; b < branches.size(); ++b) {
        targets.push_back(static_cast<int>(m_plan.steps.size()));
        HLO_ASSIGN_OR_RETURN(
            const Leaves value,
            planCalled(conditional, branches[b],
                       {leavesOfValue(*conditional.operand(static_cast<int64_t>(b) + 1))}));
        if (!sameLeaves(resultShapes, value.shapes))
            return notOnGpu(conditional,
                            "branch %" + branches[b]->name() + " returns another shape");
        for (size_t k = 0; k < result.size(); ++k)
            addCopy(conditional,
                    conditional.name() + ".branch" + std::to_string(b) + "." + std::to_string(k),
                    value.ids[k], result[k], denseBytes(*resultShapes[k]));
        if (b + 1 == branches.size()) break;
        jumps.push_back(m_plan.steps.size());
        GpuPlanStep jump =
            controlStep(conditional, GpuStepKind::kJump, ".done" + std::to_string(b));
        jump.limit = 1;  // forward: never repeats by itself
        m_plan.steps.push_back(std::move(jump));
    }
    for (size_t j : jumps) m_plan.steps[j].target = static_cast<int>(m_plan.steps.size());
    m_plan.steps[switchStep].targets = std::move(targets);
    m_leaves[&conditional] = result;
    liveThroughout(firstBuffer, time);
    return Status::ok();
}

}  // namespace hloscope::gpu_plan_internal
