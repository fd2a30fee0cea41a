#include "views/model/kernel_rows.h"

#include <cstdio>
#include <unordered_map>

#include "compiler/cost/performance_model.h"
#include "compiler/layers/layer_figures.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "views/model/model_figures.h"

namespace hloscope {
namespace {

std::string kindOf(const HloInstruction& x) {
    std::string kind(hloOpcodeString(x.opcode()));
    if (x.opcode() == HloOpcode::kFusion && !x.fusionKind().empty()) kind += " " + std::string(x.fusionKind());
    if (x.opcode() == HloOpcode::kCustomCall && !x.customCallTarget().empty())
        kind += " " + std::string(x.customCallTarget());
    return kind;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

}  // namespace

StatusOr<KernelRows> computeKernelRows(const DocumentState& state) {
    if (!state.module) return failedPrecondition("no module is open");
    HLO_ASSIGN_OR_RETURN(TargetDescription target, targetForName(state.target));
    KernelRows result;
    result.target = target.name;
    const ModulePrediction prediction = predictModule(*state.module, target);
    result.scheduled = state.module->isScheduled();
    std::unordered_map<const HloInstruction*, int64_t> position;
    for (const auto& computation : state.module->computations()) {
        int64_t i = 0;
        for (const auto& x : computation->instructions()) position[x.get()] = i++;
    }
    result.totalPredictedSeconds = prediction.totalSeconds;
    result.rows.reserve(prediction.kernels.size());
    for (const KernelPrediction& k : prediction.kernels) {
        const HloInstruction& x = *k.instruction;
        KernelRow row;
        if (auto it = position.find(&x); it != position.end()) row.order = it->second;
        row.name = x.name();
        row.kind = kindOf(x);
        if (x.opcode() == HloOpcode::kFusion && x.fusedComputation())
            row.ops = x.fusedComputation()->instructionCount() - x.fusedComputation()->parameterCount();
        row.bytes = k.cost.bytesRead + k.cost.bytesWritten;
        row.flops = k.cost.flops;
        row.executions = k.executions;
        row.predictedSeconds = k.totalSeconds * k.executions;
        if (state.layers) {
            const int layer = layerOfKernel(state.layers->tree, x);
            if (layer > 0) row.layer = state.layers->tree.layer(layer).key;
        }
        result.rows.push_back(std::move(row));
    }
    return result;
}

std::string kernelRowsCsv(const std::vector<KernelRow>& rows) {
    std::string csv = "order,kernel,kind,layer,ops,bytes,flops,executions,predicted_seconds,measured_seconds\n";
    for (const KernelRow& row : rows) {
        csv += std::to_string(row.order) + "," + csvField(row.name) + "," + csvField(row.kind) + "," + csvField(row.layer) + "," +
               std::to_string(row.ops) + "," + number(row.bytes) + "," + number(row.flops) + "," +
               number(row.executions) + "," + number(row.predictedSeconds) + "," +
               (row.measuredSeconds >= 0 ? number(row.measuredSeconds) : std::string()) + "\n";
    }
    return csv;
}

}  // namespace hloscope
