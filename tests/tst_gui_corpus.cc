// Every real model through the GUI: each corpus model (../shared/corpus/hlo/models) and each
// optimized module of the corpus (a module of hlo/valid that already holds fusions) opened in
// one main window with the standard panels, offscreen, as a user opening file after file:
// the graph is laid out and drawn, the pipeline steps to its fusion pass and back, a node is
// selected, and Qt prints no warning. The time from the open to the graph drawn is printed
// per file ("first-paint MS FILE"; docs/performance.md keeps the table), never asserted.
// Then: a load of the largest model cancelled halfway, and a file opened while a run is in
// progress, both leaving a consistent window. A sanitizer run takes every (4 x corpusStride())-th
// file of the whole list. Skips when the corpus is absent.
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <mutex>

#include "app/gui/main_window.h"
#include "app/gui/panels.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "tests/sanitizer_run.h"
#include "tests/settings_sandbox.h"
#include "views/execution/execution_panel.h"
#include "views/graph/graph_view.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

using testing::slow;

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo");

// Qt's warnings and errors while the test runs, but for the offscreen platform's own notes.
std::mutex g_warningsMutex;
QStringList g_warnings;
QtMessageHandler g_previousHandler = nullptr;

void collectWarnings(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if ((type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg) &&
        !message.contains(QLatin1String("propagateSizeHints")) &&
        !message.contains(QLatin1String("XDG_RUNTIME_DIR"))) {
        std::lock_guard<std::mutex> lock(g_warningsMutex);
        g_warnings << message;
    }
    if (g_previousHandler) g_previousHandler(type, context, message);
}

QStringList takeWarnings() {
    std::lock_guard<std::mutex> lock(g_warningsMutex);
    QStringList taken = g_warnings;
    g_warnings.clear();
    return taken;
}

// The files of `folder` (recursively) ending in .hlo, in name order.
QStringList hloFiles(const QString& folder, bool (*keep)(const QString&)) {
    QStringList files;
    QDirIterator it(folder, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        if (keep(file)) files << file;
    }
    files.sort();
    return files;
}

// A sanitizer run opens every (4 x corpusStride())-th file of the whole list (29 files, two of
// them models): each open there costs ten to twenty times as much, and the parsers' and
// passes' sweeps already take every file.
QStringList sampled(const QStringList& files) {
    return testing::sanitizerRun() ? testing::corpusSample(files, 4 * testing::corpusStride())
                                   : files;
}

bool anyFile(const QString&) { return true; }

// A module that already holds fusions, as XLA's optimized dumps do.
bool holdsFusions(const QString& file) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return false;
    const QByteArray text = f.readAll();
    return text.contains(" fusion(") && text.contains("kind=k");
}

int fusionStepOf(const DocumentState& state) {
    for (size_t i = 0; i < state.passes.size(); ++i)
        if (state.passes[i] == "fusion") return static_cast<int>(i) + 1;
    return -1;
}

}  // namespace

