// Running a plan on the GPU: module load, one arena, uploads, warm-up runs, timed runs (whole
// sequence, then step by step), outputs and results.json.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cublas.h"
#include "gpu_synthetic.h"
#include "device.h"
#include "plan.h"
#include "runner.h"

namespace hloscope::gpu {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// --- Shared helpers ------------------------------------------------------------------------------

void printError(const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", kRunnerName, message.c_str());
}

int reportNoGpu(const std::string& reason) {
    std::string line = reason;
    std::replace(line.begin(), line.end(), '\n', ' ');  // exactly one line
    printError("no GPU found: " + line);
    return kExitNoGpu;
}

Summary summarize(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back()};
}

void writeFileReplacing(const std::string& path, const std::string& text) {
    // A path that is there and not a regular file (/dev/stdout) is written in place.
    struct stat info {};
    const bool special = ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
    const std::string temp = special ? path : path + ".tmp" + std::to_string(::getpid());
    auto fail = [&](int error, int fd) {
        if (fd >= 0) ::close(fd);
        if (!special) ::unlink(temp.c_str());
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(error));
    };
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) fail(errno, -1);
    for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(n < 0 ? errno : EIO, fd);
        done += static_cast<size_t>(n);
    }
    if (special) {
        ::close(fd);
        return;
    }
    if (::fsync(fd) != 0) fail(errno, fd);
    if (::close(fd) != 0) fail(errno, -1);
    if (::rename(temp.c_str(), path.c_str()) != 0) fail(errno, -1);
}

namespace {

// Writes `bytes` bytes to `path`; throws std::runtime_error naming it.
void writeBinary(const fs::path& path, const void* data, size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), std::streamsize(bytes));
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

