#include "views/document/document_worker.h"

#include <QFileInfo>
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/module_diff.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/text/hlo_parser.h"
#include "core/support/thread_handoff.h"

namespace hloscope {
namespace {

constexpr size_t kModuleCacheSize = 8;

struct TargetEntry {
    const char* name;
    const char* title;
    const char* pipeline;
};
constexpr TargetEntry kTargets[] = {
    {"cpu", "CPU", "cpu"},          {"h100", "GPU H100", "gpu"}, {"a100", "GPU A100", "gpu"},
    {"tpu_v4", "TPU v4", "tpu"},    {"tpu_v5e", "TPU v5e", "tpu"},
};

QString toQString(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class DocumentWorker::ProgressReporter : public PassInstrumentation {
public:
    ProgressReporter(DocumentWorker* worker, int total) : m_worker(worker), m_total(total) {}
    void beforePass(const PassRunInfo& info, const HloModule&) override {
        emit m_worker->progress(QStringLiteral("Running %1 (%2/%3)")
                                    .arg(toQString(info.step->pass))
                                    .arg(info.index + 1)
                                    .arg(m_total),
                                info.index, m_total);
    }
    Status afterPass(const PassRunInfo& info, const HloModule&, const PassRunResult&) override {
        emit m_worker->progress(QStringLiteral("Ran %1").arg(toQString(info.step->pass)),
                                info.index + 1, m_total);
        return Status::ok();
    }

private:
    DocumentWorker* m_worker;
    int m_total;
};

struct DocumentWorker::Live {
    std::string path, displayName, moduleId;
    ModelLayersPtr layers;  // of the loaded module, kept across re-runs
    Settings settings;
    std::vector<std::string> passes;  // the whole pipeline (or XLA's timeline)
    bool external = false;
    PassSnapshot input;  // snapshot 0, recorded before any pass runs
    std::unique_ptr<ProgressReporter> reporter;  // outlives the session
    std::unique_ptr<PipelineSession> session;
    std::shared_ptr<const std::vector<PassSnapshot>> snapshots;  // as published
    int current = 0;

    // The highest snapshot index reachable (stop-after included).
    int maxIndex() const {
        if (external) return snapshots ? static_cast<int>(snapshots->size()) - 1 : 0;
        const int count = static_cast<int>(passes.size());
        return settings.stopAfter >= 0 ? std::min(count, settings.stopAfter + 1) : count;
    }
    // Refreshes `snapshots` from the session (copies only when it grew).
    void syncSnapshots() {
        if (external) return;
        const std::vector<PassSnapshot>& run = session->snapshots();
        if (run.empty()) {
            if (!snapshots) snapshots = std::make_shared<const std::vector<PassSnapshot>>(1, input);
            return;
        }
        if (!snapshots || snapshots->size() != run.size() || (*snapshots)[0].text != run[0].text)
            snapshots = std::make_shared<const std::vector<PassSnapshot>>(run);
    }
    int snapshotCount() const { return snapshots ? static_cast<int>(snapshots->size()) : 0; }
};

class DocumentWorker::Operation {
public:
    explicit Operation(DocumentWorker* worker) : m_worker(worker) {
        m_worker->m_cancel.store(false);
        emit m_worker->busyChanged(true);
    }
    ~Operation() { emit m_worker->busyChanged(false); }

private:
    DocumentWorker* m_worker;
};

DocumentWorker::DocumentWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<hloscope::DocumentStatePtr>();
}

DocumentWorker::~DocumentWorker() = default;

QStringList DocumentWorker::targetNames() {
    QStringList names;
    for (const TargetEntry& t : kTargets) names << QLatin1String(t.name);
    return names;
}

QString DocumentWorker::targetTitle(const QString& target) {
    for (const TargetEntry& t : kTargets)
        if (target == QLatin1String(t.name)) return QLatin1String(t.title);
    return target;
}

QString DocumentWorker::pipelineTargetOf(const QString& target) {
    for (const TargetEntry& t : kTargets)
        if (target == QLatin1String(t.name)) return QLatin1String(t.pipeline);
    return {};
}

DocumentStatePtr DocumentWorker::state() const {
    std::lock_guard<std::mutex> lock(m_stateMutex);
    return m_state;
}

void DocumentWorker::cancel() { m_cancel.store(true); }

// --- Loading ---------------------------------------------------------------------

void DocumentWorker::open(const QString& path) {
    Operation op(this);
    emit progress(QStringLiteral("Loading %1").arg(QFileInfo(path).fileName()), 0, 0);
    load(document_loader::loadPath(path), path);
}

void DocumentWorker::openDumpModule(const QString& folder, const QString& moduleId) {
    Operation op(this);
    emit progress(QStringLiteral("Loading %1").arg(moduleId), 0, 0);
    load(document_loader::loadDumpModule(folder, moduleId), folder);
}

void DocumentWorker::openExample(const QString& name) {
    Operation op(this);
    emit progress(QStringLiteral("Loading example %1").arg(name), 0, 0);
    load(document_loader::loadExample(name), name);
}

namespace {

// XLA's per-pass files as snapshots: instructions keep their unique id
// across files by name (XLA keeps names stable), so diffs and selection
// work as for our own passes.
StatusOr<std::vector<PassSnapshot>> externalSnapshots(const LoadedDocument& doc,
                                                      const std::atomic<bool>& cancel,
                                                      DocumentWorker* worker) {
    std::vector<PassSnapshot> snapshots;
    std::unordered_map<std::string, int64_t> idOf;
    int64_t nextId = 0;
    auto assignIds = [&](HloModule& module) {
        auto ids = std::make_shared<std::vector<int64_t>>();
        std::unordered_set<int64_t> used;
        for (const auto& computation : module.computations())
            for (const auto& instruction : computation->instructions()) {
                auto it = idOf.find(instruction->name());
                int64_t id = it != idOf.end() && !used.count(it->second) ? it->second : nextId++;
                idOf[instruction->name()] = id;
                used.insert(id);
                instruction->setUniqueId(id);
                ids->push_back(id);
            }
        return std::shared_ptr<const std::vector<int64_t>>(std::move(ids));
    };
    PassSnapshot input;
    input.index = -1;
    input.pass = "input";
    input.text = std::make_shared<const std::string>(doc.text);
    {
        HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, parseHloModule(doc.text));
        input.ids = assignIds(*module);
        snapshots.push_back(std::move(input));
    }
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> first, snapshots[0].materialize());
    ModuleRecord previous = ModuleRecord::of(*first);
    const int total = static_cast<int>(doc.externalPasses.size());
    for (int i = 0; i < total; ++i) {
        if (cancel.load()) return Status(StatusCode::kCancelled, "loading cancelled");
        const ExternalPass& pass = doc.externalPasses[static_cast<size_t>(i)];
        emit worker->progress(QStringLiteral("Reading %1").arg(toQString(pass.fileName)), i, total);
        PassSnapshot s;
        s.index = i;
        s.pass = pass.name;
        const PassSnapshot& before = snapshots.back();
        if (pass.text == *before.text) {
            s.text = before.text;
            s.ids = before.ids;
        } else {
            auto module = parseHloModule(pass.text, HloParseOptions{pass.fileName});
            if (!module.isOk())
                return Status(module.status().code(),
                              document_loader::formatError(module.status(), pass.fileName));
            s.changed = true;
            s.text = std::make_shared<const std::string>(pass.text);
            s.ids = assignIds(**module);
            ModuleRecord record = ModuleRecord::of(**module);
            s.diff = diffModules(previous, record);
            previous = std::move(record);
        }
        snapshots.push_back(std::move(s));
    }
    return snapshots;
}

}  // namespace

