// Shape inference for the structured opcode families: dot, convolution,
// reductions, windows, gather/scatter, sort, map, fft, linear algebra,
// batch norm and collectives.
#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::shape_inference_internal {
namespace {

PrimitiveType resultTypeOr(const HloInstruction& instruction, PrimitiveType fallback) {
    const Shape& declared = instruction.shape();
    if (declared.isArray()) return declared.elementType();
    return fallback;
}

// Dimensions of lhs·rhs under `dnums` (batch, lhs free, rhs free), with
// `rhsSkip` dimensions of rhs (ragged-dot group dims) excluded.
StatusOr<Shape> dotShape(const HloInstruction& instruction, const Shape& lhs, const Shape& rhs,
                         const DotDimensionNumbers& dnums, PrimitiveType resultType,
                         const std::vector<int64_t>& rhsSkip = {}) {
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhs, "lhs of dot"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhs, "rhs of dot"));
    const auto& lb = dnums.lhsBatchDimensions;
    const auto& rb = dnums.rhsBatchDimensions;
    const auto& lc = dnums.lhsContractingDimensions;
    const auto& rc = dnums.rhsContractingDimensions;
    if (lc.size() != rc.size()) {
        return fail(instruction, "must specify the same number of contracting dimensions for lhs "
                                 "and rhs, got " +
                                     str(lc) + " and " + str(rc));
    }
    if (lb.size() != rb.size()) {
        return fail(instruction, "must specify the same number of batch dimensions for lhs and "
                                 "rhs, got " +
                                     str(lb) + " and " + str(rb));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, lc, lhs.rank(), "lhs_contracting_dims"));
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, rc, rhs.rank(), "rhs_contracting_dims"));
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, lb, lhs.rank(), "lhs_batch_dims"));
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, rb, rhs.rank(), "rhs_batch_dims"));
    std::vector<int64_t> lhsUsed = lc;
    lhsUsed.insert(lhsUsed.end(), lb.begin(), lb.end());
    std::vector<int64_t> rhsUsed = rc;
    rhsUsed.insert(rhsUsed.end(), rb.begin(), rb.end());
    if (!allUnique(lhsUsed) || !allUnique(rhsUsed)) {
        return fail(instruction, "a dimension number is not unique in the dot dimension numbers "
                                 "(lhs contracting " +
                                     str(lc) + ", lhs batch " + str(lb) + ", rhs contracting " +
                                     str(rc) + ", rhs batch " + str(rb) + ")");
    }
    for (size_t i = 0; i < lc.size(); ++i) {
        if (!dimEqual(lhs.dimensions(lc[i]), rhs.dimensions(rc[i]))) {
            return fail(instruction, "contracting dimension sizes do not match: lhs dimension " +
                                         std::to_string(lc[i]) + " has size " +
                                         std::to_string(lhs.dimensions(lc[i])) +
                                         " but rhs dimension " + std::to_string(rc[i]) +
                                         " has size " + std::to_string(rhs.dimensions(rc[i])) +
                                         " (" + str(lhs) + " vs " + str(rhs) + ")");
        }
    }
    for (size_t i = 0; i < lb.size(); ++i) {
        if (!dimEqual(lhs.dimensions(lb[i]), rhs.dimensions(rb[i]))) {
            return fail(instruction, "batch dimension sizes must match for lhs/rhs: lhs dimension " +
                                         std::to_string(lb[i]) + " has size " +
                                         std::to_string(lhs.dimensions(lb[i])) +
                                         " but rhs dimension " + std::to_string(rb[i]) +
                                         " has size " + std::to_string(rhs.dimensions(rb[i])));
        }
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (size_t i = 0; i < lb.size(); ++i) {
        dims.push_back(lhs.dimensions(lb[i]));
        dynamic.push_back(lhs.isDynamicDimension(lb[i]) || rhs.isDynamicDimension(rb[i]));
    }
    for (int64_t i = 0; i < lhs.rank(); ++i) {
        if (contains(lc, i) || contains(lb, i)) continue;
        dims.push_back(lhs.dimensions(i));
        dynamic.push_back(lhs.isDynamicDimension(i));
    }
    for (int64_t i = 0; i < rhs.rank(); ++i) {
        if (contains(rc, i) || contains(rb, i) || contains(rhsSkip, i)) continue;
        dims.push_back(rhs.dimensions(i));
        dynamic.push_back(rhs.isDynamicDimension(i));
    }
    return makeArray(resultType, std::move(dims), dynamic);
}

