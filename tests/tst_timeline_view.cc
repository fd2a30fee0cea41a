// TimelineView: lanes per track, busy fractions with overlaps merged,
// zoom/pan/fit, hit testing, kernel selection by click and by slot.
#include <QApplication>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>

#include "views/execution/timeline_view.h"

using namespace hloscope;

namespace {

TimelineEvent ev(const char* track, const char* name, const char* kernel, double start,
                 double duration) {
    return {track, name, kernel, start, duration};
}

}  // namespace

class TestTimelineView : public QObject {
    Q_OBJECT
private slots:
    void tracksAndBusyFractions() {
        TimelineView view;
        QCOMPARE(view.eventCount(), 0);
        // Two overlapping DMA intervals count once; "kernels" goes first.
        view.setEvents({ev("HBM->VMEM", "tile 0", "%f", 0, 2e-6),
                        ev("HBM->VMEM", "tile 1", "%f", 1e-6, 2e-6),
                        ev("MXU", "pass", "%f", 2e-6, 4e-6), ev("kernels", "%f", "%f", 0, 8e-6),
                        ev("VPU", "epilogue", "%g", 8e-6, 2e-6)});
        QCOMPARE(view.tracks(), QStringList({"kernels", "HBM->VMEM", "MXU", "VPU"}));
        QCOMPARE(view.eventCount(), 5);
        QVERIFY(qFuzzyCompare(view.totalSeconds(), 10e-6));
        QVERIFY(qFuzzyCompare(view.busyFraction("HBM->VMEM"), 0.3));  // [0, 3) us of 10
        QVERIFY(qFuzzyCompare(view.busyFraction("MXU"), 0.4));
        QVERIFY(qFuzzyCompare(view.busyFraction("kernels"), 0.8));
        QCOMPARE(view.busyFraction("nosuch"), 0.0);
        view.clear();
        QCOMPARE(view.eventCount(), 0);
        QVERIFY(view.tracks().isEmpty());
    }

    void zoomPanAndFit() {
        TimelineView view;
        view.resize(800, 200);
        view.setEvents({ev("MXU", "a", "%a", 0, 1e-3), ev("VPU", "b", "%b", 1e-3, 1e-3)});
        QVERIFY(view.viewSeconds() >= 2e-3);
        view.zoom(4, 1e-3);  // around the middle
        QVERIFY(qFuzzyCompare(view.viewSeconds() * 4, 2e-3 * 1.02));
        QVERIFY(view.viewStart() < 1e-3 && view.viewStart() + view.viewSeconds() > 1e-3);
        view.zoom(1e12, 0);  // clamped, never zero width
        QVERIFY(view.viewSeconds() > 0);
        view.fit();
        QVERIFY(view.viewStart() <= 0 && view.viewStart() + view.viewSeconds() >= 2e-3);
    }

    void clickSelectsKernelAndHover() {
        TimelineView view;
        view.resize(800, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setEvents({ev("MXU", "a", "%dot", 0, 1e-3), ev("VPU", "b", "%add", 1e-3, 1e-3)});
        QSignalSpy activated(&view, &TimelineView::kernelActivated);
        // Find a point on the second event by scanning its lane.
        QPoint hit(-1, -1);
        for (int x = 0; x < view.width() && hit.x() < 0; x += 2)
            for (int y = 0; y < view.height(); y += 2) {
                const int index = view.eventAt(QPointF(x, y));
                if (index >= 0 && view.timelineEvent(index).kernel == "%add") {
                    hit = QPoint(x, y);
                    break;
                }
            }
        QVERIFY(hit.x() >= 0);
        QCOMPARE(view.eventAt(QPointF(1, 1)), -1);  // the label column
        QTest::mouseClick(&view, Qt::LeftButton, {}, hit);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toString(), QStringLiteral("%add"));
        QCOMPARE(view.selectedKernel(), QStringLiteral("%add"));
        view.selectKernel(QStringLiteral("%dot"));
        QCOMPARE(view.selectedKernel(), QStringLiteral("%dot"));
        QCOMPARE(activated.count(), 1);  // the slot does not re-emit
        // A drag pans instead of selecting.
        const double before = view.viewStart();
        QTest::mousePress(&view, Qt::LeftButton, {}, hit);
        QMouseEvent move(QEvent::MouseMove, QPointF(hit - QPoint(100, 0)),
                         view.mapToGlobal(QPointF(hit - QPoint(100, 0))), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&view, &move);
        QTest::mouseRelease(&view, Qt::LeftButton, {}, hit - QPoint(100, 0));
        QVERIFY(view.viewStart() > before);
        QCOMPARE(activated.count(), 1);
        view.grab();  // paints without crashing, selected and not
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timeline_view.moc"