// Reads exactly `bytes` bytes of `path`; throws std::runtime_error naming it.
std::vector<char> readBinary(const std::string& path, uint64_t bytes) {
    std::vector<char> data(bytes);
    std::ifstream in(path, std::ios::binary);
    in.read(data.data(), std::streamsize(bytes));
    if (!in || uint64_t(in.gcount()) != bytes) {
        throw std::runtime_error("cannot read " + std::to_string(bytes) + " bytes of " + path);
    }
    return data;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// A kernel launch ready to go: the function and its parameter block (one device pointer per
// argument; `params` points into `values`, whose heap storage moves with the vector).
struct PreparedLaunch {
    CUfunction function = nullptr;
    const KernelLaunch* launch = nullptr;
    std::vector<CUdeviceptr> values;
    std::vector<void*> params;
};

// Per-step state: the launch (kernel steps, gemm fallbacks) and whether a gemm uses cuBLAS.
struct PreparedStep {
    PreparedLaunch kernel;
    bool useCublas = false;
    std::string cublasError;  // why a gemm step fell back to its kernel, if it did
};

// Executes one validated plan on one GPU. Members are declared in the order they must be
// created; destruction runs backwards (cuBLAS, arena, module, then the stream).
class PlanExecutor {
public:
    PlanExecutor(const Plan& plan, const GpuContext& gpu, const RunOptions& options)
        : m_plan(plan), m_gpu(gpu), m_api(gpu.api()), m_options(options), m_stream(m_api) {}

    // Loads the module, allocates and fills the arena, sets up cuBLAS.
    void prepare();
    // `count` untimed runs; the first synchronises after every step so errors name the step.
    void warmup(int count);
    // Per-run milliseconds, events around each whole sequence.
    std::vector<double> timeRuns(int count);
    // [step][run] milliseconds, events around every step (a step inside a while loop: its
    // executions in the run summed).
    std::vector<std::vector<double>> timeSteps(int count);
    // A jump step's jumps in the last run (0 for other steps).
    uint64_t jumps(size_t step) const { return m_jumps[step]; }
    // Copies every output to DIR/outputs/<index>.bin; their results.json entries.
    ojson writeOutputs(const fs::path& dir);

    double moduleLoadMs() const { return m_moduleLoadMs; }
    const std::string& cublasLibrary() const { return m_cublasLibrary; }
    const PreparedStep& prepared(size_t step) const { return m_steps[step]; }

private:
    void loadModule();
    void uploadArena();
    void setUpCublas();
    PreparedLaunch prepareLaunch(const KernelLaunch& launch, uint64_t device,
                                 const std::string& where);
    void runSequence(bool checkEachStep, const std::string& phase);
    // Enqueues step `index` (a branch first synchronises and reads its predicate back); the
    // index of the step to run next.
    size_t runStep(size_t index);
    void resetJumps() {
        std::fill(m_jumps.begin(), m_jumps.end(), 0);
        std::fill(m_loopJumps.begin(), m_loopJumps.end(), 0);
    }
    void launch(const PreparedLaunch& prepared);
    // Buffer `buffer` in device `device`'s arena (every device's arena is laid out alike).
    CUdeviceptr address(int64_t buffer, uint64_t device) const {
        return m_arena->get() + device * m_plan.arenaBytes + m_plan.buffer(buffer).offset;
    }
    // A branch's or switch's predicate (`bytes` bytes), the same on every device.
    int32_t readPredicate(const PlanStep& step, uint64_t bytes);

    const Plan& m_plan;
    const GpuContext& m_gpu;
    const CudaDriver& m_api;
    const RunOptions& m_options;
    Stream m_stream;
    std::unique_ptr<Module> m_module;
    std::unique_ptr<DeviceBuffer> m_arena;
    std::unique_ptr<Cublas> m_cublas;
    std::map<std::string, CUfunction> m_functions;
    std::vector<PreparedStep> m_steps;
    std::vector<uint64_t> m_jumps;      // per step, this run
    std::vector<uint64_t> m_loopJumps;  // per step, this execution of its loop
    double m_moduleLoadMs = 0;
    std::string m_cublasLibrary;  // empty: not used
};

void PlanExecutor::prepare() {
    loadModule();
    // One allocation for every buffer (at least one byte, so a plan of no buffers still runs).
    m_arena = std::make_unique<DeviceBuffer>(
        m_api, std::max<uint64_t>(m_plan.arenaBytes * m_plan.devices, 1));
    uploadArena();
    setUpCublas();
    m_steps.resize(m_plan.steps.size());
    m_jumps.assign(m_plan.steps.size(), 0);
    m_loopJumps.assign(m_plan.steps.size(), 0);
    for (size_t i = 0; i < m_plan.steps.size(); ++i) {
        const PlanStep& step = m_plan.steps[i];
        PreparedStep& prepared = m_steps[i];
        if (step.kind == StepKind::Kernel) {
            prepared.kernel = prepareLaunch(step.kernel, step.device, step.where);
        } else if (step.kind == StepKind::Gemm) {
            prepared.useCublas = m_cublas && step.gemm.type == "f32";
            if (step.gemm.fallback) {
                prepared.kernel =
                    prepareLaunch(*step.gemm.fallback, step.device, step.where + ": fallback");
            } else if (!prepared.useCublas) {
                throw CudaError(step.where +
                                ": cuBLAS is not available and the step has no "
                                "fallback kernel");
            }
        }
    }
}

// cuModuleLoadDataEx of the plan's PTX (timed), when the plan has one.
void PlanExecutor::loadModule() {
    if (m_plan.ptxText.empty()) return;
    auto start = std::chrono::steady_clock::now();
    try {
        m_module = std::make_unique<Module>(m_api, m_plan.ptxText);
    } catch (const CudaError& e) {
        const DeviceInfo& info = m_gpu.info();
        std::string target = m_plan.sm.empty() ? "" : "the plan targets " + m_plan.sm + ", ";
        throw CudaError(m_plan.ptxFile + " (" + target + "the device is sm_" +
                        std::to_string(info.ccMajor) + std::to_string(info.ccMinor) +
                        "): " + e.what());
    }
    m_moduleLoadMs = millisecondsSince(start);
}

// Zeroes the arena, then copies every input and constant file to its buffer.
void PlanExecutor::uploadArena() {
    check(m_api, m_api.cuMemsetD8Async(m_arena->get(), 0, m_arena->bytes(), m_stream.get()),
          "zeroing the arena: cuMemsetD8Async");
    m_stream.synchronize("zeroing the arena");
    for (const auto* list : {&m_plan.inputs, &m_plan.constants}) {
        for (const PlanUpload& upload : *list) {
            std::vector<char> data;
            if (upload.generateSeed >= 0) {
                data.resize(upload.bytes);
                hloscope::fillSynthetic(reinterpret_cast<float*>(data.data()), upload.bytes / 4,
                                        static_cast<uint64_t>(upload.generateSeed));
            } else {
                data = readBinary(upload.path, upload.bytes);
            }
            if (data.empty()) continue;
            // An input goes to its device's arena, a constant to every arena.
            for (uint64_t device = 0; device < m_plan.devices; ++device) {
                if (upload.device >= 0 && uint64_t(upload.device) != device) continue;
                check(m_api,
                      m_api.cuMemcpyHtoD(address(upload.buffer, device), data.data(), data.size()),
                      upload.where + " (" + upload.file + "): cuMemcpyHtoD");
            }
        }
    }
}

// Loads cuBLAS when an f32 gemm step could use it and --no-cublas was not given.
void PlanExecutor::setUpCublas() {
    bool wanted = m_options.useCublas &&
                  std::any_of(m_plan.steps.begin(), m_plan.steps.end(), [](const PlanStep& s) {
                      return s.kind == StepKind::Gemm && s.gemm.type == "f32";
                  });
    if (!wanted) return;
    std::string error;
    m_cublas = Cublas::create(m_stream.get(), &error);
    if (m_cublas) {
        m_cublasLibrary = m_cublas->libraryName();
    } else if (!m_options.quiet) {
        printError("note: " + error + "; gemm steps run their fallback kernels");
    }
}

PreparedLaunch PlanExecutor::prepareLaunch(const KernelLaunch& launch, uint64_t device,
                                           const std::string& where) {
    PreparedLaunch prepared;
    prepared.launch = &launch;
    auto it = m_functions.find(launch.entry);
    if (it == m_functions.end()) {
        try {
            it = m_functions.emplace(launch.entry, m_module->function(launch.entry)).first;
        } catch (const CudaError& e) {
            throw CudaError(where + ": " + e.what());
        }
    }
    prepared.function = it->second;
    // Above 48 KiB of dynamic shared memory a kernel must opt in.
    if (launch.sharedBytes > 48 * 1024) {
        check(m_api,
              m_api.cuFuncSetAttribute(prepared.function,
                                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       int(launch.sharedBytes)),
              where + ": cuFuncSetAttribute(max dynamic shared memory " +
                  std::to_string(launch.sharedBytes) + ")");
    }
    for (size_t i = 0; i < launch.args.size(); ++i)
        prepared.values.push_back(
            address(launch.args[i], i < launch.argDevices.size() ? launch.argDevices[i] : device));
    for (CUdeviceptr& value : prepared.values) prepared.params.push_back(&value);
    return prepared;
}

void PlanExecutor::launch(const PreparedLaunch& p) {
    const KernelLaunch& k = *p.launch;
    check(m_api,
          m_api.cuLaunchKernel(p.function, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                               k.block[2], k.sharedBytes, m_stream.get(),
                               const_cast<void**>(p.params.data()), nullptr),
          "cuLaunchKernel(" + k.entry + ")");
}

// Enqueues step `index`. A gemm whose cuBLAS call fails switches to its fallback kernel for
// this and every later run.
size_t PlanExecutor::runStep(size_t index) {
    const PlanStep& step = m_plan.steps[index];
    PreparedStep& prepared = m_steps[index];
    try {
        switch (step.kind) {
            case StepKind::Kernel:
                launch(prepared.kernel);
                break;
            case StepKind::Copy:
                check(m_api,
                      m_api.cuMemcpyDtoDAsync(address(step.dst, step.device),
                                              address(step.src, step.srcDevice), step.bytes,
                                              m_stream.get()),
                      "cuMemcpyDtoDAsync");
                break;
            case StepKind::Memset:
                check(m_api,
                      m_api.cuMemsetD8Async(address(step.buffer, step.device), step.value,
                                            step.bytes, m_stream.get()),
                      "cuMemsetD8Async");
                break;
            case StepKind::Gemm: {
                const GemmOp& g = step.gemm;
                if (prepared.useCublas) {
                    GemmShape shape{g.batch, g.m, g.n, g.k, g.lhsTransposed, g.rhsTransposed};
                    std::string error =
                        m_cublas->sgemm(shape, address(g.lhs, step.device),
                                        address(g.rhs, step.device), address(g.out, step.device));
                    if (error.empty()) break;
                    if (!g.fallback)
                        throw CudaError("cuBLAS SGEMM: " + error + " (and no fallback kernel)");
                    prepared.useCublas = false;
                    prepared.cublasError = error;
                    if (!m_options.quiet) {
                        printError("note: " + step.where + ": cuBLAS SGEMM failed (" + error +
                                   "); running the fallback kernel");
                    }
                }
                launch(prepared.kernel);
                break;
            }
            case StepKind::Branch: {
                // The condition's steps are queued before it: wait for them, read the pred back.
                m_stream.synchronize("the steps before it");
                const int32_t predicate = readPredicate(step, 1);
                if (predicate != 0) break;
                // Leaving the loop: its jump (the step before) counts afresh next time.
                if (step.target > 0) m_loopJumps[step.target - 1] = 0;
                return step.target;
            }
            case StepKind::Switch: {
                m_stream.synchronize("the steps before it");
                const int32_t selector = readPredicate(step, step.indexIsPred ? 1 : 4);
                const uint64_t branches = step.targets.size();
                uint64_t branch = branches - 1;
                if (step.indexIsPred)
                    branch = (selector & 0xff) != 0 ? 0 : 1;
                else if (selector >= 0 && uint64_t(selector) < branches)
                    branch = uint64_t(selector);
                return step.targets[branch];
            }
            case StepKind::Jump:
                ++m_jumps[index];
                if (step.target > index)
                    return step.target;  // forward: past a conditional's branches
                if (m_loopJumps[index] >= step.limit) {
                    throw CudaError("the loop did not end after " + std::to_string(step.limit) +
                                    " iterations (the plan's \"limit\")");
                }
                ++m_loopJumps[index];
                return step.target;
        }
    } catch (const CudaError& e) {
        throw CudaError(step.where + ": " + e.what());
    }
    return index + 1;
}

int32_t PlanExecutor::readPredicate(const PlanStep& step, uint64_t bytes) {
    int32_t first = 0;
    for (uint64_t device = 0; device < m_plan.devices; ++device) {
        int32_t value = 0;
        check(m_api, m_api.cuMemcpyDtoH(&value, address(step.buffer, device), bytes),
              "reading the predicate back: cuMemcpyDtoH");
        if (device == 0) {
            first = value;
        } else if (value != first) {
            throw CudaError("device " + std::to_string(device) +
                            " decides otherwise than device 0 (" + std::to_string(value) +
                            " against " + std::to_string(first) +
                            "): the devices would not meet at the same collectives");
        }
    }
    return first;
}

// One run of every step in order. With `checkEachStep` the stream is synchronised after every
// step, so an error in a kernel is reported against that step.
void PlanExecutor::runSequence(bool checkEachStep, const std::string& phase) {
    resetJumps();
    for (size_t i = 0; i < m_plan.steps.size();) {
        const size_t next = runStep(i);
        if (checkEachStep) m_stream.synchronize(m_plan.steps[i].where + " (" + phase + ")");
        i = next;
    }
}

void PlanExecutor::warmup(int count) {
    for (int run = 0; run < count; ++run) runSequence(run == 0, "warm-up run 1");
    m_stream.synchronize("after the warm-up runs");
}

std::vector<double> PlanExecutor::timeRuns(int count) {
    // Event i marks the start of run i and the end of run i - 1: back-to-back runs.
    std::vector<Event> marks;
    marks.reserve(size_t(count) + 1);
    for (int i = 0; i <= count; ++i) marks.emplace_back(m_api);
    marks[0].record(m_stream);
    for (int run = 0; run < count; ++run) {
        runSequence(false, "");
        marks[run + 1].record(m_stream);
    }
    const std::string hint = m_options.warmup.value_or(m_plan.warmup) == 0
                                 ? " (run with --warmup 1 or more to find the failing step)"
                                 : "";
    m_stream.synchronize("timed runs" + hint);
    std::vector<double> ms;
    for (int run = 0; run < count; ++run) ms.push_back(marks[run + 1].elapsedSince(marks[run]));
    return ms;
}

// A step inside a loop runs any number of times in a run: an event after every step executed,
// the elapsed times added to the step's total whenever the stream is synchronised (at the end
// of the run, and every `pending` steps when a loop runs more steps than the plan has, at
// least 4,096; a branch synchronises too, so the time it takes is the round trip of its
// predicate). A plan without loops synchronises once per run.
std::vector<std::vector<double>> PlanExecutor::timeSteps(int count) {
    const size_t steps = m_plan.steps.size();
    const size_t capacity = std::max<size_t>(steps, 4096);
    std::vector<Event> marks;
    marks.reserve(capacity + 1);
    for (size_t i = 0; i <= capacity; ++i) marks.emplace_back(m_api);
    std::vector<std::vector<double>> ms(steps);
    for (int run = 0; run < count; ++run) {
        const std::string what = "per-step timed run " + std::to_string(run + 1);
        std::vector<double> total(steps, 0.0);
        std::vector<size_t> pending;  // pending[k] ran between marks[k] and marks[k + 1]
        auto flush = [&] {
            m_stream.synchronize(what);
            for (size_t k = 0; k < pending.size(); ++k)
                total[pending[k]] += marks[k + 1].elapsedSince(marks[k]);
            pending.clear();
            marks[0].record(m_stream);
        };
        resetJumps();
        marks[0].record(m_stream);
        for (size_t i = 0; i < steps;) {
            const size_t next = runStep(i);
            pending.push_back(i);
            marks[pending.size()].record(m_stream);
            if (pending.size() == capacity) flush();
            i = next;
        }
        flush();
        for (size_t i = 0; i < steps; ++i) ms[i].push_back(total[i]);
    }
    return ms;
}

ojson PlanExecutor::writeOutputs(const fs::path& dir) {
    fs::create_directories(dir / "outputs");
    ojson list = ojson::array();
    for (const PlanOutput& output : m_plan.outputs) {
        std::vector<char> data(output.bytes);
        std::string file = "outputs/" + std::to_string(output.index) + ".bin";
        if (!data.empty()) {
            check(
                m_api,
                m_api.cuMemcpyDtoH(data.data(), address(output.buffer, output.device), data.size()),
                "copying output " + std::to_string(output.index) + " back: cuMemcpyDtoH");
        }
        uint64_t stride = 1;
        if (m_options.sample > 0 && output.elements > m_options.sample) {
            stride = (output.elements + m_options.sample - 1) / m_options.sample;
            const uint64_t width = output.bytes / output.elements;
            const uint64_t kept = (output.elements + stride - 1) / stride;
            for (uint64_t i = 0; i < kept; ++i)
                std::copy_n(data.data() + i * stride * width, width, data.data() + i * width);
            data.resize(kept * width);
        }
        writeBinary(dir / file, data.data(), data.size());
        ojson entry = {{"index", output.index}, {"file", file}, {"bytes", data.size()}};
        if (stride > 1) entry["sample_stride"] = stride;
        list.push_back(entry);
    }
    return list;
}

// Everything but the device section and the outputs, from the timings.
ojson makeResults(const Plan& plan, const PlanExecutor& executor, const GpuContext& gpu, int warmup,
                  const std::vector<double>& runMs,
                  const std::vector<std::vector<double>>& stepMs) {
    ojson results;
    results["format"] = "hloscope-gpu-results";
    results["version"] = kPlanFormatVersion;
    results["module"] = plan.module;
    results["mode"] = plan.mode;
    results["plan"] = plan.dir;
    results["device"] = gpu.info().toJson();
    results["cublas"] =
        executor.cublasLibrary().empty() ? ojson(nullptr) : ojson(executor.cublasLibrary());
    results["module_load_ms"] = executor.moduleLoadMs();
    results["warmup"] = warmup;
    results["repeat"] = runMs.size();
    results["run_ms"] = runMs;
    Summary run = summarize(runMs);
    results["median_ms"] = run.median;
    results["min_ms"] = run.min;
    results["max_ms"] = run.max;
    ojson steps = ojson::array();
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        const PlanStep& step = plan.steps[i];
        const PreparedStep& prepared = executor.prepared(i);
        const char* used = step.kind == StepKind::Gemm ? (prepared.useCublas ? "cublas" : "kernel")
                                                       : stepKindName(step.kind);
        Summary s = summarize(stepMs[i]);
        ojson entry = {{"name", step.name}, {"kind", stepKindName(step.kind)},
                       {"used", used},      {"median_ms", s.median},
                       {"min_ms", s.min},   {"max_ms", s.max}};
        if (!prepared.cublasError.empty()) entry["cublas_error"] = prepared.cublasError;
        if (step.kind == StepKind::Jump) entry["iterations"] = executor.jumps(i);
        steps.push_back(entry);
    }
    results["steps"] = steps;
    return results;
}

