#include "compiler/pipeline/bisect.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/interpreter/interpreter.h"

namespace hloscope {
namespace {

// f32: 1e-3, XLA's own ErrorSpec for f32 model tests: a backend's GEMM sums
// in another order than the interpreter, and a 768- or 3072-long dot whose
// terms cancel differs from it by ~1e-4 after one BERT layer.
double toleranceFor(PrimitiveType type) {
    if (type == PrimitiveType::F64 || type == PrimitiveType::C128) return 1e-9;
    if (type == PrimitiveType::F32 || type == PrimitiveType::C64) return 1e-3;
    if (type == PrimitiveType::F16 || type == PrimitiveType::BF16) return 1e-2;
    return 0.125;  // f8, f6, f4
}

bool close(double expected, double actual, double tolerance) {
    if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
    if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
    return std::fabs(expected - actual) <= tolerance * std::max(1.0, std::fabs(expected));
}

std::string number(double v) {
    std::ostringstream out;
    out.precision(9);
    out << v;
    return out.str();
}

std::string compareArrays(const Literal& expected, const Literal& actual, const std::string& where) {
    if (expected.elementType() != actual.elementType() ||
        expected.shape().rank() != actual.shape().rank())
        return where + "shape " + actual.shape().toString(false) + " instead of " +
               expected.shape().toString(false);
    for (int64_t d = 0; d < expected.shape().rank(); ++d)
        if (expected.shape().dimensions(d) != actual.shape().dimensions(d))
            return where + "shape " + actual.shape().toString(false) + " instead of " +
                   expected.shape().toString(false);
    const PrimitiveType type = expected.elementType();
    const int64_t n = expected.elementCount();
    int64_t bad = 0;
    std::string first;
    for (int64_t i = 0; i < n; ++i) {
        bool ok;
        std::string e, a;
        if (primitive_util::isComplex(type)) {
            auto x = expected.getAsComplex(i), y = actual.getAsComplex(i);
            const double t = toleranceFor(type);
            ok = close(x.real(), y.real(), t) && close(x.imag(), y.imag(), t);
            if (!ok) {
                e = "(" + number(x.real()) + "," + number(x.imag()) + ")";
                a = "(" + number(y.real()) + "," + number(y.imag()) + ")";
            }
        } else if (primitive_util::isFloatingPoint(type)) {
            const double x = expected.getAsDouble(i), y = actual.getAsDouble(i);
            ok = close(x, y, toleranceFor(type));
            if (!ok) {
                e = number(x);
                a = number(y);
            }
        } else if (primitive_util::isUnsignedInteger(type)) {
            ok = expected.getAsUint64(i) == actual.getAsUint64(i);
            if (!ok) {
                e = std::to_string(expected.getAsUint64(i));
                a = std::to_string(actual.getAsUint64(i));
            }
        } else {
            ok = expected.getAsInt64(i) == actual.getAsInt64(i);
            if (!ok) {
                e = std::to_string(expected.getAsInt64(i));
                a = std::to_string(actual.getAsInt64(i));
            }
        }
        if (ok) continue;
        if (bad++ == 0)
            first = "element " + std::to_string(i) + ": " + a + " instead of " + e;
    }
    if (bad == 0) return {};
    return where + std::to_string(bad) + " of " + std::to_string(n) + " elements differ (" + first +
           ")";
}

std::string compareRecursive(const Literal& expected, const Literal& actual, const std::string& where) {
    if (expected.isTuple() || actual.isTuple()) {
        if (expected.isTuple() != actual.isTuple() ||
            expected.tupleElements().size() != actual.tupleElements().size())
            return where + "tuple structure differs";
        for (size_t i = 0; i < expected.tupleElements().size(); ++i) {
            std::string why = compareRecursive(expected.tupleElements()[i], actual.tupleElements()[i],
                                               where + "{" + std::to_string(i) + "} ");
            if (!why.empty()) return why;
        }
        return {};
    }
    if (!expected.shape().isArray()) return {};
    return compareArrays(expected, actual, where);
}

// Evaluates with a wall-time limit (a watchdog sets the evaluator's cancel
// flag; `*timedOut` says it fired) and a loop-iteration limit.
StatusOr<Literal> evaluateWithLimits(const HloModule& module, std::span<const Literal> arguments,
                                     int64_t maxWhileIterations, double seconds,
                                     bool* timedOut = nullptr) {
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable wake;
    bool done = false;
    std::thread watchdog([&] {
        std::unique_lock lock(mutex);
        if (!wake.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done; }))
            cancel.store(true);
    });
    HloEvaluatorOptions options;
    options.maxWhileIterations = maxWhileIterations;
    options.cancel = &cancel;
    HloEvaluator evaluator(options);
    StatusOr<Literal> value = evaluator.evaluate(module, arguments);
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    wake.notify_one();
    watchdog.join();
    if (!value.isOk() && value.status().code() == StatusCode::kCancelled) {
        if (timedOut) *timedOut = true;
        return Status(StatusCode::kResourceExhausted,
                      "evaluation did not finish within " + std::to_string(static_cast<int>(seconds)) +
                          " s");
    }
    return value;
}

