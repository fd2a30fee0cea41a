#include "core/io/module_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/json/hlo_json.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/io/input_limits.h"
#include "core/stablehlo/stablehlo_parser.h"

namespace hloscope {

std::string_view moduleFormatName(ModuleFormat format) {
    switch (format) {
    case ModuleFormat::kHloText: return "hlo";
    case ModuleFormat::kJson: return "json";
    case ModuleFormat::kStableHlo: return "stablehlo";
    case ModuleFormat::kUnknown: return "unknown";
    }
    return "unknown";
}

ModuleFormat detectModuleFormat(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        char c = text[pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ++pos;
            continue;
        }
        // Skip comment lines: `//` (HLO, MLIR) and `#` (FileCheck RUN lines).
        if (c == '#' || (c == '/' && pos + 1 < text.size() && text[pos + 1] == '/')) {
            size_t eol = text.find('\n', pos);
            if (eol == std::string_view::npos) return ModuleFormat::kUnknown;
            pos = eol + 1;
            continue;
        }
        if (c == '{') return ModuleFormat::kJson;
        std::string_view rest = text.substr(pos);
        if (rest.starts_with("module") || rest.starts_with("func.func") ||
            rest.starts_with("\"builtin.module\""))
            return ModuleFormat::kStableHlo;
        return ModuleFormat::kHloText;
    }
    return ModuleFormat::kUnknown;
}

StatusOr<std::string> readFileToString(const std::string& path) {
    FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (file == nullptr)
        return ioError(path + ": cannot open: " + std::strerror(errno));
    std::string data;
    // The size limit is checked before anything is allocated; standard input
    // (and a file that grows while read) is checked as it arrives.
    const int64_t limit = limits::maxInputFileBytes();
    if (file != stdin && std::fseek(file, 0, SEEK_END) == 0) {
        long size = std::ftell(file);
        if (Status tooLarge = limits::checkInputFileSize(path, size); !tooLarge.isOk()) {
            std::fclose(file);
            return tooLarge;
        }
        if (size > 0) data.reserve(static_cast<size_t>(size));
        std::fseek(file, 0, SEEK_SET);
    }
    char buffer[1 << 16];
    size_t n;
    bool tooLarge = false;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
        if (static_cast<int64_t>(data.size() + n) > limit) {
            tooLarge = true;
            break;
        }
        data.append(buffer, n);
    }
    bool failed = std::ferror(file) != 0;
    if (file != stdin) std::fclose(file);
    if (tooLarge)
        return Status(StatusCode::kResourceExhausted,
                      (path == "-" ? std::string("<stdin>") : path) + ": more than the " +
                          std::to_string(limit >> 20) +
                          " MiB input limit (HLOSCOPE_MAX_INPUT_MB raises it)");
    if (failed) return ioError(path + ": read error");
    return data;
}

namespace {

StatusOr<std::vector<std::unique_ptr<HloModule>>> readModules(std::string_view text,
                                                              const std::string& fileName) {
    switch (detectModuleFormat(text)) {
    case ModuleFormat::kHloText: {
        HloParseOptions options;
        options.fileName = fileName;
        return parseHloModules(text, options);
    }
    case ModuleFormat::kJson: {
        HLO_ASSIGN_OR_RETURN(auto module, moduleFromJson(text, fileName));
        std::vector<std::unique_ptr<HloModule>> modules;
        modules.push_back(std::move(module));
        return modules;
    }
    case ModuleFormat::kStableHlo:
        return parseStableHlo(text, fileName);
    case ModuleFormat::kUnknown: break;
    }
    return Status(StatusCode::kInvalidArgument, "empty input: no HLO module found",
                  SourceLocation{fileName, 1, 1});
}

}  // namespace

StatusOr<std::vector<std::unique_ptr<HloModule>>> loadModules(std::string_view text,
                                                              const std::string& fileName) {
    HLO_ASSIGN_OR_RETURN(auto modules, readModules(text, fileName));
    // A computation that calls itself cannot be walked. The HLO text parser refuses one at the
    // reference's line and column; from JSON and StableHLO the error names the instruction.
    if (detectModuleFormat(text) == ModuleFormat::kHloText) return modules;
    for (const auto& module : modules)
        if (const auto cycle = module->findCallCycle())
            return Status(StatusCode::kInvalidArgument,
                          "%" + cycle->instruction->name() + " in computation " +
                              cycle->instruction->parent()->name() + " calls computation " +
                              cycle->called->name() + " recursively (" + cycle->path +
                              "): a computation may not call itself, directly or through others",
                          SourceLocation{fileName, 0, 0});
    return modules;
}

StatusOr<std::unique_ptr<HloModule>> loadModule(std::string_view text,
                                                const std::string& fileName) {
    HLO_ASSIGN_OR_RETURN(auto modules, loadModules(text, fileName));
    if (modules.size() != 1)
        return Status(StatusCode::kInvalidArgument,
                      "expected one module, found " + std::to_string(modules.size()) +
                          " (separated by '// -----')",
                      SourceLocation{fileName, 0, 0});
    return std::move(modules.front());
}

StatusOr<std::unique_ptr<HloModule>> loadModuleFromFile(const std::string& path) {
    HLO_ASSIGN_OR_RETURN(std::string text, readFileToString(path));
    return loadModule(text, path == "-" ? "<stdin>" : path);
}

Status checkRoundTrip(const HloModule& module, const std::string& fileName) {
    std::string first = printModule(module);
    HloParseOptions options;
    options.fileName = fileName + " (printed)";
    auto reparsed = parseHloModule(first, options);
    if (!reparsed.isOk())
        return internalError("roundtrip: printed text does not parse: " +
                             reparsed.status().toString());
    std::string why;
    if (!module.structurallyEqual(**reparsed, &why))
        return internalError("roundtrip: reparsed module differs: " + why);
    std::string second = printModule(**reparsed);
    if (second == first) return Status::ok();
    size_t at = 0;
    while (at < first.size() && at < second.size() && first[at] == second[at]) ++at;
    size_t lineStart = first.rfind('\n', at == 0 ? 0 : at - 1);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    size_t lineEnd = first.find('\n', at);
    if (lineEnd == std::string::npos) lineEnd = first.size();
    return internalError("roundtrip: print is not a fixed point near: " +
                         first.substr(lineStart, std::min<size_t>(lineEnd - lineStart, 200)));
}

}  // namespace hloscope
