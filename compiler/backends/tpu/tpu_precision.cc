#include "compiler/backends/tpu/tpu_precision.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/passes/library_call_expander.h"
#include "core/ir/hlo_computation.h"
#include "core/verifier/hlo_verifier.h"
#include "core/ir/primitive_type.h"

namespace hloscope {

namespace {

using PT = PrimitiveType;

// How a dot or convolution is computed: bf16 pieces per operand and the
// products of pieces kept (i + j <= maxLevel).
struct PassScheme {
    int lhsPieces = 1;
    int rhsPieces = 1;
    int maxLevel = 0;
};

std::string lowercase(std::string_view text) {
    std::string out;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Status errorAt(const HloInstruction& instruction, const std::string& what) {
    return invalidArgument("%" + instruction.name() + ": " + what);
}

// bf16 pieces of one operand at precision `name` (default, high, highest).
StatusOr<int> piecesOfPrecision(const HloInstruction& instruction, const std::string& name) {
    if (name == "default") return 1;
    if (name == "high") return 2;
    if (name == "highest") return 3;
    return errorAt(instruction, "operand precision '" + name + "' does not apply to f32 operands");
}

// The scheme `instruction` asks for through algorithm= or operand_precision=.
StatusOr<PassScheme> schemeOf(const HloInstruction& instruction) {
    PassScheme scheme;
    if (auto algorithm = instruction.attribute("algorithm")) {
        const std::string name = lowercase(*algorithm);
        if (name == "dot_bf16_bf16_f32" || name == "dot_bf16_bf16_bf16") return scheme;
        if (name == "dot_bf16_bf16_f32_x3") return PassScheme{2, 2, 1};
        if (name == "dot_bf16_bf16_f32_x6" || name == "dot_f32_f32_f32") return PassScheme{3, 3, 2};
        if (name == "dot_bf16_bf16_f32_x9") return PassScheme{3, 3, 4};
        return errorAt(instruction, "algorithm " + name + " on f32 operands has no TPU (MXU) form");
    }
    auto precision = instruction.attribute("operand_precision");
    if (!precision) return scheme;
    std::string text = lowercase(*precision);
    if (text.size() < 2 || text.front() != '{' || text.back() != '}')
        return errorAt(instruction, "malformed operand_precision=" + std::string(*precision));
    text = text.substr(1, text.size() - 2);
    std::vector<std::string> names;
    for (size_t start = 0; start <= text.size();) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        names.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    if (names.size() != 2)
        return errorAt(instruction, "operand_precision=" + std::string(*precision) + " has " +
                                        std::to_string(names.size()) + " entries, not 2");
    HLO_ASSIGN_OR_RETURN(scheme.lhsPieces, piecesOfPrecision(instruction, names[0]));
    HLO_ASSIGN_OR_RETURN(scheme.rhsPieces, piecesOfPrecision(instruction, names[1]));
    scheme.maxLevel = std::max(scheme.lhsPieces, scheme.rhsPieces) - 1;
    return scheme;
}

// Whether bf16 holds every value of `type` exactly.
bool bf16HoldsExactly(PT type) {
    using namespace primitive_util;
    if (type == PT::BF16 || type == PT::PRED) return true;
    if (isFloatingPoint(type))
        return mantissaBits(type) <= mantissaBits(PT::BF16) && exponentBits(type) <= 8;
    if (isInteger(type)) {
        const int magnitudeBits = bitWidth(type) - (isSignedInteger(type) ? 1 : 0);
        return magnitudeBits <= mantissaBits(PT::BF16) + 1;
    }
    return false;
}

// An f32 operand whose values bf16 holds exactly: its lower pieces are zero.
bool isBf16Exact(const HloInstruction& operand) {
    if (operand.opcode() != HloOpcode::kConvert || operand.operandCount() != 1) return false;
    const Shape& source = operand.operand(0)->shape();
    return source.isArray() && bf16HoldsExactly(source.elementType());
}

bool isF32Array(const HloInstruction& instruction) {
    return instruction.shape().isArray() && instruction.shape().elementType() == PT::F32;
}

// `reference`'s shape with element type `type`; a layout keeps only its
// dimension order (tiles and element sizes belong to the original type).
Shape withType(const Shape& reference, PT type) {
    Shape shape = reference;
    shape.setElementType(type);
    if (shape.hasLayout()) shape.setLayout(Layout(reference.layout().minorToMajor()));
    return shape;
}

// "hi", "mid" or "lo": piece `index` of `pieces`.
std::string_view pieceName(int index, int pieces) {
    if (index == 0) return "hi";
    return index + 1 == pieces ? "lo" : "mid";
}

// "dot" for "dot.3": the stem new instructions' names start with.
std::string nameStem(const std::string& name) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot + 1 == name.size()) return name;
    for (size_t i = dot + 1; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, dot);
}

// Builds the replacement of one dot/convolution; every instruction it adds
// is recorded in `added`, in creation order (operands first).
class Emitter {
public:
    Emitter(HloModule& module, HloComputation& computation, const HloInstruction& original)
        : m_module(module),
          m_computation(computation),
          m_original(original),
          m_stem(nameStem(original.name())) {}