void DocumentWorker::load(StatusOr<LoadedDocument> loaded, const QString& what) {
    if (!loaded.isOk()) {
        emit failed(toQString(loaded.status().message()));
        return;
    }
    LoadedDocument& doc = *loaded;
    Settings settings;
    settings.target = m_target;
    std::unique_ptr<Live> live;
    if (!doc.externalPasses.empty()) {
        auto snapshots = externalSnapshots(doc, m_cancel, this);
        if (!snapshots.isOk()) {
            emit failed(toQString(snapshots.status().message()));
            return;
        }
        live = std::make_unique<Live>();
        live->path = doc.path;
        live->displayName = doc.displayName;
        live->settings = settings;
        live->external = true;
        for (size_t i = 1; i < snapshots->size(); ++i) live->passes.push_back((*snapshots)[i].pass);
        live->input = (*snapshots)[0];
        live->snapshots = std::make_shared<const std::vector<PassSnapshot>>(std::move(*snapshots));
    } else {
        auto built = build(std::move(doc.module), settings, doc.path, doc.displayName, 0);
        if (!built.isOk()) {
            emit failed(toQString(document_loader::formatError(built.status(), doc.displayName)));
            return;
        }
        live = std::move(*built);
    }
    live->moduleId = doc.moduleId;
    m_live = std::move(live);
    m_cache.clear();
    emit progress(QStringLiteral("Loaded %1").arg(what), 1, 1);
    publish(*m_live);
}