class TestGuiCorpus : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kCorpus))
            QSKIP("../shared/corpus is absent: the GUI corpus sweep needs its models");
        QVERIFY(testing::sandboxSettings(m_settingsDir, QStringLiteral("tst_gui_corpus")));
        g_previousHandler = qInstallMessageHandler(collectWarnings);
        m_window = std::make_unique<MainWindow>();
        const StandardPanels panels = installStandardPanels(*m_window);
        m_graph = qobject_cast<GraphView*>(panels.graph);
        m_execution = qobject_cast<ExecutionPanel*>(panels.execution);
        QVERIFY(m_graph && m_execution);
        m_window->resize(1400, 900);
        m_window->show();
    }

    void cleanupTestCase() {
        m_window.reset();
        qInstallMessageHandler(g_previousHandler);
    }

    void everyModelAndOptimizedModule_data() {
        QTest::addColumn<QString>("file");
        QStringList files = hloFiles(kCorpus + QStringLiteral("/models"), anyFile);
        files << hloFiles(kCorpus + QStringLiteral("/valid"), holdsFusions);
        files = sampled(files);
        for (const QString& file : files) QTest::newRow(qPrintable(QDir(kCorpus).relativeFilePath(file))) << file;
    }

    void everyModelAndOptimizedModule() {
        QFETCH(QString, file);
        MainWindow& window = *m_window;
        takeWarnings();
        const DocumentStatePtr before = window.state();
        window.clearMessage();
        QElapsedTimer clock;
        clock.start();
        window.openPath(file);
        // Loaded (a new state) or refused with a message naming the file; either way not busy.
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT((window.state() != before || !window.messageText().isEmpty()) && !window.isBusy(),
                                 slow(120000));
        if (window.state() == before) {
            // A module hloscope does not read or verify: the message names it, the window keeps
            // its document (the verifier's disagreements with XLA's are in docs/conformance.md).
            QVERIFY2(window.messageText().contains(QFileInfo(file).fileName()), qPrintable(window.messageText()));
            qInfo("not-opened %s: %s", qPrintable(QFileInfo(file).fileName()), qPrintable(window.messageText()));
            return;
        }
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!m_graph->isLayoutPending(), slow(120000));
        QVERIFY2(m_graph->lastError().isEmpty(), qPrintable(m_graph->lastError()));
        QVERIFY(m_graph->visibleGraph());
        qInfo("first-paint %lld %s", static_cast<long long>(clock.elapsed()),
              qPrintable(QDir(kCorpus).relativeFilePath(file)));

        // To the fusion pass and back (a module that holds fusions may offer no pipeline run).
        const DocumentStatePtr state = window.state();
        const int fusion = fusionStepOf(*state);
        if (fusion > 0) {
            window.stepTo(fusion);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT((window.state()->current == fusion || !window.messageText().isEmpty()) &&
                                         !window.isBusy(),
                                     slow(120000));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!m_graph->isLayoutPending(), slow(120000));
            window.stepTo(0);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == 0 && !window.isBusy(), slow(120000));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!m_graph->isLayoutPending(), slow(120000));
        }
        // Select the entry's root.
        const HloComputation* entry = window.state()->module ? window.state()->module->entryComputation() : nullptr;
        if (entry && entry->root()) {
            QSignalSpy selected(&window, &MainWindow::instructionSelected);
            window.selectInstruction(QString::fromStdString(entry->root()->name()));
            HLOSCOPE_TRY_VERIFY(!window.isBusy());
        }
        const QStringList warnings = takeWarnings();
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
    }

    // The largest model, its load cancelled while it runs: the window is not left busy, keeps
    // what it showed before, and opens the next file.
    void cancelLoadOfLargestModel() {
        QString largest;
        qint64 size = -1;
        QDirIterator it(kCorpus + QStringLiteral("/models"), {QStringLiteral("*.hlo")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            if (QFileInfo(file).size() > size) size = QFileInfo(file).size(), largest = file;
        }
        QVERIFY(!largest.isEmpty());
        MainWindow& window = *m_window;
        window.openExample(QStringLiteral("softmax"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state() && window.state()->displayName == "softmax" && !window.isBusy(),
                                 slow(60000));
        const DocumentStatePtr before = window.state();
        window.openPath(largest);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.isBusy(), slow(10000));
        QTest::qWait(50);  // halfway through parsing a 4 MB model
        window.worker()->cancel();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), slow(60000));
        // Cancelled: the previous document stays. (Had the load finished first, the model is
        // shown whole; both are consistent.)
        QVERIFY(window.state());
        QVERIFY(window.state() == before || window.state()->module->instructionCount() > 10000);
        qInfo("cancel: %s", window.state() == before ? "the load stopped, the previous document stays"
                                                     : "the load had finished; the model is shown");
        window.openExample(QStringLiteral("mlp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->displayName == "mlp" && !window.isBusy(), slow(60000));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!m_graph->isLayoutPending(), slow(60000));
    }

    // A file opened while a run of the previous one is in progress: the new document is
    // shown, and the run's end leaves the window consistent.
    void openWhileRunning() {
        MainWindow& window = *m_window;
        // The interpreter: seconds for the BERT forward, so the run is still going below (a
        // sanitizer run takes the layer norm: minutes for BERT there).
        const std::string running = testing::sanitizerRun() ? "layernorm" : "bert_encoder_forward";
        window.openExample(QString::fromStdString(running));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->displayName == running && !window.isBusy(), slow(60000));
        const int interpreter = m_execution->deviceCombo()->findText(QStringLiteral("interpreter"), Qt::MatchContains);
        if (interpreter >= 0) m_execution->deviceCombo()->setCurrentIndex(interpreter);
        QSignalSpy finished(m_execution, &ExecutionPanel::runFinished);
        m_execution->run();
        QTest::qWait(200);
        window.openExample(QStringLiteral("softmax"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->displayName == "softmax" && !window.isBusy(), slow(120000));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!m_graph->isLayoutPending(), slow(60000));
        // The run ends (finished, or cancelled by the new document) and the window still shows
        // the new document.
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.size() >= 1 || !m_execution->isRunning(), slow(300000));
        QCOMPARE(window.state()->displayName, std::string("softmax"));
        window.stepTo(2);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == 2 && !window.isBusy(), slow(60000));
        const QStringList warnings = takeWarnings();
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
    }

private:
    QTemporaryDir m_settingsDir;
    std::unique_ptr<MainWindow> m_window;
    GraphView* m_graph = nullptr;
    ExecutionPanel* m_execution = nullptr;
};

QTEST_MAIN(TestGuiCorpus)
#include "tst_gui_corpus.moc"
