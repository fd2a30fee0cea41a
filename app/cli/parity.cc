// hloscope-cli parity: XLA's fusion tests as data (tests/parity/*.tsv). Each row names a corpus
// module from one of XLA's fusion tests and what XLA expects after its pass; the command runs
// the matching hloscope pass alone on the module and compares every recorded outcome.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/fusion/fusion_decision.h"
#include "compiler/layers/fusion_comparison.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "compiler/runtime/execution_modes.h"
#include "core/io/module_io.h"
#include "core/text/hlo_parser.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope::cli {
namespace {

using Json = nlohmann::ordered_json;

const char* const kColumns[] = {"file",     "xla_test", "pass",  "target", "changed", "fusions",
                                "root",     "together", "apart", "status", "note"};
constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);
const char* const kCriteria[] = {"changed", "fusions", "root", "together", "apart"};

struct Row {
    std::string table;
    int line = 0;
    std::map<std::string, std::string> cells;
    const std::string& operator[](const std::string& column) const { return cells.at(column); }
    std::string where() const { return table + ":" + std::to_string(line); }
    // "priority_fusion_test.cc" of "priority_fusion_test.cc:FuseWithSharedArgument".
    std::string testFile() const { return cells.at("xla_test").substr(0, cells.at("xla_test").find(':')); }
};

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return parts;
}

std::string trimmed(const std::string& text) {
    const size_t begin = text.find_first_not_of(" \r\n");
    if (begin == std::string::npos) return {};
    return text.substr(begin, text.find_last_not_of(" \r\n") - begin + 1);
}

// The rows of one table; errors name TABLE:LINE.
StatusOr<std::vector<Row>> readTable(const std::string& path) {
    std::ifstream in(path);
    if (!in) return notFound(path + ": cannot open the table");
    std::vector<Row> rows;
    std::string text;
    int line = 0;
    bool header = false;
    while (std::getline(in, text)) {
        ++line;
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (trimmed(text).empty() || text[0] == '#') continue;
        std::vector<std::string> cells = split(text, '\t');
        if (!header) {
            for (size_t i = 0; i < kColumnCount; ++i)
                if (i >= cells.size() || trimmed(cells[i]) != kColumns[i])
                    return invalidArgument(path + ":" + std::to_string(line) + ": the header must name the columns " +
                                           "file, xla_test, pass, target, changed, fusions, root, together, apart, "
                                           "status, note (tab-separated)");
            header = true;
            continue;
        }
        if (cells.size() == kColumnCount - 1) cells.emplace_back();  // an empty note
        if (cells.size() != kColumnCount)
            return invalidArgument(path + ":" + std::to_string(line) + ": expected " + std::to_string(kColumnCount) +
                                   " tab-separated columns, found " + std::to_string(cells.size()));
        Row row;
        row.table = path;
        row.line = line;
        for (size_t i = 0; i < kColumnCount; ++i) row.cells[kColumns[i]] = trimmed(cells[i]);
        auto bad = [&](const std::string& what) {
            return invalidArgument(row.where() + ": " + what);
        };
        if (row["file"].empty()) return bad("no file");
        if (row["xla_test"].find(':') == std::string::npos) return bad("xla_test must be TESTFILE:TESTNAME");
        if (row["status"] != "check" && row["status"] != "skip") return bad("status must be check or skip");
        if (row["status"] == "skip" && row["note"].empty()) return bad("a skipped row needs a note saying why");
        if (row["target"] != "cpu" && row["target"] != "gpu") return bad("target must be cpu or gpu");
        if (row["changed"] != "yes" && row["changed"] != "no" && row["changed"] != "-")
            return bad("changed must be yes, no or -");
        if (row["fusions"] != "-" &&
            (row["fusions"].empty() || !std::all_of(row["fusions"].begin(), row["fusions"].end(),
                                                    [](char c) { return c >= '0' && c <= '9'; })))
            return bad("fusions must be a count or -");
        rows.push_back(std::move(row));
    }
    if (!header) return invalidArgument(path + ": no header line");
    return rows;
}

// One compared outcome of a row.
struct Outcome {
    Outcome(std::string criterion, std::string expected, std::string actual)
        : criterion(std::move(criterion)), expected(std::move(expected)), actual(std::move(actual)) {}
    std::string criterion;
    std::string expected, actual;
    bool agrees = false;
    std::string cause;  // for a disagreement: "cost model", "legality" or "" (no decision logged)
    std::string log;    // hloscope's logged decisions behind it
};

