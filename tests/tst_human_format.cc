// Figures written for people (core/support/human_format.h): three significant digits, no
// exponent, the unit moving up before 1000.
#include <QTest>

#include "core/support/human_format.h"

using namespace hloscope;

class TestHumanFormat : public QObject {
    Q_OBJECT
private slots:
    void durations_data() {
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("none") << -1.0 << "-";
        QTest::newRow("zero") << 0.0 << "0 s";
        QTest::newRow("ns") << 3.2e-9 << "3.2 ns";
        QTest::newRow("us") << 120e-6 << "120 µs";
        QTest::newRow("almost a ms") << 999.7e-6 << "1 ms";
        QTest::newRow("ms") << 4e-3 << "4 ms";
        QTest::newRow("ms fraction") << 12.34e-3 << "12.3 ms";
        QTest::newRow("s") << 3.4 << "3.4 s";
        QTest::newRow("min") << 754.0 << "12.6 min";
        QTest::newRow("h") << 11530.0 << "3.2 h";
        QTest::newRow("many h") << 3.6e6 << "1000 h";
    }
    void durations() {
        QFETCH(double, seconds);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatDuration(seconds)), text);
    }

    void byteSizes_data() {
        QTest::addColumn<double>("bytes");
        QTest::addColumn<QString>("text");
        QTest::newRow("none") << -1.0 << "-";
        QTest::newRow("B") << 512.0 << "512 B";
        QTest::newRow("KiB") << 1536.0 << "1.5 KiB";
        QTest::newRow("almost a MiB") << 1048000.0 << "1023 KiB";
        QTest::newRow("a MiB") << 1048300.0 << "1 MiB";
        QTest::newRow("GiB") << 1.5 * 1024 * 1024 * 1024 << "1.5 GiB";
        QTest::newRow("TiB") << 180959174494.0 * 10 << "1.65 TiB";
    }
    void byteSizes() {
        QFETCH(double, bytes);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatByteSize(bytes)), text);
    }

    void counts() {
        QCOMPARE(formatCount(0), std::string("0"));
        QCOMPARE(formatCount(999), std::string("999"));
        QCOMPARE(formatCount(41881), std::string("41,881"));
        QCOMPARE(formatCount(-1234567), std::string("-1,234,567"));
        QCOMPARE(formatCount(INT64_MIN), std::string("-9,223,372,036,854,775,808"));
    }
};

QTEST_GUILESS_MAIN(TestHumanFormat)
#include "tst_human_format.moc"
