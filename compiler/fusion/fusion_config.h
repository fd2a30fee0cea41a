// Options of the fusion passes (FusionConfig) and their per-target defaults.
//
// Per-target defaults (options override them):
//   target  max_operands  max_fused_instructions  on-chip budget  tile elements
//   cpu     128           256                     1 MiB (L2)      4096
//   gpu     96            256                     228 KiB (smem)  1024
//   tpu     64            512                     16 MiB (VMEM)   2048
// The on-chip estimate of a fused kernel is, over its distinct operands,
// sum(min(operand bytes, tile elements * element bytes)) (checkLimits in
// fusion_legality.h).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/pipeline/hlo_pass.h"
#include "core/ir/hlo_module.h"

namespace hloscope::fusion {

struct FusionConfig {
    std::string target = "cpu";
    // The performance model's hardware (hardware=NAME|file.json); empty: the
    // family's default (cpu: shipped cpu.json, gpu: h100, tpu: tpu_v5e).
    std::string hardware;
    std::string costModel = "performance";
    int64_t maxOperands = 128;
    int64_t maxFusedInstructions = 256;
    double onChipBudgetBytes = 1 << 20;
    int64_t tileElements = 4096;
    bool disableCostModel = false;
    std::set<std::pair<std::string, std::string>> force;
    std::set<std::pair<std::string, std::string>> forbid;

    // Whether a dynamic-update-slice takes its producers into a kLoop fusion it is the root
    // of (fusion/in_place_fusion.h), as XLA's CPU instruction fusion does. The GPU and the TPU
    // keep it unfused: their plans update a loop's state in place only for a lone update.
    bool fusesIntoInPlaceUpdates() const { return target == "cpu"; }
    // Whether a scatter of one operand takes the producers of its indices and updates into a
    // kInput fusion it is the root of, as XLA's GPU fusion does (the GPU plan initialises the
    // output from the operand, then runs the scatter kernel with the fused producers).
    bool fusesIntoScatters() const { return target == "gpu"; }

    // Pairs are named by the user's instruction names; once an instruction
    // is inside a fusion, the fusion answers for it.
    bool forced(const HloInstruction& a, const HloInstruction& b) const {
        return !force.empty() && namesPair(force, a, b);
    }
    bool forbidden(const HloInstruction& a, const HloInstruction& b) const {
        return !forbid.empty() && namesPair(forbid, a, b);
    }
    static std::vector<std::string> namesOf(const HloInstruction& x) {
        std::vector<std::string> names = {x.name()};
        if (x.opcode() == HloOpcode::kFusion && x.fusedComputation())
            for (const auto& inner : x.fusedComputation()->instructions())
                if (inner->opcode() != HloOpcode::kParameter) names.push_back(inner->name());
        return names;
    }
    static bool namesPair(const std::set<std::pair<std::string, std::string>>& pairs,
                          const HloInstruction& a, const HloInstruction& b) {
        const std::vector<std::string> first = namesOf(a), second = namesOf(b);
        for (const std::string& p : first)
            for (const std::string& c : second)
                if (pairs.count({p, c})) return true;
        return false;
    }
};

// Options of both passes: target, max_operands, max_fused_instructions,
// force, forbid, disable_cost_model, cost_model.
StatusOr<FusionConfig> parseFusionConfig(const PassOptions& options);

}  // namespace hloscope::fusion
