#include "app/cli/conformance.h"

#include <bit>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/ir/float_types.h"
#include "core/stablehlo/stablehlo_parser.h"

namespace hloscope {
namespace {

constexpr uint64_t kMaxUlp = std::numeric_limits<uint64_t>::max();

// Bit pattern of an exactly representable value in a floating-point type.
uint64_t bitsOf(PrimitiveType type, double value) {
    switch (type) {
    case PrimitiveType::F64: return std::bit_cast<uint64_t>(value);
    case PrimitiveType::F32: return std::bit_cast<uint32_t>(static_cast<float>(value));
    default: return float_util::floatToBits(type, static_cast<float>(value));
    }
}

bool sameValue(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

bool almostEqual(double a, double b, double tolerance) {
    if (a == b) return true;
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    return std::fabs(a - b) <= tolerance;
}

std::string formatIndex(const Shape& shape, int64_t linear) {
    // Row-major multi-index of the linear position.
    std::vector<int64_t> index(static_cast<size_t>(shape.rank()));
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
        const int64_t size = shape.dimensions(d);
        index[static_cast<size_t>(d)] = size > 0 ? linear % size : 0;
        linear = size > 0 ? linear / size : 0;
    }
    std::string text = "{";
    for (size_t i = 0; i < index.size(); ++i) text += (i ? "," : "") + std::to_string(index[i]);
    return text + "}";
}

std::string formatDouble(double value) {
    std::ostringstream out;
    out.precision(17);
    out << value;
    return out.str();
}

std::string formatElement(const Literal& literal, int64_t i) {
    const PrimitiveType type = literal.elementType();
    if (primitive_util::isComplex(type)) {
        auto c = literal.getAsComplex(i);
        return "(" + formatDouble(c.real()) + ", " + formatDouble(c.imag()) + ")";
    }
    if (primitive_util::isFloatingPoint(type)) return formatDouble(literal.getAsDouble(i));
    if (primitive_util::isUnsignedInteger(type)) return std::to_string(literal.getAsUint64(i));
    if (type == PrimitiveType::PRED) return literal.getAsInt64(i) ? "true" : "false";
    return std::to_string(literal.getAsInt64(i));
}

// Per-element comparison: returns whether the pair matches and, for ULP
// comparisons, the distance.
struct ElementResult {
    bool match = true;
    uint64_t ulp = 0;
};

ElementResult compareElement(const Literal& actual, int64_t a, const Literal& expected,
                             int64_t e, const CompareSpec& spec) {
    const PrimitiveType type = actual.elementType();
    if (primitive_util::isComplex(type)) {
        const auto x = actual.getAsComplex(a), y = expected.getAsComplex(e);
        const PrimitiveType component = primitive_util::complexComponentType(type);
        switch (spec.mode) {
        case CompareMode::kExact:
            return {sameValue(x.real(), y.real()) && sameValue(x.imag(), y.imag()), 0};
        case CompareMode::kAlmost:
            return {almostEqual(x.real(), y.real(), spec.tolerance) &&
                        almostEqual(x.imag(), y.imag(), spec.tolerance),
                    0};
        case CompareMode::kUlp: {
            const uint64_t d = std::max(ulpDistance(component, x.real(), y.real()),
                                        ulpDistance(component, x.imag(), y.imag()));
            return {d >= spec.minUlp && d <= spec.maxUlp, d};
        }
        }
    }
    if (primitive_util::isFloatingPoint(type)) {
        const double x = actual.getAsDouble(a), y = expected.getAsDouble(e);
        switch (spec.mode) {
        case CompareMode::kExact: return {sameValue(x, y), 0};
        case CompareMode::kAlmost: return {almostEqual(x, y, spec.tolerance), 0};
        case CompareMode::kUlp: {
            const uint64_t d = ulpDistance(type, x, y);
            return {d >= spec.minUlp && d <= spec.maxUlp, d};
        }
        }
    }
    // Integers and pred compare exactly whatever the mode.
    if (primitive_util::isUnsignedInteger(type))
        return {actual.getAsUint64(a) == expected.getAsUint64(e), 0};
    return {actual.getAsInt64(a) == expected.getAsInt64(e), 0};
}

StatusOr<uint64_t> unsignedAttribute(const HloInstruction& instruction, std::string_view name,
                                     uint64_t fallback) {
    auto text = instruction.attribute(name);
    if (!text) return fallback;
    std::string digits(*text);
    if (auto colon = digits.find(':'); colon != std::string::npos) digits.resize(colon);
    while (!digits.empty() && digits.back() == ' ') digits.pop_back();
    try {
        size_t used = 0;
        uint64_t value = std::stoull(digits, &used);
        if (used == digits.size()) return value;
    } catch (...) {
    }
    return Status(StatusCode::kInvalidArgument,
                  "%" + instruction.name() + ": " + std::string(name) + " is not a number: " +
                      std::string(*text));
}

StatusOr<double> doubleAttribute(const HloInstruction& instruction, std::string_view name,
                                 double fallback) {
    auto text = instruction.attribute(name);
    if (!text) return fallback;
    std::string number(*text);
    if (auto colon = number.find(':'); colon != std::string::npos) number.resize(colon);
    try {
        return std::stod(number);
    } catch (...) {
    }
    return Status(StatusCode::kInvalidArgument,
                  "%" + instruction.name() + ": " + std::string(name) + " is not a number: " +
                      std::string(*text));
}

std::string unquote(std::string_view text) {
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
        text = text.substr(1, text.size() - 2);
    return std::string(text);
}

Status checkFailed(const HloInstruction& instruction, const std::string& why) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string(instruction.customCallTarget()) + " (%" + instruction.name() +
                      "): " + why);
}

}  // namespace

