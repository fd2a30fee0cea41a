// Named pipelines per target, in the order XLA's backends run the
// equivalent passes: inlining and simplification to a fixed point, the
// fusion passes, layout assignment for the target, a
// post-layout clean-up, and buffer assignment last.
//
//   cpu  XLA CPU: row-major layouts, dot operands row-major.
//   gpu  XLA GPU: row-major layouts, GEMM-friendly dot operand layouts,
//        feature-minor convolution layouts for 16-bit types.
//   tpu  XLA TPU: tiled layouts ({1,0:T(8,128)}, bf16 T(8,128)(2,1)), whose
//        padding layout assignment reports.
#pragma once

#include <string_view>
#include <vector>

#include "compiler/pipeline/pipeline.h"

namespace hloscope {

// "cpu", "gpu", "tpu".
const std::vector<std::string_view>& targetNames();
// The pipeline of a family ("cpu", "gpu", "tpu"), or of a hardware name
// ("h100", "a100", "tpu_v4", "tpu_v5e", "cpu" is the family) or target .json
// file: its family's pipeline with the fusion passes' cost model on that
// hardware (option hardware=).
StatusOr<Pipeline> targetPipeline(std::string_view targetOrHardware);

}  // namespace hloscope
