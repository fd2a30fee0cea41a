#include "compiler/passes/scan_expander.h"

#include <limits>
#include <unordered_set>
#include <vector>

#include "compiler/passes/instruction_builder.h"
#include "compiler/passes/pass_util.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/scan.h"

namespace hloscope {
namespace {

using H = HloInstruction*;

// Adds instructions named after the scan to one computation.
class Builder : public passes::InstructionBuilder {
public:
    using InstructionBuilder::InstructionBuilder;

    // Row `at` of `array` along `dimension`, without that dimension.
    H row(H array, int64_t dimension, H at) {
        const Shape& shape = array->shape();
        std::vector<H> operands = {array};
        std::vector<int64_t> sizes = shape.dimensions();
        sizes[static_cast<size_t>(dimension)] = 1;
        for (int64_t d = 0; d < shape.rank(); ++d)
            operands.push_back(d == dimension ? at : index(0));
        H slice = add(HloOpcode::kDynamicSlice, Shape::makeArray(shape.elementType(), sizes),
                      operands, "row");
        slice->mutableExtra().dynamicSliceSizes = sizes;
        return add(HloOpcode::kReshape, removeDimension(shape, dimension), {slice}, "row");
    }
    // `array` with `value` as its row `at` along `dimension`.
    H putRow(H array, int64_t dimension, H at, H value) {
        H update = add(HloOpcode::kReshape, insertDimension(value->shape(), dimension, 1), {value},
                       "update");
        std::vector<H> operands = {array, update};
        for (int64_t d = 0; d < array->shape().rank(); ++d)
            operands.push_back(d == dimension ? at : index(0));
        return add(HloOpcode::kDynamicUpdateSlice, array->shape(), operands, "stacked");
    }
};

HloComputation* newComputation(HloModule& module, const std::string& name) {
    return module.addComputation(
        std::make_unique<HloComputation>(module.uniqueComputationName(name)));
}

// The state's layout: step, inputs, carries, stacked outputs.
struct State {
    int64_t inputs = 0, carries = 0, outputs = 0;
    int64_t input(int64_t i) const { return 1 + i; }
    int64_t carry(int64_t j) const { return 1 + inputs + j; }
    int64_t output(int64_t o) const { return 1 + inputs + carries + o; }
};

// Replaces `scan` by its loop; returns the instruction standing for it.
StatusOr<H> expand(HloModule& module, HloInstruction* scan, const ScanGeometry& g) {
    if (g.length > std::numeric_limits<int32_t>::max())
        return unimplemented("%" + scan->name() + ": scan of " + std::to_string(g.length) +
                             " steps (the loop counts in s32)");
    HloComputation& outer = *scan->parent();
    const HloComputation& body = *scan->toApply();
    const State state{g.inputCount, g.carryCount, g.outputCount};
    Builder b(module, outer, scan->name());

    std::vector<H> init = {b.index(0)};
    for (int64_t i = 0; i < scan->operandCount(); ++i) init.push_back(scan->operand(i));
    for (const Shape& output : g.outputShapes)
        init.push_back(b.zeros(insertDimension(output, g.dimension, g.length)));
    H initial = b.tuple(init);
    const Shape& stateShape = initial->shape();

    // condition: step < length.
    HloComputation* condition = newComputation(module, scan->name() + ".condition");
    {
        Builder c(module, *condition, scan->name());
        H step = c.element(c.parameter(stateShape), 0);
        H less = c.add(HloOpcode::kCompare, Shape::makeScalar(PrimitiveType::PRED),
                       {step, c.index(g.length)}, "more");
        less->mutableExtra().comparisonDirection = ComparisonDirection::kLt;
        condition->setRoot(less);
    }

    // body: one step of the scan.
    HloComputation* loopBody = newComputation(module, scan->name() + ".body");
    {
        Builder l(module, *loopBody, scan->name());
        H parameter = l.parameter(stateShape);
        H step = l.element(parameter, 0);
        H at = step;
        if (g.reverse)
            at = l.add(HloOpcode::kSubtract, step->shape(), {l.index(g.length - 1), step}, "at");
        std::vector<H> arguments, inputs, next = {nullptr};
        for (int64_t i = 0; i < g.inputCount; ++i) {
            inputs.push_back(l.element(parameter, state.input(i)));
            arguments.push_back(l.row(inputs.back(), g.dimension, at));
        }
        for (int64_t j = 0; j < g.carryCount; ++j)
            arguments.push_back(l.element(parameter, state.carry(j)));
        const auto clones = passes::cloneBodyInto(module, *loopBody, body, arguments);
        H result = clones.at(body.root());
        std::vector<H> values;
        if (g.tupleResult)
            for (int64_t v = 0; v < g.outputCount + g.carryCount; ++v)
                values.push_back(l.element(result, v));
        else
            values.push_back(result);
        next.insert(next.end(), inputs.begin(), inputs.end());
        for (int64_t j = 0; j < g.carryCount; ++j)
            next.push_back(values[static_cast<size_t>(g.outputCount + j)]);
        for (int64_t o = 0; o < g.outputCount; ++o)
            next.push_back(l.putRow(l.element(parameter, state.output(o)), g.dimension, at,
                                    values[static_cast<size_t>(o)]));
        next[0] = l.add(HloOpcode::kAdd, step->shape(), {step, l.index(1)}, "step");
        loopBody->setRoot(l.tuple(next));
    }

    H loop = b.add(HloOpcode::kWhile, stateShape, {initial}, "loop");
    loop->setCalledComputation("condition", condition);
    loop->setCalledComputation("body", loopBody);
    loop->setMetadata(scan->metadata());
    std::vector<H> results;
    for (int64_t o = 0; o < g.outputCount; ++o) results.push_back(b.element(loop, state.output(o)));
    for (int64_t j = 0; j < g.carryCount; ++j) results.push_back(b.element(loop, state.carry(j)));
    H replacement = g.tupleResult ? b.tuple(results) : results.front();
    HLO_RETURN_IF_ERROR(outer.replaceInstruction(scan, replacement));
    return replacement;
}

// A loop cannot run inside a kernel: each fusion whose computation holds a
// scan, directly or through what it calls, becomes a call of that
// computation, which the call inliner then inlines. Returns how many.
StatusOr<int64_t> unfuseScans(HloModule& module) {
    std::unordered_set<const HloComputation*> holdsScan;
    for (HloComputation* computation : passes::calleesFirst(module))
        for (const auto& instruction : computation->instructions()) {
            bool scan = instruction->opcode() == HloOpcode::kScan;
            for (const HloComputation* called : instruction->calledComputations())
                scan = scan || holdsScan.count(called);
            if (scan) {
                holdsScan.insert(computation);
                break;
            }
        }
    std::vector<HloInstruction*> fusions;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kFusion &&
                holdsScan.count(instruction->fusedComputation()))
                fusions.push_back(instruction.get());
    for (HloInstruction* fusion : fusions) {
        HloComputation* fused = fusion->fusedComputation();
        auto call = std::make_unique<HloInstruction>(
            HloOpcode::kCall, module.uniqueInstructionName(fusion->name() + ".unfused"),
            fusion->shape());
        for (HloInstruction* operand : fusion->operands()) call->appendOperand(operand);
        call->setCalledComputation("to_apply", fused);
        call->setMetadata(fusion->metadata());
        HloInstruction* added = fusion->parent()->addInstruction(std::move(call));
        HLO_RETURN_IF_ERROR(fusion->parent()->replaceInstruction(fusion, added));
    }
    if (!fusions.empty()) passes::repointFusionComputations(module);
    return static_cast<int64_t>(fusions.size());
}

}  // namespace