struct RowResult {
    const Row* row = nullptr;
    std::string error;  // the module did not load or the pass failed
    std::vector<Outcome> outcomes;
};

// Every decision the pass logged, by "producer consumer".
struct DecisionLog : PassInstrumentation {
    std::vector<PassDecision> decisions;
    bool changed = false;
    Status afterPass(const PassRunInfo&, const HloModule&, const PassRunResult& result) override {
        decisions.insert(decisions.end(), result.decisions.begin(), result.decisions.end());
        changed = changed || result.changed;
        return Status::ok();
    }
};

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// The decisions logged between any two of `names` (either way round), and whether the last
// refusal among them was the cost model's.
void explain(const std::vector<std::string>& names, const DecisionLog& log, Outcome& outcome) {
    const std::set<std::string> set(names.begin(), names.end());
    const std::string noGain(fusionReasonCode(FusionReason::kNoPredictedGain));
    std::vector<std::string> lines;
    for (const PassDecision& d : log.decisions) {
        if (!set.count(d.producer) || !set.count(d.consumer)) continue;
        lines.push_back("%" + d.producer + " -> %" + d.consumer + ": " + d.reason);
        if (!d.applied) outcome.cause = d.reason == noGain ? "cost model" : "legality";
    }
    outcome.log = joined(lines, "; ");
}

