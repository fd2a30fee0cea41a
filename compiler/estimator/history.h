// The estimator's history: every measured estimate (and every measured
// `run`) stored in a local SQLite database, so the estimator can say how
// accurate the performance model has been on this machine ("median error
// 12% over 37 runs") and later re-fit a target's efficiency factors from it.
//
// One row per measured module and target: when, the module's name and
// fingerprint (hash of its printed text), target, device, machine (host
// name), predicted and measured unfused/fused time and peak memory, compile
// times; and one row per measured kernel of either preparation: its op
// class, its predicted time in parts before efficiency factors, and its
// measured time (what `calibrate --from-history` fits the factors to).
// Every write (a run with its kernels, the schema's creation or migration)
// is one BEGIN IMMEDIATE transaction in SQLite's rollback journal with
// synchronous = FULL, so a crash or kill mid-write leaves the previous rows
// intact (tests/tst_history_durability SIGKILLs writers to check it). The schema version is
// SQLite's user_version; older versions are migrated forward on open, newer ones refused.
//
// The default file is $XDG_DATA_HOME/hloscope/history.sqlite
// ($HOME/.local/share when XDG_DATA_HOME is unset); HLOSCOPE_HISTORY names
// another file, or "off" to store nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/estimator/estimate.h"
#include "core/support/status.h"

namespace hloscope {

// One measured kernel of a stored run.
struct HistoryKernel {
    std::string mode;  // "unfused" or "fused"
    std::string name;
    std::string opcode;
    KernelTimeParts parts;  // one execution, before efficiency factors
    double executions = 1;
    double measuredSeconds = 0;  // all executions
};

struct HistoryRecord {
    int64_t id = 0;           // assigned when stored
    int64_t unixTime = 0;     // seconds since 1970
    std::string module;       // display name
    std::string fingerprint;  // hex hash of the printed module
    std::string target;
    std::string device;
    std::string machine;  // host name
    double predictedUnfusedSeconds = 0;
    double predictedFusedSeconds = 0;
    double measuredUnfusedSeconds = 0;
    double measuredFusedSeconds = 0;
    int64_t predictedPeakUnfused = 0;
    int64_t predictedPeakFused = 0;
    int64_t measuredPeakUnfused = 0;
    int64_t measuredPeakFused = 0;
    double compileSeconds = 0;  // measured, fused
    std::vector<HistoryKernel> kernels;  // stored with the run; read by kernels()

    // Signed % error of the predicted speedup (nullopt when not computable).
    std::optional<double> speedupErrorPercent() const;
};

// How accurate the model has been: |speedup error| over the matching rows.
struct HistoryAccuracy {
    int64_t runs = 0;
    double medianAbsPercent = 0;
    double worstAbsPercent = 0;
};

class EstimateHistory {
public:
    // Opens (creating the file, its folder and the schema when missing) or
    // migrates the database at `path`.
    static StatusOr<std::unique_ptr<EstimateHistory>> open(const std::string& path);
    // The path in use by default (see the top comment); empty: history off.
    static std::string defaultPath();
    ~EstimateHistory();
    EstimateHistory(const EstimateHistory&) = delete;
    EstimateHistory& operator=(const EstimateHistory&) = delete;

    static constexpr int kSchemaVersion = 3;

    // Stores one record in a transaction; returns its id.
    StatusOr<int64_t> add(const HistoryRecord& record);
    // Rows for `target` and `machine` (empty: any), oldest first.
    StatusOr<std::vector<HistoryRecord>> records(const std::string& target = {},
                                                 const std::string& machine = {}) const;
    // The measured kernels of the rows for `target` and `machine` (empty:
    // any), with the id of their run as HistoryKernel's owner.
    struct RunKernel {
        int64_t runId = 0;
        HistoryKernel kernel;
    };
    StatusOr<std::vector<RunKernel>> kernels(const std::string& target = {},
                                             const std::string& machine = {}) const;
    StatusOr<HistoryAccuracy> accuracy(const std::string& target = {},
                                       const std::string& machine = {}) const;
    const std::string& path() const;

private:
    struct Impl;
    explicit EstimateHistory(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// A record of a measured estimate of `module` (display name `name`).
HistoryRecord historyRecordOf(const HloModule& module, const std::string& name,
                              const Estimate& estimate);
// This machine's host name ("unknown" when it has none).
std::string machineName();

}  // namespace hloscope
