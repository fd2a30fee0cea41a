#include "compiler/passes/triangular_solve_expander.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/passes/instruction_builder.h"
#include "compiler/passes/pass_util.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace hloscope {
namespace {

using H = HloInstruction*;

// The solve's attributes (verbatim, as XLA prints them).
struct SolveForm {
    bool leftSide = false;
    bool lower = false;
    bool unitDiagonal = false;
    enum class Transpose { kNo, kTranspose, kAdjoint } transpose = Transpose::kNo;
};

StatusOr<SolveForm> formOf(const HloInstruction& solve) {
    SolveForm form;
    auto flag = [&](std::string_view name, bool* out) -> Status {
        auto value = solve.attribute(name);
        if (!value) return Status::ok();
        if (*value != "true" && *value != "false")
            return invalidArgument("%" + solve.name() + ": " + std::string(name) + "=" +
                                   std::string(*value) + " is not true or false");
        *out = *value == "true";
        return Status::ok();
    };
    HLO_RETURN_IF_ERROR(flag("left_side", &form.leftSide));
    HLO_RETURN_IF_ERROR(flag("lower", &form.lower));
    HLO_RETURN_IF_ERROR(flag("unit_diagonal", &form.unitDiagonal));
    if (auto t = solve.attribute("transpose_a")) {
        if (*t == "TRANSPOSE")
            form.transpose = SolveForm::Transpose::kTranspose;
        else if (*t == "ADJOINT")
            form.transpose = SolveForm::Transpose::kAdjoint;
        else if (*t != "NO_TRANSPOSE")
            return invalidArgument("%" + solve.name() + ": unknown transpose_a=" + std::string(*t));
    }
    return form;
}

// Instructions of the expansion, named after the solve.
class Builder : public passes::InstructionBuilder {
public:
    using InstructionBuilder::InstructionBuilder;