StatusOr<RowResult> runRow(const Row& row, const std::string& corpus) {
    RowResult result;
    result.row = &row;
    // "PREFIX+FILE": a module whose test prepends a shared prefix (computations several
    // tests call) is the two texts one after the other.
    std::string text;
    for (const std::string& part : split(row["file"], '+')) {
        std::ifstream in(std::filesystem::path(corpus) / part, std::ios::binary);
        if (!in) return notFound(row.where() + ": " + part + " is not in the corpus at " + corpus);
        std::ostringstream content;
        content << in.rdbuf();
        text += content.str() + "\n";
    }
    auto module = parseHloModule(text);
    if (!module.isOk()) {
        result.error = formatError(row["file"], module.status());
        return result;
    }
    // Names the row uses must be the module's (a typo is the table's error, not a disagreement).
    std::set<std::string> inputNames;
    // A fusion of the input is followed by its fused root: a pass that merges it into another
    // fusion names the merged one anew, while the ops inside keep their names.
    std::unordered_map<std::string, std::string> followed;
    for (const auto& computation : (*module)->computations())
        for (const auto& instruction : computation->instructions()) {
            inputNames.insert(instruction->name());
            const HloInstruction* inner = instruction.get();
            // (A multi-output fusion's root is a tuple, which a merge rebuilds: its first
            // output is followed.)
            while ((inner->opcode() == HloOpcode::kFusion && inner->fusedComputation() &&
                    inner->fusedComputation()->root()) ||
                   (inner != instruction.get() && inner->opcode() == HloOpcode::kTuple && inner->operandCount() > 0))
                inner = inner->opcode() == HloOpcode::kTuple ? inner->operand(0) : inner->fusedComputation()->root();
            if (inner != instruction.get()) followed.emplace(instruction->name(), inner->name());
        }
    std::vector<std::vector<std::string>> together, apart;
    for (const std::string& group : split(row["together"], ';'))
        if (group != "-" && !group.empty()) together.push_back(split(group, ','));
    for (const std::string& pair : split(row["apart"], ';'))
        if (pair != "-" && !pair.empty()) apart.push_back(split(pair, '|'));
    for (auto* lists : {&together, &apart})
        for (auto& names : *lists) {
            for (std::string& name : names) {
                name = trimmed(name);
                if (!name.empty() && name[0] == '%') name.erase(0, 1);
                if (!inputNames.count(name))
                    return invalidArgument(row.where() + ": " + row["file"] + " has no instruction named '" + name + "'");
            }
            if (names.size() < 2) return invalidArgument(row.where() + ": a group or pair needs two names");
        }
    for (const auto& pair : apart)
        if (pair.size() != 2) return invalidArgument(row.where() + ": apart takes pairs a|b");

    auto base = targetPipeline(row["target"] == "gpu" ? "h100" : "cpu");
    if (!base.isOk()) return base.status();
    auto pipeline = pipelineFromList(row["pass"], *base);
    if (!pipeline.isOk()) return invalidArgument(row.where() + ": pass: " + pipeline.status().message());
    for (PipelineStep& step : pipeline->steps)
        if (isFusionPassName(step.pass) && row["target"] == "gpu") step.options.set("hardware", "h100");
    RunnerOptions options;
    options.verify = false;  // XLA's test modules are run as the test runs them
    auto runner = PipelineRunner::create(**module, std::move(*pipeline), options);
    if (!runner.isOk()) {
        result.error = runner.status().toString();
        return result;
    }
    DecisionLog log;
    (*runner)->addInstrumentation(&log);
    if (Status ran = (*runner)->runAll(); !ran.isOk()) {
        result.error = ran.toString();
        return result;
    }
    const HloModule& after = **module;
    const HloComputation* entry = after.entryComputation();
    const auto kernels = kernelsOfOps(after, /*regions=*/false);  // a reducer's `add` is no op of the test's
    auto kernelsOf = [&](const std::string& name) {
        // Still a kernel under its own name (a fusion the pass left alone): itself.
        if (auto same = kernels.find(name.substr(0, name.find(".clone")));
            same != kernels.end() && std::find(same->second.begin(), same->second.end(), name) != same->second.end())
            return same->second;
        auto alias = followed.find(name);
        std::string key = alias == followed.end() ? name : alias->second;
        key = key.substr(0, key.find(".clone"));  // kernelsOfOps's op names drop XLA's copy suffix
        auto it = kernels.find(key);
        return it == kernels.end() ? std::vector<std::string>() : it->second;
    };
    auto describe = [&](const std::string& name) {
        const std::vector<std::string> in = kernelsOf(name);
        if (in.empty()) return name + " is gone";
        if (in.size() == 1 && in[0] == name) return name + " is its own kernel";
        return name + " in " + joined(in, " and ");
    };

    if (row["changed"] != "-") {
        Outcome o("changed", row["changed"], log.changed ? "yes" : "no");
        o.agrees = o.expected == o.actual;
        result.outcomes.push_back(o);
    }
    if (row["fusions"] != "-") {
        int64_t fusions = 0;
        for (const auto& instruction : entry->instructions()) fusions += instruction->opcode() == HloOpcode::kFusion;
        Outcome o("fusions", row["fusions"], std::to_string(fusions));
        o.agrees = o.expected == o.actual;
        result.outcomes.push_back(o);
    }
    if (row["root"] != "-") {
        const HloInstruction* root = entry->root();
        std::string actual(hloOpcodeString(root->opcode()));
        if (root->opcode() == HloOpcode::kFusion) actual += ":" + std::string(root->fusionKind());
        Outcome o("root", row["root"], actual);
        o.agrees = row["root"].find(':') != std::string::npos ? actual == row["root"]
                                                              : actual.substr(0, actual.find(':')) == row["root"];
        result.outcomes.push_back(o);
    }
    for (const auto& group : together) {
        // One kernel holds every name (a duplicated op may be in others too).
        std::map<std::string, size_t> count;
        for (const std::string& name : group)
            for (const std::string& kernel : kernelsOf(name)) ++count[kernel];
        Outcome o("together", "one kernel holds " + joined(group, ", "), "");
        o.agrees = std::any_of(count.begin(), count.end(), [&](const auto& c) { return c.second == group.size(); });
        if (!o.agrees) {
            std::vector<std::string> where;
            for (const std::string& name : group) where.push_back(describe(name));
            o.actual = joined(where, "; ");
            explain(group, log, o);
        }
        result.outcomes.push_back(o);
    }
    for (const auto& pair : apart) {
        const std::vector<std::string> a = kernelsOf(pair[0]), b = kernelsOf(pair[1]);
        Outcome o("apart", pair[0] + " and " + pair[1] + " in different kernels", "");
        o.agrees = !a.empty() && !b.empty() &&
                   std::none_of(a.begin(), a.end(), [&](const std::string& k) {
                       return std::find(b.begin(), b.end(), k) != b.end();
                   });
        if (!o.agrees) {
            o.actual = describe(pair[0]) + "; " + describe(pair[1]);
            explain(pair, log, o);
        }
        result.outcomes.push_back(o);
    }
    return result;
}

