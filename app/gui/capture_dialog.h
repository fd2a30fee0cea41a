// CaptureDialog (File → Capture From Program..., hloscope --capture -- CMD): runs a JAX,
// TensorFlow or PyTorch/XLA program with XLA's dump flags (core/io/xla_dump.h) into a
// fresh folder, shows its output as it runs, and when it exits names the largest module
// it dumped (capturedModule), which the main window opens. Cancel stops the program.
#pragma once

#include <QDialog>
#include <QProcess>
#include <QString>
#include <QStringList>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace hloscope {

class CaptureDialog : public QDialog {
    Q_OBJECT
public:
    explicit CaptureDialog(QWidget* parent = nullptr);
    ~CaptureDialog() override;

    // The program and its arguments, as typed (split like a shell's words).
    void setCommand(const QString& command);
    QString command() const;
    void setPerPassDumps(bool on);
    bool isRunning() const { return m_process->state() != QProcess::NotRunning; }
    QString folder() const { return m_folder; }
    QString output() const;
    QString statusText() const;

public slots:
    void start();
    void cancel();

signals:
    // The program exited and dumped modules: the folder and the id of the largest.
    void captured(const QString& folder, const QString& moduleId);
    // It could not start, failed, or dumped nothing.
    void failed(const QString& message);

private:
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void setRunning(bool running);

    QLineEdit* m_command = nullptr;
    QCheckBox* m_perPass = nullptr;
    QPlainTextEdit* m_output = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QProcess* m_process = nullptr;
    QString m_folder;
};

}  // namespace hloscope
