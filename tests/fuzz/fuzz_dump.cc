// libFuzzer target: the XLA dump-folder reader (views/document/document_loader.h) and the
// document worker's replay of a dump's per-pass files (views/document/document_worker.h),
// which is what opening a dump folder in the app does.
//
// The input is a folder written as text: each line "//== NAME" starts a file of that name
// (a '/' or a NUL in it becomes '_'; at most 48 files), the lines up to the next such line
// are its content. The folder is made anew in a temporary folder, listed, and every module
// in it loaded; a module with per-pass files is opened in a DocumentWorker and stepped through
// its whole timeline and back. Refusals are expected (no modules, a file that does not
// parse); crashes, sanitizer reports, a listing that names a module the loader then cannot
// find, and a timeline whose snapshots do not match its files are findings.
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/xla_dump.h"
#include "tests/fuzz/fuzz_util.h"
#include "views/document/document_loader.h"
#include "views/document/document_worker.h"

using namespace hloscope;

namespace {

// Never destroyed: at exit Qt's own globals go first, and its destructor would touch them.
QCoreApplication* g_app = nullptr;
std::unique_ptr<QTemporaryDir> g_dir;
constexpr std::string_view kMarker = "//== ";
constexpr int kMaxFiles = 48;

struct DumpFile {
    std::string name;
    std::string text;
};

std::vector<DumpFile> splitFiles(std::string_view input) {
    std::vector<DumpFile> files;
    size_t pos = 0;
    DumpFile* current = nullptr;
    while (pos < input.size()) {
        size_t end = input.find('\n', pos);
        const size_t next = end == std::string_view::npos ? input.size() : end + 1;
        const std::string_view line = input.substr(pos, next - pos);
        if (line.substr(0, kMarker.size()) == kMarker) {
            if (files.size() >= kMaxFiles) break;
            std::string name(line.substr(kMarker.size()));
            while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
            for (char& c : name)
                if (c == '/' || c == '\0') c = '_';
            if (name.size() > 200) name.resize(200);
            if (name.empty() || name == "." || name == "..") name = "_";
            files.push_back(DumpFile{std::move(name), {}});
            current = &files.back();
        } else if (current) {
            current->text.append(line);
        }
        pos = next;
    }
    return files;
}

void replay(const QString& folder, const DumpModuleInfo& info, const LoadedDocument& doc) {
    DocumentWorker worker;
    QString failure;
    QObject::connect(&worker, &DocumentWorker::failed, [&failure](const QString& m) { failure = m; });
    worker.openDumpModule(folder, info.id);
    const DocumentStatePtr state = worker.state();
    if (!state) {
        if (failure.isEmpty()) fuzz::fail("dump replay", "no state and no error for " + info.id.toStdString());
        return;  // a per-pass file that does not parse
    }
    if (!state->externalTimeline) fuzz::fail("dump replay", "per-pass files but not XLA's timeline");
    const int count = state->snapshotCount();
    if (count != static_cast<int>(doc.externalPasses.size()) + 1)
        fuzz::fail("dump replay", std::to_string(count) + " snapshots for " +
                                      std::to_string(doc.externalPasses.size()) + " pass files");
    for (int step = count - 1; step >= 0; step -= std::max(1, count / 4)) {
        worker.stepTo(step);
        const DocumentStatePtr at = worker.state();
        if (!at || at->current != step || !at->module)
            fuzz::fail("dump replay", "step " + std::to_string(step) + " of " + std::to_string(count) +
                                          " shows no module");
    }
    worker.stepTo(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    // A test that replays the inputs has an application already.
    if (!QCoreApplication::instance()) g_app = new QCoreApplication(*argc, *argv);
    g_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/fuzz_dump-XXXXXX"));
    if (!g_dir->isValid()) fuzz::fail("dump", "no temporary folder");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    const QString folder = g_dir->filePath(QStringLiteral("dump"));
    QDir(folder).removeRecursively();
    if (!QDir().mkpath(folder)) fuzz::fail("dump", "cannot make the folder");
    for (const DumpFile& file : splitFiles(fuzz::asText(data, size))) {
        QFile out(QDir(folder).filePath(QString::fromStdString(file.name)));
        if (!out.open(QIODevice::WriteOnly)) continue;  // a name the file system refuses
        out.write(file.text.data(), static_cast<qint64>(file.text.size()));
    }
    (void)listDumpedModules(folder.toStdString());
    auto modules = document_loader::listDumpFolder(folder);
    if (!modules.isOk()) return 0;
    for (const DumpModuleInfo& info : *modules) {
        if (info.id.isEmpty()) fuzz::fail("dump listing", "a module without an id");
        auto loaded = document_loader::loadDumpModule(folder, info.id);
        if (!loaded.isOk()) {
            if (loaded.status().code() == StatusCode::kNotFound &&
                QString::fromStdString(loaded.status().message()).contains(QStringLiteral("no module")))
                fuzz::fail("dump listing", "listed module " + info.id.toStdString() + " is not found by the loader");
            continue;
        }
        if (!loaded->module) fuzz::fail("dump load", "a loaded module that is null");
        if (!loaded->externalPasses.empty()) replay(folder, info, *loaded);
    }
    (void)document_loader::loadPath(folder);
    return 0;
}
