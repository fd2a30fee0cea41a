// Internal to the StableHLO importer: lowering of the syntax tree
// (stablehlo_ast.h) to HLO, as XLA's StableHLO -> HLO conversion does it.
//
//  * Every func.func becomes a computation named `<name>.<N>`; regions
//    become computations named `region_<k>.<N>`; instructions are named
//    `<opcode>.<N>` and parameters `Arg_<i>.<N>` (N: one counter per module).
//  * Multi-result operations produce a tuple-shaped instruction plus one
//    get-tuple-element per result; functions with several results return a
//    tuple, functions with none an empty tuple.
//  * while/if/case regions may use values defined outside them; those are
//    passed in as extra tuple elements (while: extra loop-carried values).
//    Other regions may only use outside constants, which are cloned in.
//  * Array shapes get XLA's default (descending) layout.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/stablehlo/stablehlo_ast.h"
#include "core/support/status.h"

namespace hloscope::stablehlo {

class Importer;

// SSA names visible while lowering one region; `computation` owns the
// instructions of this scope's values.
struct Scope {
    const Scope* parent = nullptr;
    HloComputation* computation = nullptr;
    std::unordered_map<std::string, std::vector<HloInstruction*>> values;
};

// Adds instructions to one computation.
class HloBuilder {
public:
    HloBuilder(Importer& importer, HloComputation* computation)
        : m_importer(importer), m_computation(computation) {}

    Importer& importer() { return m_importer; }
    HloComputation* computation() { return m_computation; }

    // Adds an instruction named `<opcode>.<N>` with the default layout.
    HloInstruction* add(HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands);
    HloInstruction* unary(HloOpcode opcode, HloInstruction* x);
    HloInstruction* binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b);
    HloInstruction* compare(HloInstruction* a, HloInstruction* b, ComparisonDirection direction,
                            ComparisonType type = ComparisonType::kDefault);
    HloInstruction* select(HloInstruction* pred, HloInstruction* onTrue, HloInstruction* onFalse);
    HloInstruction* clamp(HloInstruction* low, HloInstruction* x, HloInstruction* high);
    HloInstruction* convert(HloInstruction* x, PrimitiveType type);
    HloInstruction* bitcastConvert(HloInstruction* x, PrimitiveType type);
    HloInstruction* constant(Shape shape, std::string literalText);
    // Scalar constant of `type`.
    HloInstruction* scalar(PrimitiveType type, double value);
    HloInstruction* scalarInt(PrimitiveType type, int64_t value);
    // Constant of `like`'s shape and element type: a scalar, broadcast when
    // `like` is not a scalar.
    HloInstruction* constantLike(double value, HloInstruction* like);
    HloInstruction* constantLikeInt(int64_t value, HloInstruction* like);
    HloInstruction* broadcast(HloInstruction* x, Shape shape, std::vector<int64_t> dimensions);
    HloInstruction* reshape(HloInstruction* x, Shape shape);
    HloInstruction* tuple(const std::vector<HloInstruction*>& elements);
    HloInstruction* getTupleElement(HloInstruction* tuple, int64_t index);
    // One get-tuple-element per element of a tuple-shaped instruction.
    std::vector<HloInstruction*> unpack(HloInstruction* tuple);

private:
    Importer& m_importer;
    HloComputation* m_computation;
};

// How a region becomes a computation.
struct RegionSpec {
    std::string nameHint = "region";
    // One parameter holding the block arguments (and captures) instead of
    // one parameter per block argument: a tuple, or the value itself when
    // there is exactly one.
    bool tupleParameter = false;
    // Values from outside the region passed in after the block arguments.
    // Each captured name stands for a group of values (`%x:2` captures both).
    std::vector<std::string> captureNames;
    std::vector<size_t> captureGroupSizes;
    std::vector<HloInstruction*> captureValues;  // outer instructions, flattened
    // Return the captures unchanged after the region's results (while body).
    bool passCapturesThrough = false;
    // Root: the single result, or a tuple of several (kAuto); always a
    // tuple (kTuple).
    bool alwaysTupleRoot = false;
};

