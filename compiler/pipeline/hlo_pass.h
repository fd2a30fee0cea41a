// HloPass: one step of a compiler pipeline. A pass rewrites (or analyses) a
// module in place and says whether it changed it; the pipeline runner checks
// that claim (a pass that reports "unchanged" but changed the module is an
// error). Passes carry their options (PassOptions, validated when the pass is
// created by the registry) and may name the rewrites they applied
// (RewriteEvent), which appear in the per-pass diff.
//
// Conventions for pass files (compiler/passes/*.h): a header comment saying
// what the pass does and its ordering constraints, `run` returning whether
// anything changed, helpers in an anonymous namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

// Key/value options of one pass, as given on the command line
// (`--pass-option simplifier.max_iterations=3`) or by a target pipeline.
class PassOptions {
public:
    PassOptions() = default;
    PassOptions(std::initializer_list<std::pair<const std::string, std::string>> values)
        : m_values(values) {}

    void set(std::string key, std::string value) { m_values[std::move(key)] = std::move(value); }
    bool has(std::string_view key) const { return m_values.find(std::string(key)) != m_values.end(); }
    const std::map<std::string, std::string>& values() const { return m_values; }

    // Typed getters: the default when absent, an error naming the key when
    // the value does not parse.
    StatusOr<std::string> getString(std::string_view key, std::string fallback) const;
    StatusOr<int64_t> getInt(std::string_view key, int64_t fallback) const;
    StatusOr<bool> getBool(std::string_view key, bool fallback) const;
    // Fails naming the first key not in `known` (typos must not pass silently).
    Status checkKnown(std::initializer_list<std::string_view> known) const;

private:
    std::map<std::string, std::string> m_values;
};

// One named rewrite a pass applied: `rule` is a short kebab-case name
// ("reshape-of-reshape", "fold-constant", "cse"); `before`/`after` are the
// instructions' names and unique ids (after may be empty for removals).
struct RewriteEvent {
    std::string rule;
    std::string before;
    int64_t beforeId = -1;
    std::string after;
    int64_t afterId = -1;
};

// One decision a pass took about a pair of instructions (fusion's "why was
// this (not) fused?"): the step it was taken at, the producer and consumer
// names, whether it was applied, a reason code from the pass's documented
// list, a one-line explanation, and the predicted times either way (-1 when
// the pass has no model).
struct PassDecision {
    int64_t step = 0;
    std::string producer;
    std::string consumer;
    bool applied = false;
    std::string reason;       // e.g. "no-predicted-gain", "fused"
    std::string explanation;  // one line for people
    double predictedUnfusedSeconds = -1;
    double predictedAppliedSeconds = -1;
};

class HloPass {
public:
    virtual ~HloPass() = default;
    virtual std::string_view name() const = 0;
    // Runs on `module`; returns whether it changed anything.
    virtual StatusOr<bool> run(HloModule& module) = 0;

    // Rewrites recorded during the last run (cleared by the runner before
    // each run).
    const std::vector<RewriteEvent>& rewrites() const { return m_rewrites; }
    void clearRewrites() {
        m_rewrites.clear();
        m_decisions.clear();
    }

    // Decisions recorded during the last run (cleared with the rewrites).
    const std::vector<PassDecision>& decisions() const { return m_decisions; }

    // Hands the last run's rewrites and decisions over (the pass keeps none): the runner
    // moves them into its result instead of copying tens of thousands of records.
    std::vector<RewriteEvent> takeRewrites() { return std::exchange(m_rewrites, {}); }
    std::vector<PassDecision> takeDecisions() { return std::exchange(m_decisions, {}); }

    // Analysis results a pass wants to report (buffer assignment's peak
    // bytes, layout assignment's padding), as name -> value.
    const std::map<std::string, int64_t>& statistics() const { return m_statistics; }

protected:
    void recordRewrite(std::string rule, const HloInstruction* before,
                       const HloInstruction* after = nullptr);
    // For a rewrite whose `before` no longer exists when it is recorded.
    void recordRewrite(RewriteEvent event) { m_rewrites.push_back(std::move(event)); }
    void setStatistic(std::string name, int64_t value) { m_statistics[std::move(name)] = value; }
    void recordDecision(PassDecision decision) { m_decisions.push_back(std::move(decision)); }

private:
    std::vector<RewriteEvent> m_rewrites;
    std::vector<PassDecision> m_decisions;
    std::map<std::string, int64_t> m_statistics;
};

// Makes the pass a pipeline step names, configured with the step's options; an unknown name
// or a malformed option is an error. The pass manager knows no pass: the registry above the
// passes (compiler/registry/pass_registry.h, createPass) is the factory of every pipeline
// that compiler/registry/target_pipelines.h builds.
using PassFactory = std::function<StatusOr<std::unique_ptr<HloPass>>(std::string_view name,
                                                                     const PassOptions& options)>;

}  // namespace hloscope
