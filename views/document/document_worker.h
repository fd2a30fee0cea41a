// DocumentWorker: the one object that owns the live, mutable side of an open
// document (the module, its PipelineSession, the materialised modules) and
// publishes immutable DocumentState snapshots. It lives on a worker QThread;
// the GUI calls its slots through queued connections (or
// QMetaObject::invokeMethod) and listens to stateChanged / progress /
// failed. Every slot leaves a consistent state behind: a document that fails
// to load, or a re-run that fails, keeps the previous state.
//
//   open(path)             HLO text, JSON, StableHLO .mlir, or an XLA dump folder
//                          (its first module; with per-pass files their timeline
//                          replaces our pipeline: every file must parse, names
//                          give instructions stable ids, diffs are computed)
//   openDumpModule(f, id)  one module of a dump folder
//   openExample(name)      a built-in example
//   setTarget(name)        cpu, h100, a100, tpu_v4, tpu_v5e (pipelines cpu/gpu/tpu);
//                          re-runs to the same step
//   stepTo(index)          snapshot index (0 = input); runs passes lazily
//   setPassEnabled(i, on)  re-runs to the same step
//   setStopAfter(i)        the pipeline ends after pass i (-1: no stop)
//   setFusionWhatIf(f, b)  fusion force=/forbid= ("p:c;..."), re-runs
//   cancel()               thread-safe (call it directly, not queued): stops
//                          the running passes at the next pass boundary
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/pipeline/pipeline_session.h"
#include "views/document/document_loader.h"
#include "views/document/document_state.h"

namespace hloscope {

class DocumentWorker : public QObject {
    Q_OBJECT
public:
    explicit DocumentWorker(QObject* parent = nullptr);
    ~DocumentWorker() override;

    // The targets the GUI offers ("cpu", "h100", ...) and their pipelines.
    static QStringList targetNames();
    static QString targetTitle(const QString& target);  // "GPU H100"
    static QString pipelineTargetOf(const QString& target);  // "" when unknown

    // The last emitted state (thread-safe); null before the first document.
    DocumentStatePtr state() const;

public slots:
    void open(const QString& path);
    void openDumpModule(const QString& folder, const QString& moduleId);
    void openExample(const QString& name);
    void setTarget(const QString& target);
    void stepTo(int index);
    void setPassEnabled(int pass, bool enabled);
    void setStopAfter(int pass);
    void setFusionWhatIf(const QString& force, const QString& forbid);
    void cancel();

signals:
    void stateChanged(hloscope::DocumentStatePtr state);
    void progress(const QString& what, int done, int total);
    void failed(const QString& message);
    void busyChanged(bool busy);

private:
    struct Live;
    class ProgressReporter;
    struct Settings {
        std::string target = "cpu";
        std::vector<bool> enabled;  // per pass; empty: all enabled
        int stopAfter = -1;
        std::string force, forbid;
    };

    void load(StatusOr<LoadedDocument> loaded, const QString& what);
    // Builds a live document from `module` with `settings`, run to `step`.
    StatusOr<std::unique_ptr<Live>> build(std::unique_ptr<HloModule> module, const Settings& settings,
                                          const std::string& path, const std::string& displayName,
                                          int step);
    Status runTo(Live& live, int index);
    StatusOr<std::shared_ptr<const HloModule>> moduleAt(Live& live, int index);
    void rerun(const Settings& settings, const QString& what);
    void publish(Live& live);
    // One operation at a time: resets the cancel flag, reports busy.
    class Operation;

    std::unique_ptr<Live> m_live;
    std::string m_target = "cpu";  // for the next document
    std::atomic<bool> m_cancel{false};
    int64_t m_generation = 0;
    mutable std::mutex m_stateMutex;
    DocumentStatePtr m_state;
    // Materialised modules by snapshot text (unchanged passes share one).
    struct CacheEntry {
        std::shared_ptr<const std::string> text;
        std::shared_ptr<const std::vector<int64_t>> ids;
        std::shared_ptr<const HloModule> module;
    };
    std::vector<CacheEntry> m_cache;  // most recent last
};

}  // namespace hloscope
