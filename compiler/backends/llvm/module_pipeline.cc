#include "compiler/backends/llvm/module_pipeline.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

namespace hloscope::llvm_codegen {

Status verifyGenerated(const llvm::Module& module, std::string_view what) {
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (!llvm::verifyModule(module, &stream)) return Status::ok();
    stream.flush();
    return internalError("generated " + std::string(what) + " module '" + module.getName().str() +
                         "' is invalid: " + problems.substr(0, 2000));
}

void optimiseModule(llvm::Module& module, llvm::TargetMachine* targetMachine,
                    const llvm::PipelineTuningOptions& tuning) {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder builder(targetMachine, tuning);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    llvm::ModulePassManager pipeline =
        builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    pipeline.run(module, modules);
}

}  // namespace hloscope::llvm_codegen
