// Replays every input the fuzzers found (tests/fuzz/regressions/TARGET/) and the
// committed seeds (tests/fuzz/seeds/) through the fuzz targets' own entry
// points, compiled here without libFuzzer, so each finding stays a regression
// test in the ordinary (and the sanitizer) build. A target's invariant failure
// aborts, which fails this test with the message naming the input.
#include <QDir>
#include <QFile>
#include <QTest>
#include <cstdint>
#include <fstream>
#include <sstream>

extern "C" int fuzzHloTextOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzStableHloOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzJsonOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzLiteralOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzPipelineOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzLayerTreeOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzHistoryOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzDumpOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzSessionOneInput(const uint8_t* data, size_t size);
extern "C" int fuzzLiteralInitialize(int* argc, char*** argv);
extern "C" int fuzzHistoryInitialize(int* argc, char*** argv);
extern "C" int fuzzDumpInitialize(int* argc, char*** argv);
extern "C" int fuzzSessionInitialize(int* argc, char*** argv);

namespace {

using Entry = int (*)(const uint8_t*, size_t);

int replayDirectory(const QString& directory, Entry entry) {
    QDir dir(directory);
    int count = 0;
    const QStringList files = dir.entryList(QDir::Files | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString& name : files) {
        if (name.startsWith(QLatin1Char('.')) || name == QLatin1String("README.md")) continue;
        const QString path = dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            qWarning("cannot read %s", qPrintable(path));
            return -1;
        }
        const QByteArray bytes = file.readAll();
        qInfo("replaying %s (%lld bytes)", qPrintable(path), static_cast<long long>(bytes.size()));
        entry(reinterpret_cast<const uint8_t*>(bytes.constData()),
              static_cast<size_t>(bytes.size()));
        ++count;
    }
    return count;
}

}  // namespace

class TestFuzzRegressions : public QObject {
    Q_OBJECT
private slots:
    // What libFuzzer runs before the first input: the literal target's size limit, the
    // others' temporary folders (the application is this test's).
    void initTestCase() {
        fuzzLiteralInitialize(nullptr, nullptr);
        fuzzHistoryInitialize(nullptr, nullptr);
        fuzzDumpInitialize(nullptr, nullptr);
        fuzzSessionInitialize(nullptr, nullptr);
    }

    void replay_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<void*>("entry");
        QTest::newRow("hlo_text") << "hlo_text" << reinterpret_cast<void*>(&fuzzHloTextOneInput);
        QTest::newRow("stablehlo")
            << "stablehlo" << reinterpret_cast<void*>(&fuzzStableHloOneInput);
        QTest::newRow("json") << "json" << reinterpret_cast<void*>(&fuzzJsonOneInput);
        QTest::newRow("literal") << "literal" << reinterpret_cast<void*>(&fuzzLiteralOneInput);
        QTest::newRow("pipeline") << "pipeline" << reinterpret_cast<void*>(&fuzzPipelineOneInput);
        QTest::newRow("layer_tree") << "layer_tree" << reinterpret_cast<void*>(&fuzzLayerTreeOneInput);
        QTest::newRow("history") << "history" << reinterpret_cast<void*>(&fuzzHistoryOneInput);
        QTest::newRow("dump") << "dump" << reinterpret_cast<void*>(&fuzzDumpOneInput);
        QTest::newRow("session") << "session" << reinterpret_cast<void*>(&fuzzSessionOneInput);
    }
    void replay() {
        QFETCH(QString, target);
        QFETCH(void*, entry);
        const QString root = QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/fuzz/");
        const int found =
            replayDirectory(root + "regressions/" + target, reinterpret_cast<Entry>(entry));
        QVERIFY2(found >= 0, "a regression input could not be read");
        int seeds = 0;
        if (QDir(root + "seeds/" + target).exists())
            seeds = replayDirectory(root + "seeds/" + target, reinterpret_cast<Entry>(entry));
        QVERIFY(seeds >= 0);
        qInfo("%s: %d regression inputs, %d seeds replayed", qPrintable(target), found, seeds);
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzz_regressions.moc"