    const std::vector<HloInstruction*>& added() const { return m_added; }

    HloInstruction* add(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                        std::string_view base) {
        auto instruction = std::make_unique<HloInstruction>(
            opcode, m_module.uniqueInstructionName(m_stem + "_" + std::string(base)), shape);
        for (HloInstruction* operand : operands) instruction->appendOperand(operand);
        return record(std::move(instruction));
    }

    HloInstruction* record(std::unique_ptr<HloInstruction> instruction) {
        instruction->setMetadata(m_original.metadata());
        HloInstruction* added = m_computation.addInstruction(std::move(instruction));
        m_added.push_back(added);
        return added;
    }

    // bf16 pieces of `operand` (f32 values that bf16 holds), hi first.
    std::vector<HloInstruction*> split(HloInstruction* operand, int pieces, std::string_view side) {
        if (isBf16Exact(*operand)) return {operand};
        const Shape& f32 = operand->shape();
        const Shape bf16 = withType(f32, PT::BF16);
        std::vector<HloInstruction*> result;
        HloInstruction* rest = operand;
        for (int i = 0; i < pieces; ++i) {
            const std::string piece = std::string(side) + "_" + std::string(pieceName(i, pieces));
            HloInstruction* rounded = add(HloOpcode::kConvert, bf16, {rest}, piece + "_bf16");
            HloInstruction* value = add(HloOpcode::kConvert, f32, {rounded}, piece);
            result.push_back(value);
            if (i + 1 < pieces)
                rest = add(HloOpcode::kSubtract, f32, {rest, value}, piece + "_rest");
        }
        return result;
    }

    // The original instruction on new operands, f32 result, precision
    // attributes dropped (its operands are bf16 values: one MXU pass each).
    HloInstruction* partial(HloInstruction* lhs, HloInstruction* rhs, const Shape& shape,
                            std::string_view base) {
        std::vector<HloInstruction*> operands = {lhs, rhs};
        auto clone = m_original.cloneWithNewOperands(
            shape, operands, m_module.uniqueInstructionName(m_stem + "_" + std::string(base)));
        clone->removeAttribute("operand_precision");
        clone->removeAttribute("algorithm");
        return record(std::move(clone));
    }

    // Zero where `value` is not finite.
    HloInstruction* finiteOrZero(HloInstruction* value) {
        const Shape& shape = value->shape();
        Shape pred = withType(shape, PT::PRED);
        HloInstruction* finite = add(HloOpcode::kIsFinite, pred, {value}, "finite");
        Shape scalar = Shape::makeScalar(PT::F32);
        if (shape.hasLayout()) scalar.setLayout(Layout(std::vector<int64_t>{}));
        auto zeroConstant = std::make_unique<HloInstruction>(
            HloOpcode::kConstant, m_module.uniqueInstructionName(m_stem + "_zero"), scalar);
        zeroConstant->setLiteralText("0");
        HloInstruction* zero = record(std::move(zeroConstant));
        HloInstruction* zeros = add(HloOpcode::kBroadcast, shape, {zero}, "zeros");
        zeros->setDimensions({});
        return add(HloOpcode::kSelect, shape, {finite, value, zeros}, "low_sum");
    }

private:
    HloModule& m_module;
    HloComputation& m_computation;
    const HloInstruction& m_original;
    std::string m_stem;
    std::vector<HloInstruction*> m_added;
};

struct Product {
    int i = 0;
    int j = 0;
};

// Products of pieces kept by `scheme`, smallest first: by level i + j
// descending, then |i - j|, then i (XLA's bf16_6x order:
// mid*mid, hi*lo, lo*hi, hi*mid, mid*hi, hi*hi).
std::vector<Product> productsOf(int lhsPieces, int rhsPieces, int maxLevel) {
    std::vector<Product> products;
    for (int i = 0; i < lhsPieces; ++i)
        for (int j = 0; j < rhsPieces; ++j)
            if (i + j <= maxLevel) products.push_back({i, j});
    std::sort(products.begin(), products.end(), [](const Product& a, const Product& b) {
        if (a.i + a.j != b.i + b.j) return a.i + a.j > b.i + b.j;
        if (std::abs(a.i - a.j) != std::abs(b.i - b.j))
            return std::abs(a.i - a.j) < std::abs(b.i - b.j);
        return a.i < b.i;
    });
    return products;
}

bool isCandidate(const HloInstruction& instruction) {
    if (instruction.opcode() != HloOpcode::kDot && instruction.opcode() != HloOpcode::kConvolution)
        return false;
    if (instruction.operandCount() != 2 || !instruction.shape().isArray()) return false;
    if (!primitive_util::isFloatingPoint(instruction.shape().elementType())) return false;
    return isF32Array(*instruction.operand(0)) && isF32Array(*instruction.operand(1));
}

struct Rewritten {
    HloInstruction* original = nullptr;
    HloInstruction* replacement = nullptr;
    std::vector<HloInstruction*> added;
};

}  // namespace