const DotDimensionNumbers& dotNumbers(const HloInstruction& instruction) {
    static const DotDimensionNumbers kEmpty;
    const DotDimensionNumbers* dnums = instruction.dotDimensionNumbers();
    return dnums ? *dnums : kEmpty;
}

}  // namespace

StatusOr<Shape> inferDot(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    return dotShape(instruction, lhs, rhs, dotNumbers(instruction),
                    resultTypeOr(instruction, lhs.elementType()));
}

StatusOr<Shape> inferRaggedDot(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 3));
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    const Shape& groupSizes = instruction.operand(2)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, groupSizes, "group_sizes of ragged-dot"));
    if (!isIntegral(groupSizes.elementType()) || groupSizes.rank() < 1) {
        return fail(instruction, "ragged-dot group_sizes must be an integer array of rank >= 1, "
                                 "got " +
                                     str(groupSizes));
    }
    const DotDimensionNumbers& dnums = dotNumbers(instruction);
    if (dnums.lhsRaggedDimensions.size() != 1) {
        return fail(instruction, "ragged-dot requires exactly one lhs_ragged_dims, got " +
                                     str(dnums.lhsRaggedDimensions));
    }
    int64_t ragged = dnums.lhsRaggedDimensions[0];
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhs, "lhs of ragged-dot"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhs, "rhs of ragged-dot"));
    if (ragged < 0 || ragged >= lhs.rank()) {
        return fail(instruction, "ragged-dot lhs_ragged_dims " + std::to_string(ragged) +
                                     " is out of range for lhs " + str(lhs));
    }
    HLO_RETURN_IF_ERROR(
        checkDimsInRange(instruction, dnums.rhsGroupDimensions, rhs.rank(), "rhs_group_dims"));
    int64_t groups = groupSizes.dimensions(groupSizes.rank() - 1);
    for (int64_t g : dnums.rhsGroupDimensions) {
        if (!dimEqual(rhs.dimensions(g), groups)) {
            return fail(instruction, "ragged-dot rhs group dimension " + std::to_string(g) +
                                         " has size " + std::to_string(rhs.dimensions(g)) +
                                         " but group_sizes has " + std::to_string(groups) +
                                         " groups");
        }
    }
    HLO_ASSIGN_OR_RETURN(Shape result,
                         dotShape(instruction, lhs, rhs, dnums,
                                  resultTypeOr(instruction, lhs.elementType()),
                                  dnums.rhsGroupDimensions));
    if (contains(dnums.lhsContractingDimensions, ragged)) {
        // Ragged contracting dimension: one result per group, in front.
        std::vector<int64_t> dims = {groups};
        std::vector<bool> dynamic = {false};
        for (int64_t i = 0; i < result.rank(); ++i) {
            dims.push_back(result.dimensions(i));
            dynamic.push_back(result.isDynamicDimension(i));
        }
        return makeArray(result.elementType(), std::move(dims), dynamic);
    }
    return result;
}

StatusOr<Shape> inferScaledDot(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 4));
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    const Shape& lhsScale = instruction.operand(2)->shape();
    const Shape& rhsScale = instruction.operand(3)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhsScale, "lhs scale of scaled-dot"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhsScale, "rhs scale of scaled-dot"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhs, "lhs of scaled-dot"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhs, "rhs of scaled-dot"));
    if (lhsScale.rank() == 0 && rhsScale.rank() == 0) {
        return fail(instruction, "At least one of the scales should be not a scalar in " +
                                     opName(instruction));
    }
    const std::pair<const Shape*, const Shape*> pairs[] = {{&lhs, &lhsScale}, {&rhs, &rhsScale}};
    for (const auto& [operand, scale] : pairs) {
        if (scale->rank() == 0) continue;
        if (scale->rank() != operand->rank()) {
            return fail(instruction, "scale " + str(*scale) +
                                         " has a different number of dimensions than operand " +
                                         str(*operand));
        }
        for (int64_t i = 0; i < operand->rank(); ++i) {
            int64_t o = operand->dimensions(i);
            int64_t s = scale->dimensions(i);
            if (s <= 0 || o % s != 0) {
                return fail(instruction, "operand dimension " + std::to_string(i) + " (size " +
                                             std::to_string(o) +
                                             ") should be a multiple of dimension " +
                                             std::to_string(i) + " of the scale (size " +
                                             std::to_string(s) + ")");
            }
        }
    }
    return dotShape(instruction, lhs, rhs, dotNumbers(instruction),
                    resultTypeOr(instruction, lhs.elementType()));
}

