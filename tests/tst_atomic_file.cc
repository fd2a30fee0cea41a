// writeFileAtomically (core/atomic_file): new and replaced files, permissions,
// links and special files, failures that leave the previous file intact (a
// missing or read-only folder, a file-size limit hit mid-write, a folder in
// the way), and SIGKILL of a writer at random moments.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "core/io/atomic_file.h"

using namespace hloscope;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::string str(const QString& s) { return s.toStdString(); }

// The folder's entries other than `keep` (temporary files left behind).
QStringList strays(const QString& folder, const QString& keep) {
    QStringList names = QDir(folder).entryList(QDir::Files | QDir::Hidden | QDir::System);
    names.removeAll(keep);
    return names;
}

}  // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT
private slots:
    void writesAndReplaces() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.txt"));
        QVERIFY(writeFileAtomically(str(path), "first").isOk());
        QCOMPARE(readAll(path), QByteArray("first"));
        QVERIFY(writeFileAtomically(str(path), "second, longer").isOk());
        QCOMPARE(readAll(path), QByteArray("second, longer"));
        QVERIFY(writeFileAtomically(str(path), "").isOk());
        QCOMPARE(QFileInfo(path).size(), 0);
        QVERIFY2(strays(dir.path(), QStringLiteral("out.txt")).isEmpty(),
                 qPrintable(strays(dir.path(), QStringLiteral("out.txt")).join(' ')));
        // A relative path lands in the working folder.
        const QString cwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(dir.path()));
        const Status relative = writeFileAtomically("relative.txt", "here");
        QDir::setCurrent(cwd);
        QVERIFY2(relative.isOk(), relative.toString().c_str());
        QCOMPARE(readAll(dir.filePath(QStringLiteral("relative.txt"))), QByteArray("here"));
    }

    void keepsPermissions() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("script.sh"));
        QVERIFY(writeFileAtomically(str(path), "#!/bin/sh\n").isOk());
        QCOMPARE(::chmod(path.toLocal8Bit().constData(), 0751), 0);
        QVERIFY(writeFileAtomically(str(path), "#!/bin/sh\nexit 0\n").isOk());
        struct stat info {};
        QCOMPARE(::stat(path.toLocal8Bit().constData(), &info), 0);
        QCOMPARE(info.st_mode & 07777, 0751u);
    }

    void followsLinksAndWritesSpecialFilesInPlace() {
        QTemporaryDir dir;
        const QString real = dir.filePath(QStringLiteral("real.txt"));
        const QString link = dir.filePath(QStringLiteral("link.txt"));
        QVERIFY(writeFileAtomically(str(real), "old").isOk());
        QVERIFY(QFile::link(real, link));
        QVERIFY(writeFileAtomically(str(link), "new").isOk());
        QVERIFY(QFileInfo(link).isSymLink());
        QCOMPARE(readAll(real), QByteArray("new"));
        QVERIFY(writeFileAtomically("/dev/null", "discarded").isOk());
        QVERIFY(QFileInfo(QStringLiteral("/dev/null")).exists());
    }

    void missingFolderFails() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("no/such/folder/out.txt"));
        const Status status = writeFileAtomically(str(path), "text");
        QVERIFY(!status.isOk());
        QCOMPARE(status.code(), StatusCode::kIoError);
        QVERIFY2(status.message().find(str(path)) != std::string::npos, status.message().c_str());
        QVERIFY2(status.message().find("No such file or directory") != std::string::npos,
                 status.message().c_str());
        QVERIFY(!QFileInfo::exists(path));
    }

    void folderInTheWayFails() {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("taken")));
        const Status status = writeFileAtomically(str(dir.filePath(QStringLiteral("taken"))), "x");
        QVERIFY(!status.isOk());
        QVERIFY2(status.message().find("Is a directory") != std::string::npos,
                 status.message().c_str());
        QVERIFY(QFileInfo(dir.filePath(QStringLiteral("taken"))).isDir());
    }

    void readOnlyFolderKeepsOldFile() {
        if (::geteuid() == 0)
            QSKIP("root writes into read-only folders (see fileSizeLimitKeepsOldFile)");
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("ro"));
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("ro")));
        const QString path = folder + QStringLiteral("/settings.json");
        QVERIFY(writeFileAtomically(str(path), "previous").isOk());
        QCOMPARE(::chmod(folder.toLocal8Bit().constData(), 0555), 0);
        const Status status = writeFileAtomically(str(path), "replacement");
        ::chmod(folder.toLocal8Bit().constData(), 0755);
        QVERIFY(!status.isOk());
        QVERIFY2(status.message().find("Permission denied") != std::string::npos,
                 status.message().c_str());
        QCOMPARE(readAll(path), QByteArray("previous"));
    }

    // The disk "fills up" half-way through the write (RLIMIT_FSIZE: EFBIG;
    // it stops root too): the old file stays whole, no temporary file stays.
    void fileSizeLimitKeepsOldFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("history.json"));
        QVERIFY(writeFileAtomically(str(path), "previous contents").isOk());
        struct rlimit saved {};
        QCOMPARE(::getrlimit(RLIMIT_FSIZE, &saved), 0);
        struct sigaction ignore {
        }, old{};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGXFSZ, &ignore, &old);
        struct rlimit limited = saved;
        limited.rlim_cur = 64 * 1024;
        QCOMPARE(::setrlimit(RLIMIT_FSIZE, &limited), 0);
        const Status status = writeFileAtomically(str(path), std::string(1 << 20, 'x'));
        ::setrlimit(RLIMIT_FSIZE, &saved);
        ::sigaction(SIGXFSZ, &old, nullptr);
        QVERIFY(!status.isOk());
        QVERIFY2(status.message().find(str(path)) != std::string::npos, status.message().c_str());
        QVERIFY2(status.message().find("File too large") != std::string::npos,
                 status.message().c_str());
        QCOMPARE(readAll(path), QByteArray("previous contents"));
        QVERIFY2(strays(dir.path(), QStringLiteral("history.json")).isEmpty(),
                 qPrintable(strays(dir.path(), QStringLiteral("history.json")).join(' ')));
    }

    // A child replaces a 1 MB file in a loop with all-'a' or all-'b' contents
    // and is SIGKILLed at a random moment: the file is always one whole version.
    void sigkillMidWriteLeavesOneWholeVersion() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("state.bin"));
        constexpr size_t kSize = 1 << 20;
        QVERIFY(writeFileAtomically(str(path), std::string(kSize, 'a')).isOk());
        std::mt19937 random(12);
        const int kills = 25;
        int changed = 0;
        for (int i = 0; i < kills; ++i) {
            const QByteArray before = readAll(path);
            const pid_t child = ::fork();
            QVERIFY(child >= 0);
            if (child == 0) {
                for (int n = 0;; ++n)
                    if (!writeFileAtomically(str(path), std::string(kSize, n % 2 ? 'a' : 'b'))
                             .isOk())
                        ::_exit(1);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(5000 + random() % 150000));
            QCOMPARE(::kill(child, SIGKILL), 0);
            int status = 0;
            QCOMPARE(::waitpid(child, &status, 0), child);
            QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            const QByteArray after = readAll(path);
            QCOMPARE(after.size(), qsizetype(kSize));
            QVERIFY(after.count(after.at(0)) == after.size());
            changed += after != before;
        }
        QVERIFY(changed > 0);  // the kills did land between writes
        qInfo("%d SIGKILLs mid-write: every read found one whole version (%d changed)", kills,
              changed);
    }
};

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "tst_atomic_file.moc"