// --- Pipelines ----------------------------------------------------------------

namespace {

StatusOr<Pipeline> fullPipeline(const std::string& target, const std::string& force,
                                 const std::string& forbid) {
    const QString pipelineTarget = DocumentWorker::pipelineTargetOf(toQString(target));
    if (pipelineTarget.isEmpty())
        return invalidArgument("unknown target '" + target +
                               "' (expected cpu, h100, a100, tpu_v4 or tpu_v5e)");
    // The family's pipeline with the fusion passes' cost model on this
    // hardware (cpu is the family itself).
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline, targetPipeline(target));
    if (!force.empty()) HLO_RETURN_IF_ERROR(setPassOption(pipeline, "fusion.force=" + force));
    if (!forbid.empty()) HLO_RETURN_IF_ERROR(setPassOption(pipeline, "fusion.forbid=" + forbid));
    return pipeline;
}

}  // namespace

StatusOr<std::unique_ptr<DocumentWorker::Live>> DocumentWorker::build(
    std::unique_ptr<HloModule> module, const Settings& settings, const std::string& path,
    const std::string& displayName, int step) {
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline,
                         fullPipeline(settings.target, settings.force, settings.forbid));
    auto live = std::make_unique<Live>();
    live->path = path;
    live->displayName = displayName;
    live->settings = settings;
    for (const PipelineStep& s : pipeline.steps) live->passes.push_back(s.pass);
    if (live->settings.enabled.size() != live->passes.size()) live->settings.enabled.clear();
    for (size_t i = 0; i < live->settings.enabled.size(); ++i)
        pipeline.steps[i].enabled = live->settings.enabled[i];
    if (live->settings.stopAfter >= static_cast<int>(pipeline.steps.size()))
        live->settings.stopAfter = -1;
    if (live->settings.stopAfter >= 0)
        pipeline.steps.resize(static_cast<size_t>(live->settings.stopAfter) + 1);

    SessionOptions options;
    options.runner.cancel = &m_cancel;
    options.peak = peakMemoryBytes;
    const int total = static_cast<int>(pipeline.steps.size());
    HLO_ASSIGN_OR_RETURN(live->session,
                         PipelineSession::create(std::move(module), std::move(pipeline), options));
    live->reporter = std::make_unique<ProgressReporter>(this, total);
    live->session->addInstrumentation(live->reporter.get());
    // The session's record of the input is the input snapshot. An input that does not
    // verify is still shown (recorded apart); running a pass on it reports why not.
    if (live->session->start().isOk()) {
        live->input = live->session->snapshots().front();
    } else {
        SnapshotRecorder recorder(peakMemoryBytes);
        HLO_RETURN_IF_ERROR(recorder.beforePipeline(live->session->module()));
        live->input = recorder.snapshots().front();
    }
    live->syncSnapshots();
    const int target = std::clamp(step, 0, live->maxIndex());
    HLO_RETURN_IF_ERROR(runTo(*live, target));
    live->current = target;
    return live;
}