StatusOr<Shape> inferConvolution(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhs, "lhs of convolution"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhs, "rhs of convolution"));
    const ConvolutionDimensionNumbers* dnumsPtr = instruction.convolutionDimensionNumbers();
    if (!dnumsPtr) return fail(instruction, "convolution requires dim_labels=");
    const ConvolutionDimensionNumbers& d = *dnumsPtr;
    static const Window kNoWindow;
    const Window& window = instruction.window() ? *instruction.window() : kNoWindow;
    int64_t fgc = instruction.featureGroupCount();
    int64_t bgc = instruction.batchGroupCount();
    if (fgc <= 0) return fail(instruction, "feature_group_count must be a positive number");
    if (bgc <= 0) return fail(instruction, "batch_group_count must be a positive number");
    if (fgc > 1 && bgc > 1) {
        return fail(instruction, "both feature_group_count (" + std::to_string(fgc) +
                                     ") and batch_group_count (" + std::to_string(bgc) +
                                     ") cannot be greater than 1");
    }
    size_t spatial = d.inputSpatialDimensions.size();
    if (window.dimensions.size() != spatial) {
        return fail(instruction, "window has " + std::to_string(window.dimensions.size()) +
                                     " dimensions but the convolution has " +
                                     std::to_string(spatial) + " spatial dimensions");
    }
    if (d.kernelSpatialDimensions.size() != spatial || d.outputSpatialDimensions.size() != spatial) {
        return fail(instruction, "convolution dimension numbers have inconsistent spatial "
                                 "dimension counts");
    }
    int64_t rank = static_cast<int64_t>(spatial) + 2;
    if (lhs.rank() != rank || rhs.rank() != rank) {
        return fail(instruction, "convolution with " + std::to_string(spatial) +
                                     " spatial dimensions requires rank " + std::to_string(rank) +
                                     " operands, got " + str(lhs) + " and " + str(rhs));
    }
    std::vector<int64_t> inputDims = {d.inputBatchDimension, d.inputFeatureDimension};
    inputDims.insert(inputDims.end(), d.inputSpatialDimensions.begin(),
                     d.inputSpatialDimensions.end());
    std::vector<int64_t> kernelDims = {d.kernelInputFeatureDimension,
                                       d.kernelOutputFeatureDimension};
    kernelDims.insert(kernelDims.end(), d.kernelSpatialDimensions.begin(),
                      d.kernelSpatialDimensions.end());
    std::vector<int64_t> outputDims = {d.outputBatchDimension, d.outputFeatureDimension};
    outputDims.insert(outputDims.end(), d.outputSpatialDimensions.begin(),
                      d.outputSpatialDimensions.end());
    for (const auto* dims : {&inputDims, &kernelDims, &outputDims}) {
        HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, *dims, rank, "convolution dimension numbers"));
        if (!allUnique(*dims)) {
            return fail(instruction, "convolution dimension numbers are not unique: " +
                                         d.toString());
        }
    }
    int64_t inputBatch = lhs.dimensions(d.inputBatchDimension);
    int64_t inputFeatures = lhs.dimensions(d.inputFeatureDimension);
    int64_t kernelInputFeatures = rhs.dimensions(d.kernelInputFeatureDimension);
    int64_t kernelOutputFeatures = rhs.dimensions(d.kernelOutputFeatureDimension);
    if (inputFeatures != Shape::kUnboundedSize &&
        (inputFeatures % fgc != 0 || inputFeatures / fgc != kernelInputFeatures)) {
        return fail(instruction, "expected LHS feature dimension (value " +
                                     std::to_string(inputFeatures) +
                                     ") to be a multiple of feature_group_count (value " +
                                     std::to_string(fgc) +
                                     "), and LHS feature dimension / feature_group_count = RHS "
                                     "feature dimension (value " +
                                     std::to_string(kernelInputFeatures) + ")");
    }
    if (kernelOutputFeatures % fgc != 0) {
        return fail(instruction, "expected output feature dimension (value " +
                                     std::to_string(kernelOutputFeatures) +
                                     ") to be divisible by feature_group_count (value " +
                                     std::to_string(fgc) + ")");
    }
    if (inputBatch != Shape::kUnboundedSize && inputBatch % bgc != 0) {
        return fail(instruction, "expected input batch dimension (value " +
                                     std::to_string(inputBatch) +
                                     ") to be divisible by batch_group_count (value " +
                                     std::to_string(bgc) + ")");
    }
    if (kernelOutputFeatures % bgc != 0) {
        return fail(instruction, "expected output feature dimension size (value " +
                                     std::to_string(kernelOutputFeatures) +
                                     ") to be a multiple of batch group count " +
                                     std::to_string(bgc));
    }
    for (size_t i = 0; i < spatial; ++i) {
        int64_t kernelSize = rhs.dimensions(d.kernelSpatialDimensions[i]);
        if (window.dimensions[i].size != kernelSize) {
            return fail(instruction, "window dimension " + std::to_string(i) + " has size " +
                                         std::to_string(window.dimensions[i].size) +
                                         " but the kernel spatial dimension has size " +
                                         std::to_string(kernelSize));
        }
    }
    std::vector<int64_t> baseDims;
    std::vector<bool> baseDynamic;
    for (int64_t s : d.inputSpatialDimensions) {
        baseDims.push_back(lhs.dimensions(s));
        baseDynamic.push_back(lhs.isDynamicDimension(s));
    }
    Shape base = makeArray(lhs.elementType(), baseDims, baseDynamic);
    HLO_ASSIGN_OR_RETURN(Shape windowOutput,
                         inferWindowOutputShape(instruction, base, window, lhs.elementType()));
    std::vector<int64_t> dims(static_cast<size_t>(rank));
    std::vector<bool> dynamic(static_cast<size_t>(rank));
    dims[static_cast<size_t>(d.outputBatchDimension)] =
        inputBatch == Shape::kUnboundedSize ? inputBatch : inputBatch / bgc;
    dynamic[static_cast<size_t>(d.outputBatchDimension)] = lhs.isDynamicDimension(d.inputBatchDimension);
    dims[static_cast<size_t>(d.outputFeatureDimension)] = kernelOutputFeatures;
    dynamic[static_cast<size_t>(d.outputFeatureDimension)] =
        rhs.isDynamicDimension(d.kernelOutputFeatureDimension);
    for (size_t i = 0; i < spatial; ++i) {
        dims[static_cast<size_t>(d.outputSpatialDimensions[i])] =
            windowOutput.dimensions(static_cast<int64_t>(i));
        dynamic[static_cast<size_t>(d.outputSpatialDimensions[i])] =
            windowOutput.isDynamicDimension(static_cast<int64_t>(i));
    }
    return makeArray(resultTypeOr(instruction, lhs.elementType()), std::move(dims), dynamic);
}

