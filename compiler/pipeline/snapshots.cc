#include "compiler/pipeline/snapshots.h"

#include <unordered_set>

#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace hloscope {

StatusOr<std::unique_ptr<HloModule>> PassSnapshot::materialize() const {
    if (!text) return failedPrecondition("snapshot of " + pass + " holds no text");
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, parseHloModule(*text));
    // The parser numbers instructions in print order; map them to the
    // recorded ids.
    if (ids) {
        size_t i = 0;
        int64_t maxId = -1;
        for (const auto& computation : module->computations())
            for (const auto& instruction : computation->instructions()) {
                if (i >= ids->size())
                    return internalError("snapshot of " + pass + " has more instructions than ids");
                instruction->setUniqueId((*ids)[i]);
                maxId = std::max(maxId, (*ids)[i]);
                ++i;
            }
        if (i != ids->size())
            return internalError("snapshot of " + pass + " has fewer instructions than ids");
        while (module->nextUniqueId() <= maxId) {
        }
    }
    return module;
}

SnapshotRecorder::SnapshotRecorder(std::function<int64_t(const HloModule&)> peak)
    : m_peak(std::move(peak)) {}

Status SnapshotRecorder::beforePipeline(const HloModule& module) {
    return beforePipelinePrinted(module, nullptr);
}

Status SnapshotRecorder::beforePipelinePrinted(const HloModule& module,
                                               const std::shared_ptr<const std::string>& text) {
    m_snapshots.clear();
    m_prepared.reset();
    m_record = ModuleRecord::of(module);
    m_ids = std::make_shared<const std::vector<int64_t>>(m_record.idsInPrintOrder());
    PassSnapshot input;
    input.index = -1;
    input.pass = "input";
    input.text = text ? text
                      : std::make_shared<const std::string>(
                            printModule(module, HloPrintOptions::canonical()));
    input.ids = m_ids;
    if (m_peak) input.peakBytes = m_peak(module);
    m_snapshots.push_back(std::move(input));
    return Status::ok();
}

void SnapshotRecorder::prepareAfterPass(const PassRunInfo& info, const HloModule& module,
                                        const PassRunResult& result) {
    m_prepared.reset();
    if (!result.changed) return;
    Prepared prepared;
    prepared.index = info.index;
    prepared.record = ModuleRecord::of(module, &m_record);
    prepared.diff = diffModules(m_record, prepared.record);
    m_prepared = std::move(prepared);
}

Status SnapshotRecorder::afterPass(const PassRunInfo& info, const HloModule& module,
                                   const PassRunResult& result) {
    PassSnapshot snapshot;
    snapshot.index = info.index;
    snapshot.pass = info.step ? info.step->pass : std::string();
    snapshot.enabled = result.enabled;
    snapshot.changed = result.changed;
    snapshot.seconds = result.seconds;
    snapshot.statistics = result.statistics;
    snapshot.decisions = result.decisions;
    const PassSnapshot& previous = m_snapshots.back();
    if (result.changed) {
        if (!m_prepared || m_prepared->index != info.index)
            prepareAfterPass(info, module, result);
        snapshot.diff = std::move(m_prepared->diff);
        m_record = std::move(m_prepared->record);
        m_prepared.reset();
        m_ids = std::make_shared<const std::vector<int64_t>>(m_record.idsInPrintOrder());
        snapshot.text = result.text ? result.text
                                    : std::make_shared<const std::string>(
                                          printModule(module, HloPrintOptions::canonical()));
        if (m_peak) snapshot.peakBytes = m_peak(module);
    } else {
        snapshot.text = previous.text;
        snapshot.peakBytes = previous.peakBytes;
    }
    snapshot.diff.rewrites = result.rewrites;
    snapshot.ids = m_ids;
    m_snapshots.push_back(std::move(snapshot));
    return Status::ok();
}

int64_t SnapshotRecorder::textBytes() const {
    std::unordered_set<const std::string*> seen;
    int64_t total = 0;
    for (const PassSnapshot& s : m_snapshots)
        if (s.text && seen.insert(s.text.get()).second) total += static_cast<int64_t>(s.text->size());
    return total;
}

}  // namespace hloscope
