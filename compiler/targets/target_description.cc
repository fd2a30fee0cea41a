#include "compiler/targets/target_description.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compiler/targets/builtin_target_json.h"

namespace hloscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, kOpClassCount> kEfficiencyKeys = {
    "elementwise", "transcendental", "reduction", "dot", "convolution", "data_movement"};

class Reader {
public:
    explicit Reader(TargetDescription* target) : m_target(target) {}

    Status error(const std::string& path, const std::string& message) const {
        return invalidArgument("target description: " + path + ": " + message);
    }

    // {"value": ..., "source": "..."} at `path`; the value must be a number
    // (or a boolean when `boolean`).
    StatusOr<const Json*> sourced(const Json& parent, const std::string& key, const std::string& path,
                                  bool boolean = false) {
        const std::string here = path + "." + key;
        auto it = parent.find(key);
        if (it == parent.end()) return error(here, "missing");
        if (!it->is_object()) return error(here, "expected an object {\"value\": ..., \"source\": \"...\"}");
        auto source = it->find("source");
        if (source == it->end()) return error(here + ".source", "missing (every figure must cite its source)");
        if (!source->is_string() || source->get<std::string>().empty())
            return error(here + ".source", "expected a non-empty string");
        auto value = it->find("value");
        if (value == it->end()) return error(here + ".value", "missing");
        if (boolean ? !value->is_boolean() : !value->is_number())
            return error(here + ".value", boolean ? "expected true or false" : "expected a number");
        for (const auto& [name, unused] : it->items())
            if (name != "value" && name != "source") return error(here + "." + name, "unknown key");
        m_target->sources[here] = source->get<std::string>();
        return &*value;
    }

    // {"value": [[x, ...], ...], "source": "..."}: rows of `width` non-negative numbers.
    StatusOr<std::vector<std::vector<double>>> table(const Json& parent, const std::string& key,
                                                     const std::string& path, size_t width) {
        const std::string here = path + "." + key;
        auto it = parent.find(key);
        if (it == parent.end()) return error(here, "missing");
        if (!it->is_object()) return error(here, "expected an object {\"value\": [...], \"source\": \"...\"}");
        auto source = it->find("source");
        if (source == it->end() || !source->is_string() || source->get<std::string>().empty())
            return error(here + ".source", "missing (every figure must cite its source)");
        for (const auto& [name, unused] : it->items())
            if (name != "value" && name != "source") return error(here + "." + name, "unknown key");
        auto value = it->find("value");
        if (value == it->end() || !value->is_array() || value->empty())
            return error(here + ".value", "expected a non-empty array of rows");
        std::vector<std::vector<double>> rows;
        for (size_t r = 0; r < value->size(); ++r) {
            const Json& row = (*value)[r];
            const std::string rowPath = here + ".value[" + std::to_string(r) + "]";
            if (!row.is_array() || row.size() != width)
                return error(rowPath, "expected " + std::to_string(width) + " numbers");
            std::vector<double> numbers;
            for (const Json& x : row) {
                if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() <= 0)
                    return error(rowPath, "expected positive numbers");
                numbers.push_back(x.get<double>());
            }
            rows.push_back(std::move(numbers));
        }
        m_target->sources[here] = source->get<std::string>();
        return rows;
    }

    StatusOr<double> number(const Json& parent, const std::string& key, const std::string& path,
                            bool positive = true) {
        HLO_ASSIGN_OR_RETURN(const Json* value, sourced(parent, key, path));
        double x = value->get<double>();
        if (!std::isfinite(x) || x < 0 || (positive && x == 0))
            return error(path + "." + key + ".value", positive ? "must be positive" : "must not be negative");
        return x;
    }

    Status rateTable(const Json& parent, const std::string& key, const std::string& path,
                     std::map<std::string, double>* out, bool required) {
        auto it = parent.find(key);
        const std::string here = path + "." + key;
        if (it == parent.end()) return required ? error(here, "missing") : Status();
        if (!it->is_object()) return error(here, "expected an object of element types");
        for (const auto& [type, unused] : it->items()) {
            if (!primitive_util::parse(type)) return error(here + "." + type, "unknown element type");
            HLO_ASSIGN_OR_RETURN(double tflops, number(*it, type, here));
            (*out)[type] = tflops;
        }
        if (required && out->empty()) return error(here, "needs at least one element type");
        return {};
    }

private:
    TargetDescription* m_target;
};

