// Plan directories (writeGpuPlan / readGpuPlan) and the runner's results
// (readGpuResults); the format: docs/gpu_plan_format.md.
#include <cassert>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/backends/gpu/gpu_synthetic.h"
#include "core/io/atomic_file.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"

namespace hloscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status writeBytes(const fs::path& path, const void* data, int64_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status(StatusCode::kInvalidArgument, path.string() + ": cannot write");
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    out.close();
    if (!out) return Status(StatusCode::kInvalidArgument, path.string() + ": write failed");
    return Status::ok();
}

StatusOr<std::shared_ptr<std::vector<uint8_t>>> readBytes(const fs::path& path, int64_t expected) {
    std::error_code error;
    const auto size = fs::file_size(path, error);
    if (error) return invalidArgument(path.string() + ": cannot read (" + error.message() + ")");
    if (static_cast<int64_t>(size) != expected)
        return invalidArgument(path.string() + ": holds " + std::to_string(size) +
                               " bytes, expected " + std::to_string(expected));
    auto data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(size));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(data->data()), static_cast<std::streamsize>(size));
    if (!in) return invalidArgument(path.string() + ": read failed");
    return data;
}

// A literal's array leaves, depth first (tokens hold none).
void literalLeaves(const Literal& literal, std::vector<const Literal*>& out) {
    if (literal.isTuple()) {
        for (const Literal& element : literal.tupleElements()) literalLeaves(element, out);
    } else if (literal.shape().isArray()) {
        out.push_back(&literal);
    }
}

void mutableLiteralLeaves(Literal& literal, std::vector<Literal*>& out) {
    if (literal.isTuple()) {
        for (Literal& element : literal.mutableTupleElements()) mutableLiteralLeaves(element, out);
    } else if (literal.shape().isArray()) {
        out.push_back(&literal);
    }
}

bool sameShapeIgnoringLayout(const Shape& a, const Shape& b) {
    return a.elementType() == b.elementType() && a.dimensions() == b.dimensions();
}

StatusOr<std::string> readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return invalidArgument(path.string() + ": cannot read");
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

StatusOr<json> readJson(const fs::path& path) {
    HLO_ASSIGN_OR_RETURN(std::string text, readText(path));
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        // Where: re-parse with exceptions for the byte position.
        try {
            const json ignored = json::parse(text);
            (void)ignored;
        } catch (const json::parse_error& e) {
            int64_t line = 1, column = 1;
            for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
                if (text[i] == '\n') {
                    ++line;
                    column = 1;
                } else {
                    ++column;
                }
            }
            return invalidArgument(path.string() + ":" + std::to_string(line) + ":" +
                                   std::to_string(column) + ": invalid JSON");
        }
        return invalidArgument(path.string() + ": not a JSON object");
    }
    return j;
}

const char* stepKindName(GpuStepKind kind) {
    switch (kind) {
        case GpuStepKind::kKernel:
            return "kernel";
        case GpuStepKind::kCopy:
            return "copy";
        case GpuStepKind::kMemset:
            return "memset";
        case GpuStepKind::kGemm:
            return "gemm";
        case GpuStepKind::kBranch:
            return "branch";
        case GpuStepKind::kJump:
            return "jump";
        case GpuStepKind::kSwitch:
            return "switch";
    }
    return "kernel";
}

json arrayJson(const GpuPlanArray& array) {
    return json{{"buffer", array.buffer},
                {"type", std::string(primitive_util::name(array.type))},
                {"dims", array.dims},
                {"bytes", array.bytes}};
}

