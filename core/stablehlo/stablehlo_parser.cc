#include "core/stablehlo/stablehlo_parser.h"

#include "core/stablehlo/stablehlo_import.h"
#include "core/stablehlo/stablehlo_reader.h"

namespace hloscope {
namespace {

struct ChunkRange {
    size_t begin = 0;
    size_t end = 0;
    int firstLine = 1;
};

// Splits at lines that are exactly `// -----` (trailing blanks allowed).
std::vector<ChunkRange> splitChunks(std::string_view text) {
    std::vector<ChunkRange> chunks;
    ChunkRange current;
    int line = 1;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
        std::string_view content = text.substr(pos, (eol == std::string_view::npos ? text.size() : eol) - pos);
        while (!content.empty() && (content.back() == ' ' || content.back() == '\t' || content.back() == '\r'))
            content.remove_suffix(1);
        if (content == "// -----") {
            current.end = pos;
            chunks.push_back(current);
            current = ChunkRange{next, next, line + 1};
        }
        pos = next;
        ++line;
    }
    current.end = text.size();
    chunks.push_back(current);
    return chunks;
}

std::string stem(const std::string& fileName) {
    size_t slash = fileName.find_last_of("/\\");
    std::string base = slash == std::string::npos ? fileName : fileName.substr(slash + 1);
    size_t dot = base.find('.');
    if (dot != std::string::npos && dot > 0) base.resize(dot);
    return base.empty() ? "module" : base;
}

// Imports one chunk; nullopt-like empty pointer when the chunk holds no
// function (comments only).
StatusOr<std::unique_ptr<HloModule>> importChunk(std::string_view text, const ChunkRange& chunk,
                                                 const std::string& fileName,
                                                 const stablehlo::LineIndex& lines) {
    stablehlo::Reader reader(text, chunk.begin, chunk.end, fileName, lines);
    HLO_ASSIGN_OR_RETURN(stablehlo::ModuleAst ast, reader.readModule());
    if (ast.funcs.empty()) return std::unique_ptr<HloModule>();
    stablehlo::Importer importer(ast, fileName, stem(fileName));
    return importer.run();
}

}  // namespace

std::vector<StableHloChunk> parseStableHloChunks(std::string_view text,
                                                 const std::string& fileName) {
    stablehlo::LineIndex lines(text);
    std::vector<StableHloChunk> result;
    for (const ChunkRange& chunk : splitChunks(text)) {
        auto module = importChunk(text, chunk, fileName, lines);
        if (module.isOk() && *module == nullptr) continue;
        StableHloChunk entry;
        entry.firstLine = chunk.firstLine;
        entry.module = std::move(module);
        result.push_back(std::move(entry));
    }
    return result;
}

StatusOr<std::vector<std::unique_ptr<HloModule>>> parseStableHlo(std::string_view text,
                                                                 const std::string& fileName) {
    std::vector<std::unique_ptr<HloModule>> modules;
    for (StableHloChunk& chunk : parseStableHloChunks(text, fileName)) {
        if (!chunk.module.isOk()) return chunk.module.status();
        modules.push_back(std::move(*chunk.module));
    }
    if (modules.empty())
        return Status(StatusCode::kInvalidArgument, "no func.func found in StableHLO input",
                      SourceLocation{fileName, 1, 1});
    return modules;
}

}  // namespace hloscope
