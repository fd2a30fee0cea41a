#include "compiler/passes/cse.h"

#include <functional>
#include <unordered_map>
#include <vector>

#include "compiler/passes/pass_util.h"

namespace hloscope {

namespace {

size_t combine(size_t seed, size_t value) {
    return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t instructionHash(const HloInstruction& instruction) {
    size_t h = std::hash<int>()(static_cast<int>(instruction.opcode()));
    for (const HloInstruction* operand : instruction.operands())
        h = combine(h, std::hash<const void*>()(operand));
    h = combine(h, std::hash<std::string>()(instruction.shape().toString()));
    if (instruction.opcode() == HloOpcode::kConstant)
        h = combine(h, std::hash<std::string>()(instruction.literalText()));
    for (int64_t d : instruction.dimensions()) h = combine(h, std::hash<int64_t>()(d));
    h = combine(h, std::hash<int64_t>()(instruction.tupleIndex()));
    return h;
}

// Same value: identical apart from name and metadata, same operands.
bool equivalent(HloInstruction& earlier, HloInstruction& later) {
    if (earlier.opcode() != later.opcode() || earlier.operands() != later.operands() ||
        earlier.shape() != later.shape())
        return false;
    if (earlier.opcode() == HloOpcode::kConstant)
        return earlier.literalText() == later.literalText();
    // identicalTo compares metadata too; lend `later` the earlier metadata
    // for the comparison.
    if (earlier.metadata() == later.metadata()) return earlier.identicalTo(later, false);
    std::string saved = later.metadata();
    later.setMetadata(earlier.metadata());
    const bool same = earlier.identicalTo(later, false);
    later.setMetadata(std::move(saved));
    return same;
}

bool eligible(const HloInstruction& instruction, passes::SideEffectAnalysis& effects) {
    switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kAfterAll:
    case HloOpcode::kDomain:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone: return false;
    default: break;
    }
    if (hloOpcodeIsCollective(instruction.opcode()) || hloOpcodeIsAsync(instruction.opcode()))
        return false;
    if (!instruction.controlPredecessors().empty() || !instruction.controlSuccessors().empty())
        return false;
    if (instruction.shape().isToken()) return false;
    return !effects.hasSideEffect(&instruction);
}

}  // namespace

std::string_view CsePass::description() {
    return "Common-subexpression elimination: merges instructions of a computation that compute "
           "the same value (same opcode, operands, shape with layout and attributes, no side "
           "effects), keeping the first in post order; identical constants merge too "
           "(merge_constants).";
}

StatusOr<std::unique_ptr<HloPass>> CsePass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"merge_constants"}));
    HLO_ASSIGN_OR_RETURN(bool mergeConstants, options.getBool("merge_constants", true));
    return std::unique_ptr<HloPass>(std::make_unique<CsePass>(mergeConstants));
}

StatusOr<bool> CsePass::run(HloModule& module) {
    bool changed = false;
    bool removedFusion = false;
    passes::SideEffectAnalysis effects;
    for (const auto& computation : module.computations()) {
        std::unordered_multimap<size_t, HloInstruction*> seen;
        std::vector<HloInstruction*> replaced;
        for (HloInstruction* instruction : computation->postOrder()) {
            if (instruction->opcode() == HloOpcode::kConstant && !m_mergeConstants) continue;
            if (!eligible(*instruction, effects)) continue;
            const size_t hash = instructionHash(*instruction);
            HloInstruction* match = nullptr;
            auto [begin, end] = seen.equal_range(hash);
            for (auto it = begin; it != end && !match; ++it)
                if (equivalent(*it->second, *instruction)) match = it->second;
            if (!match) {
                seen.emplace(hash, instruction);
                continue;
            }
            recordRewrite("cse", instruction, match);
            instruction->replaceAllUsesWith(match);
            if (computation->root() == instruction) computation->setRoot(match);
            removedFusion = removedFusion || instruction->opcode() == HloOpcode::kFusion;
            replaced.push_back(instruction);
        }
        if (replaced.empty()) continue;
        HLO_RETURN_IF_ERROR(computation->removeInstructions(replaced));
        changed = true;
    }
    if (removedFusion) passes::repointFusionComputations(module);
    return changed;
}

}  // namespace hloscope