namespace {


Shape reducerResultShape(const ProgramShape& reducer, std::span<const Shape> inputs,
                         const std::vector<int64_t>& dims, const std::vector<bool>& dynamic) {
    if (reducer.result.isTuple()) {
        std::vector<Shape> elements;
        for (const Shape& element : reducer.result.tupleShapes())
            elements.push_back(makeArray(element.elementType(), dims, dynamic));
        return Shape::makeTuple(std::move(elements));
    }
    (void)inputs;
    return makeArray(reducer.result.elementType(), dims, dynamic);
}

}  // namespace

StatusOr<Shape> inferReduce(const HloInstruction& instruction) {
    int64_t count = instruction.operandCount();
    if (count < 2 || count % 2 != 0) {
        return fail(instruction, "reduce expects an even number (>= 2) of operands: inputs then "
                                 "init values, found " +
                                     std::to_string(count));
    }
    int64_t n = count / 2;
    std::vector<const Shape*> initShapes;
    std::vector<PrimitiveType> inputTypes;
    const Shape& first = instruction.operand(0)->shape();
    for (int64_t i = 0; i < n; ++i) {
        const Shape& input = instruction.operand(i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, input, "input of reduce"));
        if (!sameDims(input, first)) {
            return fail(instruction, "all reduced tensors must have the same dimensions; tensor 0 "
                                     "has shape " +
                                         str(first) + ", tensor " + std::to_string(i) +
                                         " has shape " + str(input));
        }
        inputTypes.push_back(input.elementType());
        const Shape& init = instruction.operand(n + i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, init, "init value of reduce"));
        if (init.rank() != 0) {
            return fail(instruction, "reduce init value " + std::to_string(i) +
                                         " must be a scalar, got " + str(init));
        }
        initShapes.push_back(&init);
    }
    const std::vector<int64_t>& reduced = instruction.dimensions();
    for (int64_t d : reduced) {
        if (d < 0 || d >= first.rank()) {
            return fail(instruction, "reducing out-of-bounds dimension " + std::to_string(d) +
                                         " in shape " + str(first));
        }
    }
    if (!allUnique(reduced)) {
        return fail(instruction, "reduce dimensions are not unique: " + str(reduced));
    }
    HLO_ASSIGN_OR_RETURN(ProgramShape reducer, reducerProgram(instruction));
    HLO_RETURN_IF_ERROR(verifyReducerShape(instruction, reducer, initShapes, inputTypes, n));
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < first.rank(); ++i) {
        if (contains(reduced, i)) continue;
        dims.push_back(first.dimensions(i));
        dynamic.push_back(first.isDynamicDimension(i));
    }
    return reducerResultShape(reducer, {}, dims, dynamic);
}