json stepJson(const GpuPlanStep& step, int64_t devices) {
    json j{{"kind", stepKindName(step.kind)},
           {"name", step.name},
           {"opcode", step.opcode},
           {"instruction", step.instruction}};
    // Multi-device plans only (a single device's steps are all on device 0).
    if (devices > 1) {
        j["device"] = step.device;
        if (!step.argDevices.empty()) j["arg_devices"] = step.argDevices;
        if (step.kind == GpuStepKind::kCopy && step.srcDevice >= 0)
            j["src_device"] = step.srcDevice;
    }
    switch (step.kind) {
        case GpuStepKind::kKernel:
            j["entry"] = step.entry;
            j["grid"] = step.launch.grid;
            j["block"] = step.launch.block;
            j["shared_bytes"] = step.launch.sharedBytes;
            j["args"] = step.args;
            break;
        case GpuStepKind::kCopy:
            j["src"] = step.src;
            j["dst"] = step.dst;
            j["bytes"] = step.bytes;
            break;
        case GpuStepKind::kMemset:
            j["buffer"] = step.dst;
            j["bytes"] = step.bytes;
            j["value"] = step.value;
            break;
        case GpuStepKind::kGemm:
            j["type"] = "f32";
            j["batch"] = step.batch;
            j["m"] = step.m;
            j["n"] = step.n;
            j["k"] = step.k;
            j["lhs"] = step.lhs;
            j["rhs"] = step.rhs;
            j["out"] = step.out;
            j["lhs_transposed"] = step.lhsTransposed;
            j["rhs_transposed"] = step.rhsTransposed;
            if (!step.fallback.empty()) j["fallback"] = stepJson(step.fallback.front(), devices);
            break;
        case GpuStepKind::kBranch:
            j["predicate"] = step.predicate;
            j["if_zero"] = step.target;
            break;
        case GpuStepKind::kJump:
            j["target"] = step.target;
            j["limit"] = step.limit;
            break;
        case GpuStepKind::kSwitch:
            j["index"] = step.predicate;
            j["index_type"] = step.indexType;
            j["targets"] = step.targets;
            break;
    }
    return j;
}

template <typename T>
StatusOr<T> field(const json& j, const char* key, const std::string& where) {
    auto it = j.find(key);
    if (it == j.end()) return invalidArgument(where + ": missing \"" + key + "\"");
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return invalidArgument(where + ": \"" + key + "\" has the wrong type");
    }
}

StatusOr<GpuPlanArray> readArray(const json& j, const std::string& where) {
    GpuPlanArray array;
    HLO_ASSIGN_OR_RETURN(array.buffer, field<int>(j, "buffer", where));
    HLO_ASSIGN_OR_RETURN(std::string type, field<std::string>(j, "type", where));
    auto parsed = primitive_util::parse(type);
    if (!parsed) return invalidArgument(where + ": unknown element type '" + type + "'");
    array.type = *parsed;
    HLO_ASSIGN_OR_RETURN(array.dims, field<std::vector<int64_t>>(j, "dims", where));
    HLO_ASSIGN_OR_RETURN(array.bytes, field<int64_t>(j, "bytes", where));
    int64_t elements = 1;
    for (int64_t d : array.dims) {
        if (d < 0) return invalidArgument(where + ": negative dimension");
        elements *= d;
    }
    if (elements * primitive_util::byteWidth(array.type) != array.bytes)
        return invalidArgument(where + ": bytes do not match the type and dimensions");
    return array;
}

