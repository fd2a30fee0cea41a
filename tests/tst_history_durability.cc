// The estimator's history (compiler/estimator/history) under SIGKILL: a child
// process stores runs with 40 kernels each in a loop and is killed at a
// random moment; the parent reopens the database and checks
// PRAGMA integrity_check, that no run was lost or half-stored (every run has
// all its kernels) and that the history still opens and reads.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <random>
#include <thread>

#include "compiler/estimator/history.h"

using namespace hloscope;

namespace {

constexpr int kKernelsPerRun = 40;

HistoryRecord makeRecord(int n) {
    HistoryRecord r;
    r.module = "module-" + std::to_string(n);
    r.fingerprint = std::string(64, 'f');
    r.target = "cpu";
    r.device = "cpu";
    r.machine = "test";
    r.predictedUnfusedSeconds = 2e-3;
    r.predictedFusedSeconds = 1e-3;
    r.measuredUnfusedSeconds = 2.2e-3;
    r.measuredFusedSeconds = 1.1e-3;
    for (int k = 0; k < kKernelsPerRun; ++k) {
        HistoryKernel kernel;
        kernel.mode = k % 2 ? "fused" : "unfused";
        kernel.name = "kernel." + std::to_string(k);
        kernel.opcode = "fusion";
        kernel.parts.trafficSeconds = 1e-5 * (k + 1);
        kernel.measuredSeconds = 1.1e-5 * (k + 1);
        r.kernels.push_back(kernel);
    }
    return r;
}

// One integer from `sql` on a fresh connection (-1 on error).
int64_t queryInt(const QString& path, const char* sql) {
    sqlite3* db = nullptr;
    int64_t value = -1;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr) ==
        SQLITE_OK) {
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW)
            value = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return value;
}

QString integrityCheck(const QString& path) {
    sqlite3* db = nullptr;
    QString result = QStringLiteral("cannot open");
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr) ==
        SQLITE_OK) {
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK) {
            result.clear();
            while (sqlite3_step(s) == SQLITE_ROW)
                result +=
                    QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return result;
}

}  // namespace

class TestHistoryDurability : public QObject {
    Q_OBJECT
private slots:
    void settingsAreDurable() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("history.sqlite"));
        auto history = EstimateHistory::open(path.toStdString());
        QVERIFY2(history.isOk(), history.status().toString().c_str());
        QVERIFY((*history)->add(makeRecord(0)).isOk());
        // Rollback journal, not WAL or an in-memory journal.
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
        sqlite3_stmt* s = nullptr;
        QCOMPARE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr), SQLITE_OK);
        QCOMPARE(sqlite3_step(s), SQLITE_ROW);
        QCOMPARE(QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))),
                 QStringLiteral("delete"));
        sqlite3_finalize(s);
        sqlite3_close(db);
    }

    void sigkillMidWrite() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("history.sqlite"));
        {
            auto history = EstimateHistory::open(path.toStdString());
            QVERIFY2(history.isOk(), history.status().toString().c_str());
        }
        std::mt19937 random(7);
        const int kills = qEnvironmentVariableIntValue("HLOSCOPE_HISTORY_KILLS") > 0
                              ? qEnvironmentVariableIntValue("HLOSCOPE_HISTORY_KILLS")
                              : 40;
        int64_t runs = 0;
        int hotJournals = 0;
        for (int i = 0; i < kills; ++i) {
            const pid_t child = ::fork();
            QVERIFY(child >= 0);
            if (child == 0) {
                auto history = EstimateHistory::open(path.toStdString());
                if (!history.isOk()) ::_exit(2);
                for (int n = 0;; ++n)
                    if (!(*history)->add(makeRecord(n)).isOk()) ::_exit(3);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(5000 + random() % 40000));
            QCOMPARE(::kill(child, SIGKILL), 0);
            int status = 0;
            QCOMPARE(::waitpid(child, &status, 0), child);
            QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                     qPrintable(QStringLiteral("the writer exited by itself (%1)").arg(status)));
            // A journal left behind: the kill landed inside a transaction.
            const QString journal = path + QStringLiteral("-journal");
            if (QFile::exists(journal) && QFileInfo(journal).size() > 0) ++hotJournals;

            QCOMPARE(integrityCheck(path), QStringLiteral("ok"));
            const int64_t now = queryInt(path, "SELECT COUNT(*) FROM runs");
            QVERIFY(now >= runs);  // no committed run is lost
            runs = now;
            // No run without all of its kernels, no kernel without its run.
            QCOMPARE(queryInt(path,
                              "SELECT COUNT(*) FROM runs r WHERE (SELECT COUNT(*) FROM kernels k "
                              "WHERE k.run_id = r.id) != 40"),
                     0);
            QCOMPARE(
                queryInt(path,
                         "SELECT COUNT(*) FROM kernels WHERE run_id NOT IN (SELECT id FROM runs)"),
                0);
            auto history = EstimateHistory::open(path.toStdString());
            QVERIFY2(history.isOk(), history.status().toString().c_str());
            auto records = (*history)->records();
            QVERIFY(records.isOk());
            QCOMPARE(static_cast<int64_t>(records->size()), runs);
        }
        QVERIFY(runs > 0);
        qInfo(
            "%d SIGKILLs mid-write: 0 corrupt databases, %lld runs stored whole, %d kills left a "
            "hot journal (rolled back on reopen)",
            kills, static_cast<long long>(runs), hotJournals);
    }
};

QTEST_APPLESS_MAIN(TestHistoryDurability)
#include "tst_history_durability.moc"
