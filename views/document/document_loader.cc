#include "views/document/document_loader.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <map>

#include "core/io/input_limits.h"
#include "core/io/module_io.h"

namespace hloscope::document_loader {
namespace {

// Reads a whole file through Qt (works for resources too).
StatusOr<std::string> readAll(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return ioError("cannot read " + path.toStdString() + ": " + file.errorString().toStdString());
    // Checked before anything is read (a resource is ours, and small).
    if (!path.startsWith(QLatin1Char(':')))
        HLO_RETURN_IF_ERROR(limits::checkInputFileSize(path.toStdString(), file.size()));
    const QByteArray bytes = file.readAll();
    return std::string(bytes.constData(), static_cast<size_t>(bytes.size()));
}

StatusOr<std::unique_ptr<HloModule>> parse(const std::string& text, const std::string& fileName) {
    auto module = loadModule(text, fileName);
    if (!module.isOk())
        return Status(module.status().code(), formatError(module.status(), fileName));
    return std::move(*module);
}

// True when `file` (after resolving links) lies inside `folder` (canonical).
bool insideFolder(const QFileInfo& file, const QString& canonicalFolder) {
    const QString canonical = file.canonicalFilePath();
    return !canonical.isEmpty() && canonical.startsWith(canonicalFolder + QLatin1Char('/')) &&
           QFileInfo(canonical).isFile();
}

}  // namespace

std::string formatError(const Status& status, const std::string& fileName) {
    if (status.location() && status.location()->isValid()) {
        // The location already names the file; keep the caller's name when the
        // parser had none.
        if (!status.location()->file.empty()) return status.toString();
        SourceLocation location = *status.location();
        location.file = fileName;
        return status.withLocation(location).toString();
    }
    const std::string& message = status.message();
    if (!fileName.empty() && message.rfind(fileName + ":", 0) == 0) return message;
    return (fileName.empty() ? std::string() : fileName + ": ") + "error: " + message;
}

bool isDumpFolder(const QString& path) { return QFileInfo(path).isDir(); }

StatusOr<std::vector<DumpModuleInfo>> listDumpFolder(const QString& folder) {
    const QFileInfo folderInfo(folder);
    if (!folderInfo.isDir()) return notFound(folder.toStdString() + ": not a folder");
    const QString canonicalFolder = folderInfo.canonicalFilePath();
    static const QRegularExpression perPass(
        QStringLiteral(R"(^(module_\d+)\.(.+)\.(\d+)\.([A-Za-z0-9_\-]+)\.after_(.+)\.txt$)"));
    // XLA puts the platform before "after_optimizations" on some backends
    // (module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt).
    static const QRegularExpression whole(
        QStringLiteral(R"(^(module_\d+)\.(.+?)\.(?:.+_)?(before|after)_optimizations\.txt$)"));
    std::map<QString, DumpModuleInfo> modules;
    const QDir dir(canonicalFolder);
    const QFileInfoList entries = dir.entryInfoList(QDir::Files | QDir::NoDotAndDotDot, QDir::Name);
    for (const QFileInfo& entry : entries) {
        if (!insideFolder(entry, canonicalFolder)) continue;
        const QString name = entry.fileName();
        const QString path = entry.canonicalFilePath();
        if (const QRegularExpressionMatch m = whole.match(name); m.hasMatch()) {
            DumpModuleInfo& info = modules[m.captured(1) + '.' + m.captured(2)];
            info.moduleName = m.captured(2);
            (m.captured(3) == QLatin1String("before") ? info.beforeOptimizations
                                                     : info.afterOptimizations) = path;
        } else if (const QRegularExpressionMatch p = perPass.match(name); p.hasMatch()) {
            DumpModuleInfo& info = modules[p.captured(1) + '.' + p.captured(2)];
            info.moduleName = p.captured(2);
            info.passes.push_back(DumpPassFile{p.captured(3).toInt(), p.captured(4), p.captured(5), path});
        }
    }
    std::vector<DumpModuleInfo> result;
    for (auto& [id, info] : modules) {
        info.id = id;
        std::stable_sort(info.passes.begin(), info.passes.end(),
                         [](const DumpPassFile& a, const DumpPassFile& b) { return a.step < b.step; });
        result.push_back(std::move(info));
    }
    if (result.empty())
        return notFound(folder.toStdString() +
                        ": no XLA dump modules (module_*.before_optimizations.txt, "
                        "module_*.after_optimizations.txt or per-pass files)");
    return result;
}

StatusOr<LoadedDocument> loadDumpModule(const QString& folder, const QString& moduleId) {
    HLO_ASSIGN_OR_RETURN(std::vector<DumpModuleInfo> modules, listDumpFolder(folder));
    const auto it = std::find_if(modules.begin(), modules.end(),
                                 [&](const DumpModuleInfo& m) { return m.id == moduleId; });
    if (it == modules.end())
        return notFound(folder.toStdString() + ": no module " + moduleId.toStdString() +
                        " in the dump folder");
    const DumpModuleInfo& info = *it;
    LoadedDocument doc;
    doc.path = QFileInfo(folder).absoluteFilePath().toStdString();
    doc.moduleId = info.id.toStdString();
    doc.displayName = QFileInfo(folder).fileName().toStdString() + "/" + info.id.toStdString();
    // Snapshot 0: the module before optimizations, else the first per-pass
    // file, else the optimized module.
    QString inputPath = info.beforeOptimizations;
    size_t firstPass = 0;
    if (inputPath.isEmpty() && !info.passes.empty()) {
        inputPath = info.passes.front().path;
        firstPass = 1;
    }
    if (inputPath.isEmpty()) inputPath = info.afterOptimizations;
    const std::string inputName = QFileInfo(inputPath).fileName().toStdString();
    HLO_ASSIGN_OR_RETURN(doc.text, readAll(inputPath));
    HLO_ASSIGN_OR_RETURN(doc.module, parse(doc.text, inputName));
    for (size_t i = firstPass; i < info.passes.size(); ++i) {
        const DumpPassFile& file = info.passes[i];
        ExternalPass pass;
        pass.name = (file.pipeline + QStringLiteral(": ") + file.pass).toStdString();
        pass.fileName = QFileInfo(file.path).fileName().toStdString();
        HLO_ASSIGN_OR_RETURN(pass.text, readAll(file.path));
        doc.externalPasses.push_back(std::move(pass));
    }
    return doc;
}

StatusOr<LoadedDocument> loadPath(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists()) return notFound(path.toStdString() + ": no such file or folder");
    if (info.isDir()) {
        HLO_ASSIGN_OR_RETURN(std::vector<DumpModuleInfo> modules, listDumpFolder(path));
        return loadDumpModule(path, modules.front().id);
    }
    LoadedDocument doc;
    doc.path = info.absoluteFilePath().toStdString();
    doc.displayName = info.fileName().toStdString();
    HLO_ASSIGN_OR_RETURN(doc.text, readAll(path));
    HLO_ASSIGN_OR_RETURN(doc.module, parse(doc.text, doc.displayName));
    return doc;
}

