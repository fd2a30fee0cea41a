// The GUI tests' settings: QSettings in INI files under a temporary folder, for an application
// name of the test's own, cleared at the start, so that no test reads or writes the user's.
#pragma once

#include <QCoreApplication>
#include <QSettings>
#include <QTemporaryDir>

namespace hloscope::testing {

// Call from initTestCase with a folder that outlives the test (a member QTemporaryDir).
inline bool sandboxSettings(const QTemporaryDir& folder, const QString& application) {
    if (!folder.isValid()) return false;
    QCoreApplication::setOrganizationName(QStringLiteral("hloscope-test"));
    QCoreApplication::setApplicationName(application);
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, folder.path());
    QSettings().clear();
    return true;
}

}  // namespace hloscope::testing
