// Reading and validating plan.json. Everything that can be checked without a GPU is checked
// here, so that a bad plan fails with a message naming the field rather than with a CUDA error
// (or a crash) halfway through a run.
#include "plan.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hloscope::gpu {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* stepKindName(StepKind kind) {
    switch (kind) {
        case StepKind::Kernel:
            return "kernel";
        case StepKind::Copy:
            return "copy";
        case StepKind::Memset:
            return "memset";
        case StepKind::Gemm:
            return "gemm";
        case StepKind::Branch:
            return "branch";
        case StepKind::Jump:
            return "jump";
        case StepKind::Switch:
            return "switch";
    }
    return "?";
}

namespace {

// A validation failure; the message is "<where>: <what>" without the file name.
class PlanError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A JSON value for messages: its text, shortened.
std::string shown(const json& value) {
    std::string text = value.dump();
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// Typed access to the members of one JSON object; every failure names the object's location
// (`where`, e.g. "steps[3] (fusion.2)") and the member.
class Fields {
public:
    Fields(const json& object, std::string where) : m_object(object), m_where(std::move(where)) {
        if (!m_object.is_object()) {
            fail(std::string(m_where.empty() ? "the plan" : "it") + " must be a JSON object, not " +
                 shown(m_object));
        }
    }

    const std::string& where() const { return m_where; }

    [[noreturn]] void fail(const std::string& what) const {
        throw PlanError(m_where.empty() ? what : m_where + ": " + what);
    }

    const json* find(const char* key) const {
        auto it = m_object.find(key);
        return it == m_object.end() ? nullptr : &*it;
    }

    const json& require(const char* key) const {
        const json* value = find(key);
        if (!value) fail(std::string("\"") + key + "\" is missing");
        return *value;
    }

    // A non-negative integer no larger than `max`.
    uint64_t count(const char* key, uint64_t max = UINT64_MAX) const {
        return countValue(require(key), key, max);
    }
    uint64_t count(const char* key, uint64_t fallback, uint64_t max) const {
        const json* value = find(key);
        return value ? countValue(*value, key, max) : fallback;
    }

    // Any integer (buffer ids, output indices).
    int64_t integer(const char* key) const {
        const json& value = require(key);
        if (value.is_number_unsigned() && value.get<uint64_t>() <= uint64_t(INT64_MAX)) {
            return value.get<int64_t>();
        }
        if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<int64_t>();
        fail(std::string("\"") + key + "\" must be an integer, not " + shown(value));
    }

    std::string text(const char* key) const {
        const json& value = require(key);
        if (!value.is_string())
            fail(std::string("\"") + key + "\" must be a string, not " + shown(value));
        return value.get<std::string>();
    }
    std::string text(const char* key, const std::string& fallback) const {
        return find(key) ? text(key) : fallback;
    }

    bool flag(const char* key, bool fallback) const {
        const json* value = find(key);
        if (!value) return fallback;
        if (!value->is_boolean())
            fail(std::string("\"") + key + "\" must be true or false, not " + shown(*value));
        return value->get<bool>();
    }

    const json& array(const char* key) const {
        const json& value = require(key);
        if (!value.is_array())
            fail(std::string("\"") + key + "\" must be an array, not " + shown(value));
        return value;
    }
    // An optional array: empty when absent.
    const json& arrayOrEmpty(const char* key) const {
        static const json kEmpty = json::array();
        return find(key) ? array(key) : kEmpty;
    }

private:
    uint64_t countValue(const json& value, const char* key, uint64_t max) const {
        if (value.is_number_unsigned() && value.get<uint64_t>() <= max)
            return value.get<uint64_t>();
        std::string range = max == UINT64_MAX ? "a non-negative integer"
                                              : "an integer from 0 to " + std::to_string(max);
        fail(std::string("\"") + key + "\" must be " + range + ", not " + shown(value));
    }

    const json& m_object;
    std::string m_where;
};

// Bytes per element of the HLO types a gemm step may name; 0 when unknown (no size check).
uint64_t elementBytes(const std::string& type) {
    static const std::map<std::string, uint64_t> kSizes = {
        {"pred", 1}, {"s8", 1},  {"u8", 1},   {"f8e4m3fn", 1}, {"f8e5m2", 1}, {"s16", 2},
        {"u16", 2},  {"f16", 2}, {"bf16", 2}, {"s32", 4},      {"u32", 4},    {"f32", 4},
        {"s64", 8},  {"u64", 8}, {"f64", 8},  {"c64", 8},      {"c128", 16}};
    auto it = kSizes.find(type);
    return it == kSizes.end() ? 0 : it->second;
}

// a * b * c, or UINT64_MAX when that overflows.
uint64_t product(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t ab = 0, abc = 0;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return UINT64_MAX;
    return abc;
}

std::string describeStep(size_t index, const std::string& name) {
    std::string where = "steps[" + std::to_string(index) + "]";
    return name.empty() ? where : where + " (" + name + ")";
}

// Builds a Plan from the parsed JSON, checking as it goes.
class PlanReader {
public:
    explicit PlanReader(Plan& plan) : m_plan(plan) {}

    void read(const json& root) {
        Fields top(root, "");
        readHeader(top);
        readBuffers(top.array("buffers"));
        m_plan.inputs = readUploads(top.arrayOrEmpty("inputs"), "inputs", "parameter");
        m_plan.constants = readUploads(top.arrayOrEmpty("constants"), "constants", nullptr);
        readOutputs(top.arrayOrEmpty("outputs"));
        const json& steps = top.array("steps");
        for (size_t i = 0; i < steps.size(); ++i) m_plan.steps.push_back(readStep(steps[i], i));
        checkTargets(steps);
        m_plan.warmup = int(top.count("warmup", 3, 1000000));
        m_plan.repeat = int(top.count("repeat", 20, 1000000));
        if (m_plan.repeat < 1) top.fail("\"repeat\" must be at least 1");
        readPtx(top);
    }

private:
    void readHeader(const Fields& top) {
        std::string format = top.text("format");
        if (format != "hloscope-gpu-plan") {
            top.fail("\"format\" is \"" + format + "\", expected \"hloscope-gpu-plan\"");
        }
        uint64_t version = top.count("version");
        if (version != kPlanFormatVersion) {
            top.fail("\"version\" is " + std::to_string(version) + "; this runner reads version " +
                     std::to_string(kPlanFormatVersion));
        }
        m_plan.module = top.text("module");
        m_plan.mode = top.text("mode");
        if (m_plan.mode != "fused" && m_plan.mode != "unfused") {
            top.fail("\"mode\" must be \"fused\" or \"unfused\", not \"" + m_plan.mode + "\"");
        }
        m_plan.sm = top.text("sm", "");
        m_plan.ptxFile = top.text("ptx", "");
        m_plan.arenaBytes = top.count("arena_bytes");
        const uint64_t replicas = top.count("replicas", 1, 256);
        const uint64_t partitions = top.count("partitions", 1, 256);
        m_plan.devices = replicas * partitions;
        if (m_plan.devices < 1 || m_plan.devices > 256)
            top.fail("\"replicas\" x \"partitions\" must be 1 to 256 devices");
        if (product(m_plan.arenaBytes, m_plan.devices, 1) == UINT64_MAX)
            top.fail("the arenas' size overflows");
    }

    // A device index: member `key` of `f`, `fallback` when absent.
    uint64_t deviceRef(const Fields& f, const char* key, uint64_t fallback) const {
        const uint64_t device = f.count(key, fallback, UINT64_MAX);
        if (device >= m_plan.devices)
            f.fail(std::string("\"") + key + "\" is device " + std::to_string(device) +
                   "; the plan runs on " + std::to_string(m_plan.devices));
        return device;
    }

    void readBuffers(const json& buffers) {
        for (size_t i = 0; i < buffers.size(); ++i) {
            Fields f(buffers[i], "buffers[" + std::to_string(i) + "]");
            PlanBuffer b;
            b.id = f.integer("id");
            b.offset = f.count("offset");
            b.bytes = f.count("bytes");
            b.name = f.text("name", "");
            if (b.offset % 256 != 0) {
                f.fail("offset " + std::to_string(b.offset) + " is not 256-byte aligned");
            }
            if (b.offset > m_plan.arenaBytes || b.bytes > m_plan.arenaBytes - b.offset) {
                f.fail("buffer " + std::to_string(b.id) + " (offset " + std::to_string(b.offset) +
                       ", " + std::to_string(b.bytes) + " bytes) ends outside the arena of " +
                       std::to_string(m_plan.arenaBytes) + " bytes");
            }
            if (!m_plan.buffers.emplace(b.id, b).second) {
                f.fail("buffer id " + std::to_string(b.id) + " is defined twice");
            }
        }
    }

    // The buffer that member `key` of `f` refers to; fails when the plan does not define it.
    const PlanBuffer& bufferRef(const Fields& f, const char* key) const {
        int64_t id = f.integer(key);
        auto it = m_plan.buffers.find(id);
        if (it == m_plan.buffers.end()) {
            f.fail(std::string("\"") + key + "\" refers to buffer " + std::to_string(id) +
                   ", which the plan does not define");
        }
        return it->second;
    }

    // Fails unless `bytes` fit in `buffer`.
    static void checkFits(const Fields& f, const std::string& what, uint64_t bytes,
                          const PlanBuffer& buffer) {
        if (bytes > buffer.bytes) {
            f.fail(what + " of " + std::to_string(bytes) + " bytes does not fit buffer " +
                   std::to_string(buffer.id) + " (" + std::to_string(buffer.bytes) + " bytes)");
        }
    }

    // Inputs and constants: a buffer, a file of exactly `bytes` bytes.
    std::vector<PlanUpload> readUploads(const json& list, const std::string& section,
                                        const char* indexKey) {
        std::vector<PlanUpload> uploads;
        for (size_t i = 0; i < list.size(); ++i) {
            Fields f(list[i], section + "[" + std::to_string(i) + "]");
            PlanUpload u;
            u.where = f.where();
            if (indexKey) f.count(indexKey);
            if (indexKey) u.device = int64_t(deviceRef(f, "device", 0));
            const PlanBuffer& buffer = bufferRef(f, "buffer");
            u.buffer = buffer.id;
            u.bytes = f.count("bytes");
            checkFits(f, "the upload", u.bytes, buffer);
            if (const json* generate = f.find("generate")) {
                Fields g(*generate, f.where() + ".generate");
                if (f.text("type", "f32") != "f32") f.fail("\"generate\" needs a float32 input");
                if (u.bytes % 4 != 0) f.fail("\"generate\" needs a whole number of float32 values");
                u.generateSeed = g.integer("seed");
                u.file = "(generated)";
                uploads.push_back(std::move(u));
                continue;
            }
            u.file = f.text("file");
            u.path = resolve(u.file);
            std::error_code ec;
            uint64_t size = fs::is_regular_file(u.path, ec) ? fs::file_size(u.path, ec) : 0;
            if (ec || !fs::is_regular_file(u.path)) {
                f.fail("cannot read " + u.file + " (" + u.path +
                       "): " + (ec ? ec.message() : std::string("not a regular file")));
            }
            if (size != u.bytes) {
                f.fail(u.file + " has " + std::to_string(size) + " bytes, the plan says " +
                       std::to_string(u.bytes));
            }
            uploads.push_back(std::move(u));
        }
        return uploads;
    }

    void readOutputs(const json& list) {
        std::set<int64_t> seen;
        for (size_t i = 0; i < list.size(); ++i) {
            Fields f(list[i], "outputs[" + std::to_string(i) + "]");
            PlanOutput o;
            o.index = f.integer("index");
            if (o.index < 0) f.fail("\"index\" must not be negative");
            o.device = deviceRef(f, "device", 0);
            if (!seen.insert(o.index).second) {
                f.fail("output index " + std::to_string(o.index) + " appears twice");
            }
            const PlanBuffer& buffer = bufferRef(f, "buffer");
            o.buffer = buffer.id;
            o.bytes = f.count("bytes");
            checkFits(f, "the output", o.bytes, buffer);
            o.elements = 1;
            if (const json* dims = f.find("dims"); dims && dims->is_array()) {
                for (const json& d : *dims)
                    o.elements *= d.is_number_unsigned() ? d.get<uint64_t>() : 0;
            } else {
                o.elements = o.bytes;  // untyped: bytes
            }
            if (o.elements != 0 && o.bytes % o.elements != 0)
                f.fail("\"bytes\" is not a whole number of elements of \"dims\"");
            m_plan.outputs.push_back(o);
        }
    }

    PlanStep readStep(const json& value, size_t index) {
        std::string name;
        if (value.is_object() && value.contains("name") && value["name"].is_string()) {
            name = value["name"].get<std::string>();
        }
        Fields f(value, describeStep(index, name));
        PlanStep step;
        step.name = f.text("name", "step" + std::to_string(index));
        step.where = f.where();
        step.device = deviceRef(f, "device", 0);
        step.srcDevice = deviceRef(f, "src_device", step.device);
        std::string kind = f.text("kind");
        if (kind == "kernel") {
            step.kind = StepKind::Kernel;
            step.kernel = readKernel(f);
            readArgDevices(f, step);
        } else if (kind == "copy") {
            step.kind = StepKind::Copy;
            const PlanBuffer& src = bufferRef(f, "src");
            const PlanBuffer& dst = bufferRef(f, "dst");
            step.src = src.id;
            step.dst = dst.id;
            step.bytes = f.count("bytes");
            checkFits(f, "the copy", step.bytes, src);
            checkFits(f, "the copy", step.bytes, dst);
        } else if (kind == "memset") {
            step.kind = StepKind::Memset;
            const PlanBuffer& buffer = bufferRef(f, "buffer");
            step.buffer = buffer.id;
            step.bytes = f.count("bytes");
            checkFits(f, "the memset", step.bytes, buffer);
            step.value = uint8_t(f.count("value", 0, 255));
        } else if (kind == "gemm") {
            step.kind = StepKind::Gemm;
            step.gemm = readGemm(f);
        } else if (kind == "branch") {
            step.kind = StepKind::Branch;
            const PlanBuffer& predicate = bufferRef(f, "predicate");
            step.buffer = predicate.id;
            checkFits(f, "the predicate", 1, predicate);
            step.target = f.count("if_zero");
        } else if (kind == "jump") {
            step.kind = StepKind::Jump;
            step.target = f.count("target");
            step.limit = f.count("limit");
            if (step.limit < 1) f.fail("\"limit\" must be at least 1");
        } else if (kind == "switch") {
            step.kind = StepKind::Switch;
            const std::string type = f.text("index_type");
            if (type != "pred" && type != "s32")
                f.fail("\"index_type\" must be \"pred\" or \"s32\", not \"" + type + "\"");
            step.indexIsPred = type == "pred";
            const PlanBuffer& index = bufferRef(f, "index");
            step.buffer = index.id;
            checkFits(f, "the index", step.indexIsPred ? 1 : 4, index);
            const json& targets = f.array("targets");
            for (size_t t = 0; t < targets.size(); ++t) {
                if (!targets[t].is_number_unsigned())
                    f.fail("targets[" + std::to_string(t) + "] must be a step index, not " +
                           shown(targets[t]));
                step.targets.push_back(targets[t].get<uint64_t>());
            }
            if (step.targets.empty() || (step.indexIsPred && step.targets.size() != 2))
                f.fail("\"targets\" must list " + std::string(step.indexIsPred
                                                                  ? "two steps (true, false)"
                                                                  : "a step per branch"));
        } else {
            f.fail(
                "\"kind\" must be \"kernel\", \"copy\", \"memset\", \"gemm\", \"branch\", "
                "\"jump\" or \"switch\", not \"" +
                kind + "\"");
        }
        return step;
    }

    // Where branches, switches and jumps go: a branch or switch forward (past its own step, up
    // to the end), a jump to a step of the plan or the end.
    void checkTargets(const json& steps) {
        const uint64_t count = m_plan.steps.size();
        for (size_t i = 0; i < m_plan.steps.size(); ++i) {
            const PlanStep& step = m_plan.steps[i];
            Fields f(steps[i], step.where);
            if (step.kind == StepKind::Branch && (step.target <= i || step.target > count)) {
                f.fail("\"if_zero\" is " + std::to_string(step.target) +
                       "; a branch goes on at a later step, at most the step count (" +
                       std::to_string(count) + ")");
            }
            for (size_t t = 0; t < step.targets.size(); ++t) {
                if (step.targets[t] <= i || step.targets[t] > count) {
                    f.fail("targets[" + std::to_string(t) + "] is " +
                           std::to_string(step.targets[t]) +
                           "; a switch goes on at a later step, at most the step count (" +
                           std::to_string(count) + ")");
                }
            }
            if (step.kind == StepKind::Jump && step.target > count) {
                f.fail("\"target\" is " + std::to_string(step.target) + "; the plan has " +
                       std::to_string(count) + " steps (a jump to " + std::to_string(count) +
                       " ends the run)");
            }
        }
    }

    // Three positive 32-bit integers.
    static std::array<uint32_t, 3> dim3(const Fields& f, const char* key) {
        const json& value = f.require(key);
        std::array<uint32_t, 3> dims = {};
        bool ok = value.is_array() && value.size() == 3;
        for (size_t i = 0; ok && i < 3; ++i) {
            ok = value[i].is_number_unsigned() && value[i].get<uint64_t>() >= 1 &&
                 value[i].get<uint64_t>() <= UINT32_MAX;
            if (ok) dims[i] = uint32_t(value[i].get<uint64_t>());
        }
        if (!ok) {
            f.fail(std::string("\"") + key + "\" must be an array of 3 positive integers, not " +
                   shown(value));
        }
        return dims;
    }

    // "arg_devices": one device per kernel argument (collectives read other devices' buffers).
    void readArgDevices(const Fields& f, PlanStep& step) const {
        const json* list = f.find("arg_devices");
        if (!list) return;
        if (!list->is_array() || list->size() != step.kernel.args.size())
            f.fail("\"arg_devices\" must list a device per argument");
        for (size_t i = 0; i < list->size(); ++i) {
            const json& d = (*list)[i];
            if (!d.is_number_unsigned() || d.get<uint64_t>() >= m_plan.devices)
                f.fail("arg_devices[" + std::to_string(i) + "] is not a device of the plan");
            step.kernel.argDevices.push_back(d.get<uint64_t>());
        }
    }

    KernelLaunch readKernel(const Fields& f) {
        KernelLaunch k;
        k.entry = f.text("entry");
        if (k.entry.empty()) f.fail("\"entry\" is empty");
        k.grid = dim3(f, "grid");
        k.block = dim3(f, "block");
        k.sharedBytes = uint32_t(f.count("shared_bytes", 0, UINT32_MAX));
        const json& args = f.array("args");
        for (size_t i = 0; i < args.size(); ++i) {
            std::string arg = "args[" + std::to_string(i) + "]";
            if (!args[i].is_number_integer()) {
                f.fail(arg + " must be a buffer id, not " + shown(args[i]));
            }
            int64_t id = args[i].get<int64_t>();
            if (!m_plan.buffers.count(id)) {
                f.fail(arg + " refers to buffer " + std::to_string(id) +
                       ", which the plan does not define");
            }
            k.args.push_back(id);
        }
        m_kernels.push_back({f.where(), k});
        return k;
    }

    GemmOp readGemm(const Fields& f) {
        GemmOp g;
        g.type = f.text("type");
        g.batch = int(f.count("batch", 1, INT32_MAX));
        g.m = int(f.count("m", INT32_MAX));
        g.n = int(f.count("n", INT32_MAX));
        g.k = int(f.count("k", INT32_MAX));
        if (g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) {
            f.fail("\"batch\", \"m\", \"n\" and \"k\" must be positive");
        }
        const PlanBuffer& lhs = bufferRef(f, "lhs");
        const PlanBuffer& rhs = bufferRef(f, "rhs");
        const PlanBuffer& out = bufferRef(f, "out");
        g.lhs = lhs.id;
        g.rhs = rhs.id;
        g.out = out.id;
        g.lhsTransposed = f.flag("lhs_transposed", false);
        g.rhsTransposed = f.flag("rhs_transposed", false);
        if (uint64_t size = elementBytes(g.type)) {
            checkFits(f, "lhs", product(g.batch, uint64_t(g.m) * g.k, size), lhs);
            checkFits(f, "rhs", product(g.batch, uint64_t(g.k) * g.n, size), rhs);
            checkFits(f, "out", product(g.batch, uint64_t(g.m) * g.n, size), out);
        }
        if (const json* fallback = f.find("fallback")) {
            Fields ff(*fallback, f.where() + ": fallback");
            std::string kind = ff.text("kind", "kernel");
            if (kind != "kernel") ff.fail("\"kind\" must be \"kernel\", not \"" + kind + "\"");
            g.fallback = readKernel(ff);
        } else if (g.type != "f32") {
            f.fail("type " + g.type +
                   " has no cuBLAS path (f32 only) and the step has no fallback");
        }
        return g;
    }

    // The PTX module: required when a kernel (or a gemm fallback) needs it; each launched entry
    // must be defined there with as many parameters as the launch passes.
    void readPtx(const Fields& top) {
        if (m_plan.ptxFile.empty()) {
            if (!m_kernels.empty())
                top.fail("\"ptx\" is missing, and " + m_kernels[0].first + " launches a kernel");
            return;
        }
        m_plan.ptxPath = resolve(m_plan.ptxFile);
        std::ifstream in(m_plan.ptxPath, std::ios::binary);
        if (!in || fs::is_directory(m_plan.ptxPath)) {
            std::error_code ec;
            bool exists = fs::exists(m_plan.ptxPath, ec);
            top.fail("ptx: cannot read " + m_plan.ptxFile + " (" + m_plan.ptxPath +
                     "): " + (exists ? "not a readable file" : "no such file"));
        }
        std::ostringstream text;
        text << in.rdbuf();
        m_plan.ptxText = text.str();
        std::map<std::string, int> entries = scanPtxEntries(m_plan.ptxText);
        for (const auto& [where, kernel] : m_kernels) {
            auto it = entries.find(kernel.entry);
            if (it == entries.end()) {
                throw PlanError(where + ": entry " + kernel.entry + " is not defined in " +
                                m_plan.ptxFile);
            }
            if (size_t(it->second) != kernel.args.size()) {
                throw PlanError(where + ": " + kernel.entry + " takes " +
                                std::to_string(it->second) + " parameters in " + m_plan.ptxFile +
                                ", the step passes " + std::to_string(kernel.args.size()) +
                                " args");
            }
        }
    }

    std::string resolve(const std::string& file) const {
        return (fs::path(m_plan.dir) / fs::path(file)).string();
    }

    Plan& m_plan;
    std::vector<std::pair<std::string, KernelLaunch>> m_kernels;  // every launch, for readPtx
};

// "line L, column C: <what>" for a parse error at 1-based byte `byte` of `text`.
std::string describeParseError(const std::string& text, size_t byte, const std::string& what) {
    size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: why".
    std::string why = what;
    if (size_t p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
    if (why.rfind("parse error", 0) == 0) {
        if (size_t p = why.find(": "); p != std::string::npos) why = why.substr(p + 2);
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + why;
}

// PTX text with // and /* */ comments replaced by spaces (string literals kept).
std::string stripPtxComments(const std::string& ptx) {
    std::string out = ptx;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == '"') {
            for (++i; i < out.size() && out[i] != '"' && out[i] != '\n'; ++i) {
            }
        } else if (out.compare(i, 2, "//") == 0) {
            for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
        } else if (out.compare(i, 2, "/*") == 0) {
            size_t end = out.find("*/", i + 2);
            end = end == std::string::npos ? out.size() : end + 2;
            for (; i < end; ++i) {
                if (out[i] != '\n') out[i] = ' ';
            }
            --i;
        }
    }
    return out;
}

bool isPtxIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
           c == '.';
}

}  // namespace