constexpr std::array<std::string_view, 9> kTpuKeys = {
    "mxusPerCore", "mxuRows",          "mxuColumns",        "vpuSublanes",    "vpuLanes",
    "clockHz",     "hbmCapacityBytes", "dmaLatencySeconds", "gridStepSeconds"};

// The optional "tpu" section: every key required once the section is there.
StatusOr<TargetDescription::TpuFigures> readTpuFigures(Reader& reader, const Json& section) {
    const std::string path = "$.tpu";
    if (!section.is_object()) return reader.error(path, "expected an object");
    for (const auto& [key, unused] : section.items())
        if (std::find(kTpuKeys.begin(), kTpuKeys.end(), key) == kTpuKeys.end())
            return reader.error(path + "." + key, "unknown key");
    auto count = [&](const char* key) -> StatusOr<int64_t> {
        HLO_ASSIGN_OR_RETURN(double value, reader.number(section, key, path));
        if (value != std::floor(value) || value > 1e9)
            return reader.error(path + "." + key + ".value", "must be a positive integer");
        return static_cast<int64_t>(value);
    };
    TargetDescription::TpuFigures figures;
    HLO_ASSIGN_OR_RETURN(figures.mxusPerCore, count("mxusPerCore"));
    HLO_ASSIGN_OR_RETURN(figures.mxuRows, count("mxuRows"));
    HLO_ASSIGN_OR_RETURN(figures.mxuColumns, count("mxuColumns"));
    HLO_ASSIGN_OR_RETURN(figures.vpuSublanes, count("vpuSublanes"));
    HLO_ASSIGN_OR_RETURN(figures.vpuLanes, count("vpuLanes"));
    HLO_ASSIGN_OR_RETURN(figures.clockHz, reader.number(section, "clockHz", path));
    HLO_ASSIGN_OR_RETURN(figures.hbmCapacityBytes,
                         reader.number(section, "hbmCapacityBytes", path));
    HLO_ASSIGN_OR_RETURN(figures.dmaLatencySeconds,
                         reader.number(section, "dmaLatencySeconds", path, false));
    HLO_ASSIGN_OR_RETURN(figures.gridStepSeconds,
                         reader.number(section, "gridStepSeconds", path, false));
    return figures;
}

Json sourcedJson(const TargetDescription& target, const std::string& path, Json value) {
    Json object = Json::object();
    object["value"] = std::move(value);
    auto it = target.sources.find(path);
    object["source"] = it != target.sources.end() ? it->second : std::string("unknown");
    return object;
}

}  // namespace

std::string_view targetKindName(TargetKind kind) {
    switch (kind) {
        case TargetKind::kCpu: return "cpu";
        case TargetKind::kGpu: return "gpu";
        case TargetKind::kTpu: return "tpu";
    }
    return "cpu";
}

double TargetDescription::peakFlopsPerSecond(PrimitiveType type, bool matrix) const {
    std::string name(primitive_util::name(type));
    auto lookup = [&](const std::map<std::string, double>& table) -> std::optional<double> {
        if (auto it = table.find(name); it != table.end()) return it->second;
        if (auto it = table.find("f32"); it != table.end()) return it->second;
        if (!table.empty()) return table.begin()->second;
        return std::nullopt;
    };
    if (matrix && hasMatrixUnit)
        if (auto it = matrixPeakTflops.find(name); it != matrixPeakTflops.end()) return it->second * 1e12;
    if (auto rate = lookup(vectorPeakTflops)) return *rate * 1e12;
    return 1e12;  // unreachable for parsed descriptions (vector table required)
}