StatusOr<Shape> inferReduceWindow(const HloInstruction& instruction) {
    int64_t count = instruction.operandCount();
    if (count < 2 || count % 2 != 0) {
        return fail(instruction, "reduce-window expects an even number (>= 2) of operands, found " +
                                     std::to_string(count));
    }
    int64_t n = count / 2;
    std::vector<const Shape*> initShapes;
    std::vector<PrimitiveType> inputTypes;
    const Shape& first = instruction.operand(0)->shape();
    for (int64_t i = 0; i < n; ++i) {
        const Shape& input = instruction.operand(i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, input, "input of reduce-window"));
        if (!sameDims(input, first)) {
            return fail(instruction, "reduce-window inputs must have the same dimensions: " +
                                         str(first) + " vs " + str(input));
        }
        inputTypes.push_back(input.elementType());
        const Shape& init = instruction.operand(n + i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, init, "init value of reduce-window"));
        if (init.rank() != 0) {
            return fail(instruction, "reduce-window init value must be a scalar, got " + str(init));
        }
        initShapes.push_back(&init);
    }
    HLO_ASSIGN_OR_RETURN(ProgramShape reducer, reducerProgram(instruction));
    HLO_RETURN_IF_ERROR(verifyReducerShape(instruction, reducer, initShapes, inputTypes, n));
    static const Window kNoWindow;
    const Window& window = instruction.window() ? *instruction.window() : kNoWindow;
    std::vector<Shape> outputs;
    for (int64_t i = 0; i < n; ++i) {
        PrimitiveType type = reducer.result.isTuple()
                                 ? reducer.result.tupleShape(i).elementType()
                                 : reducer.result.elementType();
        HLO_ASSIGN_OR_RETURN(Shape out, inferWindowOutputShape(instruction,
                                                               instruction.operand(i)->shape(),
                                                               window, type));
        outputs.push_back(std::move(out));
    }
    if (n == 1) return outputs[0];
    return Shape::makeTuple(std::move(outputs));
}

StatusOr<Shape> inferSelectAndScatter(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 3));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& source = instruction.operand(1)->shape();
    const Shape& init = instruction.operand(2)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of select-and-scatter"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, source, "source of select-and-scatter"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, init, "init value of select-and-scatter"));
    HLO_ASSIGN_OR_RETURN(ProgramShape select, reducerProgram(instruction, "select"));
    if (!select.result.isArray() || select.result.rank() != 0 ||
        select.result.elementType() != PrimitiveType::PRED) {
        return fail(instruction, "select function must return a scalar boolean, got " +
                                     str(select.result));
    }
    if (select.parameters.size() != 2) {
        return fail(instruction, "select function must take 2 parameters, but takes " +
                                     std::to_string(select.parameters.size()));
    }
    Shape element = Shape::makeScalar(operand.elementType());
    for (const Shape& p : select.parameters) {
        if (!compatibleIgnoringFp(p, element)) {
            return fail(instruction, "select function's parameters must be " + str(element) +
                                         ", got " + str(p));
        }
    }
    HLO_ASSIGN_OR_RETURN(ProgramShape scatter, reducerProgram(instruction, "scatter"));
    const Shape* inits[] = {&init};
    PrimitiveType types[] = {source.elementType()};
    HLO_RETURN_IF_ERROR(verifyReducerShape(instruction, scatter, inits, types, 1));
    static const Window kNoWindow;
    const Window& window = instruction.window() ? *instruction.window() : kNoWindow;
    HLO_ASSIGN_OR_RETURN(Shape windowed,
                         inferWindowOutputShape(instruction, operand, window, source.elementType()));
    if (!sameDims(windowed, source)) {
        return fail(instruction, "source shape " + str(source) +
                                     " does not match the shape of the window-reduced operand " +
                                     str(windowed));
    }
    return operand;
}

