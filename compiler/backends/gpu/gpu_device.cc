#include "compiler/backends/gpu/gpu_device.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/backends/gpu/gpu_import.h"
#include "compiler/backends/gpu/gpu_kernel_emitter.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "core/text/hlo_printer.h"

extern char** environ;

namespace hloscope {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::string firstLine(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    const std::string prefix = "hloscope-gpu-runner: ";
    if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
    return line;
}

// A fresh directory under the temporary folder, removed with the object.
class TemporaryDirectory {
public:
    TemporaryDirectory() {
        std::error_code error;
        fs::path base = fs::temp_directory_path(error);
        if (error) base = "/tmp";
        std::string pattern = (base / "hloscope-gpu-XXXXXX").string();
        if (mkdtemp(pattern.data())) m_path = pattern;
    }
    ~TemporaryDirectory() {
        if (m_path.empty()) return;
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

constexpr size_t kPlanCacheSize = 8;

}  // namespace

std::string smForComputeCapability(const std::string& capability) {
    const size_t dot = capability.find('.');
    if (dot == std::string::npos) return "";
    const int major = std::atoi(capability.substr(0, dot).c_str());
    const int minor = std::atoi(capability.substr(dot + 1).c_str());
    const int version = major * 10 + minor;
    if (version >= 90) return "sm_90";
    if (version >= 89) return "sm_89";
    if (version >= 86) return "sm_86";
    if (version >= 80) return "sm_80";
    return "";
}

std::string findGpuRunner() {
    if (const char* env = std::getenv("HLOSCOPE_GPU_RUNNER"); env && *env) return env;
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (!error) {
        for (const fs::path& candidate :
             {self.parent_path() / "hloscope-gpu-runner",
              self.parent_path() / "../bin/hloscope-gpu-runner",
              self.parent_path() / "../app/hloscope-gpu-runner",
              self.parent_path() / "../../app/hloscope-gpu-runner"})
            if (fs::exists(candidate, error) && access(candidate.c_str(), X_OK) == 0)
                return fs::weakly_canonical(candidate, error).string();
    }
    if (const char* path = std::getenv("PATH")) {
        std::stringstream folders(path);
        std::string folder;
        while (std::getline(folders, folder, ':')) {
            const fs::path candidate = fs::path(folder) / "hloscope-gpu-runner";
            if (!folder.empty() && access(candidate.c_str(), X_OK) == 0) return candidate.string();
        }
    }
    return "";
}

StatusOr<ProcessOutput> runProgram(const std::vector<std::string>& argv) {
    if (argv.empty()) return internalError("runProgram: no program");
    TemporaryDirectory scratch;
    if (scratch.path().empty()) return internalError("cannot create a temporary directory");
    const std::string outPath = scratch.path() + "/out", errPath = scratch.path() + "/err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return invalidArgument("cannot start " + argv[0] + ": " + std::strerror(spawned));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return internalError("waiting for " + argv[0] + " failed");
    ProcessOutput output;
    output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    output.out = readFile(outPath);
    output.err = readFile(errPath);
    return output;
}

struct GpuDevice::Impl {
    std::once_flag probed;
    std::string runner;
    bool ok = false;
    std::string why;
    std::map<std::string, std::string> info;
    std::string sm = GpuKernelEmitter::defaultSm();

    std::mutex cacheMutex;
    struct Entry {
        size_t fingerprint;
        std::string text;
        std::shared_ptr<const GpuPlan> plan;
    };
    std::list<Entry> cache;

