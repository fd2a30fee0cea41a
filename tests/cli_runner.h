// Runs hloscope-cli (HLOSCOPE_CLI_PATH, set by tests/CMakeLists.txt) for the suites that drive
// the command line end to end.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace hloscope::testing {

struct CliResult {
    int exitCode = -1;  // -1: it did not start or did not exit normally
    QString out;
    QString err;
};

inline CliResult runCli(const QStringList& args, const QByteArray& stdinData = {}, int timeoutMs = 120000) {
    QProcess process;
    process.start(QStringLiteral(HLOSCOPE_CLI_PATH), args);
    if (!process.waitForStarted()) return {};
    if (!stdinData.isEmpty()) process.write(stdinData);
    process.closeWriteChannel();
    process.waitForFinished(timeoutMs);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

}  // namespace hloscope::testing
