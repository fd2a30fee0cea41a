// chromeTraceJson: the Chrome trace event format of device timelines.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "compiler/runtime/timeline_trace.h"

using namespace hloscope;

class TestTimelineTrace : public QObject {
    Q_OBJECT
private slots:
    void processesThreadsAndEvents() {
        std::vector<NamedTimeline> timelines(2);
        timelines[0].name = "tpu_v4 unfused";
        timelines[0].events = {{"MXU", "pass 0", "%dot", 1e-6, 2e-6}, {"kernels", "%dot", "%dot", 0, 4e-6},
                               {"HBM->VMEM", "tile 0", "%dot", 0, 1e-6}};
        timelines[1].name = "tpu_v4 fused";
        timelines[1].events = {{"VPU", "add", "%fusion", 0, 5e-7}};
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(chromeTraceJson(timelines)), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonArray events = doc.object().value("traceEvents").toArray();
        QStringList processes, threads;
        int complete = 0;
        for (const QJsonValue& v : events) {
            const QJsonObject e = v.toObject();
            if (e.value("name") == "process_name") processes << e.value("args").toObject().value("name").toString();
            if (e.value("name") == "thread_name")
                threads << QStringLiteral("%1:%2:%3")
                               .arg(e.value("pid").toInt())
                               .arg(e.value("tid").toInt())
                               .arg(e.value("args").toObject().value("name").toString());
            if (e.value("ph") == "X") {
                ++complete;
                if (e.value("name") == "pass 0") {
                    QCOMPARE(e.value("ts").toDouble(), 1.0);  // microseconds
                    QCOMPARE(e.value("dur").toDouble(), 2.0);
                    QCOMPARE(e.value("pid").toInt(), 1);
                    QCOMPARE(e.value("tid").toInt(), 2);  // kernels 1, MXU 2, HBM->VMEM 3
                    QCOMPARE(e.value("args").toObject().value("kernel").toString(), QStringLiteral("%dot"));
                }
            }
        }
        QCOMPARE(processes, QStringList({"tpu_v4 unfused", "tpu_v4 fused"}));
        QCOMPARE(threads, QStringList({"1:1:kernels", "1:2:MXU", "1:3:HBM->VMEM", "2:1:VPU"}));
        QCOMPARE(complete, 4);
        // Nothing to show is still a valid, empty trace.
        const QJsonDocument empty = QJsonDocument::fromJson(QByteArray::fromStdString(chromeTraceJson({})));
        QVERIFY(empty.object().value("traceEvents").toArray().isEmpty());
    }
};

QTEST_MAIN(TestTimelineTrace)
#include "tst_timeline_trace.moc"
