#include "app/gui/capture_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QVBoxLayout>
#include <cstdlib>

#include "core/io/xla_dump.h"
#include "core/support/human_format.h"

namespace hloscope {

CaptureDialog::CaptureDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Capture From Program"));
    setObjectName(QStringLiteral("captureDialog"));
    m_command = new QLineEdit(this);
    m_command->setPlaceholderText(tr("python3 train.py --steps 1"));
    m_perPass = new QCheckBox(tr("Also dump the module after every XLA pass (larger, slower)"), this);
    m_output = new QPlainTextEdit(this);
    m_output->setReadOnly(true);
    m_output->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_output->setMaximumBlockCount(20000);
    m_status = new QLabel(tr("The program runs with XLA_FLAGS set to dump its modules into a fresh folder; "
                             "hloscope opens the largest when it exits."),
                          this);
    m_status->setWordWrap(true);
    m_run = new QPushButton(tr("Run"), this);
    m_run->setDefault(true);
    m_cancel = new QPushButton(tr("Stop"), this);
    m_cancel->setEnabled(false);
    auto* close = new QPushButton(tr("Close"), this);
    auto* commandRow = new QHBoxLayout;
    commandRow->addWidget(new QLabel(tr("Program:"), this));
    commandRow->addWidget(m_command, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_status, 1);
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(commandRow);
    layout->addWidget(m_perPass);
    layout->addWidget(m_output, 1);
    layout->addLayout(buttons);
    resize(800, 500);

    m_process = new QProcess(this);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::readyRead, this, [this] {
        m_output->moveCursor(QTextCursor::End);
        m_output->insertPlainText(QString::fromLocal8Bit(m_process->readAll()));
        m_output->moveCursor(QTextCursor::End);
    });
    connect(m_process, &QProcess::finished, this, &CaptureDialog::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        setRunning(false);
        const QString message = tr("Cannot start %1: %2").arg(m_process->program(), m_process->errorString());
        m_status->setText(message);
        emit failed(message);
    });
    connect(m_run, &QPushButton::clicked, this, &CaptureDialog::start);
    connect(m_command, &QLineEdit::returnPressed, this, &CaptureDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, &CaptureDialog::cancel);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
}

CaptureDialog::~CaptureDialog() {
    if (isRunning()) {
        m_process->kill();
        m_process->waitForFinished(3000);
    }
}

void CaptureDialog::setCommand(const QString& command) { m_command->setText(command); }
QString CaptureDialog::command() const { return m_command->text(); }
void CaptureDialog::setPerPassDumps(bool on) { m_perPass->setChecked(on); }
QString CaptureDialog::output() const { return m_output->toPlainText(); }
QString CaptureDialog::statusText() const { return m_status->text(); }

void CaptureDialog::setRunning(bool running) {
    m_run->setEnabled(!running);
    m_command->setEnabled(!running);
    m_perPass->setEnabled(!running);
    m_cancel->setEnabled(running);
}

void CaptureDialog::start() {
    if (isRunning()) return;
    const QStringList words = QProcess::splitCommand(m_command->text());
    if (words.isEmpty()) {
        m_status->setText(tr("Type the program to run, with its arguments."));
        return;
    }
    QByteArray pattern = QDir::temp().filePath(QStringLiteral("hloscope-capture-XXXXXX")).toLocal8Bit();
    if (!mkdtemp(pattern.data())) {
        const QString message = tr("Cannot make a folder in %1").arg(QDir::tempPath());
        m_status->setText(message);
        emit failed(message);
        return;
    }
    m_folder = QString::fromLocal8Bit(pattern);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const std::string flags = xlaDumpFlags(environment.value(QStringLiteral("XLA_FLAGS")).toStdString(),
                                           m_folder.toStdString(), m_perPass->isChecked());
    environment.insert(QStringLiteral("XLA_FLAGS"), QString::fromStdString(flags));
    m_process->setProcessEnvironment(environment);
    m_output->clear();
    m_output->appendPlainText(QStringLiteral("$ XLA_FLAGS=\"%1\" %2\n").arg(QString::fromStdString(flags), m_command->text()));
    m_status->setText(tr("Running; dumping into %1").arg(m_folder));
    setRunning(true);
    m_process->start(words.front(), words.mid(1));
}

void CaptureDialog::cancel() {
    if (!isRunning()) return;
    m_status->setText(tr("Stopping..."));
    m_process->terminate();
    if (!m_process->waitForFinished(3000)) m_process->kill();
}

void CaptureDialog::onFinished(int exitCode, QProcess::ExitStatus status) {
    setRunning(false);
    const std::vector<DumpedModule> modules = listDumpedModules(m_folder.toStdString());
    if (status != QProcess::NormalExit || exitCode != 0) {
        const QString message = status == QProcess::NormalExit
                                    ? tr("The program exited with %1; %2 modules dumped in %3").arg(exitCode).arg(modules.size()).arg(m_folder)
                                    : tr("The program was stopped; %1 modules dumped in %2").arg(modules.size()).arg(m_folder);
        m_status->setText(message);
        emit failed(message);
        return;
    }
    if (modules.empty()) {
        const QString message = tr("The program dumped no module: does it run XLA (JAX, TensorFlow with "
                                   "jit_compile=True, PyTorch/XLA)?");
        m_status->setText(message);
        emit failed(message);
        return;
    }
    m_status->setText(tr("%1 modules in %2; opening the largest, %3 (%4)")
                          .arg(modules.size())
                          .arg(m_folder, QString::fromStdString(modules.front().id),
                               QString::fromStdString(formatByteSize(static_cast<double>(modules.front().bytes)))));
    emit captured(m_folder, QString::fromStdString(modules.front().id));
}

}  // namespace hloscope
