#include "compiler/fusion/row_fusion.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_decision.h"
#include "compiler/fusion/fusion_format.h"
#include "compiler/fusion/fusion_legality.h"

namespace hloscope {

using fusion::FusionBuilder;
using fusion::FusionConfig;

namespace {

bool isFusion(const HloInstruction& instruction, std::string_view kind) {
    return instruction.opcode() == HloOpcode::kFusion && instruction.fusedComputation() &&
           instruction.fusionKind() == kind;
}

// A reduce of one array over exactly its last dimension.
bool isRowReduce(const HloInstruction& instruction) {
    if (instruction.opcode() != HloOpcode::kReduce || instruction.operandCount() != 2) return false;
    if (!instruction.shape().isArray()) return false;
    const Shape& input = instruction.operand(0)->shape();
    return input.isArray() && input.rank() >= 1 && instruction.dimensions().size() == 1 &&
           instruction.dimensions(0) == input.rank() - 1 && input.hasDefaultDenseLayout() &&
           instruction.shape().hasDefaultDenseLayout();
}

// The row reduce behind `instruction` (itself, or a kInput fusion's root).
const HloInstruction* rowReduceOf(const HloInstruction& instruction) {
    if (isRowReduce(instruction)) return &instruction;
    if (isFusion(instruction, "kInput")) {
        const HloInstruction* root = instruction.fusedComputation()->root();
        if (root && isRowReduce(*root)) return root;
    }
    return nullptr;
}

// Whether every instruction keeps the kernel's row index intact on its way to
// a reduction: elementwise ops, broadcasts, constants, iotas, parameters and
// row reductions. `what` names the first one that does not.
bool rowLocal(const HloInstruction& instruction, std::string* what) {
    auto ok = [&](const HloInstruction& x) {
        switch (x.opcode()) {
        case HloOpcode::kParameter:
        case HloOpcode::kConstant:
        case HloOpcode::kIota:
        case HloOpcode::kBroadcast: return true;
        case HloOpcode::kReduce: return isRowReduce(x);
        default:
            return hloOpcodeIsElementwise(x.opcode()) && x.opcode() != HloOpcode::kMap &&
                   x.opcode() != HloOpcode::kRng && x.shape().isArray();
        }
    };
    if (instruction.opcode() != HloOpcode::kFusion) {
        if (ok(instruction)) return true;
        *what = "%" + instruction.name() + " (" + std::string(hloOpcodeString(instruction.opcode())) + ")";
        return false;
    }
    for (const auto& inner : instruction.fusedComputation()->instructions())
        if (!ok(*inner)) {
            *what = "%" + inner->name() + " (" + std::string(hloOpcodeString(inner->opcode())) + ") inside %" +
                    instruction.name();
            return false;
        }
    return true;
}

// Whether `consumer` reads `reduction` (of dimensions kept + [row]) only
// through broadcasts along the kept dimensions onto `rowDims`, possibly after
// elementwise ops on the kept dimensions (the mean = sum / n of a layer norm),
// so its value is the same for a whole row.
bool readsAsRowBroadcast(const HloInstruction& reduction, const HloInstruction& consumer,
                         const std::vector<int64_t>& rowDims) {
    using fusion::isRowBroadcast;
    const std::vector<int64_t> keptDims(rowDims.begin(), rowDims.end() - 1);
    // Every path from `value` (of the kept dimensions) ends in a row broadcast.
    std::function<bool(const HloInstruction&, int)> rowWise = [&](const HloInstruction& value, int depth) {
        if (depth > 32 || value.users().empty()) return false;
        for (const HloInstruction* user : value.users()) {
            if (isRowBroadcast(*user, rowDims)) continue;
            if (!hloOpcodeIsElementwise(user->opcode()) || !user->shape().isArray() ||
                user->shape().dimensions() != keptDims || !rowWise(*user, depth + 1))
                return false;
        }
        return true;
    };
    if (consumer.opcode() == HloOpcode::kBroadcast) return isRowBroadcast(consumer, rowDims);
    const HloComputation* fused = consumer.fusedComputation();
    bool any = false;
    for (int64_t k = 0; k < consumer.operandCount() && k < fused->parameterCount(); ++k) {
        if (consumer.operand(k) != &reduction) continue;
        const HloInstruction* parameter = fused->parameter(k);
        if (!parameter || !rowWise(*parameter, 0)) return false;
        any = true;
    }
    return any;
}

bool holdsRowReduce(const HloInstruction& instruction) {
    if (!isFusion(instruction, "kLoop")) return false;
    for (const auto& inner : instruction.fusedComputation()->instructions())
        if (inner->opcode() == HloOpcode::kReduce && inner.get() != instruction.fusedComputation()->root())
            return true;
    return false;
}

std::string dimsText(const std::vector<int64_t>& dims) {
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
    return text + "]";
}

// Fewest rows for which the gpu merges a row reduction (its row kernel runs a block per row).
constexpr int64_t kGpuMinRows = 256;

// Rows (all dimensions but the last) of an array of `dims`.
int64_t rowCount(const std::vector<int64_t>& dims) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < dims.size(); ++i) rows *= dims[i];
    return rows;
}