StatusOr<Shape> inferSort(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) return fail(instruction, "sort expects at least one operand");
    const Shape& first = instruction.operand(0)->shape();
    std::vector<Shape> shapes;
    for (const HloInstruction* operand : instruction.operands()) {
        const Shape& shape = operand->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of sort"));
        if (!sameDims(shape, first)) {
            return fail(instruction, "expected sort operands to have the same dimensions, got " +
                                         str(first) + " and " + str(shape));
        }
        shapes.push_back(shape);
    }
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "sort expects one dimension in dimensions=");
    }
    int64_t d = instruction.dimensions(0);
    if (d < 0 || d >= first.rank()) {
        return fail(instruction, "sort dimension " + std::to_string(d) +
                                     " is out of range for operand " + str(first));
    }
    HLO_ASSIGN_OR_RETURN(ProgramShape compare, reducerProgram(instruction));
    if (compare.parameters.size() != 2 * shapes.size()) {
        return fail(instruction, "sort comparator must take " + std::to_string(2 * shapes.size()) +
                                     " parameters, but takes " +
                                     std::to_string(compare.parameters.size()));
    }
    for (size_t i = 0; i < compare.parameters.size(); ++i) {
        const Shape& p = compare.parameters[i];
        PrimitiveType expected = shapes[i / 2].elementType();
        if (!p.isArray() || p.rank() != 0 || !sameElementTypeIgnoringFp(p.elementType(), expected)) {
            return fail(instruction, "sort comparator parameter " + std::to_string(i) +
                                         " must be a " + typeName(expected) + " scalar, got " +
                                         str(p));
        }
    }
    if (!compare.result.isArray() || compare.result.rank() != 0 ||
        compare.result.elementType() != PrimitiveType::PRED) {
        return fail(instruction, "sort comparator must return pred[], got " + str(compare.result));
    }
    if (shapes.size() == 1) return shapes[0];
    return Shape::makeTuple(std::move(shapes));
}

StatusOr<Shape> inferMap(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) return fail(instruction, "map expects at least one operand");
    const Shape& first = instruction.operand(0)->shape();
    for (const HloInstruction* operand : instruction.operands()) {
        HLO_RETURN_IF_ERROR(expectArray(instruction, operand->shape(), "operand of map"));
        if (!sameDims(operand->shape(), first)) {
            return fail(instruction, "map operands must have the same dimensions, got " +
                                         str(first) + " and " + str(operand->shape()));
        }
    }
    // XLA ignores map's dimensions= (it always maps over every dimension).
    HLO_ASSIGN_OR_RETURN(ProgramShape program, reducerProgram(instruction));
    if (program.parameters.size() != static_cast<size_t>(instruction.operandCount())) {
        return fail(instruction, "map applied to a function with " +
                                     std::to_string(program.parameters.size()) +
                                     " parameters, but " +
                                     std::to_string(instruction.operandCount()) +
                                     " operands were given");
    }
    if (!program.result.isArray() || program.result.rank() != 0) {
        return fail(instruction, "mapped computation's result has to be a scalar, got " +
                                     str(program.result));
    }
    for (size_t i = 0; i < program.parameters.size(); ++i) {
        const Shape& p = program.parameters[i];
        PrimitiveType type = instruction.operand(static_cast<int64_t>(i))->shape().elementType();
        if (!p.isArray() || p.rank() != 0) {
            return fail(instruction, "mapped computation's parameter has to be a scalar; got " +
                                         str(p));
        }
        if (!sameElementTypeIgnoringFp(p.elementType(), type)) {
            return fail(instruction, "mapped computation's parameter type " + typeName(p.elementType()) +
                                         " does not match the operand type " + typeName(type));
        }
    }
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < first.rank(); ++i) dynamic.push_back(first.isDynamicDimension(i));
    return makeArray(program.result.elementType(), first.dimensions(), dynamic);
}