std::string_view TpuPrecisionEmulationPass::description() {
    return "TPU numerics: f32 dots and convolutions become sums of dots of bf16 pieces with f32 "
           "accumulation, as the MXU computes them (DEFAULT one pass, HIGH bf16_3x, HIGHEST "
           "bf16_6x, split per operand; algorithm= honoured). Not in any pipeline: the simulated "
           "TPU applies it to the module it executes.";
}

StatusOr<std::unique_ptr<HloPass>> TpuPrecisionEmulationPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<TpuPrecisionEmulationPass>());
}

StatusOr<bool> TpuPrecisionEmulationPass::run(HloModule& module) {
    int64_t dots = 0, convolutions = 0, passes = 0;
    for (const auto& computationPtr : module.computations()) {
        HloComputation& computation = *computationPtr;
        std::vector<HloInstruction*> candidates;
        for (const auto& instruction : computation.instructions())
            if (isCandidate(*instruction)) candidates.push_back(instruction.get());
        std::vector<Rewritten> rewritten;
        for (HloInstruction* original : candidates) {
            HLO_ASSIGN_OR_RETURN(PassScheme scheme, schemeOf(*original));
            HloInstruction* lhs = original->operand(0);
            HloInstruction* rhs = original->operand(1);
            const int lhsPieces = isBf16Exact(*lhs) ? 1 : scheme.lhsPieces;
            const int rhsPieces = isBf16Exact(*rhs) ? 1 : scheme.rhsPieces;
            if (isBf16Exact(*lhs) && isBf16Exact(*rhs)) continue;  // one exact pass already
            const std::vector<Product> products = productsOf(lhsPieces, rhsPieces, scheme.maxLevel);

            Emitter emit(module, computation, *original);
            const std::vector<HloInstruction*> lhsParts = emit.split(lhs, lhsPieces, "lhs");
            const std::vector<HloInstruction*> rhsParts = emit.split(rhs, rhsPieces, "rhs");
            const Shape f32Shape = withType(original->shape(), PT::F32);
            std::vector<HloInstruction*> partials;
            for (const Product& p : products) {
                const std::string base = std::string(pieceName(p.i, lhsPieces)) + "_" +
                                         std::string(pieceName(p.j, rhsPieces));
                partials.push_back(emit.partial(lhsParts[static_cast<size_t>(p.i)],
                                                rhsParts[static_cast<size_t>(p.j)], f32Shape,
                                                base));
            }
            // partials.back() is hi*hi; the others are summed first.
            HloInstruction* result = partials.back();
            if (partials.size() > 1) {
                HloInstruction* low = partials.front();
                for (size_t k = 1; k + 1 < partials.size(); ++k)
                    low = emit.add(HloOpcode::kAdd, f32Shape, {low, partials[k]}, "low");
                low = emit.finiteOrZero(low);
                result = emit.add(HloOpcode::kAdd, f32Shape, {low, result}, "sum");
            }
            if (original->shape().elementType() != PT::F32)
                result = emit.add(HloOpcode::kConvert, original->shape(), {result}, "result");
            else if (result->shape() != original->shape())
                result = emit.add(HloOpcode::kCopy, original->shape(), {result}, "result");
            // The original's control predecessors run before any of its
            // replacement: before the instructions that read no new one.
            const std::unordered_set<const HloInstruction*> fresh(emit.added().begin(),
                                                                  emit.added().end());
            for (HloInstruction* added : emit.added()) {
                const bool readsFresh =
                    std::any_of(added->operands().begin(), added->operands().end(),
                                [&](const HloInstruction* o) { return fresh.count(o) > 0; });
                if (readsFresh) continue;
                for (HloInstruction* predecessor : original->controlPredecessors())
                    predecessor->addControlDependencyTo(added);
            }
            recordRewrite("bf16x" + std::to_string(products.size()), original, result);
            rewritten.push_back({original, result, emit.added()});
            (original->opcode() == HloOpcode::kDot ? dots : convolutions) += 1;
            passes += static_cast<int64_t>(products.size());
        }
        if (rewritten.empty()) continue;

        // Each replacement's instructions take the original's place in the
        // order (their operands precede it), so schedules stay valid.
        std::unordered_map<const HloInstruction*, const Rewritten*> byOriginal;
        std::unordered_set<const HloInstruction*> added;
        for (const Rewritten& r : rewritten) {
            byOriginal[r.original] = &r;
            added.insert(r.added.begin(), r.added.end());
        }
        std::vector<HloInstruction*> order;
        order.reserve(computation.instructions().size());
        for (const auto& instruction : computation.instructions()) {
            if (added.count(instruction.get())) continue;
            if (auto it = byOriginal.find(instruction.get()); it != byOriginal.end())
                order.insert(order.end(), it->second->added.begin(), it->second->added.end());
            order.push_back(instruction.get());
        }
        HLO_RETURN_IF_ERROR(computation.setInstructionOrder(order));
        for (const Rewritten& r : rewritten) {
            std::string name = r.original->name();
            const std::vector<HloInstruction*> successors = r.original->controlSuccessors();
            for (HloInstruction* successor : successors)
                r.replacement->addControlDependencyTo(successor);
            r.original->dropAllControlDependencies();
            HLO_RETURN_IF_ERROR(computation.replaceInstruction(r.original, r.replacement));
            r.replacement->setName(std::move(name));
        }
    }
    setStatistic("dots-rewritten", dots);
    setStatistic("convolutions-rewritten", convolutions);
    setStatistic("mxu-passes", passes);
    return dots + convolutions > 0;
}

