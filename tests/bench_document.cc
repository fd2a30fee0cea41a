// bench_document: how long the GUI's document side takes on a real module.
//   bench_document FILE [TARGET]
// Prints, per pipeline step: the worker's stepTo (passes + materialising the
// module), and the text diff view's diff + render of that step (GUI thread);
// then the load time. Run offscreen: QT_QPA_PLATFORM=offscreen.
#include <QApplication>
#include <QElapsedTimer>
#include <cstdio>

#include "views/document/document_worker.h"
#include "views/text/hlo_text_view.h"
#include "views/text/line_diff.h"
#include "views/text/text_diff_view.h"

using namespace hloscope;

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_document FILE [TARGET]\n");
        return 2;
    }
    DocumentWorker worker;
    QString error;
    QObject::connect(&worker, &DocumentWorker::failed, [&](const QString& m) { error = m; });
    if (argc > 2) worker.setTarget(QString::fromLocal8Bit(argv[2]));
    QElapsedTimer timer;
    timer.start();
    worker.open(QString::fromLocal8Bit(argv[1]));
    if (!worker.state()) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 1;
    }
    std::printf("load + parse + input snapshot: %.1f ms\n", static_cast<double>(timer.nsecsElapsed()) / 1e6);
    TextDiffView diff;
    HloTextView text;
    diff.resize(1200, 800);
    text.resize(1200, 800);
    timer.restart();
    text.setState(worker.state());
    std::printf("text view of the input: %.1f ms\n", static_cast<double>(timer.nsecsElapsed()) / 1e6);
    const int passes = static_cast<int>(worker.state()->passes.size());
    double total = 0;
    for (int i = 1; i <= passes; ++i) {
        timer.restart();
        worker.stepTo(i);
        const double step = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        const auto& snaps = *worker.state()->snapshots;
        const std::string& beforeText = *snaps[static_cast<size_t>(i - 1)].text;
        const std::string& afterText = *snaps[static_cast<size_t>(i)].text;
        const size_t lines = diffLines(splitLines(beforeText), splitLines(afterText)).size();
        const double lineDiffMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        diff.setState(worker.state());
        const int added = diff.addedCount(), removed = diff.removedCount();
        const double diffMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        text.setState(worker.state());
        const double textMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        total += step + diffMs + textMs;
        std::printf("%2d %-34s step %7.1f ms  line diff %7.1f ms (%zu rows)  diff view %7.1f ms (+%d -%d)  text view %7.1f ms\n",
                    i - 1, worker.state()->passes[static_cast<size_t>(i - 1)].c_str(), step, lineDiffMs,
                    lines, diffMs, added, removed, textMs);
    }
    std::printf("all steps: %.1f ms\n", total);
    return error.isEmpty() ? 0 : 1;
}