StatusOr<Shape> inferFft(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of fft"));
    const HloExtraAttributes* extra = instruction.extra();
    std::string type = extra && extra->fftType ? *extra->fftType : "FFT";
    std::vector<int64_t> lengths = extra ? extra->fftLength : std::vector<int64_t>{};
    int64_t fftRank = static_cast<int64_t>(lengths.size());
    if (fftRank < 1 || fftRank > 3) {
        return fail(instruction, "FFT only supports ranks 1-3; got " + std::to_string(fftRank));
    }
    if (operand.rank() < fftRank) {
        return fail(instruction, "FFT of rank " + std::to_string(fftRank) +
                                     " requires an operand of at least that rank, got " +
                                     str(operand));
    }
    PrimitiveType et = operand.elementType();
    Shape result = operand;
    result.clearLayout();
    int64_t r = operand.rank();
    if (type == "FFT" || type == "IFFT") {
        if (!primitive_util::isComplex(et)) {
            return fail(instruction, type + " requires complex input type, found " + typeName(et));
        }
        return result;
    }
    if (type == "RFFT") {
        if (et != PrimitiveType::F32 && et != PrimitiveType::F64) {
            return fail(instruction, "RFFT requires f32 or f64 input type, found " + typeName(et));
        }
        for (int64_t i = 0; i < fftRank; ++i) {
            int64_t dim = r - fftRank + i;
            if (!dimEqual(operand.dimensions(dim), lengths[static_cast<size_t>(i)])) {
                return fail(instruction, "RFFT requires innermost dimensions match fft_length but "
                                         "dimension " +
                                             std::to_string(dim) + " is " +
                                             std::to_string(operand.dimensions(dim)) +
                                             " and should be " +
                                             std::to_string(lengths[static_cast<size_t>(i)]));
            }
        }
        result.setElementType(et == PrimitiveType::F32 ? PrimitiveType::C64 : PrimitiveType::C128);
        if (lengths.back() != 0)
            result.mutableDimensions()[static_cast<size_t>(r - 1)] = lengths.back() / 2 + 1;
        return result;
    }
    if (type == "IRFFT") {
        if (!primitive_util::isComplex(et)) {
            return fail(instruction, "IRFFT requires complex input type, found " + typeName(et));
        }
        for (int64_t i = 0; i + 1 < fftRank; ++i) {
            int64_t dim = r - fftRank + i;
            if (!dimEqual(operand.dimensions(dim), lengths[static_cast<size_t>(i)])) {
                return fail(instruction, "IRFFT requires all but one innermost dimensions match "
                                         "fft_length, but dimension " +
                                             std::to_string(dim) + " is " +
                                             std::to_string(operand.dimensions(dim)) +
                                             " and should be " +
                                             std::to_string(lengths[static_cast<size_t>(i)]));
            }
        }
        if (lengths.back() != 0 &&
            !dimEqual(operand.dimensions(r - 1), lengths.back() / 2 + 1)) {
            return fail(instruction, "IRFFT requires the innermost dimension to be fft_length/2+1 "
                                     "= " +
                                         std::to_string(lengths.back() / 2 + 1) + ", got " +
                                         std::to_string(operand.dimensions(r - 1)));
        }
        result.setElementType(primitive_util::complexComponentType(et));
        result.mutableDimensions()[static_cast<size_t>(r - 1)] = lengths.back();
        return result;
    }
    return fail(instruction, "unknown fft_type " + type);
}

