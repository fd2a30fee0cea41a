// Waiting for a condition while the event loop runs, woken by each event.
//
// Qt Test's QTRY_* macros poll in 50 ms steps (QTest::qWait sleeps in 10 ms slices between
// them), so every wait for a worker's result costs up to 50 ms after the result has arrived;
// a sweep that opens hundreds of files spends most of its time there. These macros check the
// condition after every batch of events instead: a worker's queued signal wakes the loop at
// once, and a 2 ms timer wakes it for conditions that no event announces.
//
//   HLOSCOPE_TRY_VERIFY(expr)                      5 s, like QTRY_VERIFY
//   HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(expr, ms)     QVERIFY(expr) once it holds or `ms` passed
//   HLOSCOPE_TRY_COMPARE(actual, expected)         5 s, like QTRY_COMPARE
//   HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(actual, expected, ms)
#pragma once

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QTest>
#include <QTimer>

namespace hloscope::testing {

// Runs the event loop until `done()` holds or `timeoutMs` passes; returns whether it holds.
template <typename Predicate>
bool waitUntil(Predicate done, int timeoutMs) {
    if (done()) return true;
    QDeadlineTimer deadline(timeoutMs, Qt::PreciseTimer);
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.start(2);
    for (;;) {
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        if (done()) return true;
        if (deadline.hasExpired()) return false;
        if (QTest::runningTest() && QTest::currentTestFailed()) return false;
    }
}

}  // namespace hloscope::testing

#define HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(expr, timeoutMs)                                       \
    do {                                                                                        \
        ::hloscope::testing::waitUntil([&]() -> bool { return static_cast<bool>(expr); },       \
                                       (timeoutMs));                                            \
        QVERIFY2(expr, "still false after " #timeoutMs " ms");                                  \
    } while (false)

#define HLOSCOPE_TRY_VERIFY(expr) HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(expr, 5000)

#define HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(actual, expected, timeoutMs)                          \
    do {                                                                                        \
        ::hloscope::testing::waitUntil([&]() -> bool { return (actual) == (expected); },        \
                                       (timeoutMs));                                            \
        QCOMPARE(actual, expected);                                                             \
    } while (false)

#define HLOSCOPE_TRY_COMPARE(actual, expected) HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(actual, expected, 5000)