// Fails (exit 1) before the GPU is touched when --no-cublas leaves a gemm step nothing to run.
bool checkRunnable(const Plan& plan, const RunOptions& options, std::string* error) {
    if (options.useCublas) return true;
    for (const PlanStep& step : plan.steps) {
        if (step.kind == StepKind::Gemm && !step.gemm.fallback) {
            *error = plan.planFile + ": " + step.where +
                     ": --no-cublas, and the step has no fallback kernel";
            return false;
        }
    }
    return true;
}

}  // namespace

int runPlanCommand(const RunOptions& options) {
    Plan plan;
    std::string error;
    if (!loadPlan(options.planDir, &plan, &error) || !checkRunnable(plan, options, &error)) {
        printError(error);
        return kExitError;
    }
    const int warmup = options.warmup.value_or(plan.warmup);
    const int repeat = options.repeat.value_or(plan.repeat);
    const fs::path outDir =
        options.outputDir.empty() ? fs::path(options.planDir) : fs::path(options.outputDir);
    std::error_code ignored;
    fs::remove(outDir / "results.json", ignored);  // never leave a stale result behind a failure

    GpuContext::Opened opened = GpuContext::open(options.device);
    if (!opened.context) {
        if (opened.noGpu) return reportNoGpu(opened.error);
        printError(opened.error);
        return kExitError;
    }
    const GpuContext& gpu = *opened.context;
    try {
        PlanExecutor executor(plan, gpu, options);
        executor.prepare();
        executor.warmup(warmup);
        std::vector<double> runMs = executor.timeRuns(repeat);
        std::vector<std::vector<double>> stepMs = executor.timeSteps(repeat);
        ojson results = makeResults(plan, executor, gpu, warmup, runMs, stepMs);
        results["outputs"] = executor.writeOutputs(outDir);
        writeFileReplacing((outDir / "results.json").string(), results.dump(2) + "\n");
        if (!options.quiet) {
            Summary s = summarize(runMs);
            std::printf("%s (%s) on %s: median %.4f ms (min %.4f, max %.4f) over %d runs\n",
                        plan.module.c_str(), plan.mode.c_str(), gpu.info().name.c_str(), s.median,
                        s.min, s.max, repeat);
            std::printf("results: %s\n", (outDir / "results.json").string().c_str());
        }
    } catch (const std::exception& e) {  // CudaError, I/O errors
        printError(plan.dir + ": " + e.what());
        return kExitError;
    }
    return kExitOk;
}

}  // namespace hloscope::gpu
