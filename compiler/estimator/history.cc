#include "compiler/estimator/history.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>

#include "core/text/hlo_printer.h"

namespace hloscope {
namespace {

// Version 1: times only. Version 2: peaks and compile time. Version 3: kernels.
constexpr const char* kCreateV1 =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, unix_time INTEGER NOT NULL, module TEXT NOT NULL, "
    "fingerprint TEXT NOT NULL, target TEXT NOT NULL, device TEXT NOT NULL, machine TEXT NOT NULL, "
    "predicted_unfused_s REAL NOT NULL, predicted_fused_s REAL NOT NULL, measured_unfused_s REAL "
    "NOT NULL, "
    "measured_fused_s REAL NOT NULL)";
constexpr const char* kMigrateV1ToV2[] = {
    "ALTER TABLE runs ADD COLUMN predicted_peak_unfused INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN predicted_peak_fused INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN measured_peak_unfused INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN measured_peak_fused INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN compile_s REAL NOT NULL DEFAULT 0",
    "CREATE INDEX runs_target_machine ON runs (target, machine)",
};
constexpr const char* kMigrateV2ToV3[] = {
    "CREATE TABLE kernels (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, "
    "mode TEXT NOT NULL, name TEXT NOT NULL, opcode TEXT NOT NULL, op_class TEXT NOT NULL, "
    "flops_s REAL NOT NULL, transcendental_s REAL NOT NULL, traffic_s REAL NOT NULL, row_s REAL NOT NULL, "
    "launch_s REAL NOT NULL, executions REAL NOT NULL, measured_s REAL NOT NULL)",
    "CREATE INDEX kernels_run ON kernels (run_id)",
};

Status sqliteError(sqlite3* db, const std::string& path, const std::string& what) {
    return Status(StatusCode::kInternal,
                  path + ": " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

class Statement {
public:
    Statement(sqlite3* db, const char* sql) {
        m_ok = sqlite3_prepare_v2(db, sql, -1, &m_statement, nullptr) == SQLITE_OK;
    }
    ~Statement() { sqlite3_finalize(m_statement); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool ok() const { return m_ok; }
    sqlite3_stmt* get() { return m_statement; }

private:
    sqlite3_stmt* m_statement = nullptr;
    bool m_ok = false;
};

std::string hexHash(const std::string& text) {
    // FNV-1a, 64 bits: stable across runs and builds (std::hash is not).
    uint64_t hash = 1469598103934665603ull;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
    return buffer;
}

std::string columnText(sqlite3_stmt* statement, int column) {
    const unsigned char* value = sqlite3_column_text(statement, column);
    return value ? reinterpret_cast<const char*>(value) : "";
}

// Runs `sql`, whose ?1 and ?2 filter by target and machine (empty: any),
// and hands each row to `row`.
Status selectFiltered(sqlite3* db, const std::string& path, const char* sql, const std::string& target,
                      const std::string& machine, const std::string& what,
                      const std::function<Status(sqlite3_stmt*)>& row) {
    Statement statement(db, sql);
    if (!statement.ok()) return sqliteError(db, path, what);
    sqlite3_stmt* s = statement.get();
    sqlite3_bind_text(s, 1, target.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, machine.c_str(), -1, SQLITE_TRANSIENT);
    int step = 0;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) HLO_RETURN_IF_ERROR(row(s));
    if (step != SQLITE_DONE) return sqliteError(db, path, what);
    return Status::ok();
}

// The columns the current schema reads and writes, by table.
constexpr const char* kRunsColumns[] = {
    "id", "unix_time", "module", "fingerprint", "target", "device", "machine", "predicted_unfused_s",
    "predicted_fused_s", "measured_unfused_s", "measured_fused_s", "predicted_peak_unfused",
    "predicted_peak_fused", "measured_peak_unfused", "measured_peak_fused", "compile_s"};
constexpr const char* kKernelsColumns[] = {"run_id", "mode", "name", "opcode", "op_class", "flops_s",
                                           "transcendental_s", "traffic_s", "row_s", "launch_s",
                                           "executions", "measured_s"};

// A file can hold tables of these names made by another tool, or a damaged schema: the
// history is refused unless both tables have every column it uses and runs.id numbers the
// rows (an INTEGER PRIMARY KEY).
template <size_t N>
Status checkTable(sqlite3* db, const std::string& path, const std::string& table, const char* const (&columns)[N]) {
    Statement statement(db, ("PRAGMA table_info(" + table + ")").c_str());
    if (!statement.ok()) return sqliteError(db, path, "reading the schema");
    std::map<std::string, std::pair<std::string, int>> found;  // name -> (type, pk)
    int step = 0;
    while ((step = sqlite3_step(statement.get())) == SQLITE_ROW)
        found[columnText(statement.get(), 1)] = {columnText(statement.get(), 2),
                                                 sqlite3_column_int(statement.get(), 5)};
    if (step != SQLITE_DONE) return sqliteError(db, path, "reading the schema");
    auto refuse = [&](const std::string& why) {
        return Status(StatusCode::kFailedPrecondition, path + ": not a hloscope history: " + why);
    };
    if (found.empty()) return refuse("no table " + table);
    for (const char* column : columns)
        if (!found.count(column)) return refuse("table " + table + " has no column " + column);
    if (table == "runs" && (found["id"].second != 1 || found["id"].first != "INTEGER"))
        return refuse("runs.id is not the table's INTEGER PRIMARY KEY");
    return Status::ok();
}

}  // namespace

std::optional<double> HistoryRecord::speedupErrorPercent() const {
    if (!(predictedFusedSeconds > 0) || !(measuredFusedSeconds > 0) ||
        !(measuredUnfusedSeconds > 0))
        return std::nullopt;
    return signedErrorPercent(predictedUnfusedSeconds / predictedFusedSeconds,
                              measuredUnfusedSeconds / measuredFusedSeconds);
}

struct EstimateHistory::Impl {
    std::string path;
    sqlite3* db = nullptr;
    ~Impl() { sqlite3_close(db); }

    Status exec(const char* sql, const std::string& what) {
        char* message = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
            const std::string text = message ? message : "unknown error";
            sqlite3_free(message);
            return Status(StatusCode::kInternal, path + ": " + what + ": " + text);
        }
        return Status::ok();
    }
    // `body` inside BEGIN IMMEDIATE ... COMMIT, rolled back on failure.
    Status transaction(const std::string& what, const std::function<Status()>& body) {
        HLO_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE", what));
        Status status = body();
        if (status.isOk()) status = exec("COMMIT", what);
        if (!status.isOk()) exec("ROLLBACK", what).isOk();
        return status;
    }
};

EstimateHistory::EstimateHistory(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
EstimateHistory::~EstimateHistory() = default;
const std::string& EstimateHistory::path() const { return m_impl->path; }

std::string EstimateHistory::defaultPath() {
    if (const char* env = std::getenv("HLOSCOPE_HISTORY"); env && *env)
        return std::string(env) == "off" ? std::string() : std::string(env);
    std::string base;
    if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data)
        base = data;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::string(home) + "/.local/share";
    else
        return {};
    return base + "/hloscope/history.sqlite";
}

StatusOr<std::unique_ptr<EstimateHistory>> EstimateHistory::open(const std::string& path) {
    std::error_code error;
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (!folder.empty()) std::filesystem::create_directories(folder, error);
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    if (sqlite3_open_v2(path.c_str(), &impl->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK)
        return sqliteError(impl->db, path, "cannot open the history database");
    sqlite3_busy_timeout(impl->db, 5000);
    // Durability, said rather than left to the build's defaults: the rollback journal (a
    // transaction interrupted by a crash or a kill is rolled back from it when the file is next
    // opened) and a full fsync at every commit. A database another tool switched to WAL stays in
    // WAL, which is as safe.
    {
        Statement statement(impl->db, "PRAGMA synchronous = FULL");
        if (!statement.ok() || sqlite3_step(statement.get()) != SQLITE_DONE)
            return sqliteError(impl->db, path, "cannot set synchronous = FULL");
    }
    int version = 0;
    {
        Statement statement(impl->db, "PRAGMA user_version");
        if (!statement.ok() || sqlite3_step(statement.get()) != SQLITE_ROW)
            return sqliteError(impl->db, path, "not a history database");
        version = sqlite3_column_int(statement.get(), 0);
    }
    if (version > kSchemaVersion)
        return Status(StatusCode::kFailedPrecondition, path + ": history schema version " +
                                                           std::to_string(version) +
                                                           " is newer than this hloscope's (" +
                                                           std::to_string(kSchemaVersion) + ")");
    Impl& db = *impl;
    HLO_RETURN_IF_ERROR(db.transaction("creating or migrating the schema", [&]() -> Status {
        if (version < 1) HLO_RETURN_IF_ERROR(db.exec(kCreateV1, "creating the schema"));
        if (version < 2)
            for (const char* sql : kMigrateV1ToV2)
                HLO_RETURN_IF_ERROR(db.exec(sql, "migrating to version 2"));
        if (version < 3)
            for (const char* sql : kMigrateV2ToV3)
                HLO_RETURN_IF_ERROR(db.exec(sql, "migrating to version 3"));
        if (version < kSchemaVersion)
            HLO_RETURN_IF_ERROR(
                db.exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str(),
                        "setting the schema version"));
        // Inside the transaction: a file that is not a history is left as it was.
        HLO_RETURN_IF_ERROR(checkTable(db.db, path, "runs", kRunsColumns));
        return checkTable(db.db, path, "kernels", kKernelsColumns);
    }));
    return std::unique_ptr<EstimateHistory>(new EstimateHistory(std::move(impl)));
}

StatusOr<int64_t> EstimateHistory::add(const HistoryRecord& r) {
    int64_t id = 0;
    HLO_RETURN_IF_ERROR(m_impl->transaction("storing a run", [&]() -> Status {
        Statement statement(
            m_impl->db,
            "INSERT INTO runs (unix_time, module, fingerprint, target, device, machine, "
            "predicted_unfused_s, predicted_fused_s, measured_unfused_s, measured_fused_s, "
            "predicted_peak_unfused, predicted_peak_fused, measured_peak_unfused, "
            "measured_peak_fused, compile_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        if (!statement.ok()) return sqliteError(m_impl->db, m_impl->path, "storing a run");
        sqlite3_stmt* s = statement.get();
        int column = 1;
        sqlite3_bind_int64(s, column++,
                           r.unixTime ? r.unixTime : static_cast<int64_t>(std::time(nullptr)));
        for (const std::string* text :
             {&r.module, &r.fingerprint, &r.target, &r.device, &r.machine})
            sqlite3_bind_text(s, column++, text->c_str(), -1, SQLITE_TRANSIENT);
        for (double value : {r.predictedUnfusedSeconds, r.predictedFusedSeconds,
                             r.measuredUnfusedSeconds, r.measuredFusedSeconds})
            sqlite3_bind_double(s, column++, value);
        for (int64_t value : {r.predictedPeakUnfused, r.predictedPeakFused, r.measuredPeakUnfused,
                              r.measuredPeakFused})
            sqlite3_bind_int64(s, column++, value);
        sqlite3_bind_double(s, column++, r.compileSeconds);
        if (sqlite3_step(s) != SQLITE_DONE)
            return sqliteError(m_impl->db, m_impl->path, "storing a run");
        // The row's id as records() will read it: NULL where runs.id does not number the rows
        // (a primary key declared DESC is not the rowid).
        {
            Statement read(m_impl->db, "SELECT id FROM runs WHERE rowid = last_insert_rowid()");
            if (!read.ok() || sqlite3_step(read.get()) != SQLITE_ROW ||
                sqlite3_column_type(read.get(), 0) != SQLITE_INTEGER)
                return Status(StatusCode::kFailedPrecondition,
                              m_impl->path + ": not a hloscope history: runs.id does not number the rows");
            id = sqlite3_column_int64(read.get(), 0);
        }
        Statement kernel(m_impl->db,
                         "INSERT INTO kernels (run_id, mode, name, opcode, op_class, flops_s, "
                         "transcendental_s, traffic_s, row_s, launch_s, executions, measured_s) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,?,?)");
        if (!kernel.ok()) return sqliteError(m_impl->db, m_impl->path, "storing a run's kernels");
        for (const HistoryKernel& k : r.kernels) {
            sqlite3_stmt* row = kernel.get();
            sqlite3_reset(row);
            int c = 1;
            sqlite3_bind_int64(row, c++, id);
            const std::string opClass(opClassName(k.parts.opClass));
            for (const std::string* text : {&k.mode, &k.name, &k.opcode, &opClass})
                sqlite3_bind_text(row, c++, text->c_str(), -1, SQLITE_TRANSIENT);
            for (double value : {k.parts.flopsSeconds, k.parts.transcendentalSeconds, k.parts.trafficSeconds,
                                 k.parts.rowSeconds, k.parts.launchSeconds, k.executions, k.measuredSeconds})
                sqlite3_bind_double(row, c++, value);
            if (sqlite3_step(row) != SQLITE_DONE)
                return sqliteError(m_impl->db, m_impl->path, "storing a run's kernels");
        }
        return Status::ok();
    }));
    return id;
}

StatusOr<std::vector<HistoryRecord>> EstimateHistory::records(const std::string& target,
                                                              const std::string& machine) const {
    std::vector<HistoryRecord> rows;
    HLO_RETURN_IF_ERROR(selectFiltered(
        m_impl->db, m_impl->path,
        "SELECT id, unix_time, module, fingerprint, target, device, machine, predicted_unfused_s, "
        "predicted_fused_s, measured_unfused_s, measured_fused_s, predicted_peak_unfused, "
        "predicted_peak_fused, measured_peak_unfused, measured_peak_fused, compile_s FROM runs "
        "WHERE (?1 = '' OR target = ?1) AND (?2 = '' OR machine = ?2) ORDER BY id",
        target, machine, "reading the history", [&](sqlite3_stmt* s) {
            HistoryRecord r;
            int column = 0;
            r.id = sqlite3_column_int64(s, column++);
            r.unixTime = sqlite3_column_int64(s, column++);
            for (std::string* text : {&r.module, &r.fingerprint, &r.target, &r.device, &r.machine})
                *text = columnText(s, column++);
            for (double* value : {&r.predictedUnfusedSeconds, &r.predictedFusedSeconds, &r.measuredUnfusedSeconds,
                                  &r.measuredFusedSeconds})
                *value = sqlite3_column_double(s, column++);
            for (int64_t* value :
                 {&r.predictedPeakUnfused, &r.predictedPeakFused, &r.measuredPeakUnfused, &r.measuredPeakFused})
                *value = sqlite3_column_int64(s, column++);
            r.compileSeconds = sqlite3_column_double(s, column++);
            rows.push_back(std::move(r));
            return Status::ok();
        }));
    return rows;
}

StatusOr<std::vector<EstimateHistory::RunKernel>> EstimateHistory::kernels(const std::string& target,
                                                                           const std::string& machine) const {
    std::vector<RunKernel> rows;
    HLO_RETURN_IF_ERROR(selectFiltered(
        m_impl->db, m_impl->path,
        "SELECT k.run_id, k.mode, k.name, k.opcode, k.op_class, k.flops_s, k.transcendental_s, k.traffic_s, "
        "k.row_s, k.launch_s, k.executions, k.measured_s FROM kernels k JOIN runs r ON r.id = k.run_id "
        "WHERE (?1 = '' OR r.target = ?1) AND (?2 = '' OR r.machine = ?2) ORDER BY k.rowid",
        target, machine, "reading the history's kernels", [&](sqlite3_stmt* s) -> Status {
            RunKernel row;
            int column = 0;
            row.runId = sqlite3_column_int64(s, column++);
            row.kernel.mode = columnText(s, column++);
            row.kernel.name = columnText(s, column++);
            row.kernel.opcode = columnText(s, column++);
            const std::string opClass = columnText(s, column++);
            const std::optional<OpClass> parsed = opClassNamed(opClass);
            if (!parsed)
                return Status(StatusCode::kInternal, m_impl->path + ": kernel '" + row.kernel.name +
                                                         "' has an unknown op class '" + opClass + "'");
            row.kernel.parts.opClass = *parsed;
            for (double* value : {&row.kernel.parts.flopsSeconds, &row.kernel.parts.transcendentalSeconds,
                                  &row.kernel.parts.trafficSeconds, &row.kernel.parts.rowSeconds,
                                  &row.kernel.parts.launchSeconds, &row.kernel.executions,
                                  &row.kernel.measuredSeconds})
                *value = sqlite3_column_double(s, column++);
            rows.push_back(std::move(row));
            return Status::ok();
        }));
    return rows;
}

StatusOr<HistoryAccuracy> EstimateHistory::accuracy(const std::string& target,
                                                    const std::string& machine) const {
    HLO_ASSIGN_OR_RETURN(std::vector<HistoryRecord> rows, records(target, machine));
    std::vector<double> errors;
    for (const HistoryRecord& r : rows)
        if (auto error = r.speedupErrorPercent()) errors.push_back(std::fabs(*error));
    HistoryAccuracy accuracy;
    accuracy.runs = static_cast<int64_t>(errors.size());
    if (errors.empty()) return accuracy;
    accuracy.worstAbsPercent = *std::max_element(errors.begin(), errors.end());
    accuracy.medianAbsPercent = median(std::move(errors));
    return accuracy;
}

std::string machineName() {
    char buffer[256] = {};
    if (gethostname(buffer, sizeof buffer - 1) != 0 || !buffer[0]) return "unknown";
    return buffer;
}

HistoryRecord historyRecordOf(const HloModule& module, const std::string& name,
                              const Estimate& estimate) {
    HistoryRecord r;
    r.unixTime = static_cast<int64_t>(std::time(nullptr));
    r.module = name;
    r.fingerprint = hexHash(printModule(module));
    r.target = estimate.target;
    r.device = estimate.device;
    r.machine = machineName();
    r.predictedUnfusedSeconds = estimate.predicted.unfusedSeconds;
    r.predictedFusedSeconds = estimate.predicted.fusedSeconds;
    r.predictedPeakUnfused = estimate.predicted.peakBytesUnfused;
    r.predictedPeakFused = estimate.predicted.peakBytesFused;
    if (estimate.measured) {
        r.measuredUnfusedSeconds = estimate.measured->unfusedSeconds;
        r.measuredFusedSeconds = estimate.measured->fusedSeconds;
        r.measuredPeakUnfused = estimate.measured->peakBytesUnfused;
        r.measuredPeakFused = estimate.measured->peakBytesFused;
        r.compileSeconds = estimate.measured->compileSeconds;
    }
    for (const auto& [mode, kernels] :
         {std::pair{"unfused", &estimate.unfusedKernels}, std::pair{"fused", &estimate.fusedKernels}})
        for (const KernelEstimate& k : *kernels) {
            if (!k.measuredSeconds) continue;
            HistoryKernel kernel;
            kernel.mode = mode;
            kernel.name = k.name;
            kernel.opcode = k.opcode;
            kernel.parts = k.parts;
            kernel.executions = k.executions;
            kernel.measuredSeconds = *k.measuredSeconds;
            r.kernels.push_back(std::move(kernel));
        }
    return r;
}

}  // namespace hloscope
