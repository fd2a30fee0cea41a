#include "app/cli/commands.h"
#include "app/cli/util.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "core/json/hlo_json.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "core/ir/module_stats.h"

namespace hloscope::cli {
namespace {

// Resident set size in bytes (Linux), 0 when unknown.
int64_t residentBytes() {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0, resident = 0;
    if (!(statm >> pages >> resident)) return 0;
    return resident * 4096;
}

struct ParseFlags {
    bool verify = false;
    bool roundtrip = false;
    bool bench = false;
    bool quiet = false;
    int repeat = 1;
    std::vector<std::string> files;
};

int runBench(const ParseFlags& flags) {
    struct Input {
        std::string name;
        std::string text;
    };
    std::vector<Input> inputs;
    int64_t totalBytes = 0;
    for (const std::string& file : flags.files) {
        auto text = readFileToString(file);
        if (!text.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(displayName(file), text.status()).c_str());
            return kExitFailed;
        }
        totalBytes += static_cast<int64_t>(text->size());
        inputs.push_back({displayName(file), std::move(*text)});
    }
    if (totalBytes == 0) return usageError("parse --bench: no input bytes");

    double bestParse = 1e100, bestPrint = 1e100;
    int64_t instructions = 0, printedBytes = 0;
    double peakRatio = 0.0;
    std::string worstMemoryFile;
    int failures = 0;
    double aggregateRatio = 0.0;
    for (int round = 0; round < flags.repeat; ++round) {
        double parseSeconds = 0, printSeconds = 0;
        // Round 0 keeps every module alive to measure the memory of all of
        // them together against all the text.
        std::vector<std::unique_ptr<HloModule>> kept;
        int64_t roundStart = residentBytes();
        instructions = 0;
        printedBytes = 0;
        for (const Input& input : inputs) {
            int64_t before = residentBytes();
            HloParseOptions options;
            options.fileName = input.name;
            auto start = std::chrono::steady_clock::now();
            auto modules = parseHloModules(input.text, options);
            parseSeconds += secondsSince(start);
            if (!modules.isOk()) {
                if (round == 0) {
                    std::fprintf(stderr, "%s\n", formatError(input.name, modules.status()).c_str());
                    ++failures;
                }
                continue;
            }
            int64_t after = residentBytes();
            // Memory of the parsed module relative to its text, for inputs
            // large enough to measure through the resident set (>= 1 MB).
            if (round == 0 && input.text.size() >= (1u << 20) && after > before) {
                double ratio = static_cast<double>(after - before) /
                               static_cast<double>(input.text.size());
                if (ratio > peakRatio) {
                    peakRatio = ratio;
                    worstMemoryFile = input.name;
                }
            }
            for (const auto& module : *modules) instructions += module->instructionCount();
            start = std::chrono::steady_clock::now();
            for (const auto& module : *modules)
                printedBytes += static_cast<int64_t>(printModule(*module).size());
            printSeconds += secondsSince(start);
            if (round == 0)
                for (auto& module : *modules) kept.push_back(std::move(module));
        }
        if (round == 0) {
            int64_t held = residentBytes() - roundStart;
            aggregateRatio = static_cast<double>(held) / static_cast<double>(totalBytes);
        }
        bestParse = std::min(bestParse, parseSeconds);
        bestPrint = std::min(bestPrint, printSeconds);
    }
    double mb = static_cast<double>(totalBytes) / 1e6;
    std::printf("files:        %zu (%.1f MB, %lld instructions)\n", inputs.size(), mb,
                static_cast<long long>(instructions));
    std::printf("parse:        %.3f s  %.1f MB/s  (best of %d)\n", bestParse, mb / bestParse,
                flags.repeat);
    std::printf("print:        %.3f s  %.1f MB/s of input, %.1f MB/s of output\n", bestPrint,
                mb / bestPrint, static_cast<double>(printedBytes) / 1e6 / bestPrint);
    if (aggregateRatio > 0)
        std::printf("memory:       %.2fx the text size for all modules held together\n",
                    aggregateRatio);
    if (peakRatio > 0)
        std::printf("memory:       %.2fx the text size for the worst single file >= 1 MB (%s)\n",
                    peakRatio, worstMemoryFile.c_str());
    std::printf("%zu passed, %d failed\n", inputs.size() - static_cast<size_t>(failures),
                failures);
    return failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace

// The --help text: one raw string literal, long because it reads as printed
// (every command with its options); no logic in it.
std::string usage() {
    return R"(Usage: hloscope-cli COMMAND [OPTIONS] FILE...

Commands:
  parse FILE... [--verify] [--roundtrip] [--bench [--repeat N]] [--quiet]
        Parse each file (HLO text or hloscope JSON, chosen by content).
        Prints 'FILE: ok (N instructions)' or 'FILE:LINE:COL: error: MESSAGE'
        per file, then 'N passed, M failed'.
        --verify     also run the HLO verifier (shapes, operands, computations)
        --roundtrip  also check print -> parse -> print is a fixed point
        --bench      measure parse and print throughput and memory
        --quiet      print only failures and the summary
  print FILE [--format hlo|json] [--compact]
        Print the module as canonical HLO text (default) or JSON.
  stats FILE [--json]
        Instruction and opcode counts, computations, parameter/output bytes.
  eval FILE [--inputs random|zeros|FILE.json] [--seed N] [--format hlo|json]
            [--show-inputs] [--bench | --profile] [--repeat N]
        Evaluate the entry computation with the reference interpreter and
        print the result literal. Inputs are seeded random values (default,
        --seed N, default 0), zeros, or a JSON array of literals (one per
        parameter, see docs/json_format.md). check.* custom calls in the module
        are applied; a failing check is an error. A module on several devices
        (replica_count x num_partitions, or what its collectives name) runs on
        every device; each result is printed under a line naming its device,
        replica and partition (JSON: one line per device); random arrays
        differ per device (seed + D), scalars are the same on all.
        --bench      time --repeat N runs (default 5): wall, CPU, elements/s
        --profile    also time each instruction of the entry computation
  opt FILE [--target cpu|gpu|tpu] [--passes a,b,c] [--disable p] [--stop-after p]
           [--option pass.key=value] [--dump-dir DIR] [--json] [--verbose] [--no-verify]
        Run the target's compiler pipeline (default cpu) and print the optimized
        module. --passes runs a custom list, --disable skips passes (names or
        0-based indices, comma-separated, repeatable), --stop-after stops after a
        pass. --dump-dir writes NN-pass.hlo per pass and passes.json (per pass:
        changed, time, diff, peak bytes); --json prints that report instead of
        the module; --verbose prints a per-pass table on stderr. The verifier
        runs after every pass (--no-verify: not).
  bisect FILE [--target T] [--seed N] [--max-elements N] [--every-pass] [same pipeline flags as opt]
        Evaluate the module on seeded random inputs before the pipeline and
        after it; when the results differ, search the passes that changed the
        module by halving and name one whose results differ from its input's.
        --every-pass evaluates after every changing pass instead and names the
        first that differs (slower; also finds a change a later pass undoes).
        Exit 0: no pass changes the results; 1: one does (named);
        3: the module cannot be evaluated (the instruction is named); 4: the
        input is invalid (it does not parse, or does not verify: no pass
        runs); 5: a pass failed or broke the module (the pass is named).
  passes
        List every pass with its description, and the target pipelines.
  cost FILE [--target cpu|h100|a100|tpu_v4|tpu_v5e|FILE.json] [--option p.k=v] [--json]
        Predicted time of every kernel of the module after the target's pipeline,
        and the totals unfused (fusion off) and fused, with kernel counts, peak
        memory from buffer assignment, the predicted speedup and memory saved.
        cpu uses this machine's calibration (hloscope-cli calibrate) when cached.
        A module that already holds fusions (an optimized dump) is predicted
        as it is, against the same ops with every fusion taken apart: what its
        own fusion buys.
  explain FILE PRODUCER CONSUMER [--target T] [--option p.k=v]
        The fusion decisions taken for that pair (instruction names, '%'
        optional): fused or not, the reason code, the explanation and the
        predicted times; why no decision exists when none does.
  run FILE [--device NAME] [--target T] [--mode fused|unfused|both] [--inputs random|zeros|FILE.json]
           [--seed N] [--repeat N] [--warmup N] [--threads N] [--check] [--json]
           [--emit-plan DIR [--sm SM] [--elemental-dots]] [--tpu v4|v5e] [--trace FILE.json]
        Execute the module on a device (default cpu; 'interpreter' is the
        reference): unfused (the target pipeline without its fusion passes,
        one kernel per op) and fused (the whole pipeline), --warmup runs
        (default 1) then --repeat timed runs (default 5). Prints median, min
        and max run time, compile time, kernel count and buffer-assignment
        peak per mode, the measured speedup and the slowest kernels;
        instructions the device could not compile (run by the interpreter)
        are listed. --check compares every output with the reference
        interpreter (exit 1 beyond the per-type tolerance). --json prints
        {"device", "threads", "unfused": {...}, "fused": {"median_ms", "min_ms",
        "max_ms", "compile_ms", "kernels", "peak_bytes", ...}, "check":
        {"max_abs_error", "max_rel_error", "passed"}} (a mode not run is absent).
        A module of several devices (replicas x partitions) runs on every
        device of its grid on the interpreter, cpu, gpu and tpu-sim, each device
        on the same inputs; --check compares every device's outputs and the
        report says so ("devices" and "check": {"devices"} in --json).
        --device gpu runs on this machine's NVIDIA GPU through hloscope-gpu-runner
        (the gpu pipeline, predicted on h100 unless --target; without a GPU it
        says "no GPU found" and prints the predicted figures). --emit-plan DIR
        writes the GPU plans (DIR/unfused, DIR/fused: PTX for --sm sm_80|sm_86|
        sm_89|sm_90|sm_90a (default sm_90), launch dimensions, buffers, inputs;
        random float inputs as a seed the runner expands) for a GPU machine,
        no GPU needed; --elemental-dots computes dots inside the kernels element by element
        (no GEMM steps); the runner's --no-cublas runs GEMM steps on our own
        tiled kernel.
        --device tpu-sim (or --tpu v4|v5e; tpu-sim-v5e) runs on the simulated
        TPU: the tpu pipeline (tiled layouts), times from the timeline
        simulator (labelled simulated, never stored in the history), outputs
        with TPU numerics (f32 dots as bf16 MXU passes by their precision);
        --check compares with the interpreter on those numerics and reports
        the difference from f32. Prints per-kernel time, MXU/VPU/HBM
        utilisation, VMEM working sets and notes, and the padding of the
        tiled layouts ("tpu" in --json). --trace FILE writes the units'
        timelines (every mode) as a Chrome trace (ui.perfetto.dev).
  import-run DIR [--target T] [--json] [--no-history]
        Read back what hloscope-gpu-runner measured for plans written by
        run --emit-plan (DIR, or DIR/unfused and DIR/fused): times per mode
        and per kernel, the outputs checked against the reference interpreter
        (on the runner's sample when it wrote --sample N), the measured and
        predicted speedup (on the device's target: h100, h200, a100), stored
        in the estimator's history. Exit 1 when a check fails.
  calc --baseline-time T --baseline-memory M --speedup S --memory-reduction R [--json]
        Optimized time = T / S and memory = M / R with the absolute and %
        savings. T takes ms or s (140ms, 1.5s), M MB or GB (11GB); bad
        fields are named (exit 2). --json prints {"optimized_time",
        "optimized_memory", "time_saved", "time_saved_pct", "memory_saved",
        "memory_saved_pct", "time_unit", "memory_unit"}.
  estimate FILE... [--target T] [--measure | --device NAME] [--repeat N] [--warmup N] [--threads N]
                [--seed N] [--baseline-time T --baseline-memory M] [--json | --csv] [--html OUT.html]
                [--no-history] [--no-calibrate]
        What fusion buys the module on the target (default cpu): predicted
        unfused and fused time, peak memory, compile time and the break-even
        run count; --measure also runs both on the target's device and
        reports the measured figures and the prediction errors (module and
        per kernel). A baseline is scaled by the measured (else predicted)
        factors. --html writes one self-contained report for every FILE.
        The cpu target is this machine's calibration: the first estimate
        measures it (as calibrate --quick, about 2 s) and caches it;
        --no-calibrate keeps the built-in figures. The output names the
        figures used, their date and whether history refitted them.
  calibrate [--output FILE] [--quick]
        Measure this CPU (triad bandwidth, f32/f64 multiply-add throughput,
        thread-pool dispatch cost; and with single-op modules on the CPU
        backend: its bandwidth by working set on one and every core, its
        vectorised transcendentals, GEMM and convolution rates, the fixed
        cost of a kernel and of a run) and print a cpu target description
        (JSON); also written to FILE and cached in
        $XDG_CACHE_HOME/hloscope/cpu-<hostname>.json for later runs.
  calibrate --from-history [--target T] [--machine NAME|any] [--output FILE] [--dry-run] [--json]
        Re-fit the target's efficiency factors (one per op class) to the
        kernels measured by estimate --measure and run (the history
        database), print each class's factor before and after and the median
        kernel error before and after, and write the target: cpu (default)
        back to this machine's calibration cache, any other target to
        --output only. --dry-run writes nothing.
  calibrate --gpu-probe PROBE.json [--base h100|a100|FILE] [--name NAME] [--output FILE]
        A GPU target description: the base target's published figures with
        what hloscope-gpu-runner --probe measured on the GPU (copy bandwidth,
        kernel launch overhead, SM count, L2), each with its source.
  layers FILE [--target T] [--step input|all|PASS|N] [--depth N] [--json]
               [--measure DEVICE [--repeat N] [--seed N]]
        The model's layers: name scopes of the op_name metadata (JAX,
        TensorFlow, PyTorch/XLA), else N structurally identical stretches,
        else consecutive groups; while loops, calls and conditionals hold
        their callees' layers. Per layer: instructions, kernels before ->
        after the passes (every non-trivial op a kernel before; the fused
        module after), the predicted time on the target and its share.
        --step runs the target's pipeline through PASS, or its first N passes
        (default: all of it; 'input' for a module that already holds fusions,
        as XLA's optimized dumps do). --depth N prints N levels (default 1).
        --json: {"module", "source", "target", "step", "layers": {"name",
        "key", "kind", "instructions", "kernels_before", "kernels_after",
        "predicted_seconds", "repeats", "children": [...]}}.
        --measure DEVICE runs the module on DEVICE (cpu, interpreter,
        tpu-sim, gpu; a --target of the device's kind) with seeded random
        inputs: with the whole pipeline (fused) or, with --step input, as it
        is; each layer's kernels' measured time (median of --repeat N runs,
        default 3) is printed beside the prediction ("measured_seconds" in
        JSON).
  vs-xla BEFORE AFTER [--target T] [--depth N] [--limit N] [--json]
        XLA's fusion beside hloscope's on the same model: BEFORE is XLA's
        module before optimization, AFTER its optimized module (an XLA dump's
        *before_optimizations* and *after_optimizations* files). hloscope's
        pipeline for the target (default h100) runs on BEFORE; ops are matched
        by name. Prints the producer -> consumer edges both fused, neither
        fused, and either alone (the agreement), per layer the ops, XLA's
        kernels, hloscope's kernels and the share of ops grouped alike, and the
        pairs fused by one side only (--limit N, default 20).
  parity TABLE... [--corpus DIR] [--json] [--verbose] [--min-agreement PCT]
        XLA's fusion tests as data (tests/parity/*.tsv): each row names a
        corpus module of one of XLA's fusion tests and XLA's expected outcome
        (whether the pass changes the module, the entry's fusion count, its
        root, instructions that end in one kernel or in different ones).
        Runs the row's hloscope pass alone on the module (target cpu, or gpu
        as h100) and prints the share of outcomes that agree per XLA test file
        and per criterion, then each disagreement with both sides, the pass's
        logged decisions between the names and whether the cost model or a
        legality rule refused (--verbose also lists the rows not compared and
        why). --corpus names the corpus's hlo/ folder (default:
        $HLOSCOPE_CORPUS, else ../shared/corpus/hlo). Exit 1 when the
        agreement is below --min-agreement or a table is malformed
        (TABLE:LINE says where).
  capture [--dir DIR] [--passes] -- CMD...
        Run a JAX, TensorFlow or PyTorch/XLA program with XLA's dump flags
        (XLA_FLAGS gets --xla_dump_to=DIR --xla_dump_hlo_as_text, after any
        flags already set; --passes adds --xla_dump_hlo_pass_re=.*) into DIR
        (default: a fresh folder under the temporary directory). The program's
        output goes to the terminal as it runs. Prints the folder on standard
        output and its modules, largest first, on standard error; exit 1 when
        the program fails or dumps nothing.
  conform FILE... [--quiet]
        Run StableHLO interpreter test files: every '// -----' case is
        imported, evaluated and its check.* operations applied. Prints
        'FILE#N: passed|failed: why|unsupported: what' per case (--quiet: not
        the passed ones), then 'N passed, M failed, K unsupported'. Exit 0
        only if no case failed.

A FILE of '-' reads standard input.
Exit status: 0 success, 1 a file failed, 2 bad usage (bisect: also 3, 4, 5).
)";
}

std::string commandUsage(const std::string& command) {
    // A command's entry starts with "  COMMAND " at two spaces of indent and runs to the
    // next such line (calibrate has several).
    const std::string text = usage();
    std::string result;
    bool inside = false;
    size_t begin = 0;
    while (begin < text.size()) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(begin, end - begin);
        begin = end + 1;
        const bool entry = line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ';
        if (entry) inside = line.compare(2, command.size() + 1, command + " ") == 0 || line.substr(2) == command;
        else if (!line.empty() && line[0] != ' ') inside = false;
        if (inside) result += line + "\n";
    }
    return result.empty() ? result : "Usage: hloscope-cli" + result.substr(1);
}

int runParse(const std::vector<std::string>& args) {
    ParseFlags flags;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--verify") flags.verify = true;
        else if (arg == "--roundtrip") flags.roundtrip = true;
        else if (arg == "--bench") flags.bench = true;
        else if (arg == "--quiet" || arg == "-q") flags.quiet = true;
        else if (arg == "--repeat") {
            if (i + 1 >= args.size()) return usageError("--repeat needs a number");
            flags.repeat = std::atoi(args[++i].c_str());
            if (flags.repeat < 1) return usageError("--repeat needs a positive number");
        } else if (arg == "--help" || arg == "-h") {
            std::fputs(usage().c_str(), stdout);
            return kExitOk;
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-")
            return usageError("parse: unknown option '" + arg + "'");
        else flags.files.push_back(arg);
    }
    if (flags.files.empty()) return usageError("parse: no input files");
    if (flags.bench) return runBench(flags);

    int passed = 0, failed = 0;
    for (const std::string& file : flags.files) {
        std::string name = displayName(file);
        auto text = readFileToString(file);
        Status status = text.status();
        int64_t instructions = 0;
        if (status.isOk()) {
            auto modules = loadModules(*text, name);
            status = modules.status();
            if (status.isOk()) {
                for (const auto& module : *modules) {
                    instructions += module->instructionCount();
                    if (flags.verify && status.isOk()) status = verifyModule(*module);
                }
                if (flags.roundtrip)
                    for (const auto& module : *modules)
                        if (status.isOk()) status = checkRoundTrip(*module, name);
            }
        }
        if (status.isOk()) {
            ++passed;
            if (!flags.quiet)
                std::printf("%s: ok (%lld instructions)\n", name.c_str(),
                            static_cast<long long>(instructions));
        } else {
            ++failed;
            std::printf("%s\n", formatError(name, status).c_str());
        }
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? kExitOk : kExitFailed;
}

int runPrint(const std::vector<std::string>& args) {
    std::string format = "hlo";
    bool compact = false;
    std::optional<std::string> file;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--format") {
            if (i + 1 >= args.size()) return usageError("--format needs hlo or json");
            format = args[++i];
        } else if (arg.rfind("--format=", 0) == 0) {
            format = arg.substr(9);
        } else if (arg == "--compact") {
            compact = true;
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("print: unknown option '" + arg + "'");
        } else if (file) {
            return usageError("print: exactly one input file expected");
        } else {
            file = arg;
        }
    }
    if (!file) return usageError("print: no input file");
    if (format != "hlo" && format != "json")
        return usageError("print: unknown format '" + format + "' (expected hlo or json)");
    auto module = loadModuleFromFile(*file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(displayName(*file), module.status()).c_str());
        return kExitFailed;
    }
    std::string out = format == "json"
                          ? moduleToJson(**module)
                          : printModule(**module, compact ? HloPrintOptions::compact()
                                                          : HloPrintOptions::canonical());
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
}

int runStats(const std::vector<std::string>& args) {
    bool json = false;
    std::optional<std::string> file;
    for (const std::string& arg : args) {
        if (arg == "--json") json = true;
        else if (arg.size() > 1 && arg[0] == '-' && arg != "-")
            return usageError("stats: unknown option '" + arg + "'");
        else if (file)
            return usageError("stats: exactly one input file expected");
        else
            file = arg;
    }
    if (!file) return usageError("stats: no input file");
    auto module = loadModuleFromFile(*file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(displayName(*file), module.status()).c_str());
        return kExitFailed;
    }
    ModuleStats stats = computeModuleStats(**module);
    std::string out = json ? moduleStatsToJson(stats) : moduleStatsToText(stats);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
}

}  // namespace hloscope::cli