std::string_view caseOutcomeName(CaseOutcome outcome) {
    switch (outcome) {
    case CaseOutcome::kPassed: return "passed";
    case CaseOutcome::kFailed: return "failed";
    case CaseOutcome::kUnsupported: return "unsupported";
    }
    return "unknown";
}

uint64_t ulpDistance(PrimitiveType type, double a, double b) {
    if (std::isnan(a) && std::isnan(b)) return 0;
    if (std::isnan(a) || std::isnan(b)) return kMaxUlp;
    if (!std::isfinite(a) || !std::isfinite(b)) return sameValue(a, b) ? 0 : kMaxUlp;
    const int width = primitive_util::bitWidth(type);
    // F8E8M0FNU has no sign bit; every other format keeps the sign on top.
    const bool hasSign = type != PrimitiveType::F8E8M0FNU;
    const uint64_t signBit = hasSign ? uint64_t{1} << (width - 1) : 0;
    const uint64_t magnitudeMask = (width == 64 ? kMaxUlp : (uint64_t{1} << width) - 1) & ~signBit;
    const uint64_t x = bitsOf(type, a), y = bitsOf(type, b);
    if (x == y) return 0;
    const uint64_t mx = x & magnitudeMask, my = y & magnitudeMask;
    if (((x & signBit) != 0) != ((y & signBit) != 0)) {
        if (mx > kMaxUlp - my) return kMaxUlp;
        return mx + my;
    }
    return mx > my ? mx - my : my - mx;
}