StatusOr<GpuPlanStep> readStep(const json& j, const std::string& where) {
    GpuPlanStep step;
    HLO_ASSIGN_OR_RETURN(std::string kind, field<std::string>(j, "kind", where));
    HLO_ASSIGN_OR_RETURN(step.name, field<std::string>(j, "name", where));
    step.opcode = j.value("opcode", "");
    step.instruction = j.value("instruction", step.name);
    step.device = j.value("device", int64_t{0});
    step.argDevices = j.value("arg_devices", std::vector<int64_t>{});
    step.srcDevice = j.value("src_device", int64_t{-1});
    if (kind == "kernel") {
        step.kind = GpuStepKind::kKernel;
        HLO_ASSIGN_OR_RETURN(step.entry, field<std::string>(j, "entry", where));
        HLO_ASSIGN_OR_RETURN(step.launch.grid, (field<std::array<int64_t, 3>>(j, "grid", where)));
        HLO_ASSIGN_OR_RETURN(step.launch.block, (field<std::array<int64_t, 3>>(j, "block", where)));
        step.launch.sharedBytes = j.value("shared_bytes", int64_t{0});
        HLO_ASSIGN_OR_RETURN(step.args, field<std::vector<int>>(j, "args", where));
    } else if (kind == "copy") {
        step.kind = GpuStepKind::kCopy;
        HLO_ASSIGN_OR_RETURN(step.src, field<int>(j, "src", where));
        HLO_ASSIGN_OR_RETURN(step.dst, field<int>(j, "dst", where));
        HLO_ASSIGN_OR_RETURN(step.bytes, field<int64_t>(j, "bytes", where));
    } else if (kind == "memset") {
        step.kind = GpuStepKind::kMemset;
        HLO_ASSIGN_OR_RETURN(step.dst, field<int>(j, "buffer", where));
        HLO_ASSIGN_OR_RETURN(step.bytes, field<int64_t>(j, "bytes", where));
        HLO_ASSIGN_OR_RETURN(step.value, field<int>(j, "value", where));
    } else if (kind == "gemm") {
        step.kind = GpuStepKind::kGemm;
        HLO_ASSIGN_OR_RETURN(step.batch, field<int64_t>(j, "batch", where));
        HLO_ASSIGN_OR_RETURN(step.m, field<int64_t>(j, "m", where));
        HLO_ASSIGN_OR_RETURN(step.n, field<int64_t>(j, "n", where));
        HLO_ASSIGN_OR_RETURN(step.k, field<int64_t>(j, "k", where));
        HLO_ASSIGN_OR_RETURN(step.lhs, field<int>(j, "lhs", where));
        HLO_ASSIGN_OR_RETURN(step.rhs, field<int>(j, "rhs", where));
        HLO_ASSIGN_OR_RETURN(step.out, field<int>(j, "out", where));
        step.lhsTransposed = j.value("lhs_transposed", false);
        step.rhsTransposed = j.value("rhs_transposed", false);
        if (auto it = j.find("fallback"); it != j.end()) {
            HLO_ASSIGN_OR_RETURN(GpuPlanStep fallback, readStep(*it, where + ".fallback"));
            step.fallback.push_back(std::move(fallback));
        }
    } else if (kind == "branch") {
        step.kind = GpuStepKind::kBranch;
        HLO_ASSIGN_OR_RETURN(step.predicate, field<int>(j, "predicate", where));
        HLO_ASSIGN_OR_RETURN(step.target, field<int>(j, "if_zero", where));
    } else if (kind == "jump") {
        step.kind = GpuStepKind::kJump;
        HLO_ASSIGN_OR_RETURN(step.target, field<int>(j, "target", where));
        HLO_ASSIGN_OR_RETURN(step.limit, field<int64_t>(j, "limit", where));
    } else if (kind == "switch") {
        step.kind = GpuStepKind::kSwitch;
        HLO_ASSIGN_OR_RETURN(step.predicate, field<int>(j, "index", where));
        HLO_ASSIGN_OR_RETURN(step.indexType, field<std::string>(j, "index_type", where));
        HLO_ASSIGN_OR_RETURN(step.targets, field<std::vector<int>>(j, "targets", where));
    } else {
        return invalidArgument(where + ": unknown step kind '" + kind + "'");
    }
    return step;
}

std::string planPath(const std::string& dir) { return (fs::path(dir) / "plan.json").string(); }

// Input `input`'s plan.json entry, its argument written to inputs/ unless the runner
// generates it.
StatusOr<json> writeInput(const GpuPlan& plan, const GpuPlanInput& input,
                          const std::vector<std::vector<Literal>>& deviceArgs,
                          const std::string& dir, const std::vector<int64_t>& syntheticSeeds) {
    const size_t p = static_cast<size_t>(input.parameter);
    if (input.device < 0 || input.device >= plan.devices())
        return invalidArgument("plan input %" + input.name + ": no device " +
                               std::to_string(input.device));
    const std::vector<Literal>& args = deviceArgs[static_cast<size_t>(input.device)];
    if (p >= args.size())
        return invalidArgument("plan input %" + input.name + ": no argument for parameter " +
                               std::to_string(input.parameter));
    // The argument, or its array leaf for a tuple-shaped parameter.
    const Literal* value = &args[p];
    if (input.leaf >= 0) {
        std::vector<const Literal*> leaves;
        literalLeaves(args[p], leaves);
        if (!args[p].isTuple() || input.leaf >= static_cast<int64_t>(leaves.size()))
            return invalidArgument("plan input %" + input.name + ": the argument has no leaf " +
                                   std::to_string(input.leaf));
        value = leaves[static_cast<size_t>(input.leaf)];
    }
    if (value->sizeInBytes() != input.array.bytes)
        return invalidArgument("plan input %" + input.name + ": the argument holds " +
                               std::to_string(value->sizeInBytes()) + " bytes, expected " +
                               std::to_string(input.array.bytes));
    json entry = arrayJson(input.array);
    entry["parameter"] = input.parameter;
    entry["name"] = input.name;
    if (plan.devices() > 1) entry["device"] = input.device;
    if (input.leaf >= 0) {
        entry["leaf"] = input.leaf;
        entry["parameter_shape"] = input.tupleShape;
    }
    if (input.leaf < 0 && p < syntheticSeeds.size() && syntheticSeeds[p] >= 0 &&
        input.array.type == PrimitiveType::F32) {
        entry["generate"] = {{"kind", "uniform"}, {"seed", syntheticSeeds[p]}};
    } else {
        const std::string file =
            "inputs/" +
            (input.device > 0 ? "device" + std::to_string(input.device) + "." : std::string()) +
            std::to_string(input.parameter) +
            (input.leaf >= 0 ? "." + std::to_string(input.leaf) : std::string()) + ".bin";
        HLO_RETURN_IF_ERROR(
            writeBytes(fs::path(dir) / file, value->untypedData(), input.array.bytes));
        entry["file"] = file;
    }
    return entry;
}