    void probe() {
        runner = findGpuRunner();
        if (runner.empty()) {
            why =
                "no GPU found: hloscope-gpu-runner is not installed beside hloscope-cli, on PATH "
                "or in "
                "$HLOSCOPE_GPU_RUNNER";
            return;
        }
        auto output = runProgram({runner, "--info"});
        if (!output.isOk()) {
            why = "no GPU found: " + output.status().message();
            return;
        }
        if (output->exitCode != 0) {
            why = firstLine(output->err.empty() ? output->out : output->err);
            if (why.rfind("no GPU found", 0) != 0) why = "no GPU found: " + why;
            return;
        }
        nlohmann::json j = nlohmann::json::parse(output->out, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            why = "no GPU found: hloscope-gpu-runner --info printed no device description";
            return;
        }
        if (auto device = j.find("device"); device != j.end() && device->is_object()) j = *device;
        for (auto it = j.begin(); it != j.end(); ++it)
            info[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
        const std::string sm_ = smForComputeCapability(info["compute_capability"]);
        if (sm_.empty()) {
            why = "the GPU (" + info["name"] + ", compute capability " +
                  info["compute_capability"] + ") is older than sm_80, which the GPU backend needs";
            return;
        }
        sm = sm_;
        ok = true;
    }

    // `text`: the module printed (the cache's key).
    StatusOr<std::shared_ptr<const GpuPlan>> planFor(const HloModule& module,
                                                     const std::string& text, bool* hit) {
        const size_t fingerprint = std::hash<std::string>{}(text);
        {
            std::lock_guard<std::mutex> lock(cacheMutex);
            for (auto it = cache.begin(); it != cache.end(); ++it)
                if (it->fingerprint == fingerprint && it->text == text) {
                    cache.splice(cache.begin(), cache, it);
                    *hit = true;
                    return cache.front().plan;
                }
        }
        *hit = false;
        GpuPlanOptions options;
        options.sm = sm;
        options.warmup = 2;
        options.repeat = 5;
        HLO_ASSIGN_OR_RETURN(GpuPlan plan, buildGpuPlan(module, options));
        auto shared = std::make_shared<const GpuPlan>(std::move(plan));
        std::lock_guard<std::mutex> lock(cacheMutex);
        cache.push_front(Entry{fingerprint, text, shared});
        while (cache.size() > kPlanCacheSize) cache.pop_back();
        return shared;
    }
};

GpuDevice::GpuDevice() : m_impl(std::make_unique<Impl>()) {}
GpuDevice::~GpuDevice() = default;

std::string GpuDevice::description() const {
    std::call_once(m_impl->probed, [this] { m_impl->probe(); });
    if (!m_impl->ok) return "GPU: " + m_impl->why;
    auto& info = m_impl->info;
    return "GPU: " + info["name"] + " (" + m_impl->sm + ", " + info["sm_count"] + " SMs, driver " +
           info["driver"] + ") through " + m_impl->runner;
}

bool GpuDevice::available(std::string* whyNot) const {
    std::call_once(m_impl->probed, [this] { m_impl->probe(); });
    if (whyNot) *whyNot = m_impl->ok ? std::string() : m_impl->why;
    return m_impl->ok;
}

std::map<std::string, std::string> GpuDevice::deviceInfo() const {
    std::call_once(m_impl->probed, [this] { m_impl->probe(); });
    return m_impl->info;
}

std::string GpuDevice::smVersion() const {
    std::call_once(m_impl->probed, [this] { m_impl->probe(); });
    return m_impl->sm;
}

StatusOr<ExecutionResult> GpuDevice::run(const HloModule& module, const std::vector<Literal>& args,
                                         const ExecutionOptions& options) const {
    std::string why;
    if (!available(&why)) return Status(StatusCode::kFailedPrecondition, why);
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");
    if (options.progress) options.progress(0, "generating PTX");
    bool hit = false;
    const std::string text = printModule(module);  // the cache's key, and the plan's module files
    HLO_ASSIGN_OR_RETURN(std::shared_ptr<const GpuPlan> plan, m_impl->planFor(module, text, &hit));
    TemporaryDirectory dir;
    if (dir.path().empty())
        return internalError("cannot create a temporary directory for the GPU plan");
    // A module of several devices runs its whole grid (every device's arena on this GPU), each
    // device on the same arguments, as the interpreter and the CPU backend run it.
    const int64_t devices = plan->devices();
    HLO_RETURN_IF_ERROR(
        devices == 1
            ? writeGpuPlan(*plan, args, text, text, dir.path())
            : writeGpuPlanOnDevices(
                  *plan, std::vector<std::vector<Literal>>(static_cast<size_t>(devices), args),
                  text, text, dir.path()));
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");
    if (options.progress) options.progress(0.3, "running on the GPU");
    HLO_ASSIGN_OR_RETURN(ProcessOutput output, runProgram({m_impl->runner, dir.path(), "--quiet"}));
    if (output.exitCode != 0)
        return Status(StatusCode::kInternal,
                      "hloscope-gpu-runner failed (exit " + std::to_string(output.exitCode) +
                          "): " + firstLine(output.err.empty() ? output.out : output.err));
    HLO_ASSIGN_OR_RETURN(GpuRunResults results, readGpuResults(*plan, dir.path()));
    ExecutionResult result;
    std::vector<std::vector<Literal>> byDevice = outputsByDevice(*plan, std::move(results.outputs));
    result.outputs = std::move(byDevice[0]);
    result.devices = devices;
    for (int64_t d = 1; d < devices; ++d)
        result.otherDeviceOutputs.push_back(std::move(byDevice[static_cast<size_t>(d)]));
    result.wallSeconds = results.medianMs * 1e-3;
    result.device = name();
    result.compileSeconds = hit ? 0.0 : plan->compileSeconds;
    result.peakBytes = plan->arenaBytes;
    result.kernelTimes = instructionTimesOf(*plan, results);
    result.instructionTimes = result.kernelTimes;
    if (options.progress) options.progress(1, "");
    return result;
}

StatusOr<PlanExportSummary> GpuDevice::exportPlan(const HloModule& module,
                                                  const HloModule& reference,
                                                  const PlanExportOptions& options) const {
    GpuPlanOptions planOptions;
    if (!options.target.empty()) planOptions.sm = options.target;
    planOptions.mode = options.mode;
    StatusOr<GpuPlan> plan = buildGpuPlan(module, planOptions);
    if (!plan.isOk())
        return plan.status().withContext(options.mode.empty() ? "GPU plan"
                                                              : options.mode + " GPU plan");
    std::vector<int64_t> seeds;
    const std::vector<Literal> args =
        syntheticArguments(*reference.entryComputation(), options.seed, seeds);
    HLO_RETURN_IF_ERROR(writeGpuPlan(*plan, args, printModule(reference), printModule(module),
                                     options.dir, seeds));
    PlanExportSummary summary;
    summary.steps = static_cast<int64_t>(plan->steps.size());
    summary.kernels = plan->kernels;
    return summary;
}

StatusOr<std::vector<ImportedPlanRun>> GpuDevice::importResults(const std::string& dir) const {
    HLO_ASSIGN_OR_RETURN(std::vector<ImportedGpuRun> runs, importGpuRuns(dir));
    std::vector<ImportedPlanRun> result;
    for (const ImportedGpuRun& run : runs) {
        ImportedPlanRun r;
        r.dir = run.dir;
        r.mode = run.files.plan.mode;
        const auto machine = run.results.device.find("name");
        if (machine != run.results.device.end()) r.machine = machine->second;
        r.wallSeconds = run.results.medianMs * 1e-3;
        r.maxAbsError = run.check.maxAbsError;
        r.passed = run.check.passed;
        r.detail = run.check.detail;
        r.sampled = run.sampled;
        r.peakBytes = run.files.plan.arenaBytes;
        r.compileSeconds = run.files.plan.compileSeconds;
        r.kernelTimes = run.measurement.kernelTimes;
        result.push_back(std::move(r));
    }
    return result;
}

void registerGpuBackend() {
    static std::once_flag once;
    std::call_once(once, [] { registerDevice(std::make_shared<GpuDevice>()); });
}

}  // namespace hloscope