// The row reduction behind a per-row value: `producer` (a kLoop fusion or an
// elementwise op) has the rows' kept dimensions and no reader but `consumer`,
// which reads it only as a broadcast over its rows; it computes only
// row-local things, and reads a row reduction over `consumer`'s rows that has
// no other reader and that row-fusion would merge once the value is inside
// `consumer` (on gpu, at least kGpuMinRows rows). nullptr otherwise.
const HloInstruction* rowValueSource(const HloInstruction& producer, const HloInstruction& consumer,
                                     const std::string& target) {
    if (producer.userCount() != 1 || !isFusion(consumer, "kLoop") || !consumer.shape().isArray() ||
        !producer.shape().isArray())
        return nullptr;
    if (!isFusion(producer, "kLoop") &&
        (producer.opcode() == HloOpcode::kFusion || !hloOpcodeIsElementwise(producer.opcode())))
        return nullptr;
    const std::vector<int64_t>& rowDims = consumer.shape().dimensions();
    if (rowDims.empty() ||
        producer.shape().dimensions() != std::vector<int64_t>(rowDims.begin(), rowDims.end() - 1))
        return nullptr;
    if (target == "gpu" && rowCount(rowDims) < kGpuMinRows) return nullptr;
    std::string what;
    if (!rowLocal(producer, &what) || !readsAsRowBroadcast(producer, consumer, rowDims))
        return nullptr;
    for (const HloInstruction* operand : producer.operands()) {
        const HloInstruction* reduce = rowReduceOf(*operand);
        if (reduce && operand->userCount() == 1 &&
            reduce->operand(0)->shape().dimensions() == rowDims && rowLocal(*operand, &what))
            return operand;
    }
    return nullptr;
}

}  // namespace

bool fusion::isRowBroadcast(const HloInstruction& instruction, const std::vector<int64_t>& rowDims) {
    if (instruction.opcode() != HloOpcode::kBroadcast || !instruction.shape().isArray() ||
        instruction.shape().dimensions() != rowDims)
        return false;
    const std::vector<int64_t>& dims = instruction.dimensions();
    if (dims.size() + 1 != rowDims.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != static_cast<int64_t>(i)) return false;
    return true;
}

std::string_view RowFusionPass::description() {
    return "Row fusion (cpu, gpu): merges a reduction over the last dimension into the loop fusion "
           "that broadcasts it "
           "back over the same rows (softmax, layer norm), then the row-wise producers only that "
           "fusion reads, so "
           "each row is reduced and transformed while it sits in cache and no intermediate goes to "
           "memory. Options "
           "as fusion.";
}

StatusOr<std::unique_ptr<HloPass>> RowFusionPass::create(const PassOptions& options) {
    HLO_ASSIGN_OR_RETURN(FusionConfig config, fusion::parseFusionConfig(options));
    return std::unique_ptr<HloPass>(std::make_unique<RowFusionPass>(std::move(config)));
}