// The constants written to constants/, and their plan.json entries.
StatusOr<json> writeConstants(const GpuPlan& plan, const std::string& dir) {
    json constants = json::array();
    for (size_t i = 0; i < plan.constants.size(); ++i) {
        const GpuPlanConstant& constant = plan.constants[i];
        const std::string file = "constants/" + std::to_string(i) + ".bin";
        HLO_RETURN_IF_ERROR(writeBytes(fs::path(dir) / file, constant.value.untypedData(),
                                       constant.value.sizeInBytes()));
        constants.push_back(
            {{"buffer", constant.buffer},
             {"name", constant.name},
             {"file", file},
             {"bytes", constant.value.sizeInBytes()},
             {"type", std::string(primitive_util::name(constant.value.shape().elementType()))},
             {"dims", constant.value.shape().dimensions()}});
    }
    return constants;
}

}  // namespace

Status writeGpuPlan(const GpuPlan& plan, const std::vector<Literal>& args,
                    const std::string& moduleText, const std::string& preparedText,
                    const std::string& dir, const std::vector<int64_t>& syntheticSeeds) {
    return writeGpuPlanOnDevices(plan, {args}, moduleText, preparedText, dir, syntheticSeeds);
}

Status writeGpuPlanOnDevices(const GpuPlan& plan,
                             const std::vector<std::vector<Literal>>& deviceArgs,
                             const std::string& moduleText, const std::string& preparedText,
                             const std::string& dir, const std::vector<int64_t>& syntheticSeeds) {
    if (static_cast<int64_t>(deviceArgs.size()) != plan.devices())
        return invalidArgument("the plan runs on " + std::to_string(plan.devices()) +
                               " devices, arguments were given for " +
                               std::to_string(deviceArgs.size()));
    std::error_code error;
    fs::create_directories(fs::path(dir) / "inputs", error);
    if (!error) fs::create_directories(fs::path(dir) / "constants", error);
    if (error)
        return invalidArgument(dir + ": cannot create the plan directory (" + error.message() +
                               ")");
    json j{{"format", "hloscope-gpu-plan"},
           {"version", kGpuPlanVersion},
           {"module", plan.module},
           {"mode", plan.mode},
           {"sm", plan.sm},
           {"ptx", "kernels.ptx"},
           {"module_text", "module.hlo"},
           {"prepared_text", "prepared.hlo"},
           {"arena_bytes", plan.arenaBytes},
           {"warmup", plan.warmup},
           {"repeat", plan.repeat},
           {"kernels", plan.kernels},
           {"compile_seconds", plan.compileSeconds}};
    if (plan.devices() > 1) {
        j["replicas"] = plan.replicas;
        j["partitions"] = plan.partitions;
    }
    json buffers = json::array();
    for (const GpuPlanBuffer& b : plan.buffers)
        buffers.push_back(
            {{"id", b.id}, {"offset", b.offset}, {"bytes", b.bytes}, {"name", b.name}});
    j["buffers"] = buffers;
    json inputs = json::array();
    for (const GpuPlanInput& input : plan.inputs) {
        HLO_ASSIGN_OR_RETURN(json entry, writeInput(plan, input, deviceArgs, dir, syntheticSeeds));
        inputs.push_back(entry);
    }
    j["inputs"] = inputs;
    HLO_ASSIGN_OR_RETURN(json constants, writeConstants(plan, dir));
    j["constants"] = constants;
    json outputs = json::array();
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        json entry = arrayJson(plan.outputs[i]);
        entry["index"] = i;
        if (plan.devices() > 1) entry["device"] = plan.outputs[i].device;
        outputs.push_back(entry);
    }
    j["outputs"] = outputs;
    json steps = json::array();
    for (const GpuPlanStep& step : plan.steps) steps.push_back(stepJson(step, plan.devices()));
    j["steps"] = steps;
    HLO_RETURN_IF_ERROR(writeBytes(fs::path(dir) / "kernels.ptx", plan.ptx.data(),
                                   static_cast<int64_t>(plan.ptx.size())));
    HLO_RETURN_IF_ERROR(writeBytes(fs::path(dir) / "module.hlo", moduleText.data(),
                                   static_cast<int64_t>(moduleText.size())));
    HLO_RETURN_IF_ERROR(writeBytes(fs::path(dir) / "prepared.hlo", preparedText.data(),
                                   static_cast<int64_t>(preparedText.size())));
    const std::string text = j.dump(1) + "\n";
    // Last and atomically: a plan.json that reads whole means every file it names was written.
    return writeFileAtomically(planPath(dir), text);
}