std::string compareLiterals(const Literal& actual, const Literal& expected,
                            const CompareSpec& spec) {
    if (actual.isTuple() || expected.isTuple()) {
        if (actual.isTuple() != expected.isTuple() ||
            actual.tupleElements().size() != expected.tupleElements().size())
            return "shape mismatch: " + actual.shape().toString(false) + " (actual) vs " +
                   expected.shape().toString(false) + " (expected)";
        for (size_t i = 0; i < actual.tupleElements().size(); ++i) {
            std::string why =
                compareLiterals(actual.tupleElements()[i], expected.tupleElements()[i], spec);
            if (!why.empty()) return "tuple element " + std::to_string(i) + ": " + why;
        }
        return {};
    }
    if (!actual.shape().isArray() || !expected.shape().isArray()) return {};  // tokens
    bool sameShape = actual.elementType() == expected.elementType() &&
                     actual.shape().rank() == expected.shape().rank();
    for (int64_t d = 0; sameShape && d < actual.shape().rank(); ++d)
        sameShape = actual.shape().dimensions(d) == expected.shape().dimensions(d);
    if (!sameShape)
        return "shape mismatch: " + actual.shape().toString(false) + " (actual) vs " +
               expected.shape().toString(false) + " (expected)";
    // Literals store elements in logical row-major order whatever their
    // layout, so equal shapes compare position by position.
    const int64_t count = actual.elementCount();
    int64_t mismatches = 0;
    std::string first;
    for (int64_t i = 0; i < count; ++i) {
        ElementResult r = compareElement(actual, i, expected, i, spec);
        if (r.match) continue;
        if (mismatches++ < 3) {
            if (!first.empty()) first += "; ";
            first += "at " + formatIndex(actual.shape(), i) + " " + formatElement(actual, i) +
                     " (actual) vs " + formatElement(expected, i) + " (expected)";
            if (spec.mode == CompareMode::kUlp)
                first += r.ulp == kMaxUlp ? ", not comparable" : ", " + std::to_string(r.ulp) + " ULP";
        }
    }
    if (mismatches == 0) return {};
    std::string limit;
    if (spec.mode == CompareMode::kUlp)
        limit = " (allowed " + std::to_string(spec.minUlp) + ".." + std::to_string(spec.maxUlp) +
                " ULP)";
    else if (spec.mode == CompareMode::kAlmost)
        limit = " (tolerance " + formatDouble(spec.tolerance) + ")";
    return std::to_string(mismatches) + " of " + std::to_string(count) +
           " elements differ" + limit + ": " + first;
}

std::optional<StatusOr<Literal>> CheckRunner::operator()(const HloInstruction& instruction,
                                                         std::span<const Literal* const> operands) {
    const std::string_view target = instruction.customCallTarget();
    if (target == "interpreter.probe") {
        // Records each value the probe sees, for check.expect_serialized_eq
        // (the StableHLO interpreter writes them to files instead).
        if (operands.size() != 1)
            return StatusOr<Literal>(Status(StatusCode::kInvalidArgument,
                                            "%" + instruction.name() +
                                                ": interpreter.probe takes one operand"));
        m_probes[unquote(instruction.attribute("probe_id").value_or(""))].push_back(*operands[0]);
        return StatusOr<Literal>(*operands[0]);
    }
    if (!target.starts_with("check.")) return std::nullopt;
    const std::string_view check = target.substr(6);
    // The importer appends the expected constant of *_const checks as the
    // last operand, so every comparison check sees (actual, expected).
    CompareSpec spec;
    if (check == "expect_eq" || check == "expect_eq_const") {
        spec.mode = CompareMode::kExact;
    } else if (check == "expect_almost_eq" || check == "expect_almost_eq_const") {
        spec.mode = CompareMode::kAlmost;
        // Defaults: 1e-3 for the custom-call form of expect_almost_eq (the
        // importer writes the op form's 1e-4 out), 1e-4 for the _const op.
        auto tolerance =
            doubleAttribute(instruction, "tolerance", check == "expect_almost_eq" ? 1e-3 : 1e-4);
        if (!tolerance.isOk()) return StatusOr<Literal>(tolerance.status());
        spec.tolerance = *tolerance;
    } else if (check == "expect_close") {
        spec.mode = CompareMode::kUlp;
        auto maxUlp = unsignedAttribute(instruction, "max_ulp_difference", 3);
        auto minUlp = unsignedAttribute(instruction, "min_ulp_difference", 0);
        if (!maxUlp.isOk()) return StatusOr<Literal>(maxUlp.status());
        if (!minUlp.isOk()) return StatusOr<Literal>(minUlp.status());
        spec.maxUlp = *maxUlp;
        spec.minUlp = *minUlp;
    } else if (check == "eq") {
        spec.mode = CompareMode::kAlmost;
        spec.tolerance = 1e-4;
    } else if (check == "expect_serialized_eq") {
        const std::string probe = unquote(instruction.attribute("probe_id").value_or(""));
        auto iteration = unsignedAttribute(instruction, "iter", 0);
        if (instruction.attribute("iteration"))
            iteration = unsignedAttribute(instruction, "iteration", 0);
        if (!iteration.isOk()) return StatusOr<Literal>(iteration.status());
        if (operands.size() != 1)
            return StatusOr<Literal>(Status(StatusCode::kInvalidArgument,
                                            "%" + instruction.name() + ": " + std::string(target) +
                                                " takes one operand"));
        ++m_checks;
        auto it = m_probes.find(probe);
        if (it == m_probes.end() || *iteration >= it->second.size())
            return StatusOr<Literal>(checkFailed(
                instruction, "probe \"" + probe + "\" recorded no value for iteration " +
                                 std::to_string(*iteration)));
        spec.mode = CompareMode::kExact;
        const std::string why = compareLiterals(it->second[*iteration], *operands[0], spec);
        if (!why.empty()) return StatusOr<Literal>(checkFailed(instruction, why));
        return StatusOr<Literal>(Literal(instruction.shape()));
    } else {
        return StatusOr<Literal>(Status(StatusCode::kUnimplemented,
                                        "%" + instruction.name() + ": " + std::string(target) +
                                            " is not supported"));
    }
    if (operands.size() != 2)
        return StatusOr<Literal>(Status(StatusCode::kInvalidArgument,
                                        "%" + instruction.name() + ": " + std::string(target) +
                                            " takes 2 operands, got " +
                                            std::to_string(operands.size())));
    ++m_checks;
    const std::string why = compareLiterals(*operands[0], *operands[1], spec);
    if (!why.empty()) return StatusOr<Literal>(checkFailed(instruction, why));
    if (check == "eq") return StatusOr<Literal>(Literal::scalar(PrimitiveType::PRED, 1));
    return StatusOr<Literal>(Literal(instruction.shape()));
}