Status DocumentWorker::runTo(Live& live, int index) {
    if (live.external) return Status::ok();
    Status status = live.session->runUntil(index);
    live.syncSnapshots();
    return status;
}

StatusOr<std::shared_ptr<const HloModule>> DocumentWorker::moduleAt(Live& live, int index) {
    const PassSnapshot& snapshot = (*live.snapshots)[static_cast<size_t>(index)];
    // Same text and ids (shared pointers, or equal contents: a re-run or the
    // session's own copy of the input) give the same module.
    auto same = [](const auto& a, const auto& b) { return a == b || (a && b && *a == *b); };
    for (size_t i = 0; i < m_cache.size(); ++i) {
        if (same(m_cache[i].text, snapshot.text) && same(m_cache[i].ids, snapshot.ids)) {
            CacheEntry hit = m_cache[i];
            m_cache.erase(m_cache.begin() + static_cast<std::ptrdiff_t>(i));
            m_cache.push_back(hit);
            return hit.module;
        }
    }
    std::unique_ptr<HloModule> module;
    // The session's working module is the state of its newest snapshot unless a pass
    // failed after it: a copy of it costs less than parsing the snapshot's text.
    if (!live.external && live.session && !live.session->snapshots().empty() &&
        snapshot.index + 1 == live.session->nextIndex() &&
        snapshot.text == live.session->snapshots().back().text) {
        module = live.session->module().clone();
    } else {
        HLO_ASSIGN_OR_RETURN(module, snapshot.materialize());
    }
    std::shared_ptr<const HloModule> shared(std::move(module));
    m_cache.push_back(CacheEntry{snapshot.text, snapshot.ids, shared});
    if (m_cache.size() > kModuleCacheSize) m_cache.erase(m_cache.begin());
    return shared;
}

void DocumentWorker::publish(Live& live) {
    live.syncSnapshots();
    live.current = std::clamp(live.current, 0, std::max(0, live.snapshotCount() - 1));
    auto state = std::make_shared<DocumentState>();
    state->path = live.path;
    state->displayName = live.displayName;
    state->target = live.settings.target;
    state->pipelineTarget = pipelineTargetOf(toQString(live.settings.target)).toStdString();
    state->passes = live.passes;
    state->passEnabled = live.settings.enabled.empty()
                             ? std::vector<bool>(live.passes.size(), true)
                             : live.settings.enabled;
    state->snapshots = live.snapshots;
    state->current = live.current;
    state->forceFusion = live.settings.force;
    state->forbidFusion = live.settings.forbid;
    state->stopAfter = live.settings.stopAfter;
    state->externalTimeline = live.external;
    state->moduleId = live.moduleId;
    if (!live.layers) {
        // Built once per document on the loaded module (snapshot 0): tens of milliseconds for
        // a 40k-instruction model.
        auto input = moduleAt(live, 0);
        if (input.isOk()) {
            auto layers = std::make_shared<ModelLayers>();
            layers->module = *input;
            layers->tree = LayerTree::build(**input);
            live.layers = std::move(layers);
        }
    }
    state->layers = live.layers;
    auto module = moduleAt(live, live.current);
    if (module.isOk()) state->module = *module;
    else emit failed(toQString(module.status().message()));
    if (live.current > 0) {
        auto previous = moduleAt(live, live.current - 1);
        if (previous.isOk()) state->previous = *previous;
    }
    state->generation = ++m_generation;
    DocumentStatePtr published = state;
    {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        m_state = published;
    }
    // Receivers in other threads (the GUI) call handoff::receive() before reading it.
    handoff::send();
    emit stateChanged(published);
}

// --- Stepping and re-runs --------------------------------------------------------