namespace {

bool knownBuffer(const GpuPlan& plan, int id) {
    return id >= 0 && id < static_cast<int>(plan.buffers.size());
}

// plan.json's buffers, each inside the arena and in id order.
Status readBuffers(const json& j, const std::string& where, GpuPlan& plan) {
    HLO_ASSIGN_OR_RETURN(json buffers, field<json>(j, "buffers", where));
    for (size_t i = 0; i < buffers.size(); ++i) {
        const std::string at = where + ": buffers[" + std::to_string(i) + "]";
        GpuPlanBuffer b;
        HLO_ASSIGN_OR_RETURN(b.id, field<int>(buffers[i], "id", at));
        HLO_ASSIGN_OR_RETURN(b.offset, field<int64_t>(buffers[i], "offset", at));
        HLO_ASSIGN_OR_RETURN(b.bytes, field<int64_t>(buffers[i], "bytes", at));
        b.name = buffers[i].value("name", "");
        if (b.id != static_cast<int>(i))
            return invalidArgument(at + ": id " + std::to_string(b.id) + " out of order");
        if (b.offset < 0 || b.bytes < 0 || b.offset + b.bytes > plan.arenaBytes)
            return invalidArgument(at + ": lies outside the arena");
        plan.buffers.push_back(b);
    }
    return Status::ok();
}

// One of plan.json's `inputCount` inputs: the plan's input, and its value (read from its
// file or generated) in its device's arguments.
Status readInput(const json& entry, const std::string& at, size_t inputCount,
                 const std::string& dir, GpuPlanFiles& files) {
    GpuPlan& plan = files.plan;
    GpuPlanInput input;
    HLO_ASSIGN_OR_RETURN(input.parameter, field<int64_t>(entry, "parameter", at));
    input.name = entry.value("name", "");
    input.device = entry.value("device", int64_t{0});
    if (input.device < 0 || input.device >= plan.devices())
        return invalidArgument(at + ": device " + std::to_string(input.device) +
                               " out of range");
    std::vector<Literal>& deviceInputs = files.deviceInputs[static_cast<size_t>(input.device)];
    HLO_ASSIGN_OR_RETURN(input.array, readArray(entry, at));
    input.array.device = input.device;
    if (!knownBuffer(plan, input.array.buffer)) return invalidArgument(at + ": unknown buffer");
    std::shared_ptr<std::vector<uint8_t>> data;
    if (auto generate = entry.find("generate"); generate != entry.end()) {
        if (input.array.type != PrimitiveType::F32 || !generate->is_object() ||
            !generate->contains("seed"))
            return invalidArgument(at + ": \"generate\" needs a float32 input and a seed");
        input.syntheticSeed = generate->value("seed", int64_t{0});
        data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(input.array.bytes));
        fillSynthetic(reinterpret_cast<float*>(data->data()),
                      static_cast<uint64_t>(input.array.bytes / 4),
                      static_cast<uint64_t>(input.syntheticSeed));
    } else {
        HLO_ASSIGN_OR_RETURN(std::string file, field<std::string>(entry, "file", at));
        HLO_ASSIGN_OR_RETURN(data, readBytes(fs::path(dir) / file, input.array.bytes));
    }
    if (input.parameter < 0 || input.parameter >= static_cast<int64_t>(inputCount))
        return invalidArgument(at + ": parameter " + std::to_string(input.parameter) +
                               " out of range");
    const auto p = static_cast<size_t>(input.parameter);
    if (deviceInputs.size() <= p) deviceInputs.resize(p + 1);
    Literal value =
        Literal::fromStorage(Shape(input.array.type, input.array.dims), std::move(data));
    if (entry.contains("leaf")) {
        // Leaf k of a tuple-shaped parameter: into its place in the tuple.
        HLO_ASSIGN_OR_RETURN(input.leaf, field<int64_t>(entry, "leaf", at));
        HLO_ASSIGN_OR_RETURN(input.tupleShape,
                             field<std::string>(entry, "parameter_shape", at));
        auto shape = parseShape(input.tupleShape);
        if (!shape.isOk() || !shape->isTuple())
            return invalidArgument(at + ": \"parameter_shape\" is not a tuple shape");
        if (!deviceInputs[p].isTuple()) deviceInputs[p] = Literal(*shape);
        std::vector<Literal*> leaves;
        mutableLiteralLeaves(deviceInputs[p], leaves);
        if (input.leaf < 0 || input.leaf >= static_cast<int64_t>(leaves.size()) ||
            !sameShapeIgnoringLayout(leaves[static_cast<size_t>(input.leaf)]->shape(),
                                     value.shape()))
            return invalidArgument(at + ": leaf " + std::to_string(input.leaf) +
                                   " does not match \"parameter_shape\"");
        *leaves[static_cast<size_t>(input.leaf)] = std::move(value);
    } else {
        deviceInputs[p] = std::move(value);
    }
    plan.inputs.push_back(std::move(input));
    return Status::ok();
}