StatusOr<TargetDescription> targetDescriptionFromJson(std::string_view jsonText) {
    Json root = Json::parse(jsonText.begin(), jsonText.end(), nullptr, /*allow_exceptions=*/false,
                            /*ignore_comments=*/true);
    if (root.is_discarded()) return invalidArgument("target description: $: not valid JSON");
    if (!root.is_object()) return invalidArgument("target description: $: expected an object");
    TargetDescription target;
    Reader reader(&target);
    static const std::vector<std::string_view> known = {
        "name", "kind", "description", "matrixUnit", "peakTflops", "transcendentalsPerSecond",
        "memoryBandwidthBytesPerSecond", "memoryBandwidthAllCoresBytesPerSecond", "cacheBytes", "onChipMemoryBytes", "kernelLaunchSeconds",
        "cores", "lanesPerCore", "efficiency", "cpuRuntime", "tpu", "calibrated"};
    for (const auto& [key, unused] : root.items())
        if (std::find(known.begin(), known.end(), key) == known.end())
            return reader.error("$." + key, "unknown key");

    auto name = root.find("name");
    if (name == root.end() || !name->is_string() || name->get<std::string>().empty())
        return reader.error("$.name", "expected a non-empty string");
    target.name = name->get<std::string>();
    auto kind = root.find("kind");
    if (kind == root.end() || !kind->is_string()) return reader.error("$.kind", "expected \"cpu\", \"gpu\" or \"tpu\"");
    std::string kindText = kind->get<std::string>();
    if (kindText == "cpu") target.kind = TargetKind::kCpu;
    else if (kindText == "gpu") target.kind = TargetKind::kGpu;
    else if (kindText == "tpu") target.kind = TargetKind::kTpu;
    else return reader.error("$.kind", "expected \"cpu\", \"gpu\" or \"tpu\", got \"" + kindText + "\"");
    if (auto description = root.find("description"); description != root.end()) {
        if (!description->is_string()) return reader.error("$.description", "expected a string");
        target.description = description->get<std::string>();
    }
    if (auto calibrated = root.find("calibrated"); calibrated != root.end()) {
        if (!calibrated->is_object()) return reader.error("$.calibrated", "expected an object");
        auto time = calibrated->find("unixTime");
        if (time == calibrated->end() || !time->is_number_integer() || time->get<int64_t>() <= 0)
            return reader.error("$.calibrated.unixTime", "expected seconds since 1970 (a positive integer)");
        target.calibrated.unixTime = time->get<int64_t>();
        for (const char* key : {"host", "by"}) {
            auto value = calibrated->find(key);
            if (value == calibrated->end()) continue;
            if (!value->is_string()) return reader.error(std::string("$.calibrated.") + key, "expected a string");
            (std::string_view(key) == "host" ? target.calibrated.host : target.calibrated.by) =
                value->get<std::string>();
        }
    }

    HLO_ASSIGN_OR_RETURN(const Json* matrixUnit, reader.sourced(root, "matrixUnit", "$", /*boolean=*/true));
    target.hasMatrixUnit = matrixUnit->get<bool>();
    auto peak = root.find("peakTflops");
    if (peak == root.end() || !peak->is_object()) return reader.error("$.peakTflops", "expected an object");
    for (const auto& [key, unused] : peak->items())
        if (key != "matrix" && key != "vector") return reader.error("$.peakTflops." + key, "unknown key");
    HLO_RETURN_IF_ERROR(reader.rateTable(*peak, "vector", "$.peakTflops", &target.vectorPeakTflops, true));
    HLO_RETURN_IF_ERROR(
        reader.rateTable(*peak, "matrix", "$.peakTflops", &target.matrixPeakTflops, target.hasMatrixUnit));

    HLO_ASSIGN_OR_RETURN(target.transcendentalsPerSecond, reader.number(root, "transcendentalsPerSecond", "$"));
    HLO_ASSIGN_OR_RETURN(target.memoryBandwidthBytesPerSecond,
                         reader.number(root, "memoryBandwidthBytesPerSecond", "$"));
    if (root.contains("memoryBandwidthAllCoresBytesPerSecond")) {
        HLO_ASSIGN_OR_RETURN(target.memoryBandwidthAllCoresBytesPerSecond,
                             reader.number(root, "memoryBandwidthAllCoresBytesPerSecond", "$"));
    }
    HLO_ASSIGN_OR_RETURN(target.cacheBytes, reader.number(root, "cacheBytes", "$", false));
    HLO_ASSIGN_OR_RETURN(target.onChipMemoryBytes, reader.number(root, "onChipMemoryBytes", "$", false));
    HLO_ASSIGN_OR_RETURN(target.kernelLaunchSeconds, reader.number(root, "kernelLaunchSeconds", "$", false));
    HLO_ASSIGN_OR_RETURN(double cores, reader.number(root, "cores", "$"));
    if (cores != std::floor(cores)) return reader.error("$.cores.value", "must be an integer");
    target.cores = static_cast<int64_t>(cores);
    if (root.contains("lanesPerCore")) {
        HLO_ASSIGN_OR_RETURN(double lanes, reader.number(root, "lanesPerCore", "$"));
        if (lanes != std::floor(lanes)) return reader.error("$.lanesPerCore.value", "must be an integer");
        target.lanesPerCore = static_cast<int64_t>(lanes);
    }

    auto efficiency = root.find("efficiency");
    if (efficiency == root.end() || !efficiency->is_object())
        return reader.error("$.efficiency", "expected an object of op classes");
    for (const auto& [key, unused] : efficiency->items())
        if (std::find(kEfficiencyKeys.begin(), kEfficiencyKeys.end(), key) == kEfficiencyKeys.end())
            return reader.error("$.efficiency." + key, "unknown op class");
    for (size_t i = 0; i < kEfficiencyKeys.size(); ++i) {
        const std::string key(kEfficiencyKeys[i]);
        HLO_ASSIGN_OR_RETURN(double factor, reader.number(*efficiency, key, "$.efficiency"));
        if (factor > 1) return reader.error("$.efficiency." + key + ".value", "must be in (0, 1]");
        target.efficiency[i] = factor;
    }

    if (auto runtime = root.find("cpuRuntime"); runtime != root.end()) {
        if (!runtime->is_object()) return reader.error("$.cpuRuntime", "expected an object");
        for (const auto& [key, unused] : runtime->items())
            if (key != "bandwidthCurve" && key != "parallelMinElements" && key != "parallelDispatchSeconds" &&
                key != "runSeconds" && key != "rowSeconds")
                return reader.error("$.cpuRuntime." + key, "unknown key");
        TargetDescription::CpuRuntime figures;
        HLO_ASSIGN_OR_RETURN(auto rows, reader.table(*runtime, "bandwidthCurve", "$.cpuRuntime", 3));
        for (size_t r = 0; r < rows.size(); ++r) {
            if (r > 0 && rows[r][0] <= rows[r - 1][0])
                return reader.error("$.cpuRuntime.bandwidthCurve.value[" + std::to_string(r) + "]",
                                    "working sets must ascend");
            figures.bandwidthCurve.push_back({rows[r][0], rows[r][1], rows[r][2]});
        }
        HLO_ASSIGN_OR_RETURN(figures.parallelMinElements,
                             reader.number(*runtime, "parallelMinElements", "$.cpuRuntime", false));
        HLO_ASSIGN_OR_RETURN(figures.parallelDispatchSeconds,
                             reader.number(*runtime, "parallelDispatchSeconds", "$.cpuRuntime", false));
        HLO_ASSIGN_OR_RETURN(figures.runSeconds, reader.number(*runtime, "runSeconds", "$.cpuRuntime", false));
        HLO_ASSIGN_OR_RETURN(figures.rowSeconds, reader.number(*runtime, "rowSeconds", "$.cpuRuntime", false));
        target.cpuRuntime = std::move(figures);
    }
    if (auto tpu = root.find("tpu"); tpu != root.end()) {
        HLO_ASSIGN_OR_RETURN(target.tpu, readTpuFigures(reader, *tpu));
    }
    return target;
}