void DocumentWorker::stepTo(int index) {
    if (!m_live) return;
    Operation op(this);
    Live& live = *m_live;
    index = std::clamp(index, 0, live.maxIndex());
    Status status = runTo(live, index);
    live.current = std::min(index, live.snapshotCount() - 1);
    publish(live);
    if (!status.isOk()) emit failed(toQString(document_loader::formatError(status, live.displayName)));
}

void DocumentWorker::rerun(const Settings& settings, const QString& what) {
    if (!m_live) return;
    Operation op(this);
    Live& live = *m_live;
    if (live.external) {
        if (settings.target != live.settings.target && settings.enabled == live.settings.enabled &&
            settings.stopAfter == live.settings.stopAfter && settings.force == live.settings.force &&
            settings.forbid == live.settings.forbid) {
            // XLA's timeline does not depend on our target; the estimators do.
            live.settings.target = settings.target;
            publish(live);
            return;
        }
        emit failed(QStringLiteral("%1 is not available for an XLA dump timeline (%2)")
                        .arg(what, toQString(live.displayName)));
        return;
    }
    emit progress(what, 0, 0);
    auto input = live.input.materialize();
    if (!input.isOk()) {
        emit failed(toQString(input.status().message()));
        return;
    }
    auto built = build(std::move(*input), settings, live.path, live.displayName, live.current);
    if (!built.isOk()) {
        emit failed(toQString(document_loader::formatError(built.status(), live.displayName)));
        return;
    }
    (*built)->moduleId = live.moduleId;
    (*built)->layers = live.layers;  // the loaded module is the same
    m_live = std::move(*built);
    publish(*m_live);
}

void DocumentWorker::setTarget(const QString& target) {
    if (pipelineTargetOf(target).isEmpty()) {
        emit failed(QStringLiteral("unknown target '%1' (expected %2)")
                        .arg(target, targetNames().join(QStringLiteral(", "))));
        return;
    }
    m_target = target.toStdString();
    if (!m_live) return;
    if (m_live->settings.target == m_target) return;
    Settings settings = m_live->settings;
    settings.target = target.toStdString();
    // Another pipeline family may have other passes.
    if (pipelineTargetOf(target) != pipelineTargetOf(toQString(m_live->settings.target))) {
        settings.enabled.clear();
        settings.stopAfter = -1;
    }
    rerun(settings, QStringLiteral("Target %1").arg(targetTitle(target)));
}

void DocumentWorker::setPassEnabled(int pass, bool enabled) {
    if (!m_live) return;
    if (pass < 0 || pass >= static_cast<int>(m_live->passes.size())) {
        emit failed(QStringLiteral("no pass %1").arg(pass));
        return;
    }
    Settings settings = m_live->settings;
    if (settings.enabled.empty()) settings.enabled.assign(m_live->passes.size(), true);
    if (settings.enabled[static_cast<size_t>(pass)] == enabled) return;
    settings.enabled[static_cast<size_t>(pass)] = enabled;
    rerun(settings, QStringLiteral("%1 %2")
                        .arg(enabled ? QStringLiteral("Enable") : QStringLiteral("Disable"),
                             toQString(m_live->passes[static_cast<size_t>(pass)])));
}

void DocumentWorker::setStopAfter(int pass) {
    if (!m_live) return;
    if (pass >= static_cast<int>(m_live->passes.size())) pass = -1;
    if (pass < -1) pass = -1;
    if (m_live->settings.stopAfter == pass) return;
    Settings settings = m_live->settings;
    settings.stopAfter = pass;
    rerun(settings, pass < 0 ? QStringLiteral("Run to the end")
                             : QStringLiteral("Stop after %1")
                                   .arg(toQString(m_live->passes[static_cast<size_t>(pass)])));
}

void DocumentWorker::setFusionWhatIf(const QString& force, const QString& forbid) {
    if (!m_live) return;
    Settings settings = m_live->settings;
    settings.force = force.trimmed().toStdString();
    settings.forbid = forbid.trimmed().toStdString();
    if (settings.force == m_live->settings.force && settings.forbid == m_live->settings.forbid) return;
    rerun(settings, QStringLiteral("Fusion what-if"));
}

}  // namespace hloscope
