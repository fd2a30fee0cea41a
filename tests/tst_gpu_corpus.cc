// The GPU backend's code generation on real modules: for every module of
// ../shared/corpus/hlo/valid/{xla_tests,evaluator,fusion} (and, with a floor
// of its own, valid/gpu: XLA:GPU's pass-test inputs) that parses and
// verifies, the GPU plan (PTX for sm_90) of the fused and the unfused
// module (the gpu pipeline, h100 model). A module either gets a plan whose
// every kernel is an .entry of its PTX, or an error that names an
// instruction and says what the GPU backend lacks (kUnimplemented); never a
// crash, an LLVM abort or an unnamed error. The coverage and the tally of
// reasons are printed, and the coverage must not fall below the floor
// measured when it was last raised (README: GPU backend). Skips cleanly when
// the corpus is absent. (Running the plans needs a GPU: README has the
// device runs.) HLOSCOPE_GPU_CORPUS_LIST=1 prints each unsupported module
// and its message; HLOSCOPE_GPU_CORPUS_PTXAS=1 also assembles every plan's
// PTX with ptxas (minutes) when the CUDA toolkit is installed.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <map>

#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/runtime/execution_modes.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");
// Modules with a plan in both modes, of the 836 evaluable ones: a floor, raised as the
// GPU backend covers more; the modules left out and their reasons are printed by the test
// and listed in docs/gpu.md.
constexpr int kCoverageFloor = 738;
// The same for ../shared/corpus/hlo/valid/gpu (1,446 modules).
constexpr int kGpuFolderFloor = 1236;

// "%name: why" -> "why" without instruction-specific names, for the tally.
std::string reasonOf(const std::string& message) {
    std::string reason = message;
    if (reason.rfind('%', 0) == 0) {
        const size_t colon = reason.find(": ");
        if (colon != std::string::npos) reason = reason.substr(colon + 2);
    }
    if (reason.rfind("operand %", 0) == 0 && reason.find(' ', 9) != std::string::npos)
        reason = "operand" + reason.substr(reason.find(' ', 9));  // without its name
    return reason.substr(0, 70);
}

}  // namespace

class TestGpuCorpus : public QObject {
    Q_OBJECT
private slots:
    void everyModuleGetsPtxOrANamedReason();
    void xlaGpuModules();

private:
    void sweep(std::initializer_list<const char*> folders, int floor, int stride = 1);
};

void TestGpuCorpus::everyModuleGetsPtxOrANamedReason() {
    sweep({"xla_tests", "evaluator", "fusion"}, kCoverageFloor);
}

// The inputs of XLA:GPU's own pass tests: modules before and after XLA's GPU
// passes, with cuBLAS / cuDNN calls, Triton fusions and collectives.
// A sanitizer run takes every 4th of them and checks only that each gets a plan or a named
// reason (the floor counts the whole folder).
void TestGpuCorpus::xlaGpuModules() {
    sweep({"gpu"}, testing::sanitizerRun() ? 0 : kGpuFolderFloor, testing::sanitizerRun() ? 4 : 1);
}

void TestGpuCorpus::sweep(std::initializer_list<const char*> folders, int floor, int stride) {
    if (!QDir(kCorpus).exists()) QSKIP("../shared/corpus is absent: GPU corpus test skipped");
    QStringList files;
    for (const char* folder : folders) {
        QStringList inFolder;
        for (const QString& name :
             QDir(kCorpus + "/" + folder).entryList({"*.hlo"}, QDir::Files, QDir::Name))
            inFolder << kCorpus + "/" + folder + "/" + name;
        files << testing::corpusSample(inFolder, stride);
    }
    int covered = 0, unsupported = 0, skipped = 0;
    std::map<std::string, int> reasons;
    // HLOSCOPE_GPU_CORPUS_LIST=1: each unsupported module with its message.
    const bool list = qEnvironmentVariableIsSet("HLOSCOPE_GPU_CORPUS_LIST");
    QString ptxas;
    if (qEnvironmentVariableIsSet("HLOSCOPE_GPU_CORPUS_PTXAS")) {
        ptxas = QStandardPaths::findExecutable("ptxas");
        if (ptxas.isEmpty())
            ptxas = QStandardPaths::findExecutable("ptxas", {"/usr/local/cuda/bin"});
        if (ptxas.isEmpty()) qInfo("ptxas not found: PTX not assembled");
    }
    int assembled = 0;
    QTemporaryDir scratch;
    for (const QString& file : files) {
        auto module = loadModuleFromFile(file.toStdString());
        if (!module.isOk() || !verifyModule(**module).isOk()) {
            ++skipped;
            continue;
        }
        bool all = true;
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto prepared = prepareCopyForMode(**module, "h100", mode);
            if (!prepared.isOk()) {
                all = false;
                ++reasons["pipeline: " + reasonOf(prepared.status().message())];
                break;
            }
            auto plan = buildGpuPlan(*prepared->module, {});
            if (!plan.isOk()) {
                all = false;
                const std::string& message = plan.status().message();
                QVERIFY2(
                    plan.status().code() == StatusCode::kUnimplemented &&
                        message.rfind('%', 0) == 0,
                    qPrintable(file + ": " + QString::fromStdString(plan.status().toString())));
                ++reasons[reasonOf(message)];
                if (list) qInfo("%s: %s", qPrintable(QFileInfo(file).fileName()), message.c_str());
                break;
            }
            for (const GpuPlanStep& step : plan->steps)
                if (step.kind == GpuStepKind::kKernel)
                    QVERIFY2(plan->ptx.find(".entry " + step.entry + "(") != std::string::npos,
                             qPrintable(file));
            if (ptxas.isEmpty() || plan->ptx.find(".entry") == std::string::npos) continue;
            const QString path = scratch.filePath("kernels.ptx");
            std::ofstream(path.toStdString()) << plan->ptx;
            QProcess process;
            process.start(ptxas, {"-arch=" + QString::fromStdString(plan->sm), path, "-o",
                                  scratch.filePath("kernels.cubin")});
            QVERIFY(process.waitForFinished(120000));
            QVERIFY2(process.exitCode() == 0,
                     qPrintable(file + ": " + process.readAllStandardError()));
            ++assembled;
        }
        (all ? covered : unsupported) += 1;
    }
    qInfo(
        "GPU plans (PTX) for %d of %d corpus modules in both modes; %d unsupported, %d skipped "
        "(parse/verify)",
        covered, static_cast<int>(files.size()), unsupported, skipped);
    if (!ptxas.isEmpty()) qInfo("%d PTX modules assembled by ptxas", assembled);
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [reason, count] : reasons) sorted.emplace_back(count, reason);
    std::sort(sorted.rbegin(), sorted.rend());
    for (const auto& [count, reason] : sorted) qInfo("  %4d  %s", count, reason.c_str());
    QVERIFY2(covered >= floor,
             qPrintable(QStringLiteral("coverage %1 below the floor %2").arg(covered).arg(floor)));
}

QTEST_GUILESS_MAIN(TestGpuCorpus)
#include "tst_gpu_corpus.moc"