struct OpContext {
    Importer& importer;
    HloBuilder& b;
    Scope& scope;
    const Op& op;
    std::vector<HloInstruction*> operands;
    std::vector<Shape> resultShapes;
};

class Importer {
public:
    Importer(const ModuleAst& ast, std::string fileName, std::string defaultName);

    StatusOr<std::unique_ptr<HloModule>> run();

    // --- Services for operation lowering -------------------------------
    SourceLocation location(TextPos pos) const { return {m_fileName, pos.line, pos.column}; }
    Status errorAt(TextPos pos, StatusCode code, std::string message) const {
        return Status(code, std::move(message), location(pos));
    }
    Status invalidAt(TextPos pos, std::string message) const {
        return errorAt(pos, StatusCode::kInvalidArgument, std::move(message));
    }
    std::string nextName(std::string_view base);
    StatusOr<Shape> shapeOf(const MlirType& type, TextPos pos) const;
    // The computation of function `name`, lowering it on first use.
    StatusOr<HloComputation*> functionComputation(const std::string& name, TextPos pos);
    // Lowers `region` into a new computation added to the module.
    StatusOr<HloComputation*> lowerRegion(const Region& region, const Scope& outer,
                                          const RegionSpec& spec);
    // Names used inside `region` (nested regions included) but defined
    // outside it, in first-use order.
    std::vector<std::string> capturedNames(const Region& region) const;
    // Resolves a value name in `scope` (or, for captured constants, clones
    // the constant into `b`'s computation).
    StatusOr<HloInstruction*> lookup(const ValueRef& ref, Scope& scope, HloBuilder& b);
    // All values of the result group `name` (for captures).
    StatusOr<std::vector<HloInstruction*>> lookupGroup(const std::string& name, TextPos pos,
                                                       Scope& scope, HloBuilder& b);
    // Resolves the values `regions` use from outside them into `spec`'s
    // capture lists.
    Status resolveCaptures(const std::vector<const Region*>& regions, TextPos pos, Scope& scope,
                           HloBuilder& b, RegionSpec& spec);

    // Integer contents of constants created from dense attributes (for
    // dynamic ops whose shape operands are constants).
    const std::vector<int64_t>* constantInts(const HloInstruction* instruction) const;
    void recordConstantInts(const HloInstruction* instruction, std::vector<int64_t> values);

    HloModule& module() { return *m_module; }

private:
    StatusOr<HloComputation*> lowerFunction(const Func& func, bool isEntry);
    // Lowers the ops of `block`; returns the terminator's operands.
    StatusOr<std::vector<HloInstruction*>> lowerBlock(const Block& block, Scope& scope,
                                                      HloBuilder& b);
    Status lowerOperation(const Op& op, Scope& scope, HloBuilder& b);
    HloComputation* finishComputation(std::unique_ptr<HloComputation> computation, bool isEntry);
    void collectNames(const Region& region, std::set<std::string>& defined,
                      std::vector<std::string>& used) const;

    const ModuleAst& m_ast;
    std::string m_fileName;
    std::string m_defaultName;
    std::unique_ptr<HloModule> m_module;
    int64_t m_nextId = 1;
    int m_nextRegion = 0;
    int m_depth = 0;
    std::map<std::string, const Func*, std::less<>> m_funcs;
    std::map<std::string, HloComputation*, std::less<>> m_lowered;
    std::set<std::string, std::less<>> m_inProgress;
    std::unordered_map<const HloInstruction*, std::vector<int64_t>> m_constantInts;
};

// Lowers one StableHLO / check / interpreter / func.call operation
// (stablehlo_ops.cc); returns one value per result.
StatusOr<std::vector<HloInstruction*>> lowerStableHloOp(OpContext& ctx);
// Lowers one CHLO operation by decomposition (chlo_decompose.cc).
StatusOr<std::vector<HloInstruction*>> lowerChloOp(OpContext& ctx);

}  // namespace hloscope::stablehlo
