// Running real modules on a device against the reference interpreter, for
// the backends' corpus sweeps (tst_cpu_corpus, tst_tpu_corpus): which
// modules of ../shared/corpus/hlo/valid are "evaluable" and what their
// reference outputs are.
//
// Evaluable: the interpreter runs it within 20 s on seeded random arguments
// (collectives with one participant included: the interpreter defines them
// on one device, and the backends follow it). Skipped, with the reason
// tallied: modules that do not parse, with send / recv / infeed / outfeed
// (values from the host or another device), more than 20M elements in
// parameters or result, collectives whose declared shapes imply several
// devices, and modules the interpreter cannot run.
#pragma once

#include <QDirIterator>
#include <QFileInfo>
#include <QString>
#include <QStringList>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/io/module_io.h"
#include "tests/sanitizer_run.h"

namespace hloscope::testing {

inline const QString kValidCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");

// Transfers whose values come from the host or another device.
inline bool isTransfer(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kSend:
        case HloOpcode::kRecv:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
            return true;
        default:
            return false;
    }
}

// Whether a value has the dimensions `shape` declares (recursively), and, with `types`, its
// element types.
inline bool hasDeclaredDims(const Literal& value, const Shape& shape, bool types = false) {
    if (shape.isTuple() != value.isTuple()) return false;
    if (!shape.isTuple())
        return !shape.isArray() || (value.shape().dimensions() == shape.dimensions() &&
                                    (!types || value.shape().elementType() == shape.elementType()));
    if (value.tupleElements().size() != shape.tupleShapes().size()) return false;
    for (size_t i = 0; i < shape.tupleShapes().size(); ++i)
        if (!hasDeclaredDims(value.tupleElements()[i], shape.tupleShapes()[i], types)) return false;
    return true;
}

// The outputs (the result's tuple elements, or the single result) against
// the entry's declared result shape.
inline bool matchesDeclaredShape(const std::vector<Literal>& outputs, const Shape& shape) {
    if (!shape.isTuple()) return outputs.size() == 1 && hasDeclaredDims(outputs.front(), shape);
    if (outputs.size() != shape.tupleShapes().size()) return false;
    for (size_t i = 0; i < outputs.size(); ++i)
        if (!hasDeclaredDims(outputs[i], shape.tupleShapes()[i])) return false;
    return true;
}

inline int64_t leafElements(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t total = 0;
        for (const Shape& element : shape.tupleShapes()) total += leafElements(element);
        return total;
    }
    return shape.isArray() ? std::max<int64_t>(shape.elementCount(), 0) : 0;
}

// Calls `run(options)` with the sweeps' options (2 threads, loops bounded) and a watchdog that
// cancels it after `seconds`.
template <typename Run>
auto runWithWatchdog(double seconds, Run run)
    -> decltype(run(std::declval<const ExecutionOptions&>())) {
    std::atomic<bool> cancel{false};
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!done.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        cancel.store(true);
    });
    ExecutionOptions options;
    options.cancel = &cancel;
    options.threads = 2;
    options.maxWhileIterations = 1'000'000;
    auto result = run(options);
    done.store(true);
    watchdog.join();
    return result;
}

// Runs `device` with a watchdog that cancels after `seconds`.
inline StatusOr<ExecutionResult> runBounded(const ExecutionDevice& device, const HloModule& module,
                                            const std::vector<Literal>& args, double seconds) {
    return runWithWatchdog(
        seconds, [&](const ExecutionOptions& options) -> StatusOr<ExecutionResult> {
            try {
                return device.run(module, args, options);
            } catch (const std::exception&
                         e) {  // the interpreter on absurd shapes (iota of f32[1e12, 0])
                return internalError(std::string("exception: ") + e.what());
            }
        });
}

struct EvaluableModule {
    QString name;  // "folder/file.hlo"
    QString path;
    std::unique_ptr<HloModule> module;
    std::vector<Literal> args;
    std::vector<Literal> reference;  // the interpreter's outputs
};

struct CorpusTally {
    int modules = 0;
    int skipped = 0;
    std::map<std::string, int> skipReasons;
    void skip(const std::string& reason) { ++skipped, ++skipReasons[reason]; }
};

// Calls `visit` for every evaluable module of the corpus folders, in name
// order. `numerics` (optional) gives the module whose interpreter outputs
// are the reference (a device's numerics, ExecutionDevice::numericsModule);
// null: the module itself. `skipNames` are skipped with their reason.
// `numericsRejected` (optional) is told of each module whose `numerics`
// fails, to count as its caller decides; without it that is a skip.
inline void forEachEvaluableModule(
    const QStringList& folders, const ExecutionDevice& interpreter, CorpusTally& tally,
    const std::function<void(EvaluableModule&)>& visit,
    const std::function<StatusOr<std::unique_ptr<HloModule>>(const HloModule&)>& numerics = {},
    const std::map<QString, std::string>& skipNames = {},
    const std::function<void(const EvaluableModule&, const Status&)>& numericsRejected = {}) {
    for (const QString& folder : folders) {
        QDirIterator it(kValidCorpus + QLatin1Char('/') + folder, {QStringLiteral("*.hlo")},
                        QDir::Files);
        QStringList files;
        while (it.hasNext()) files << it.next();
        files.sort();
        for (const QString& path : corpusSample(files)) {
            ++tally.modules;
            EvaluableModule m;
            m.name = folder + QLatin1Char('/') + QFileInfo(path).fileName();
            m.path = path;
            if (auto skip = skipNames.find(m.name); skip != skipNames.end()) {
                tally.skip(skip->second);
                continue;
            }
            auto module = loadModuleFromFile(path.toStdString());
            if (!module.isOk()) {
                tally.skip("does not parse");
                continue;
            }
            m.module = std::move(*module);
            const HloComputation* entry = m.module->entryComputation();
            bool transfer = false;
            for (const auto& computation : m.module->computations())
                for (const auto& instruction : computation->instructions())
                    transfer = transfer || isTransfer(instruction->opcode());
            if (transfer) {
                tally.skip("send, recv, infeed or outfeed");
                continue;
            }
            int64_t elements = leafElements(entry->root()->shape());
            for (const HloInstruction* parameter : entry->parameters())
                elements += leafElements(parameter->shape());
            if (elements > 20'000'000) {
                tally.skip("over 20M elements");
                continue;
            }
            m.args = makeRandomArguments(*entry, 11);
            std::unique_ptr<HloModule> referenceModule;
            if (numerics) {
                auto converted = numerics(*m.module);
                if (!converted.isOk()) {
                    if (numericsRejected)
                        numericsRejected(m, converted.status());
                    else
                        tally.skip("the device's numerics reject it: " +
                                   converted.status().message().substr(0, 60));
                    continue;
                }
                referenceModule = std::move(*converted);
            }
            auto reference =
                runBounded(interpreter, referenceModule ? *referenceModule : *m.module, m.args, 20);
            if (!reference.isOk()) {
                tally.skip("the interpreter cannot run it");
                continue;
            }
            // A collective whose declared shapes imply several devices:
            // on one device the interpreter's result has other shapes.
            if (!matchesDeclaredShape(reference->outputs, entry->root()->shape())) {
                tally.skip("collectives over several devices (result shape)");
                continue;
            }
            m.reference = std::move(reference->outputs);
            visit(m);
        }
    }
}

}  // namespace hloscope::testing