// plan.json's outputs, each in a known buffer of a device the plan has.
Status readOutputs(const json& j, const std::string& where, GpuPlan& plan) {
    HLO_ASSIGN_OR_RETURN(json outputs, field<json>(j, "outputs", where));
    for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string at = where + ": outputs[" + std::to_string(i) + "]";
        HLO_ASSIGN_OR_RETURN(GpuPlanArray array, readArray(outputs[i], at));
        if (!knownBuffer(plan, array.buffer)) return invalidArgument(at + ": unknown buffer");
        array.device = outputs[i].value("device", int64_t{0});
        if (array.device < 0 || array.device >= plan.devices())
            return invalidArgument(at + ": device " + std::to_string(array.device) +
                                   " out of range");
        plan.outputs.push_back(std::move(array));
    }
    return Status::ok();
}

// plan.json's steps, their devices and control-flow targets checked.
Status readSteps(const json& j, const std::string& where, GpuPlan& plan) {
    HLO_ASSIGN_OR_RETURN(json steps, field<json>(j, "steps", where));
    for (size_t i = 0; i < steps.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step,
                             readStep(steps[i], where + ": steps[" + std::to_string(i) + "]"));
        plan.steps.push_back(std::move(step));
    }
    const int stepCount = static_cast<int>(plan.steps.size());
    for (int i = 0; i < stepCount; ++i) {
        const GpuPlanStep& step = plan.steps[static_cast<size_t>(i)];
        const std::string at = where + ": steps[" + std::to_string(i) + "]";
        bool devicesOk = step.device >= 0 && step.device < plan.devices() &&
                         step.srcDevice < plan.devices() &&
                         (step.argDevices.empty() || step.argDevices.size() == step.args.size());
        for (int64_t device : step.argDevices)
            devicesOk = devicesOk && device >= 0 && device < plan.devices();
        if (!devicesOk) return invalidArgument(at + ": names a device the plan does not have");
        if (step.kind == GpuStepKind::kBranch &&
            (!knownBuffer(plan, step.predicate) || step.target <= i || step.target > stepCount))
            return invalidArgument(at +
                                   ": a branch needs a known predicate buffer and a later "
                                   "step (or the end) to go on at");
        if (step.kind == GpuStepKind::kJump &&
            (step.target < 0 || step.target > stepCount || step.limit < 1))
            return invalidArgument(
                at +
                ": a jump needs a step (or the end) to go on at and a limit of at "
                "least 1");
        if (step.kind == GpuStepKind::kSwitch) {
            bool ok =
                knownBuffer(plan, step.predicate) && !step.targets.empty() &&
                (step.indexType == "s32" || (step.indexType == "pred" && step.targets.size() == 2));
            for (int target : step.targets) ok = ok && target > i && target <= stepCount;
            if (!ok)
                return invalidArgument(at +
                                       ": a switch needs a known index buffer, an index_type "
                                       "of pred (two targets) or s32, and later steps to go "
                                       "on at");
        }
    }
    return Status::ok();
}

}  // namespace