std::map<std::string, int> scanPtxEntries(const std::string& ptx) {
    const std::string text = stripPtxComments(ptx);
    std::map<std::string, int> entries;
    auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    for (size_t p = text.find(".entry"); p != std::string::npos; p = text.find(".entry", p + 6)) {
        bool startsToken = p == 0 || isSpace(text[p - 1]);
        bool endsToken = p + 6 < text.size() && isSpace(text[p + 6]);
        if (!startsToken || !endsToken) continue;
        size_t i = p + 6;
        while (i < text.size() && isSpace(text[i])) ++i;
        size_t nameStart = i;
        while (i < text.size() && isPtxIdentifierChar(text[i])) ++i;
        std::string name = text.substr(nameStart, i - nameStart);
        if (name.empty()) continue;
        while (i < text.size() && isSpace(text[i])) ++i;
        int params = 0;
        if (i < text.size() && text[i] == '(') {
            size_t close = text.find(')', i);
            std::string list =
                text.substr(i, close == std::string::npos ? std::string::npos : close - i);
            for (size_t q = list.find(".param"); q != std::string::npos;
                 q = list.find(".param", q + 6)) {
                ++params;
            }
        }
        entries[name] = params;
    }
    return entries;
}

bool loadPlan(const std::string& dir, Plan* plan, std::string* error) {
    std::string trimmed = dir;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    plan->dir = dir;
    plan->planFile = (fs::path(trimmed) / "plan.json").string();
    std::ifstream in(plan->planFile, std::ios::binary);
    if (!in || fs::is_directory(plan->planFile)) {
        *error =
            plan->planFile + ": cannot read the plan (" +
            (fs::is_directory(trimmed) ? "no plan.json in the directory" : "no such directory") +
            ")";
        return false;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        *error = plan->planFile + ": " + describeParseError(text, e.byte, e.what());
        return false;
    }
    try {
        PlanReader(*plan).read(root);
    } catch (const PlanError& e) {
        *error = plan->planFile + ": " + e.what();
        return false;
    } catch (const json::exception& e) {  // not expected: Fields checks types first
        *error = plan->planFile + ": " + e.what();
        return false;
    }
    return true;
}

}  // namespace hloscope::gpu
