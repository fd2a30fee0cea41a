// LibraryCallExpanderPass ("library-call-expander"): replaces XLA:GPU's
// cuBLAS and cuDNN custom-calls (`__cublas$gemm`, `__cublas$lt$matmul`,
// `__cudnn$convForward`, `__cudnn$convBiasActivationForward`,
// `__cudnn$convBackwardInput`, `__cudnn$convBackwardFilter`), its
// block-scaled dots (`__op$block_scaled_dot`) and its CUB sorts
// (`xla.gpu.ext.cub_sort*`) by the plain
// HLO their backend_config describes (core/lowering/library_calls.h): a dot or a
// convolution, its scaling, bias, side input and activation, a stable sort,
// zeros for the workspace. A module dumped after XLA's GPU optimisations then compiles on
// every target, and fusion sees the epilogue as ordinary elementwise work.
// A call the expansion cannot express (an fp8 gemm, an unknown epilogue, no
// backend_config) is left as it is (statistic "left"); the backends name
// the reason when they meet the call.
//
// Rule: "expand-library-call". Ordering: first, before simplification, so
// that the passes after it see the dots and convolutions.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class LibraryCallExpanderPass : public HloPass {
public:
    static constexpr std::string_view kName = "library-call-expander";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