// The corpus's hlo/ folder: --corpus, $HLOSCOPE_CORPUS, ../shared/corpus/hlo from here, or from
// the first table's checkout (TABLE is tests/parity/X.tsv beside ../shared).
std::string findCorpus(const std::string& given, const std::string& firstTable) {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    if (!given.empty()) return given;
    if (const char* env = std::getenv("HLOSCOPE_CORPUS")) candidates.emplace_back(env);
    candidates.emplace_back("../shared/corpus/hlo");
    std::error_code error;
    const fs::path table = fs::absolute(firstTable, error);
    if (!error) candidates.push_back(table.parent_path().parent_path().parent_path().parent_path() / "shared/corpus/hlo");
    for (const fs::path& candidate : candidates)
        if (fs::is_directory(candidate, error)) return candidate.string();
    return {};
}

struct Tally {
    int64_t agreed = 0, total = 0;
    void add(bool agrees) {
        ++total;
        agreed += agrees;
    }
    double share() const { return total > 0 ? static_cast<double>(agreed) / static_cast<double>(total) : 1.0; }
    std::string text() const {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%lld/%lld (%.1f%%)", static_cast<long long>(agreed),
                      static_cast<long long>(total), 100.0 * share());
        return buffer;
    }
};

// The outcomes of every compared row, tallied.
struct Report {
    std::string corpus;
    size_t rows = 0;
    std::vector<RowResult> results;
    std::vector<const Row*> skipped;
    std::map<std::string, Tally> byFile, byCriterion;
    std::map<std::string, int64_t> causes;  // of the disagreements
    Tally overall;
    int64_t errors = 0;  // rows whose module did not load or whose pass failed
};

void printJson(const Report& rep) {
    Json report{{"corpus", rep.corpus}, {"rows", rep.rows}, {"checked", rep.results.size()},
                {"skipped", rep.skipped.size()}, {"errors", rep.errors}};
    report["agreement"] = {{"agreed", rep.overall.agreed}, {"outcomes", rep.overall.total}, {"share", rep.overall.share()}};
    Json files = Json::object(), criteria = Json::object(), why = Json::object();
    for (const auto& [name, t] : rep.byFile) files[name] = {{"agreed", t.agreed}, {"outcomes", t.total}, {"share", t.share()}};
    for (const auto& [name, t] : rep.byCriterion)
        criteria[name] = {{"agreed", t.agreed}, {"outcomes", t.total}, {"share", t.share()}};
    for (const auto& [name, n] : rep.causes) why[name] = n;
    report["files"] = files;
    report["criteria"] = criteria;
    report["disagreement_causes"] = why;
    Json list = Json::array();
    for (const RowResult& r : rep.results) {
        for (const Outcome& o : r.outcomes)
            if (!o.agrees)
                list.push_back({{"where", r.row->where()}, {"file", (*r.row)["file"]}, {"xla_test", (*r.row)["xla_test"]},
                                {"criterion", o.criterion}, {"xla", o.expected}, {"hloscope", o.actual},
                                {"cause", o.cause}, {"log", o.log}});
        if (!r.error.empty())
            list.push_back({{"where", r.row->where()}, {"file", (*r.row)["file"]}, {"xla_test", (*r.row)["xla_test"]},
                            {"criterion", "run"}, {"error", r.error}});
    }
    report["disagreements"] = list;
    const std::string out = report.dump(1) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
}

void printText(const Report& rep, bool verbose) {
    std::printf("XLA's fusion tests against hloscope's passes: %zu rows, %zu compared, %zu listed as not "
                "comparable\n\n",
                rep.rows, rep.results.size(), rep.skipped.size());
    for (const auto& [name, t] : rep.byFile) std::printf("  %-40s %s\n", name.c_str(), t.text().c_str());
    std::printf("\nper criterion:\n");
    for (const auto& [name, t] : rep.byCriterion) std::printf("  %-40s %s\n", name.c_str(), t.text().c_str());
    std::printf("\noverall: %s of the outcomes agree\n", rep.overall.text().c_str());
    if (!rep.causes.empty()) {
        std::printf("disagreements by cause:");
        for (const auto& [name, n] : rep.causes) std::printf(" %s %lld;", name.c_str(), static_cast<long long>(n));
        std::printf("\n");
    }
    bool header = false;
    for (const RowResult& r : rep.results) {
        const Row& row = *r.row;
        auto title = [&]() {
            if (!header) std::printf("\ndisagreements:\n");
            header = true;
            std::printf("  %s (%s, %s on %s)\n", row["file"].c_str(), row["xla_test"].c_str(), row["pass"].c_str(),
                        row["target"].c_str());
        };
        if (!r.error.empty()) {
            title();
            std::printf("    the pass did not run: %s\n", r.error.c_str());
            continue;
        }
        bool titled = false;
        for (const Outcome& o : r.outcomes) {
            if (o.agrees) continue;
            if (!titled) title();
            titled = true;
            std::printf("    %s: XLA %s; hloscope %s%s%s\n", o.criterion.c_str(), o.expected.c_str(), o.actual.c_str(),
                        o.cause.empty() ? "" : (" [" + o.cause + "]").c_str(),
                        o.log.empty() ? "" : ("\n      hloscope's log: " + o.log).c_str());
        }
    }
    if (verbose && !rep.skipped.empty()) {
        std::printf("\nnot comparable:\n");
        for (const Row* row : rep.skipped)
            std::printf("  %s (%s): %s\n", (*row)["file"].c_str(), (*row)["xla_test"].c_str(), (*row)["note"].c_str());
    }
}

}  // namespace

