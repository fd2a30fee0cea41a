// The sanitizer runs (issue 12): the asan and tsan test presets set
// HLOSCOPE_SANITIZER_RUN=1, and the code runs 5 to 20 times slower there.
#pragma once

#include <QFileInfo>
#include <QString>
#include <QtGlobal>

namespace hloscope::testing {

inline bool sanitizerRun() { return qEnvironmentVariableIntValue("HLOSCOPE_SANITIZER_RUN") == 1; }

// A wait in milliseconds, stretched tenfold in a sanitizer run.
inline int slow(int ms) { return sanitizerRun() ? 10 * ms : ms; }

// Whether a sanitizer run leaves out this example: the BERT-sized ones take minutes per
// reference evaluation there; the same passes and kernels run on the smaller examples.
inline bool leftOutOfSanitizerRun(const QString& examplePath) {
    return sanitizerRun() && QFileInfo(examplePath).fileName().startsWith(QLatin1String("bert_"));
}

}  // namespace hloscope::testing