StatusOr<GpuPlanFiles> readGpuPlan(const std::string& dir) {
    const std::string where = planPath(dir);
    HLO_ASSIGN_OR_RETURN(json j, readJson(where));
    if (j.value("format", "") != "hloscope-gpu-plan")
        return invalidArgument(
            where + ": not an hloscope GPU plan (\"format\" is not \"hloscope-gpu-plan\")");
    if (j.value("version", 0) != kGpuPlanVersion)
        return invalidArgument(where + ": plan format version " +
                               std::to_string(j.value("version", 0)) +
                               ", this build reads version " + std::to_string(kGpuPlanVersion));
    GpuPlanFiles files;
    GpuPlan& plan = files.plan;
    HLO_ASSIGN_OR_RETURN(plan.module, field<std::string>(j, "module", where));
    plan.mode = j.value("mode", "fused");
    plan.sm = j.value("sm", "");
    HLO_ASSIGN_OR_RETURN(plan.arenaBytes, field<int64_t>(j, "arena_bytes", where));
    plan.warmup = j.value("warmup", 3);
    plan.repeat = j.value("repeat", 20);
    plan.kernels = j.value("kernels", int64_t{0});
    plan.compileSeconds = j.value("compile_seconds", 0.0);
    plan.replicas = j.value("replicas", int64_t{1});
    plan.partitions = j.value("partitions", int64_t{1});
    if (plan.replicas < 1 || plan.partitions < 1 || plan.devices() > kMaxDevices)
        return invalidArgument(where +
                               ": \"replicas\" and \"partitions\" must be positive, at most " +
                               std::to_string(kMaxDevices) + " devices");
    files.deviceInputs.resize(static_cast<size_t>(plan.devices()));
    HLO_RETURN_IF_ERROR(readBuffers(j, where, plan));
    HLO_ASSIGN_OR_RETURN(json inputs, field<json>(j, "inputs", where));
    for (size_t i = 0; i < inputs.size(); ++i)
        HLO_RETURN_IF_ERROR(readInput(inputs[i], where + ": inputs[" + std::to_string(i) + "]",
                                      inputs.size(), dir, files));
    files.inputs = files.deviceInputs.front();
    HLO_RETURN_IF_ERROR(readOutputs(j, where, plan));
    HLO_RETURN_IF_ERROR(readSteps(j, where, plan));
    HLO_ASSIGN_OR_RETURN(plan.ptx, readText(fs::path(dir) / j.value("ptx", "kernels.ptx")));
    HLO_ASSIGN_OR_RETURN(files.moduleText,
                         readText(fs::path(dir) / j.value("module_text", "module.hlo")));
    HLO_ASSIGN_OR_RETURN(files.preparedText,
                         readText(fs::path(dir) / j.value("prepared_text", "prepared.hlo")));
    return files;
}