StatusOr<bool> RowFusionPass::run(HloModule& module) {
    if (module.entryComputation() == nullptr)
        return failedPrecondition("module " + module.name() + " has no entry computation");
    FusionBuilder builder(module);
    int64_t step = 0;
    // Refusals are logged once per pair: the scan repeats after each merge.
    std::set<std::pair<std::string, std::string>> logged;
    for (HloComputation* computation : fusion::fusibleComputations(module)) {
        // Producers in post order. A merge makes new pairs only with the merged kernel and its
        // operands (every other producer keeps its reader), so the look goes back to the first
        // of those: nothing before it changed since it was looked at.
        std::vector<HloInstruction*> order = fusion::postOrderOf(*computation);
        std::unordered_map<const HloInstruction*, size_t> position;
        position.reserve(order.size());
        for (size_t i = 0; i < order.size(); ++i) position.emplace(order[i], i);
        for (size_t next = 0; next < order.size();) {
            HloInstruction* producer = order[next++];
            {
                if (builder.removed(producer) || producer->isRoot() || producer->userCount() == 0) continue;
                const HloInstruction* reduce = rowReduceOf(*producer);
                HloInstruction* consumer = producer->users().front();
                // A row-wise producer of a fusion that already holds a row
                // reduction (case 2), or a row reduction (case 1).
                const bool joinsRows = !reduce && producer->userCount() == 1 && holdsRowReduce(*consumer) &&
                                       (isFusion(*producer, "kLoop") ||
                                        (producer->opcode() != HloOpcode::kFusion &&
                                         (hloOpcodeIsElementwise(producer->opcode()) ||
                                          producer->opcode() == HloOpcode::kBroadcast))) &&
                                       producer->shape().isArray() &&
                                       producer->shape().dimensions() == consumer->shape().dimensions();
                // A value per row computed from a row reduction (a layer norm's
                // rsqrt(var + eps)) that its only reader broadcasts back over the
                // rows (case 3): inside, it is computed once per row, and the
                // reduction can then join too.
                const HloInstruction* rowValueOf =
                    !reduce && !joinsRows ? rowValueSource(*producer, *consumer, m_config.target)
                                          : nullptr;
                if (!reduce && !joinsRows && !rowValueOf) continue;
                PassDecision decision;
                decision.producer = producer->name();
                decision.consumer = consumer->name();
                const std::string p = "%" + producer->name(), c = "%" + consumer->name();
                std::optional<FusionReason> reason;
                std::string detail, what;
                const std::vector<int64_t> rowDims = reduce
                                                         ? reduce->operand(0)->shape().dimensions()
                                                         : consumer->shape().dimensions();
                if (m_config.forbidden(*producer, *consumer)) {
                    reason = FusionReason::kForbiddenByUser;
                    detail = "forbid= names " + p + ":" + c;
                } else if (reduce && producer->userCount() != 1) {
                    reason = FusionReason::kWouldDuplicateExpensiveWork;
                    detail = p + " has " + std::to_string(producer->userCount()) +
                             " users: merging it would reduce each row once per user";
                } else if (reduce && !(isFusion(*consumer, "kLoop") || consumer->opcode() == HloOpcode::kBroadcast)) {
                    continue;  // not a loop consumer: nothing to consider (fusion logged it)
                } else if (reduce && (!consumer->shape().isArray() || consumer->shape().dimensions() != rowDims ||
                                      !readsAsRowBroadcast(*producer, *consumer, rowDims))) {
                    reason = FusionReason::kConsumerIsNotFusible;
                    detail = c + " does not read " + p + " as a broadcast over rows of " + dimsText(rowDims);
                } else if (!rowLocal(*producer, &what) || !rowLocal(*consumer, &what)) {
                    reason = FusionReason::kNotFusibleOp;
                    detail = what + " does not keep the row index: the reduction could not be computed once per row";
                } else if (auto limit = fusion::checkLimits({producer, consumer}, m_config, &detail)) {
                    reason = limit;
                } else if (reduce && m_config.target == "gpu" && rowCount(rowDims) < kGpuMinRows) {
                    // The GPU's row kernel runs a block per row; the reduction kernels it would
                    // replace split long rows across blocks.
                    reason = FusionReason::kNoPredictedGain;
                    detail = "only " + std::to_string(rowCount(rowDims)) +
                             " rows: a GPU row kernel (a block per row) would leave "
                             "most of the GPU idle below " +
                             std::to_string(kGpuMinRows) + " rows";
                }
                if (reason) {
                    if (logged.insert({producer->name(), consumer->name()}).second) {
                        decision.step = ++step;
                        decision.reason = std::string(fusionReasonCode(*reason));
                        decision.explanation = detail;
                        recordDecision(std::move(decision));
                    }
                    continue;
                }
                decision.step = ++step;
                decision.applied = true;
                decision.reason = std::string(fusionReasonCode(
                    m_config.forced(*producer, *consumer) ? FusionReason::kForcedByUser : FusionReason::kFused));
                const int64_t rowLength = rowDims.empty() ? 1 : rowDims.back();
                decision.explanation =
                    reduce
                        ? "each row of " + std::to_string(rowLength) +
                              " elements is reduced inside " + c +
                              " while it is in cache: " + fusion::describeBytes(producer->shape()) +
                              " of reduction results no longer go through memory"
                    : rowValueOf
                        ? p + " is one value per row of %" + rowValueOf->name() +
                              ", computed once per row inside " + c +
                              " (its only reader broadcasts it over the rows), so %" +
                              rowValueOf->name() + " can be reduced there too"
                        : p + " is computed per row inside " + c +
                              ", its only reader, instead of writing " +
                              fusion::describeBytes(producer->shape()) + " and reading it back";
                recordDecision(std::move(decision));
                const size_t consumerAt = position.at(consumer);
                HloInstruction* fused = builder.fuse(producer, consumer, /*producerGoesAway=*/true);
                recordRewrite(reduce       ? "row-reduction"
                              : rowValueOf ? "row-value"
                                           : "row-producer",
                              consumer, fused);
                // The merged kernel takes the consumer's place (its operands all come before it).
                order[consumerAt] = fused;
                position[fused] = consumerAt;
                next = consumerAt;
                for (const HloInstruction* operand : fused->operands()) {
                    if (operand->opcode() == HloOpcode::kParameter || operand->opcode() == HloOpcode::kConstant)
                        continue;  // never a producer here
                    if (auto it = position.find(operand); it != position.end()) next = std::min(next, it->second);
                }
            }
        }
        sinkScalarConstants(*computation, builder, step);
    }
    const bool changed = builder.changed();
    HLO_RETURN_IF_ERROR(builder.finish());
    return changed;
}