double TargetDescription::CpuRuntime::bandwidthAt(double workingSetBytes, bool allCores) const {
    if (bandwidthCurve.empty()) return 0;
    auto rate = [&](const BandwidthPoint& p) { return allCores ? p.allCores : p.oneCore; };
    if (workingSetBytes <= bandwidthCurve.front().workingSetBytes) return rate(bandwidthCurve.front());
    if (workingSetBytes >= bandwidthCurve.back().workingSetBytes) return rate(bandwidthCurve.back());
    for (size_t i = 1; i < bandwidthCurve.size(); ++i) {
        const BandwidthPoint& hi = bandwidthCurve[i];
        if (workingSetBytes > hi.workingSetBytes) continue;
        const BandwidthPoint& lo = bandwidthCurve[i - 1];
        const double t = std::log(workingSetBytes / lo.workingSetBytes) /
                         std::log(hi.workingSetBytes / lo.workingSetBytes);
        return std::exp(std::log(rate(lo)) + t * (std::log(rate(hi)) - std::log(rate(lo))));
    }
    return rate(bandwidthCurve.back());
}

std::string targetDescriptionToJson(const TargetDescription& target) {
    Json root = Json::object();
    root["name"] = target.name;
    root["kind"] = std::string(targetKindName(target.kind));
    if (!target.description.empty()) root["description"] = target.description;
    if (target.calibrated.unixTime > 0)
        root["calibrated"] = Json{{"unixTime", target.calibrated.unixTime},
                                  {"host", target.calibrated.host},
                                  {"by", target.calibrated.by}};
    root["matrixUnit"] = sourcedJson(target, "$.matrixUnit", target.hasMatrixUnit);
    Json peak = Json::object();
    if (!target.matrixPeakTflops.empty()) {
        Json matrix = Json::object();
        for (const auto& [type, rate] : target.matrixPeakTflops)
            matrix[type] = sourcedJson(target, "$.peakTflops.matrix." + type, rate);
        peak["matrix"] = std::move(matrix);
    }
    Json vector = Json::object();
    for (const auto& [type, rate] : target.vectorPeakTflops)
        vector[type] = sourcedJson(target, "$.peakTflops.vector." + type, rate);
    peak["vector"] = std::move(vector);
    root["peakTflops"] = std::move(peak);
    root["transcendentalsPerSecond"] =
        sourcedJson(target, "$.transcendentalsPerSecond", target.transcendentalsPerSecond);
    root["memoryBandwidthBytesPerSecond"] =
        sourcedJson(target, "$.memoryBandwidthBytesPerSecond", target.memoryBandwidthBytesPerSecond);
    if (target.memoryBandwidthAllCoresBytesPerSecond > 0)
        root["memoryBandwidthAllCoresBytesPerSecond"] = sourcedJson(
            target, "$.memoryBandwidthAllCoresBytesPerSecond", target.memoryBandwidthAllCoresBytesPerSecond);
    root["cacheBytes"] = sourcedJson(target, "$.cacheBytes", target.cacheBytes);
    root["onChipMemoryBytes"] = sourcedJson(target, "$.onChipMemoryBytes", target.onChipMemoryBytes);
    root["kernelLaunchSeconds"] = sourcedJson(target, "$.kernelLaunchSeconds", target.kernelLaunchSeconds);
    root["cores"] = sourcedJson(target, "$.cores", target.cores);
    if (target.lanesPerCore > 0)
        root["lanesPerCore"] = sourcedJson(target, "$.lanesPerCore", target.lanesPerCore);
    Json efficiency = Json::object();
    for (size_t i = 0; i < kEfficiencyKeys.size(); ++i) {
        const std::string key(kEfficiencyKeys[i]);
        efficiency[key] = sourcedJson(target, "$.efficiency." + key, target.efficiency[i]);
    }
    root["efficiency"] = std::move(efficiency);
    if (target.cpuRuntime) {
        Json runtime = Json::object();
        Json curve = Json::array();
        for (const TargetDescription::BandwidthPoint& p : target.cpuRuntime->bandwidthCurve)
            curve.push_back(Json::array({p.workingSetBytes, p.oneCore, p.allCores}));
        runtime["bandwidthCurve"] = sourcedJson(target, "$.cpuRuntime.bandwidthCurve", std::move(curve));
        runtime["parallelMinElements"] =
            sourcedJson(target, "$.cpuRuntime.parallelMinElements", target.cpuRuntime->parallelMinElements);
        runtime["parallelDispatchSeconds"] = sourcedJson(target, "$.cpuRuntime.parallelDispatchSeconds",
                                                         target.cpuRuntime->parallelDispatchSeconds);
        runtime["runSeconds"] = sourcedJson(target, "$.cpuRuntime.runSeconds", target.cpuRuntime->runSeconds);
        runtime["rowSeconds"] = sourcedJson(target, "$.cpuRuntime.rowSeconds", target.cpuRuntime->rowSeconds);
        root["cpuRuntime"] = std::move(runtime);
    }
    if (const auto& tpu = target.tpu) {
        Json section = Json::object();
        auto put = [&](std::string_view key, Json value) {
            const std::string name(key);
            section[name] = sourcedJson(target, "$.tpu." + name, std::move(value));
        };
        put("mxusPerCore", tpu->mxusPerCore);
        put("mxuRows", tpu->mxuRows);
        put("mxuColumns", tpu->mxuColumns);
        put("vpuSublanes", tpu->vpuSublanes);
        put("vpuLanes", tpu->vpuLanes);
        put("clockHz", tpu->clockHz);
        put("hbmCapacityBytes", tpu->hbmCapacityBytes);
        put("dmaLatencySeconds", tpu->dmaLatencySeconds);
        put("gridStepSeconds", tpu->gridStepSeconds);
        root["tpu"] = std::move(section);
    }
    return root.dump(2) + "\n";
}