StatusOr<GpuRunResults> readGpuResults(const GpuPlan& plan, const std::string& resultsDir) {
    const std::string where = (fs::path(resultsDir) / "results.json").string();
    HLO_ASSIGN_OR_RETURN(json j, readJson(where));
    if (j.value("format", "") != "hloscope-gpu-results")
        return invalidArgument(
            where + ": not hloscope GPU results (\"format\" is not \"hloscope-gpu-results\")");
    GpuRunResults results;
    if (auto device = j.find("device"); device != j.end() && device->is_object())
        for (auto it = device->begin(); it != device->end(); ++it)
            results.device[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    if (auto cublas = j.find("cublas"); cublas != j.end() && cublas->is_string())
        results.cublas = *cublas;
    results.warmup = j.value("warmup", 0);
    results.repeat = j.value("repeat", 0);
    results.runMs = j.value("run_ms", std::vector<double>{});
    HLO_ASSIGN_OR_RETURN(results.medianMs, field<double>(j, "median_ms", where));
    results.minMs = j.value("min_ms", results.medianMs);
    results.maxMs = j.value("max_ms", results.medianMs);
    results.moduleLoadMs = j.value("module_load_ms", 0.0);
    for (const json& step : j.value("steps", json::array())) {
        GpuStepTime time;
        time.name = step.value("name", "");
        time.kind = step.value("kind", "");
        time.used = step.value("used", "");
        time.medianMs = step.value("median_ms", 0.0);
        time.minMs = step.value("min_ms", time.medianMs);
        time.maxMs = step.value("max_ms", time.medianMs);
        time.iterations = step.value("iterations", int64_t{-1});
        results.steps.push_back(std::move(time));
    }
    const json outputs = j.value("outputs", json::array());
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        const GpuPlanArray& array = plan.outputs[i];
        int64_t stride = 1;
        if (i < outputs.size() && outputs[i].is_object())
            stride = std::max<int64_t>(outputs[i].value("sample_stride", int64_t{1}), 1);
        int64_t elements = 1;
        for (int64_t d : array.dims) elements *= d;
        const int64_t kept = stride > 1 ? (elements + stride - 1) / stride : elements;
        const fs::path file = fs::path(resultsDir) / "outputs" / (std::to_string(i) + ".bin");
        HLO_ASSIGN_OR_RETURN(auto data,
                             readBytes(file, kept * primitive_util::byteWidth(array.type)));
        const Shape shape = stride > 1 ? Shape(array.type, {kept}) : Shape(array.type, array.dims);
        results.outputs.push_back(Literal::fromStorage(shape, std::move(data)));
        results.sampleStrides.push_back(stride);
    }
    return results;
}

std::vector<MeasuredTime> instructionTimesOf(const GpuPlan& plan, const GpuRunResults& results) {
    std::vector<MeasuredTime> times;
    std::map<std::string, size_t> slot;
    for (size_t i = 0; i < results.steps.size() && i < plan.steps.size(); ++i) {
        const GpuPlanStep& step = plan.steps[i];
        auto [it, fresh] = slot.emplace(step.instruction, times.size());
        if (fresh) times.push_back(MeasuredTime{step.instruction, step.opcode, 0, 1});
        times[it->second].seconds += results.steps[i].medianMs * 1e-3;
    }
    return times;
}

std::vector<std::vector<Literal>> outputsByDevice(const GpuPlan& plan,
                                                  std::vector<Literal> outputs) {
    assert(outputs.size() == plan.outputs.size());
    std::vector<std::vector<Literal>> byDevice(static_cast<size_t>(plan.devices()));
    for (size_t i = 0; i < outputs.size(); ++i)
        byDevice[static_cast<size_t>(plan.outputs[i].device)].push_back(std::move(outputs[i]));
    return byDevice;
}

Literal sampleLiteral(const Literal& literal, int64_t stride) {
    if (stride <= 1 || !literal.shape().isArray()) return literal;
    const int64_t elements = literal.elementCount();
    const int64_t kept = (elements + stride - 1) / stride;
    const int width = primitive_util::byteWidth(literal.shape().elementType());
    auto data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(kept * width));
    const auto* from = static_cast<const uint8_t*>(literal.untypedData());
    for (int64_t i = 0; i < kept; ++i)
        std::memcpy(data->data() + i * width, from + i * stride * width,
                    static_cast<size_t>(width));
    return Literal::fromStorage(Shape(literal.shape().elementType(), {kept}), std::move(data));
}

std::vector<Literal> syntheticArguments(const HloComputation& entry, uint64_t base,
                                        std::vector<int64_t>& seeds) {
    std::vector<Literal> args = makeRandomArguments(entry, base);
    seeds.assign(args.size(), -1);
    for (size_t p = 0; p < args.size(); ++p) {
        if (!args[p].shape().isArray() || args[p].shape().elementType() != PrimitiveType::F32)
            continue;
        seeds[p] = static_cast<int64_t>(base + p);
        fillSynthetic(static_cast<float*>(args[p].untypedData()),
                      static_cast<uint64_t>(args[p].elementCount()),
                      static_cast<uint64_t>(seeds[p]));
    }
    return args;
}

}  // namespace hloscope