StatusOr<Shape> inferTriangularSolve(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& a = instruction.operand(0)->shape();
    const Shape& b = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, a, "triangular-solve a"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, b, "triangular-solve b"));
    if (a.elementType() != b.elementType()) {
        return fail(instruction, "expected element types in shape to be identical for "
                                 "triangular-solve; got " +
                                     str(a) + " and " + str(b));
    }
    if (!isFloat(a.elementType()) && !primitive_util::isComplex(a.elementType())) {
        return fail(instruction, "expected element type to be floating or complex for "
                                 "triangular-solve; got " +
                                     typeName(a.elementType()));
    }
    if (a.rank() < 2 || a.rank() != b.rank()) {
        return fail(instruction, "the 'a' and 'b' arguments to triangular-solve must have equal "
                                 "rank >= 2; got " +
                                     str(a) + " and " + str(b));
    }
    int64_t r = a.rank();
    if (!dimEqual(a.dimensions(r - 1), a.dimensions(r - 2))) {
        return fail(instruction, "the two minor dimensions of 'a' must have equal size, got " +
                                     str(a));
    }
    bool leftSide = boolAttribute(instruction, "left_side").value_or(false);
    int64_t bDim = leftSide ? b.dimensions(r - 2) : b.dimensions(r - 1);
    if (!dimEqual(a.dimensions(r - 1), bDim)) {
        return fail(instruction, "the shared dimension of 'a' and 'b' does not match, got " +
                                     str(a) + " and " + str(b));
    }
    for (int64_t i = 0; i + 2 < r; ++i) {
        if (!dimEqual(a.dimensions(i), b.dimensions(i))) {
            return fail(instruction, "the leading batch dimensions of 'a' and 'b' must be equal, "
                                     "got " +
                                         str(a) + " and " + str(b));
        }
    }
    return b;
}

StatusOr<Shape> inferCholesky(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& a = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, a, "cholesky operand"));
    if (!isFloat(a.elementType()) && !primitive_util::isComplex(a.elementType())) {
        return fail(instruction, "expected element type to be floating or complex for cholesky; "
                                 "got " +
                                     typeName(a.elementType()));
    }
    if (a.rank() < 2 || !dimEqual(a.dimensions(a.rank() - 1), a.dimensions(a.rank() - 2))) {
        return fail(instruction, "the 'a' argument to cholesky must have rank >= 2 and square "
                                 "minor dimensions, got " +
                                     str(a));
    }
    return a;
}

StatusOr<Shape> inferBatchNorm(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    int64_t expected = opcode == HloOpcode::kBatchNormTraining ? 3 : 5;
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, expected));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of batch norm"));
    const HloExtraAttributes* extra = instruction.extra();
    if (!extra || !extra->featureIndex) return fail(instruction, "batch norm requires feature_index=");
    int64_t feature = *extra->featureIndex;
    if (feature < 0 || feature >= operand.rank()) {
        return fail(instruction, "batch norm feature_index " + std::to_string(feature) +
                                     " is out of range for operand " + str(operand));
    }
    if (!isFloat(operand.elementType())) {
        return fail(instruction, "the operand to batch norm must have a floating point element "
                                 "type, got " +
                                     typeName(operand.elementType()));
    }
    int64_t features = operand.dimensions(feature);
    // Operands other than 0 that are per-feature vectors (grad_output of
    // batch-norm-grad is operand-shaped).
    for (int64_t i = 1; i < instruction.operandCount(); ++i) {
        const Shape& s = instruction.operand(i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, s, "operand of batch norm"));
        if (!sameElementTypeIgnoringFp(s.elementType(), operand.elementType())) {
            return fail(instruction, "batch norm operand " + std::to_string(i) + " element type " +
                                         typeName(s.elementType()) +
                                         " does not match the operand's " +
                                         typeName(operand.elementType()));
        }
        bool operandShaped = opcode == HloOpcode::kBatchNormGrad && i == 4;
        if (operandShaped) {
            if (!sameDims(s, operand)) {
                return fail(instruction, "batch-norm-grad grad_output " + str(s) +
                                             " must have the operand's shape " + str(operand));
            }
            continue;
        }
        if (s.rank() != 1 || !dimEqual(s.dimensions(0), features)) {
            return fail(instruction, "batch norm operand " + std::to_string(i) + " " + str(s) +
                                         " must be a vector of the feature dimension size " +
                                         std::to_string(features));
        }
    }
    if (opcode == HloOpcode::kBatchNormInference) return operand;
    Shape vector = makeArray(operand.elementType(), {features},
                             {operand.isDynamicDimension(feature)});
    return Shape::makeTuple({operand, vector, vector});
}

}  // namespace hloscope::shape_inference_internal