// A merged kernel takes the scalar constants its parts read as operands (a reduce's init that
// the CPU's fusion left outside a bare reduce) inside, as the fusion pass's last step does.
void RowFusionPass::sinkScalarConstants(HloComputation& computation,
                                        fusion::FusionBuilder& builder, int64_t& step) {
    auto scalarConstant = [](const HloInstruction* operand) {
        return fusion::isScalarConstant(*operand);
    };
    // The next scalar constant operand of `fusion` that may fuse into it, or null.
    auto foldable = [&](HloInstruction* fusion) -> HloInstruction* {
        for (HloInstruction* operand : fusion->operands())
            if (scalarConstant(operand) &&
                !fusion::checkPair(*operand, *fusion, m_config, nullptr, false, 1))
                return operand;
        return nullptr;
    };
    std::vector<HloInstruction*> fusions;
    for (const auto& instruction : computation.instructions())
        if (!builder.removed(instruction.get()) && fusion::isFusionOf(*instruction) &&
            std::any_of(instruction->operands().begin(), instruction->operands().end(),
                        scalarConstant))
            fusions.push_back(instruction.get());
    for (HloInstruction* fusion : fusions) {
        while (HloInstruction* constant = foldable(fusion)) {
            PassDecision decision;
            decision.step = ++step;
            decision.applied = true;
            decision.producer = constant->name();
            decision.consumer = fusion->name();
            decision.reason = std::string(fusionReasonCode(FusionReason::kFused));
            decision.explanation = "the scalar constant %" + constant->name() +
                                   " is folded into the merged kernel %" + fusion->name();
            recordDecision(std::move(decision));
            const bool last = std::all_of(constant->users().begin(), constant->users().end(),
                                          [&](const HloInstruction* u) { return u == fusion; });
            HloInstruction* fused = builder.fuse(constant, fusion, last && !constant->isRoot());
            recordRewrite("row-constant", fusion, fused);
            fusion = fused;
        }
    }
}

}  // namespace hloscope