    H compare(H a, H b, ComparisonDirection direction) {
        Shape shape = a->shape();
        shape.setElementType(PrimitiveType::PRED);
        H c = add(HloOpcode::kCompare, std::move(shape), {a, b}, "compare");
        c->mutableExtra().comparisonDirection = direction;
        return c;
    }
    // Swaps the last two dimensions.
    H transposeMinor(H x) {
        const Shape& shape = x->shape();
        const int64_t rank = shape.rank();
        std::vector<int64_t> permutation, dims;
        for (int64_t d = 0; d < rank; ++d) {
            const int64_t from = d < rank - 2 ? d : (d == rank - 2 ? rank - 1 : rank - 2);
            permutation.push_back(from);
            dims.push_back(shape.dimensions(from));
        }
        H t = add(HloOpcode::kTranspose, Shape::makeArray(shape.elementType(), dims), {x},
                  "transpose");
        t->setDimensions(std::move(permutation));
        return t;
    }
    H conjugate(H x) {
        if (!primitive_util::isComplex(x->shape().elementType())) return x;
        Shape part = x->shape();
        part.setElementType(x->shape().elementType() == PrimitiveType::C128 ? PrimitiveType::F64
                                                                            : PrimitiveType::F32);
        H re = add(HloOpcode::kReal, part, {x}, "real");
        H im = add(HloOpcode::kImag, part, {x}, "imag");
        H negated = unary(HloOpcode::kNegate, im, "negate");
        return add(HloOpcode::kComplex, x->shape(), {re, negated}, "conjugate");
    }
    // x[..., at, from] of size [..., rows, columns].
    H minorSlice(H x, H at, H from, int64_t rows, int64_t columns, std::string_view what) {
        const Shape& shape = x->shape();
        std::vector<int64_t> sizes = shape.dimensions();
        sizes[sizes.size() - 2] = rows;
        sizes[sizes.size() - 1] = columns;
        std::vector<H> operands = {x};
        for (int64_t d = 0; d + 2 < shape.rank(); ++d) operands.push_back(index(0));
        operands.push_back(at);
        operands.push_back(from);
        H s = add(HloOpcode::kDynamicSlice, Shape::makeArray(shape.elementType(), sizes), operands,
                  what);
        s->mutableExtra().dynamicSliceSizes = sizes;
        return s;
    }
};

// Replaces `solve` by its loop.
StatusOr<H> expand(HloModule& module, H solve) {
    HLO_ASSIGN_OR_RETURN(const SolveForm form, formOf(*solve));
    const Shape& aShape = solve->operand(0)->shape();
    const Shape& bShape = solve->operand(1)->shape();
    const int64_t rank = aShape.rank();
    if (!aShape.isArray() || !bShape.isArray() || rank < 2 || bShape.rank() != rank ||
        aShape.dimensions(rank - 1) != aShape.dimensions(rank - 2))
        return invalidArgument("%" + solve->name() +
                               ": a must be square matrices and b of its rank");
    const PrimitiveType type = aShape.elementType();
    if (!primitive_util::isFloatingPoint(type) && !primitive_util::isComplex(type))
        return invalidArgument("%" + solve->name() + ": triangular-solve of " +
                               std::string(primitive_util::name(type)));
    const int64_t m = aShape.dimensions(rank - 1);
    HloComputation& outer = *solve->parent();
    Builder b(module, outer, solve->name());

    // a's triangle (the diagonal too unless it is a unit one), zeros elsewhere.
    Shape indexShape = aShape;
    indexShape.setElementType(PrimitiveType::S32);
    indexShape.clearLayout();
    H rows = b.add(HloOpcode::kIota, indexShape, {}, "rows");
    rows->setIotaDimension(rank - 2);
    H columns = b.add(HloOpcode::kIota, indexShape, {}, "columns");
    columns->setIotaDimension(rank - 1);
    using D = ComparisonDirection;
    const D keep =
        form.lower ? (form.unitDiagonal ? D::kGt : D::kGe) : (form.unitDiagonal ? D::kLt : D::kLe);
    H a = b.add(HloOpcode::kSelect, solve->operand(0)->shape(),
                {b.compare(rows, columns, keep), solve->operand(0), b.zeros(aShape)}, "triangle");
    // op(a), then the right side's transposition: A' X' = B'.
    bool lower = form.lower;
    if (form.transpose != SolveForm::Transpose::kNo) {
        a = b.transposeMinor(a);
        if (form.transpose == SolveForm::Transpose::kAdjoint) a = b.conjugate(a);
        lower = !lower;
    }
    H rhs = solve->operand(1);
    if (!form.leftSide) {
        a = b.transposeMinor(a);
        rhs = b.transposeMinor(rhs);
        lower = !lower;
    }
    const Shape xShape = rhs->shape();
    const int64_t n = xShape.dimensions(rank - 1);
    H initial = b.tuple({b.index(0), a, rhs, b.zeros(xShape)});
    const Shape stateShape = initial->shape();

    HloComputation* condition = module.addComputation(std::make_unique<HloComputation>(
        module.uniqueComputationName(solve->name() + ".condition")));
    {
        Builder c(module, *condition, solve->name());
        H step = c.element(c.parameter(stateShape), 0);
        condition->setRoot(c.compare(step, c.index(m), D::kLt));
    }
    HloComputation* body = module.addComputation(
        std::make_unique<HloComputation>(module.uniqueComputationName(solve->name() + ".body")));
    {
        Builder l(module, *body, solve->name());
        H state = l.parameter(stateShape);
        H step = l.element(state, 0);
        H matrix = l.element(state, 1);
        H right = l.element(state, 2);
        H x = l.element(state, 3);
        H at = lower ? step
                     : l.add(HloOpcode::kSubtract, step->shape(), {l.index(m - 1), step}, "row");
        // A'[i] . X over the solved rows (the others are zero).
        H row = l.minorSlice(matrix, at, l.index(0), 1, m, "a_row");
        std::vector<int64_t> productDims = xShape.dimensions();
        productDims[static_cast<size_t>(rank - 2)] = 1;
        const Shape rowShape = Shape::makeArray(xShape.elementType(), productDims);
        H dot = l.add(HloOpcode::kDot, rowShape, {row, x}, "dot");
        DotDimensionNumbers numbers;
        for (int64_t d = 0; d + 2 < rank; ++d) {
            numbers.lhsBatchDimensions.push_back(d);
            numbers.rhsBatchDimensions.push_back(d);
        }
        numbers.lhsContractingDimensions = {rank - 1};
        numbers.rhsContractingDimensions = {rank - 2};
        dot->mutableExtra().dotDimensionNumbers = numbers;
        H value = l.binary(HloOpcode::kSubtract, l.minorSlice(right, at, l.index(0), 1, n, "b_row"),
                           dot, "residual");
        if (!form.unitDiagonal) {
            // Divided by A'[i][i], spread over the row.
            H diagonal = l.minorSlice(matrix, at, at, 1, 1, "diagonal");
            std::vector<int64_t> batchDims(productDims.begin(), productDims.end() - 2);
            H scalar = l.add(HloOpcode::kReshape, Shape::makeArray(xShape.elementType(), batchDims),
                             {diagonal}, "diagonal");
            std::vector<int64_t> keepDims;
            for (int64_t d = 0; d + 2 < rank; ++d) keepDims.push_back(d);
            value = l.binary(HloOpcode::kDivide, value, l.broadcast(scalar, rowShape, keepDims),
                             "solved");
        }
        std::vector<H> operands = {x, value};
        for (int64_t d = 0; d + 2 < rank; ++d) operands.push_back(l.index(0));
        operands.push_back(at);
        operands.push_back(l.index(0));
        H updated = l.add(HloOpcode::kDynamicUpdateSlice, xShape, operands, "x");
        H next = l.add(HloOpcode::kAdd, step->shape(), {step, l.index(1)}, "step");
        body->setRoot(l.tuple({next, matrix, right, updated}));
    }
    H loop = b.add(HloOpcode::kWhile, stateShape, {initial}, "loop");
    loop->setCalledComputation("condition", condition);
    loop->setCalledComputation("body", body);
    loop->setMetadata(solve->metadata());
    H result = b.element(loop, 3);
    if (!form.leftSide) result = b.transposeMinor(result);
    HLO_RETURN_IF_ERROR(outer.replaceInstruction(solve, result));
    return result;
}

}  // namespace

std::string_view TriangularSolveExpanderPass::description() {
    return "Replaces each triangular-solve by a substitution loop (one row of the solution per "
           "step: the row's residual divided by the diagonal), after bringing every form to a "
           "left-side solve of a lower or upper triangle.";
}

StatusOr<std::unique_ptr<HloPass>> TriangularSolveExpanderPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<TriangularSolveExpanderPass>());
}

StatusOr<bool> TriangularSolveExpanderPass::run(HloModule& module) {
    std::unordered_set<const HloComputation*> existing;
    for (const auto& computation : module.computations()) existing.insert(computation.get());
    std::vector<H> solves;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kTriangularSolve)
                solves.push_back(instruction.get());
    for (H solve : solves) {
        const std::string name = solve->name();
        const int64_t id = solve->uniqueId();
        HLO_ASSIGN_OR_RETURN(H replacement, expand(module, solve));
        recordRewrite(RewriteEvent{"expand-triangular-solve", name, id, replacement->name(),
                                   replacement->uniqueId()});
    }
    setStatistic("expanded", static_cast<int64_t>(solves.size()));
    if (solves.empty()) return false;
    HLO_RETURN_IF_ERROR(passes::placeNewComputations(module, existing));
    return true;
}

}  // namespace hloscope