class BisectInstrumentation : public PassInstrumentation {
public:
    BisectInstrumentation(const BisectOptions& options, BisectResult& result)
        : m_seed(options.seed),
          m_strategy(options.strategy),
          m_maxElements(options.maxElements),
          m_maxWhileIterations(options.maxWhileIterations),
          m_timeLimit(options.timeLimitSeconds),
          m_result(result) {}

    Status beforePipeline(const HloModule& module) override {
        if (std::string why = tooLarge(module); !why.empty()) {
            m_result.outcome = BisectResult::Outcome::kCannotEvaluate;
            m_result.detail = why;
            return Status(StatusCode::kCancelled, "cannot evaluate");
        }
        m_arguments = module.entryComputation()
                          ? makeRandomArguments(*module.entryComputation(), m_seed)
                          : std::vector<Literal>{};
        const auto start = std::chrono::steady_clock::now();
        auto value = evaluateWithLimits(module, m_arguments, m_maxWhileIterations, m_timeLimit);
        m_referenceSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!value.isOk()) {
            m_result.outcome = BisectResult::Outcome::kCannotEvaluate;
            m_result.detail = value.status().message();
            return Status(StatusCode::kCancelled, "cannot evaluate");
        }
        m_reference = std::move(*value);
        return Status::ok();
    }

    Status afterPass(const PassRunInfo& info, const HloModule& module,
                     const PassRunResult& result) override {
        if (!result.changed) return Status::ok();
        ++m_result.changingPasses;
        const std::string name = info.step ? info.step->pass : std::string();
        if (m_strategy == BisectStrategy::kBinary) {
            m_states.push_back({info.index, name, module.clone()});
            return Status::ok();
        }
        Check check = checkModule(module);
        if (check.verdict == Verdict::kSame) return Status::ok();
        report(info.index, name, check);
        return Status(StatusCode::kCancelled, "stopped");
    }

    // kBinary, after the whole pipeline ran: evaluates the result, and searches the copies
    // when it differs.
    void finish() {
        if (m_strategy != BisectStrategy::kBinary || m_states.empty()) return;
        const int last = static_cast<int>(m_states.size()) - 1;
        Check check = checkState(last);
        if (check.verdict == Verdict::kSame) return;
        if (check.verdict == Verdict::kTimedOut) return inOrder(0, last);
        // m_states[good] matches (-1: the input), m_states[bad] does not.
        int good = -1, bad = last;
        Check badCheck = std::move(check);
        while (bad - good > 1) {
            const int middle = good + (bad - good) / 2;
            Check c = checkState(middle);
            if (c.verdict == Verdict::kSame) {
                good = middle;
            } else if (c.verdict == Verdict::kDiffers) {
                bad = middle;
                badCheck = std::move(c);
            } else {
                return inOrder(good + 1, bad);
            }
        }
        report(m_states[bad].index, m_states[bad].pass, badCheck);
    }