const std::vector<ExampleInfo>& examples() {
    static const std::vector<ExampleInfo> list = [] {
        std::vector<ExampleInfo> result;
        QFile index(QStringLiteral(":/examples/index.json"));
        if (!index.open(QIODevice::ReadOnly)) return result;
        const QJsonArray array = QJsonDocument::fromJson(index.readAll()).array();
        for (const QJsonValue& value : array) {
            const QJsonObject o = value.toObject();
            ExampleInfo e{o.value(QLatin1String("name")).toString(), o.value(QLatin1String("file")).toString(),
                          o.value(QLatin1String("title")).toString(),
                          o.value(QLatin1String("description")).toString()};
            if (!e.name.isEmpty() && !e.file.isEmpty() &&
                QFile::exists(QStringLiteral(":/examples/") + e.file))
                result.push_back(std::move(e));
        }
        return result;
    }();
    return list;
}

StatusOr<LoadedDocument> loadExample(const QString& name) {
    for (const ExampleInfo& e : examples()) {
        if (e.name != name && e.file != name) continue;
        LoadedDocument doc;
        doc.displayName = e.name.toStdString();
        HLO_ASSIGN_OR_RETURN(doc.text, readAll(QStringLiteral(":/examples/") + e.file));
        HLO_ASSIGN_OR_RETURN(doc.module, parse(doc.text, e.file.toStdString()));
        return doc;
    }
    QStringList names;
    for (const ExampleInfo& e : examples()) names << e.name;
    return notFound("no built-in example '" + name.toStdString() + "' (examples: " +
                    names.join(QStringLiteral(", ")).toStdString() + ")");
}

}  // namespace hloscope::document_loader