std::string_view ScanExpanderPass::description() {
    return "Replaces each scan by the while loop that computes it: row i of every input "
           "(dynamic-slice), the scan's body on the rows and carries, the step's outputs "
           "written to row i of the stacked results (dynamic-update-slice).";
}

StatusOr<std::unique_ptr<HloPass>> ScanExpanderPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<ScanExpanderPass>());
}

StatusOr<bool> ScanExpanderPass::run(HloModule& module) {
    const auto before = passes::unreachableComputations(module);
    const std::unordered_set<HloComputation*> unreachableBefore(before.begin(), before.end());
    std::unordered_set<const HloComputation*> existing;
    for (const auto& computation : module.computations()) existing.insert(computation.get());
    HLO_ASSIGN_OR_RETURN(const int64_t unfused, unfuseScans(module));
    int64_t expanded = 0;
    // Callees first: a scan inside another scan's body is a loop by the time
    // the outer body is copied.
    for (HloComputation* computation : passes::calleesFirst(module)) {
        std::vector<HloInstruction*> scans;
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kScan) scans.push_back(instruction.get());
        for (HloInstruction* scan : scans) {
            HLO_ASSIGN_OR_RETURN(ScanGeometry geometry, scanGeometry(*scan));
            RewriteEvent event{"expand-scan", scan->name(), scan->uniqueId(), {}, -1};
            HLO_ASSIGN_OR_RETURN(H replacement, expand(module, scan, geometry));
            event.after = replacement->name();
            event.afterId = replacement->uniqueId();
            recordRewrite(std::move(event));
            ++expanded;
        }
    }
    setStatistic("expanded", expanded);
    setStatistic("unfused", unfused);
    if (expanded == 0) return unfused > 0;
    // Bodies nothing calls any more (each scan's was copied into its loop).
    std::vector<HloComputation*> dead;
    for (HloComputation* computation : passes::unreachableComputations(module))
        if (!unreachableBefore.count(computation)) dead.push_back(computation);
    HLO_RETURN_IF_ERROR(passes::removeComputations(module, dead));
    HLO_RETURN_IF_ERROR(passes::placeNewComputations(module, existing));
    return true;
}

}  // namespace hloscope
