// DocumentLoader: turns what the user opens into a module (and, for an XLA
// dump folder with per-pass files, an external pass timeline):
//   * a file in any format core/io/module_io.h reads (HLO text, our JSON,
//     StableHLO .mlir), chosen by content;
//   * an XLA dump folder (--xla_dump_to): its modules are listed from the
//     file names (module_NNNN.<name>.before_optimizations.txt,
//     ...after_optimizations.txt and, with --xla_dump_hlo_pass_re,
//     module_NNNN.<name>.SSSS.<pipeline>.after_<pass>.txt); only regular
//     files whose canonical path lies inside the folder are read (no link
//     leads outside it);
//   * a built-in example, embedded as a Qt resource (:/examples/index.json
//     lists them).
// Errors name file:line:col when the Status carries a location. No state,
// no threads: the DocumentWorker calls it on its thread.
#pragma once

#include <QString>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct ExampleInfo {
    QString name;  // "mlp"
    QString file;  // "mlp.hlo" (inside :/examples)
    QString title;
    QString description;
};

struct DumpPassFile {
    int step = 0;          // the SSSS number XLA gives the dump
    QString pipeline;      // "optimization", "simplification", ...
    QString pass;          // "algsimp"
    QString path;          // absolute
};

struct DumpModuleInfo {
    QString id;          // "module_0001.jit_f": the prefix of its files
    QString moduleName;  // "jit_f"
    QString beforeOptimizations;  // absolute path, empty when absent
    QString afterOptimizations;
    std::vector<DumpPassFile> passes;  // sorted by step
};

// A pass of an external timeline: its name and the module text after it.
struct ExternalPass {
    std::string name;  // "<pipeline>: <pass>"
    std::string fileName;  // the dump file it comes from
    std::string text;
};

struct LoadedDocument {
    std::unique_ptr<HloModule> module;
    std::string path;         // file or folder; empty for an example
    std::string displayName;  // file name, "folder/module", or the example name
    std::string moduleId;     // dump module id (dump folders only)
    // The module's own text (snapshot 0 of an external timeline).
    std::string text;
    // Per-pass files of a dump module, in order (empty otherwise).
    std::vector<ExternalPass> externalPasses;
};

namespace document_loader {

// "file:line:col: error: message", or "<file>: error: message" when the
// status has no location.
std::string formatError(const Status& status, const std::string& fileName);

bool isDumpFolder(const QString& path);
// Modules of a dump folder, sorted by id; an error when there are none.
StatusOr<std::vector<DumpModuleInfo>> listDumpFolder(const QString& folder);
StatusOr<LoadedDocument> loadDumpModule(const QString& folder, const QString& moduleId);

// A file, or a dump folder (its first module).
StatusOr<LoadedDocument> loadPath(const QString& path);

const std::vector<ExampleInfo>& examples();
StatusOr<LoadedDocument> loadExample(const QString& name);

}  // namespace document_loader
}  // namespace hloscope