StatusOr<int64_t> tpuMxuPasses(const HloInstruction& instruction) {
    if (!isCandidate(instruction)) return int64_t{1};
    HLO_ASSIGN_OR_RETURN(PassScheme scheme, schemeOf(instruction));
    const bool lhsExact = isBf16Exact(*instruction.operand(0));
    const bool rhsExact = isBf16Exact(*instruction.operand(1));
    if (lhsExact && rhsExact) return int64_t{1};
    return static_cast<int64_t>(productsOf(lhsExact ? 1 : scheme.lhsPieces,
                                           rhsExact ? 1 : scheme.rhsPieces, scheme.maxLevel)
                                    .size());
}

StatusOr<std::unique_ptr<HloModule>> emulateTpuNumerics(const HloModule& module,
                                                        TpuNumericsSummary* summary) {
    std::unique_ptr<HloModule> copy = module.clone();
    const std::string passName(TpuPrecisionEmulationPass::kName);
    // The pass assumes a valid module, and a module that was invalid before
    // it must not be reported as broken by it (as PipelineRunner does).
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    if (Status verified = verifyModule(*copy, options); !verified.isOk())
        return verified.withContext("the input module does not verify, so " + passName +
                                    " does not run on it");
    // XLA:GPU's cuBLAS / cuDNN calls first become the dots and convolutions they stand for,
    // whose numerics the TPU has.
    LibraryCallExpanderPass libraryCalls;
    if (auto expanded = libraryCalls.run(*copy); !expanded.isOk())
        return expanded.status().withContext(std::string(LibraryCallExpanderPass::kName));
    TpuPrecisionEmulationPass pass;
    auto changed = pass.run(*copy);
    if (!changed.isOk()) return changed.status().withContext(passName);
    if (Status verified = verifyModule(*copy, options); !verified.isOk())
        return internalError("verifier after " + passName + ": " + verified.message());
    if (summary) {
        const auto& statistics = pass.statistics();
        auto statistic = [&](const char* name) {
            auto it = statistics.find(name);
            return it == statistics.end() ? int64_t(0) : it->second;
        };
        summary->dots = statistic("dots-rewritten");
        summary->convolutions = statistic("convolutions-rewritten");
        summary->mxuPasses = statistic("mxu-passes");
    }
    return copy;
}

}  // namespace hloscope