void CheckRunner::install(HloEvaluatorOptions& options) {
    options.customCallHandler = [this](const HloInstruction& instruction,
                                       std::span<const Literal* const> operands) {
        return (*this)(instruction, operands);
    };
}

std::vector<ConformanceCase> runConformance(std::string_view text, const std::string& fileName,
                                            const ConformanceOptions& options) {
    std::vector<ConformanceCase> cases;
    int index = 0;
    for (StableHloChunk& chunk : parseStableHloChunks(text, fileName)) {
        ConformanceCase& result = cases.emplace_back();
        result.index = ++index;
        result.firstLine = chunk.firstLine;
        if (!chunk.module.isOk()) {
            const Status& status = chunk.module.status();
            result.outcome = status.code() == StatusCode::kUnimplemented ? CaseOutcome::kUnsupported
                                                                        : CaseOutcome::kFailed;
            result.detail = "import: " + status.toString();
            continue;
        }
        const HloModule& module = **chunk.module;
        const HloComputation* entry = module.entryComputation();
        if (entry == nullptr) {
            result.outcome = CaseOutcome::kFailed;
            result.detail = "module has no entry function";
            continue;
        }
        if (entry->parameterCount() != 0) {
            result.outcome = CaseOutcome::kUnsupported;
            result.detail = "entry function " + entry->name() + " takes " +
                            std::to_string(entry->parameterCount()) +
                            " argument(s) and the case supplies none (not an interpreter test)";
            continue;
        }
        CheckRunner checks;
        HloEvaluatorOptions evalOptions;
        evalOptions.cancel = options.cancel;
        evalOptions.maxWhileIterations = options.maxWhileIterations;
        checks.install(evalOptions);
        HloEvaluator evaluator(evalOptions);
        StatusOr<Literal> value = evaluator.evaluate(module, {});
        result.checks = checks.checks();
        if (!value.isOk()) {
            const Status& status = value.status();
            result.outcome = status.code() == StatusCode::kUnimplemented ? CaseOutcome::kUnsupported
                                                                        : CaseOutcome::kFailed;
            result.detail = status.message();
            continue;
        }
        if (result.checks == 0) {
            result.outcome = CaseOutcome::kUnsupported;
            result.detail = "no check to apply";
            continue;
        }
        result.outcome = CaseOutcome::kPassed;
    }
    return cases;
}

}  // namespace hloscope
