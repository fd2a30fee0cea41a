// ExecutionMeasurement: one run of one module on one device as the execution
// panel measured it (or imported it from a GPU machine). The execution panel
// produces these; the estimator, the inspector and the graph read them. A
// value type without widgets (QtCore strings and hashes only).
#pragma once

#include <QHash>
#include <QMetaType>
#include <QString>
#include <cstdint>
#include <vector>

#include "compiler/runtime/execution_device.h"

namespace hloscope {

// One run of one module on one device, as measured.
struct ExecutionMeasurement {
    QString mode;        // "unfused" or "fused"
    QString device;      // ExecutionDevice::name()
    QString deviceKind;  // ExecutionDevice::kind(): "reference", "cpu", ...
    int snapshot = -1;
    double wallSeconds = 0;  // measured
    double maxError = 0;     // max |result - reference| over every output element
    bool passed = false;     // within compareWithTolerance's per-type tolerance
    QString detail;          // the mismatch, empty when passed
    QHash<QString, double> instructionSeconds;  // measured, per entry instruction
    QHash<QString, double> kernelSeconds;       // measured, kernels only
    qint64 peakBytes = 0;                 // what the device held for the run (0: it does not say)
    double compileSeconds = 0;            // the device's code generation in this run (0: cached)
    bool simulated = false;               // times from a simulator (tpu-sim), not a clock
    qint64 devices = 1;                   // devices that ran (ExecutionResult::devices)
    int64_t devicesChecked = 1;           // devices whose outputs were checked
    std::vector<TimelineEvent> timeline;  // per-unit busy intervals, when the device models them
};

}  // namespace hloscope

Q_DECLARE_METATYPE(hloscope::ExecutionMeasurement)