int runParity(const std::vector<std::string>& args) {
    std::vector<std::string> tables;
    std::string corpusFlag;
    bool json = false, verbose = false;
    double minAgreement = -1;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--corpus") {
            if (i + 1 >= args.size()) return usageError("parity: --corpus needs the corpus's hlo/ folder");
            corpusFlag = args[++i];
        } else if (arg == "--min-agreement") {
            if (i + 1 >= args.size()) return usageError("parity: --min-agreement needs a percentage");
            char* end = nullptr;
            minAgreement = std::strtod(args[++i].c_str(), &end);
            if (!end || *end != '\0' || minAgreement < 0 || minAgreement > 100)
                return usageError("parity: --min-agreement needs a percentage from 0 to 100");
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--verbose") {
            verbose = true;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usageError("parity: unknown option '" + arg + "'");
        } else {
            tables.push_back(arg);
        }
    }
    if (tables.empty()) return usageError("parity: no table (tests/parity/*.tsv)");
    const std::string corpus = findCorpus(corpusFlag, tables.front());
    if (corpus.empty() || !std::filesystem::is_directory(corpus)) {
        std::fprintf(stderr, "hloscope-cli: parity: the corpus's hlo/ folder was not found%s; pass --corpus DIR\n",
                     corpusFlag.empty() ? "" : (" at " + corpusFlag).c_str());
        return kExitFailed;
    }
    std::vector<Row> rows;
    for (const std::string& table : tables) {
        auto read = readTable(table);
        if (!read.isOk()) {
            std::fprintf(stderr, "hloscope-cli: parity: %s\n", read.status().message().c_str());
            return kExitFailed;
        }
        for (Row& row : *read) rows.push_back(std::move(row));
    }

    Report report;
    report.corpus = corpus;
    report.rows = rows.size();
    std::vector<RowResult>& results = report.results;
    std::map<std::string, Tally>& byFile = report.byFile;
    std::map<std::string, Tally>& byCriterion = report.byCriterion;
    Tally& overall = report.overall;
    for (const Row& row : rows) {
        if (row["status"] == "skip") {
            report.skipped.push_back(&row);
            continue;
        }
        auto result = runRow(row, corpus);
        if (!result.isOk()) {
            std::fprintf(stderr, "hloscope-cli: parity: %s\n", result.status().message().c_str());
            return kExitFailed;
        }
        Tally& file = byFile[row.testFile()];
        if (!result->error.empty()) {
            // A module that does not load or a pass that fails disagrees on every outcome.
            ++report.errors;
            for (const char* criterion : kCriteria)
                if (row[criterion] != "-") {
                    file.add(false);
                    byCriterion[criterion].add(false);
                    overall.add(false);
                }
        }
        for (const Outcome& o : result->outcomes) {
            file.add(o.agrees);
            byCriterion[o.criterion].add(o.agrees);
            overall.add(o.agrees);
            if (!o.agrees) ++report.causes[o.cause.empty() ? "no decision logged" : o.cause];
        }
        results.push_back(std::move(*result));
    }

    if (json) printJson(report);
    else printText(report, verbose);
    if (minAgreement >= 0 && 100.0 * overall.share() + 1e-9 < minAgreement) {
        std::fprintf(stderr, "hloscope-cli: parity: %.1f%% of the outcomes agree, below --min-agreement %.1f%%\n",
                     100.0 * overall.share(), minAgreement);
        return kExitFailed;
    }
    return kExitOk;
}

}  // namespace hloscope::cli