StatusOr<TargetDescription> loadTargetDescription(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return ioError("cannot read target description '" + path + "'");
    std::stringstream buffer;
    buffer << file.rdbuf();
    auto target = targetDescriptionFromJson(buffer.str());
    if (!target.isOk()) return target.status().withContext(path);
    return target;
}

const std::vector<std::string>& builtinTargetNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> result;
        for (const BuiltinTargetJson& entry : builtinTargetJsonTable()) result.emplace_back(entry.name);
        std::sort(result.begin(), result.end());
        return result;
    }();
    return names;
}

std::optional<std::string_view> builtinTargetJson(std::string_view name) {
    for (const BuiltinTargetJson& entry : builtinTargetJsonTable())
        if (entry.name == name) return entry.text;
    return std::nullopt;
}

StatusOr<TargetDescription> builtinTargetDescription(std::string_view name, const std::string& resourcesDir) {
    std::optional<std::string_view> text = builtinTargetJson(name);
    if (!text) {
        std::string known;
        for (const std::string& n : builtinTargetNames()) known += (known.empty() ? "" : ", ") + n;
        return notFound("unknown target '" + std::string(name) + "' (known: " + known + ")");
    }
    if (!resourcesDir.empty()) {
        std::string path = resourcesDir + "/" + std::string(name) + ".json";
        if (std::ifstream(path).good()) return loadTargetDescription(path);
    }
    auto target = targetDescriptionFromJson(*text);
    if (!target.isOk()) return target.status().withContext("built-in " + std::string(name) + ".json");
    return target;
}

