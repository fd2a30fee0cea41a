// The kernels of a document state as a table shows them (an op profile): every
// kernel of the module at the current step with its kind, the ops it holds,
// the model layer it belongs to, the bytes it moves, its flops and predicted
// time on the state's target (loops weighted by their trip counts), in the
// order hloscope-cli cost prints them. Qt-free; computed off the GUI thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/status.h"
#include "views/document/document_state.h"

namespace hloscope {

struct KernelRow {
    int64_t order = 0;   // its position in its computation: the schedule of a scheduled module
    std::string name;    // the instruction
    std::string kind;    // "fusion kLoop", "dot", "custom-call __cublas$gemm"
    std::string layer;   // the layer's key ("decoder_block_3/attention"); empty when none
    int64_t ops = 1;     // instructions inside (a fusion's fused instructions but parameters)
    double bytes = 0;    // read and written, one execution
    double flops = 0;
    double executions = 1;
    double predictedSeconds = 0;  // all executions
    double measuredSeconds = -1;  // after a run; -1 when none
};

struct KernelRows {
    std::string target;  // the target the predictions are for
    bool scheduled = false;  // the module carries a schedule (is_scheduled=true: XLA's optimized dumps)
    std::vector<KernelRow> rows;
    double totalPredictedSeconds = 0;
};

StatusOr<KernelRows> computeKernelRows(const DocumentState& state);

// CSV with a header line; fields quoted where needed; times in seconds.
std::string kernelRowsCsv(const std::vector<KernelRow>& rows);

}  // namespace hloscope
