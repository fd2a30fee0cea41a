// libFuzzer target: the estimator's history as it is imported (compiler/estimator/history.h):
// the input is the database file, as another machine, an older hloscope, a crash or a full
// disk may leave it. A file that opens (after migrating an older schema) is read as the
// estimator and `calibrate --from-history` read it: its runs, their accuracy, the measured
// kernels, and the efficiency fit over them; then one record is added and must be read
// back. Errors ("file is not a database", a malformed image, a schema newer than this build)
// are expected; crashes, sanitizer reports, fitted factors outside (0, 1] and a stored
// record that is not read back are findings.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <cmath>
#include <memory>
#include <set>

#include "compiler/estimator/calibration.h"
#include "compiler/estimator/history.h"
#include "compiler/targets/target_description.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

namespace {

std::unique_ptr<QTemporaryDir> g_dir;
TargetDescription g_cpu;

void removeDatabase(const QString& path) {
    QFile::remove(path);
    QFile::remove(path + QStringLiteral("-journal"));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/fuzz_history-XXXXXX"));
    if (!g_dir->isValid()) fuzz::fail("history", "no temporary folder");
    auto cpu = resolveTargetDescription("cpu");
    if (!cpu.isOk()) fuzz::fail("history", cpu.status().toString());
    g_cpu = *cpu;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    const QString path = g_dir->filePath(QStringLiteral("history.sqlite"));
    removeDatabase(path);
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) ||
            file.write(reinterpret_cast<const char*>(data), static_cast<qint64>(size)) != static_cast<qint64>(size))
            fuzz::fail("history", "cannot write the database file");
    }
    auto opened = EstimateHistory::open(path.toStdString());
    if (!opened.isOk()) {
        removeDatabase(path);
        return 0;
    }
    EstimateHistory& history = **opened;
    auto records = history.records();
    (void)history.accuracy();
    (void)history.accuracy("cpu", machineName());
    if (records.isOk())
        for (const HistoryRecord& record : *records) (void)record.speedupErrorPercent();
    if (auto kernels = history.kernels(); kernels.isOk()) {
        std::set<int64_t> runs;
        const std::vector<CalibrationSample> samples = calibrationSamplesOf(*kernels, runs);
        const CalibrationFit fit = fitEfficiencies(samples, g_cpu);
        for (double factor : fit.efficiency)
            if (!(factor > 0 && factor <= 1)) fuzz::fail("history fit", "fitted factor " + std::to_string(factor));
    }
    HistoryRecord record;
    record.unixTime = 1700000000;
    record.module = "fuzz";
    record.fingerprint = "0";
    record.target = "cpu";
    record.device = "cpu";
    record.machine = "fuzz";
    record.predictedUnfusedSeconds = record.measuredUnfusedSeconds = 2;
    record.predictedFusedSeconds = record.measuredFusedSeconds = 1;
    record.kernels.push_back(HistoryKernel{"fused", "fusion", "fusion", {}, 1, 1});
    auto id = history.add(record);
    if (id.isOk() && records.isOk()) {
        auto after = history.records();
        if (after.isOk()) {
            bool found = false;
            for (const HistoryRecord& r : *after) found = found || (r.id == *id && r.module == "fuzz");
            if (!found) fuzz::fail("history add", "the added record is not read back");
        }
    }
    opened->reset();
    removeDatabase(path);
    return 0;
}
