#include "core/ir/module_stats.h"

#include <nlohmann/json.hpp>

namespace hloscope {

ModuleStats computeModuleStats(const HloModule& module) {
    ModuleStats stats;
    stats.moduleName = module.name();
    stats.computationCount = module.computationCount();
    for (const auto& computation : module.computations()) {
        if (computation->fusionInstruction() != nullptr) ++stats.fusionComputationCount;
        for (const auto& instruction : computation->instructions()) {
            ++stats.instructionCount;
            ++stats.opcodeCounts[std::string(hloOpcodeString(instruction->opcode()))];
            int64_t bytes = instruction->shape().byteSize();
            if (instruction->opcode() == HloOpcode::kConstant) stats.constantBytes += bytes;
            if (bytes > stats.largestInstructionBytes) {
                stats.largestInstructionBytes = bytes;
                stats.largestInstructionName = instruction->name();
            }
        }
    }
    if (const HloComputation* entry = module.entryComputation()) {
        stats.entryInstructionCount = entry->instructionCount();
        for (const HloInstruction* parameter : entry->parameters()) {
            if (parameter == nullptr) continue;
            ++stats.entryParameterCount;
            stats.parameterBytes += parameter->shape().byteSize();
        }
        if (entry->root()) stats.outputBytes = entry->root()->shape().byteSize();
    }
    return stats;
}

namespace {
std::string humanBytes(int64_t bytes) {
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    char buffer[32];
    if (unit == 0)
        std::snprintf(buffer, sizeof(buffer), "%lld B", static_cast<long long>(bytes));
    else
        std::snprintf(buffer, sizeof(buffer), "%.2f %s", value, kUnits[unit]);
    return buffer;
}
}  // namespace

std::string moduleStatsToText(const ModuleStats& stats) {
    std::string out;
    auto line = [&](std::string_view key, const std::string& value) {
        out += key;
        out.append(key.size() < 24 ? 24 - key.size() : 1, ' ');
        out += value;
        out += '\n';
    };
    line("module", stats.moduleName);
    line("computations", std::to_string(stats.computationCount));
    line("fusion computations", std::to_string(stats.fusionComputationCount));
    line("instructions", std::to_string(stats.instructionCount));
    line("entry instructions", std::to_string(stats.entryInstructionCount));
    line("entry parameters", std::to_string(stats.entryParameterCount));
    line("parameter bytes", std::to_string(stats.parameterBytes) + " (" +
                                humanBytes(stats.parameterBytes) + ")");
    line("output bytes",
         std::to_string(stats.outputBytes) + " (" + humanBytes(stats.outputBytes) + ")");
    line("constant bytes",
         std::to_string(stats.constantBytes) + " (" + humanBytes(stats.constantBytes) + ")");
    if (!stats.largestInstructionName.empty())
        line("largest value", "%" + stats.largestInstructionName + " " +
                                  humanBytes(stats.largestInstructionBytes));
    out += "opcodes:\n";
    std::vector<std::pair<std::string, int64_t>> sorted(stats.opcodeCounts.begin(),
                                                        stats.opcodeCounts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [opcode, count] : sorted) {
        out += "  ";
        out += opcode;
        out.append(opcode.size() < 28 ? 28 - opcode.size() : 1, ' ');
        out += std::to_string(count);
        out += '\n';
    }
    return out;
}

std::string moduleStatsToJson(const ModuleStats& stats) {
    nlohmann::ordered_json j;
    j["module"] = stats.moduleName;
    j["computations"] = stats.computationCount;
    j["fusion_computations"] = stats.fusionComputationCount;
    j["instructions"] = stats.instructionCount;
    j["entry_instructions"] = stats.entryInstructionCount;
    j["entry_parameters"] = stats.entryParameterCount;
    j["parameter_bytes"] = stats.parameterBytes;
    j["output_bytes"] = stats.outputBytes;
    j["constant_bytes"] = stats.constantBytes;
    j["largest_value"] = {{"name", stats.largestInstructionName},
                          {"bytes", stats.largestInstructionBytes}};
    nlohmann::ordered_json opcodes = nlohmann::ordered_json::object();
    for (const auto& [opcode, count] : stats.opcodeCounts) opcodes[opcode] = count;
    j["opcodes"] = opcodes;
    return j.dump(2) + "\n";
}

}  // namespace hloscope
