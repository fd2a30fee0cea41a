// Module statistics: instruction and opcode counts, computations, parameter
// and output bytes (for `hloscope-cli stats` and the GUI's inspector).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/ir/hlo_module.h"

namespace hloscope {

struct ModuleStats {
    std::string moduleName;
    int64_t computationCount = 0;
    int64_t instructionCount = 0;        // all computations
    int64_t entryInstructionCount = 0;
    int64_t fusionComputationCount = 0;
    std::map<std::string, int64_t> opcodeCounts;  // spelling -> count, all computations
    int64_t entryParameterCount = 0;
    int64_t parameterBytes = 0;  // entry parameters
    int64_t outputBytes = 0;     // entry root
    int64_t constantBytes = 0;
    int64_t largestInstructionBytes = 0;
    std::string largestInstructionName;
};

ModuleStats computeModuleStats(const HloModule& module);
std::string moduleStatsToText(const ModuleStats& stats);
std::string moduleStatsToJson(const ModuleStats& stats);

}  // namespace hloscope