std::string cpuTargetCachePath() {
    std::string base;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') base = xdg;
    else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        base = std::string(home) + "/.cache";
    else return {};
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof(host), "unknown");
    std::string hostname(host);
    for (char& c : hostname)
        if (c == '/' || c == '\\') c = '_';
    return base + "/hloscope/cpu-" + hostname + ".json";
}

StatusOr<TargetDescription> loadCpuTarget() {
    std::string cached = cpuTargetCachePath();
    if (!cached.empty() && std::ifstream(cached).good()) return loadTargetDescription(cached);
    return builtinTargetDescription("cpu");
}

StatusOr<TargetDescription> resolveTargetDescription(const std::string& nameOrPath) {
    for (const std::string& builtin : builtinTargetNames())
        if (builtin == nameOrPath)
            return nameOrPath == "cpu" ? loadCpuTarget() : builtinTargetDescription(nameOrPath);
    if (nameOrPath.ends_with(".json")) return loadTargetDescription(nameOrPath);
    std::string known;
    for (const std::string& b : builtinTargetNames()) known += (known.empty() ? "" : ", ") + b;
    return invalidArgument("unknown hardware '" + nameOrPath + "' (expected " + known +
                           " or a target .json file)");
}

std::string calibrationSummary(const TargetDescription& target, int64_t nowUnixTime) {
    if (target.calibrated.unixTime <= 0)
        return target.kind == TargetKind::kCpu
                   ? "not calibrated for this machine: hloscope's built-in cpu figures (hloscope-cli calibrate measures it)"
                   : "published figures of " + target.name;
    char date[32] = "?";
    const std::time_t when = static_cast<std::time_t>(target.calibrated.unixTime);
    std::tm utc{};
    if (gmtime_r(&when, &utc)) std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
    const int64_t days = std::max<int64_t>(0, (nowUnixTime - target.calibrated.unixTime) / 86400);
    std::string text = "calibrated on " + (target.calibrated.host.empty() ? std::string("this machine") : target.calibrated.host) +
                       " " + date + " by " + target.calibrated.by + " (" +
                       (days == 0 ? std::string("today") : days == 1 ? std::string("1 day ago") : std::to_string(days) + " days ago") + ")";
    int fitted = 0;
    for (const auto& [path, source] : target.sources)
        if (path.starts_with("$.efficiency.") && source.starts_with(kFittedFromHistorySource))
            ++fitted;
    text += fitted > 0 ? "; " + std::to_string(fitted) + (fitted == 1 ? " efficiency factor" : " efficiency factors") +
                             " fitted to this machine's history"
                       : "; efficiency factors as shipped";
    return text;
}

std::string_view pipelineFamily(TargetKind kind) {
    switch (kind) {
    case TargetKind::kCpu: return "cpu";
    case TargetKind::kGpu: return "gpu";
    case TargetKind::kTpu: return "tpu";
    }
    return "cpu";
}

}  // namespace hloscope
