// The sanitizer runs: the asan and tsan test presets set
// HLOSCOPE_SANITIZER_RUN=1, and the code runs 5 to 20 times slower there.
#pragma once

#include <QFileInfo>
#include <QString>
#include <QStringList>
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

// The slow corpus sweeps (pipeline_corpus, cpu_corpus, tpu_corpus) take a sample in a sanitizer
// run: every corpusStride()-th module of a folder in name order, from the first; 8 there
// (HLOSCOPE_CORPUS_STRIDE=N sets it), 1 elsewhere. The release build runs them in full.
inline int corpusStride() {
    if (!sanitizerRun()) return 1;
    bool ok = false;
    const int stride = qEnvironmentVariableIntValue("HLOSCOPE_CORPUS_STRIDE", &ok);
    return ok && stride >= 1 ? stride : 8;
}

// The files of one folder, sorted by name, that a corpus sweep takes: every `stride`-th from the
// first (corpusStride() by default).
inline QStringList corpusSample(const QStringList& sortedFiles, int stride = corpusStride()) {
    if (stride == 1) return sortedFiles;
    QStringList sample;
    for (qsizetype i = 0; i < sortedFiles.size(); i += stride) sample << sortedFiles[i];
    return sample;
}

}  // namespace hloscope::testing
