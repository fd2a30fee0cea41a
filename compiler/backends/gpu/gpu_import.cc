#include "compiler/backends/gpu/gpu_import.h"

#include <filesystem>
#include <map>

#include "compiler/buffers/buffer_assignment.h"
#include "core/text/hlo_parser.h"
#include "core/interpreter/multi_device.h"

namespace hloscope {

namespace {

void appendLeaves(const Literal& literal, std::vector<Literal>& out) {
    if (!literal.isTuple()) {
        out.push_back(literal);
        return;
    }
    for (const Literal& element : literal.tupleElements()) appendLeaves(element, out);
}

}  // namespace

StatusOr<ImportedGpuRun> importGpuRun(const std::string& dir) {
    ImportedGpuRun run;
    run.dir = dir;
    HLO_ASSIGN_OR_RETURN(run.files, readGpuPlan(dir));
    HLO_ASSIGN_OR_RETURN(run.results, readGpuResults(run.files.plan, dir));
    auto original = parseHloModule(run.files.moduleText);
    if (!original.isOk())
        return Status(original.status().code(),
                      dir + "/module.hlo: " + original.status().message());
    std::vector<Literal> outputs;  // the reference's, in the plan's output order
    const GpuPlan& plan = run.files.plan;
    if (plan.devices() > 1) {
        // Every device's result leaves, device by device (the plan's order).
        const DeviceGrid grid{plan.replicas, plan.partitions};
        auto reference = evaluateOnDevices(**original, grid, run.files.deviceInputs);
        if (!reference.isOk())
            return Status(reference.status().code(),
                          "reference interpreter: " + reference.status().message());
        for (const Literal& result : *reference) appendLeaves(result, outputs);
    } else {
        HLO_ASSIGN_OR_RETURN(ExecutionDevicePtr interpreter, findDevice("interpreter"));
        auto reference = interpreter->run(**original, run.files.inputs, {});
        if (!reference.isOk())
            return Status(reference.status().code(),
                          "reference interpreter: " + reference.status().message());
        outputs = std::move(reference->outputs);
    }
    std::vector<Literal> expected;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const int64_t stride =
            i < run.results.sampleStrides.size() ? run.results.sampleStrides[i] : 1;
        run.sampled = run.sampled || stride > 1;
        expected.push_back(sampleLiteral(outputs[i], stride));
    }
    run.check = checkOutputs(expected, run.results.outputs);
    auto prepared = parseHloModule(run.files.preparedText);
    if (!prepared.isOk())
        return Status(prepared.status().code(),
                      dir + "/prepared.hlo: " + prepared.status().message());
    ModeMeasurement& m = run.measurement;
    m.mode = run.files.plan.mode == "unfused" ? ExecutionMode::kUnfused : ExecutionMode::kFused;
    for (double ms : run.results.runMs) m.runSeconds.push_back(ms * 1e-3);
    if (m.runSeconds.empty()) m.runSeconds.push_back(run.results.medianMs * 1e-3);
    m.compileSeconds = run.files.plan.compileSeconds;
    m.kernels = run.files.plan.kernels;
    m.assignedPeakBytes = peakMemoryBytesWithOutputsHeld(**prepared);
    m.devicePeakBytes = run.files.plan.arenaBytes;
    m.kernelTimes = instructionTimesOf(run.files.plan, run.results);
    m.devices = run.files.plan.devices();
    m.check = run.check;
    m.module = std::shared_ptr<const HloModule>(std::move(*prepared));
    return run;
}

StatusOr<std::vector<ImportedGpuRun>> importGpuRuns(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<std::string> dirs;
    std::error_code error;
    if (fs::exists(fs::path(dir) / "plan.json", error)) {
        dirs.push_back(dir);
    } else {
        for (const char* mode : {"unfused", "fused"})
            if (fs::exists(fs::path(dir) / mode / "plan.json", error))
                dirs.push_back((fs::path(dir) / mode).string());
    }
    if (dirs.empty())
        return invalidArgument(
            dir +
            ": no plan.json here or in unfused/ or fused/ (write plans with run --emit-plan)");
    std::vector<ImportedGpuRun> runs;
    for (const std::string& d : dirs) {
        auto run = importGpuRun(d);
        if (!run.isOk()) return Status(run.status().code(), d + ": " + run.status().message());
        runs.push_back(std::move(*run));
    }
    return runs;
}

std::string gpuTargetForDevice(const std::string& deviceName) {
    if (deviceName.find("A100") != std::string::npos) return "a100";
    if (deviceName.find("H200") != std::string::npos) return "h200";
    return "h100";
}

}  // namespace hloscope