private:
    enum class Verdict { kSame, kDiffers, kTimedOut };
    struct Check {
        Verdict verdict = Verdict::kSame;
        std::string detail;  // why it differs; the time limit that ran out
    };
    struct State {
        int index;
        std::string pass;
        std::unique_ptr<HloModule> module;
    };

    Check checkModule(const HloModule& module) {
        const double limit = 4 * m_referenceSeconds + 1;
        bool timedOut = false;
        auto value =
            evaluateWithLimits(module, m_arguments, m_maxWhileIterations, limit, &timedOut);
        ++m_result.passesEvaluated;
        if (timedOut) {
            // Slower to interpret is not a different result (a scan expanded into its loop
            // copies its state every step in the interpreter): the check stops there, saying
            // where; a loop that no longer ends still fails on the iteration limit.
            char seconds[64];
            std::snprintf(seconds, sizeof seconds, "%.1f s (the input took %.2f s)", limit,
                          m_referenceSeconds);
            return {Verdict::kTimedOut, seconds};
        }
        std::string why;
        if (!value.isOk())
            why = "the module no longer evaluates: " + value.status().message();
        else
            why = compareWithTolerance(m_reference, *value);
        if (why.empty()) return {};
        return {Verdict::kDiffers, why};
    }
    Check checkState(int i) {
        auto known = m_checked.find(i);
        if (known != m_checked.end()) return known->second;
        return m_checked[i] = checkModule(*m_states[i].module);
    }

    // Checks the copies [first, bad] in order (bad, when reached, is known to differ) and
    // reports the first that differs or runs out of time.
    void inOrder(int first, int bad) {
        for (int i = first; i <= bad; ++i) {
            Check check = checkState(i);
            if (check.verdict == Verdict::kSame) continue;
            report(m_states[i].index, m_states[i].pass, check);
            return;
        }
    }

    void report(int index, const std::string& pass, const Check& check) {
        m_result.passIndex = index;
        m_result.passName = pass;
        if (check.verdict == Verdict::kTimedOut) {
            m_result.outcome = BisectResult::Outcome::kCannotEvaluate;
            m_result.detail = "after pass " + std::to_string(index) + " (" + pass +
                              ") the module takes more than " + check.detail +
                              " to evaluate; the passes before it keep its results";
        } else {
            m_result.outcome = BisectResult::Outcome::kMismatch;
            m_result.detail = check.detail;
        }
    }

    std::string tooLarge(const HloModule& module) const {
        const HloComputation* entry = module.entryComputation();
        if (!entry) return {};
        int64_t total = 0, largest = 0;
        const HloInstruction* biggest = nullptr;
        for (const auto& instruction : entry->instructions()) {
            const int64_t n = elementsOf(instruction->shape());
            total += n;
            if (n > largest) {
                largest = n;
                biggest = instruction.get();
            }
        }
        if (total <= m_maxElements) return {};
        return "the entry computation produces " + std::to_string(total) +
               " elements, more than the reference interpreter is asked to evaluate here (" +
               std::to_string(m_maxElements) + "); largest: %" + biggest->name() + " " +
               biggest->shape().toString(false);
    }
    static int64_t elementsOf(const Shape& shape) {
        if (shape.isTuple()) {
            int64_t n = 0;
            for (int64_t i = 0; i < shape.tupleCount(); ++i) n += elementsOf(shape.tupleShape(i));
            return n;
        }
        return shape.isArray() ? shape.elementCount() : 0;
    }

    uint64_t m_seed;
    BisectStrategy m_strategy;
    int64_t m_maxElements;
    int64_t m_maxWhileIterations;
    double m_timeLimit;
    double m_referenceSeconds = 0;
    BisectResult& m_result;
    std::vector<Literal> m_arguments;
    Literal m_reference;
    std::vector<State> m_states;  // kBinary: the module after each changing pass
    std::map<int, Check> m_checked;  // kBinary: the copies evaluated so far
};

}  // namespace

std::string compareWithTolerance(const Literal& expected, const Literal& actual) {
    return compareRecursive(expected, actual, "");
}

StatusOr<BisectResult> bisectRunner(PipelineRunner& runner, const BisectOptions& options) {
    BisectResult result;
    BisectInstrumentation bisect(options, result);
    runner.addInstrumentation(&bisect);
    Status status = runner.runAll();
    runner.removeInstrumentation(&bisect);
    if (result.outcome != BisectResult::Outcome::kNoChange) return result;
    // A pass that failed still leaves the passes before it to check.
    bisect.finish();
    if (status.isOk() || result.outcome != BisectResult::Outcome::kNoChange) return result;
    return status;
}

StatusOr<BisectResult> bisectPipeline(HloModule& module, Pipeline pipeline,
                                      const BisectOptions& options) {
    RunnerOptions runnerOptions = options.runner;
    runnerOptions.fullChecks = true;
    HLO_ASSIGN_OR_RETURN(auto runner,
                         PipelineRunner::create(module, std::move(pipeline), runnerOptions));
    return bisectRunner(*runner, options);
}

}  // namespace hloscope
