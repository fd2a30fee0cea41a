#include "compiler/registry/pass_registry.h"

#include <algorithm>

#include "compiler/buffers/buffer_assignment_pass.h"
#include "compiler/fusion/instruction_fusion.h"
#include "compiler/fusion/multi_output_fusion.h"
#include "compiler/fusion/row_fusion.h"
#include "compiler/layout/layout_assignment.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/annotation_remover.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/library_call_expander.h"
#include "compiler/passes/scan_expander.h"
#include "compiler/passes/triangular_solve_expander.h"
#include "compiler/passes/tuple_simplifier.h"
#include "compiler/passes/while_loop_invariant_code_motion.h"

namespace hloscope {
namespace {

template <typename Pass>
PassInfo entry() {
    return PassInfo{Pass::kName, Pass::description(), &Pass::create};
}

std::vector<PassInfo> makeRegistry() {
    std::vector<PassInfo> passes = {
        entry<AlgebraicSimplifierPass>(),
        entry<AnnotationRemoverPass>(),
        entry<BatchNormExpanderPass>(),
        entry<BufferAssignmentPass>(),
        entry<LayoutAssignmentPass>(),
        entry<CallInlinerPass>(),
        entry<ConstantFoldingPass>(),
        entry<CsePass>(),
        entry<DcePass>(),
        entry<FusionPass>(),
        entry<LibraryCallExpanderPass>(),
        entry<MultiOutputFusionPass>(),
        entry<RowFusionPass>(),
        entry<ScanExpanderPass>(),
        entry<TriangularSolveExpanderPass>(),
        entry<TupleSimplifierPass>(),
        entry<WhileLoopInvariantCodeMotionPass>(),
    };
    if (passes.size() > 1)
        std::sort(passes.begin(), passes.end(),
                  [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
    return passes;
}

}  // namespace

const std::vector<PassInfo>& passRegistry() {
    static const std::vector<PassInfo> registry = makeRegistry();
    return registry;
}

const PassInfo* findPass(std::string_view name) {
    for (const PassInfo& info : passRegistry())
        if (info.name == name) return &info;
    return nullptr;
}

StatusOr<std::unique_ptr<HloPass>> createPass(std::string_view name, const PassOptions& options) {
    const PassInfo* info = findPass(name);
    if (info == nullptr) {
        std::string known;
        for (const PassInfo& p : passRegistry()) known += (known.empty() ? "" : ", ") + std::string(p.name);
        return invalidArgument("unknown pass '" + std::string(name) + "' (known: " + known + ")");
    }
    auto pass = info->create(options);
    if (!pass.isOk()) return pass.status().withContext("pass " + std::string(name));
    return pass;
}

}  // namespace hloscope
