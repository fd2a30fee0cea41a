#include "compiler/passes/library_call_expander.h"

#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/lowering/library_calls.h"

namespace hloscope {

std::string_view LibraryCallExpanderPass::description() {
    return "Replaces XLA:GPU's cuBLAS and cuDNN custom-calls (__cublas$gemm, "
           "__cublas$lt$matmul, __cudnn$conv*) by the dot or convolution and the scaling, bias "
           "and activation their backend_config describes, and its CUB sorts by a stable sort, "
           "so that every target compiles them.";
}

StatusOr<std::unique_ptr<HloPass>> LibraryCallExpanderPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<LibraryCallExpanderPass>());
}

StatusOr<bool> LibraryCallExpanderPass::run(HloModule& module) {
    int64_t expanded = 0, left = 0;
    for (const auto& computation : module.computations()) {
        std::vector<HloInstruction*> calls;
        for (const auto& instruction : computation->instructions())
            if (isLibraryCall(*instruction)) calls.push_back(instruction.get());
        for (HloInstruction* call : calls) {
            RewriteEvent event{"expand-library-call", call->name(), call->uniqueId(), {}, -1};
            auto result = expandLibraryCall(*call);
            if (!result.isOk()) {
                if (result.status().code() == StatusCode::kInternal) return result.status();
                ++left;
                continue;
            }
            event.after = (*result)->name();
            event.afterId = (*result)->uniqueId();
            recordRewrite(std::move(event));
            ++expanded;
        }
    }
    setStatistic("expanded", expanded);
    setStatistic("left", left);
    return expanded > 0;
}

}  // namespace hloscope
