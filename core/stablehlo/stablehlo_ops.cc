// Lowering of StableHLO operations without regions (elementwise, data
// movement, dot/convolution/gather, dynamic-shape ops with constant shape
// operands, ...). Region-carrying, communication and call-like operations
// are in stablehlo_ops_regions.cc.
#include <unordered_map>

#include "core/stablehlo/stablehlo_literal.h"
#include "core/stablehlo/stablehlo_op_util.h"

namespace hloscope::stablehlo {
namespace {

// Splat constants with more elements than this become a scalar constant
// plus a broadcast instead of a fully written-out literal.
constexpr int64_t kSplatExpandLimit = 4096;

std::optional<ComparisonType> comparisonTypeFromName(std::string_view name) {
    if (name == "FLOAT") return ComparisonType::kFloat;
    if (name == "TOTALORDER") return ComparisonType::kTotalOrder;
    if (name == "SIGNED") return ComparisonType::kSigned;
    if (name == "UNSIGNED") return ComparisonType::kUnsigned;
    if (name == "NOTYPE" || name.empty()) return ComparisonType::kDefault;
    return std::nullopt;
}

ComparisonType defaultComparisonType(PrimitiveType type) {
    if (primitive_util::isFloatingPoint(type) || primitive_util::isComplex(type))
        return ComparisonType::kFloat;
    if (primitive_util::isSignedInteger(type)) return ComparisonType::kSigned;
    return ComparisonType::kUnsigned;
}

Values one(HloInstruction* instruction) { return Values{instruction}; }

StatusOr<Values> lowerSimple(OpContext& ctx, HloOpcode opcode, size_t arity) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, arity));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HloInstruction* instruction = ctx.b.add(opcode, ctx.resultShapes[0], ctx.operands);
    return one(instruction);
}

std::optional<std::vector<int64_t>> denseInts(const DenseData& dense, const Shape& shape) {
    if (!primitive_util::isInteger(shape.elementType()) || dense.hex || dense.complexPairs)
        return std::nullopt;
    int64_t count = shape.elementCount();
    if (count > 1024) return std::nullopt;
    std::vector<int64_t> values;
    for (const std::string& token : dense.values) {
        int64_t v = 0;
        if (!parseIntegerToken(token, v)) return std::nullopt;
        values.push_back(v);
    }
    if (values.size() == 1 && count != 1) values.assign(static_cast<size_t>(count), values[0]);
    if (static_cast<int64_t>(values.size()) != count) return std::nullopt;
    return values;
}

StatusOr<Values> lowerConstant(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 0));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    const MlirAttr* value = ctx.op.attr("value");
    if (value == nullptr) return opError(ctx, "constant needs a value (dense<...>)");
    const Shape& shape = ctx.resultShapes[0];
    if (!shape.isArray() || shape.isDynamic())
        return opError(ctx, "constant of non-static type " + shape.toString(false));
    if (value->kind != MlirAttr::Kind::kDense) {
        if (value->kind == MlirAttr::Kind::kOpaque && value->str == "dense_resource")
            return opUnimplemented(ctx, "dense_resource<...> constants (external blobs)");
        return opError(ctx, "constant value must be dense<...>, found " + value->text);
    }
    if (denseIsSplat(value->dense, shape) && shape.elementCount() > kSplatExpandLimit) {
        auto scalar = denseScalarText(value->dense, shape.elementType());
        if (!scalar.isOk()) return Status(scalar.status()).withLocation(ctx.importer.location(value->pos));
        HloInstruction* c = ctx.b.constant(Shape::makeScalar(shape.elementType()), *scalar);
        return one(ctx.b.broadcast(c, shape, {}));
    }
    auto text = denseToLiteralText(value->dense, shape);
    if (!text.isOk())
        return Status(text.status()).withLocation(ctx.importer.location(value->pos));
    HloInstruction* c = ctx.b.constant(shape, std::move(*text));
    if (auto ints = denseInts(value->dense, shape)) ctx.importer.recordConstantInts(c, *ints);
    return one(c);
}

StatusOr<Values> lowerConvert(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HloInstruction* x = ctx.operands[0];
    PrimitiveType to = ctx.resultShapes[0].elementType();
    // complex -> real keeps the real part (XLA's convert rejects it).
    if (primitive_util::isComplex(x->shape().elementType()) && !primitive_util::isComplex(to)) {
        Shape realShape = x->shape();
        realShape.setElementType(x->shape().elementType() == PrimitiveType::C64
                                     ? PrimitiveType::F32
                                     : PrimitiveType::F64);
        x = ctx.b.add(HloOpcode::kReal, realShape, {x});
        if (x->shape().elementType() == to) return one(x);
    }
    return one(ctx.b.add(HloOpcode::kConvert, ctx.resultShapes[0], {x}));
}

StatusOr<Values> lowerCompare(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    std::string direction = enumAttr(ctx, {"comparison_direction", "_pos0"});
    auto dir = parseComparisonDirection(direction);
    if (!dir) return opError(ctx, "compare needs a comparison direction (EQ, NE, LT, LE, GT, GE)");
    std::string typeName = enumAttr(ctx, {"compare_type", "_pos1"});
    auto type = comparisonTypeFromName(typeName);
    if (!type) return opError(ctx, "unknown comparison type '" + typeName + "'");
    if (*type == defaultComparisonType(ctx.operands[0]->shape().elementType()))
        type = ComparisonType::kDefault;
    HloInstruction* c = ctx.b.add(HloOpcode::kCompare, ctx.resultShapes[0], ctx.operands);
    c->mutableExtra().comparisonDirection = *dir;
    c->mutableExtra().comparisonType = *type;
    return one(c);
}

StatusOr<Values> lowerWithDimensions(OpContext& ctx, HloOpcode opcode, size_t arity,
                                     std::initializer_list<std::string_view> names) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, arity));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dims, intsAttr(ctx, names, std::nullopt));
    HloInstruction* instruction = ctx.b.add(opcode, ctx.resultShapes[0], ctx.operands);
    instruction->setDimensions(std::move(dims));
    return one(instruction);
}

StatusOr<Values> lowerBroadcastInDim(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         intsAttr(ctx, {"broadcast_dimensions", "dims"}, std::nullopt));
    if (dims.size() != static_cast<size_t>(ctx.operands[0]->shape().rank()))
        return opError(ctx, "broadcast_dimensions has " + std::to_string(dims.size()) +
                                " entries for an operand of rank " +
                                std::to_string(ctx.operands[0]->shape().rank()));
    for (int64_t d : dims)
        if (d < 0 || d >= ctx.resultShapes[0].rank())
            return opError(ctx, "broadcast dimension " + std::to_string(d) + " out of range");
    return one(broadcastInDim(ctx.b, ctx.operands[0], ctx.resultShapes[0], dims));
}

StatusOr<Values> lowerIota(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"iota_dimension", "dim"}, std::nullopt));
    HloInstruction* iota = ctx.b.add(HloOpcode::kIota, ctx.resultShapes[0], {});
    iota->setIotaDimension(dim);
    return one(iota);
}

StatusOr<Values> lowerConcatenate(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"dimension", "dim"}, std::nullopt));
    HloInstruction* c = ctx.b.add(HloOpcode::kConcatenate, ctx.resultShapes[0], ctx.operands);
    c->setDimensions({dim});
    return one(c);
}

Status makeSlice(OpContext& ctx, HloInstruction* slice, const std::vector<int64_t>& starts,
                 const std::vector<int64_t>& limits, const std::vector<int64_t>& strides) {
    if (starts.size() != limits.size() || starts.size() != strides.size())
        return opError(ctx, "slice start, limit and stride lists differ in length");
    std::vector<SliceDimension>& s = slice->mutableExtra().slice;
    for (size_t i = 0; i < starts.size(); ++i) s.push_back({starts[i], limits[i], strides[i]});
    return Status::ok();
}

StatusOr<Values> lowerSlice(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> starts, intsAttr(ctx, {"start_indices"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> limits, intsAttr(ctx, {"limit_indices"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                         intsAttr(ctx, {"strides"}, std::vector<int64_t>(starts.size(), 1)));
    HloInstruction* slice = ctx.b.add(HloOpcode::kSlice, ctx.resultShapes[0], ctx.operands);
    HLO_RETURN_IF_ERROR(makeSlice(ctx, slice, starts, limits, strides));
    return one(slice);
}

StatusOr<Values> lowerDynamicSlice(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    if (ctx.operands.empty()) return opError(ctx, "dynamic_slice needs an operand");
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, intsAttr(ctx, {"slice_sizes", "sizes"}, std::nullopt));
    HloInstruction* s = ctx.b.add(HloOpcode::kDynamicSlice, ctx.resultShapes[0], ctx.operands);
    s->mutableExtra().dynamicSliceSizes = std::move(sizes);
    return one(s);
}

Status setPadding(OpContext& ctx, HloInstruction* pad, const std::vector<int64_t>& low,
                  const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
    if (low.size() != high.size() || low.size() != interior.size())
        return opError(ctx, "pad low, high and interior lists differ in length");
    std::vector<PaddingDimension>& p = pad->mutableExtra().padding;
    for (size_t i = 0; i < low.size(); ++i) p.push_back({low[i], high[i], interior[i]});
    return Status::ok();
}

StatusOr<Values> lowerPad(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> low, intsAttr(ctx, {"edge_padding_low", "low"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> high, intsAttr(ctx, {"edge_padding_high", "high"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> interior,
                         intsAttr(ctx, {"interior_padding", "interior"}, std::vector<int64_t>(low.size(), 0)));
    HloInstruction* pad = ctx.b.add(HloOpcode::kPad, ctx.resultShapes[0], ctx.operands);
    HLO_RETURN_IF_ERROR(setPadding(ctx, pad, low, high, interior));
    return one(pad);
}

StatusOr<Values> lowerGetTupleElement(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(int64_t index, intAttr(ctx, {"index"}, std::nullopt));
    const Shape& tuple = ctx.operands[0]->shape();
    if (!tuple.isTuple() || index < 0 || index >= tuple.tupleCount())
        return opError(ctx, "get_tuple_element index " + std::to_string(index) + " out of range");
    return one(ctx.b.getTupleElement(ctx.operands[0], index));
}

StatusOr<Values> lowerDotGeneral(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    DotDimensionNumbers dn;
    if (const MlirAttr* a = ctx.op.attr("dot_dimension_numbers")) {
        dn.lhsBatchDimensions = fieldInts(*a, "lhs_batching_dimensions");
        dn.rhsBatchDimensions = fieldInts(*a, "rhs_batching_dimensions");
        dn.lhsContractingDimensions = fieldInts(*a, "lhs_contracting_dimensions");
        dn.rhsContractingDimensions = fieldInts(*a, "rhs_contracting_dimensions");
    } else {
        auto pair = [&](std::string_view name, std::vector<int64_t>& lhs,
                        std::vector<int64_t>& rhs) -> Status {
            const MlirAttr* a = ctx.op.attr(name);
            if (a == nullptr) return Status::ok();
            if (a->kind != MlirAttr::Kind::kArray || a->elements.size() != 2 ||
                !flattenInts(a->elements[0], lhs) || !flattenInts(a->elements[1], rhs))
                return opError(ctx, std::string(name) + " must be `[...] x [...]`");
            return Status::ok();
        };
        HLO_RETURN_IF_ERROR(pair("batching_dims", dn.lhsBatchDimensions, dn.rhsBatchDimensions));
        HLO_RETURN_IF_ERROR(
            pair("contracting_dims", dn.lhsContractingDimensions, dn.rhsContractingDimensions));
    }
    HloInstruction* dot = ctx.b.add(HloOpcode::kDot, ctx.resultShapes[0], ctx.operands);
    dot->mutableExtra().dotDimensionNumbers = std::move(dn);
    applyPrecisionConfig(ctx, dot);
    return one(dot);
}

StatusOr<Values> lowerDot(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    int64_t lhsRank = ctx.operands[0]->shape().rank();
    int64_t rhsRank = ctx.operands[1]->shape().rank();
    if (lhsRank < 1 || lhsRank > 2 || rhsRank < 1 || rhsRank > 2)
        return opError(ctx, "dot operands must have rank 1 or 2");
    DotDimensionNumbers dn;
    dn.lhsContractingDimensions = {lhsRank - 1};
    dn.rhsContractingDimensions = {0};
    HloInstruction* dot = ctx.b.add(HloOpcode::kDot, ctx.resultShapes[0], ctx.operands);
    dot->mutableExtra().dotDimensionNumbers = std::move(dn);
    applyPrecisionConfig(ctx, dot);
    return one(dot);
}

StatusOr<ConvolutionDimensionNumbers> convDimensionNumbers(const OpContext& ctx) {
    const MlirAttr* a = ctx.op.attr({"dimension_numbers", "dim_numbers"});
    if (a == nullptr) return opError(ctx, "convolution needs dimension numbers");
    if (a->kind == MlirAttr::Kind::kConvDims) return a->conv;
    ConvolutionDimensionNumbers dn;
    auto scalarField = [&](std::string_view name, int64_t& out) {
        std::vector<int64_t> v = fieldInts(*a, name);
        if (!v.empty()) out = v[0];
    };
    scalarField("input_batch_dimension", dn.inputBatchDimension);
    scalarField("input_feature_dimension", dn.inputFeatureDimension);
    dn.inputSpatialDimensions = fieldInts(*a, "input_spatial_dimensions");
    scalarField("kernel_input_feature_dimension", dn.kernelInputFeatureDimension);
    scalarField("kernel_output_feature_dimension", dn.kernelOutputFeatureDimension);
    dn.kernelSpatialDimensions = fieldInts(*a, "kernel_spatial_dimensions");
    scalarField("output_batch_dimension", dn.outputBatchDimension);
    scalarField("output_feature_dimension", dn.outputFeatureDimension);
    dn.outputSpatialDimensions = fieldInts(*a, "output_spatial_dimensions");
    return dn;
}

// Convolution (and dynamic_conv with a constant padding operand).
StatusOr<Values> lowerConvolution(OpContext& ctx, const std::vector<int64_t>* paddingOperand) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(ConvolutionDimensionNumbers dn, convDimensionNumbers(ctx));
    const Shape& kernel = ctx.operands[1]->shape();
    size_t spatial = dn.kernelSpatialDimensions.size();
    const MlirAttr* window = ctx.op.attr("window");
    auto windowInts = [&](std::string_view generic, std::string_view pretty,
                          int64_t fill) -> StatusOr<std::vector<int64_t>> {
        std::vector<int64_t> out;
        const MlirAttr* a = ctx.op.attr(generic);
        if (a == nullptr && window != nullptr) a = window->field(pretty);
        if (a == nullptr) return std::vector<int64_t>(spatial * (fill == -1 ? 2 : 1), fill == -1 ? 0 : fill);
        if (!flattenInts(*a, out)) return opError(ctx, "bad convolution attribute " + std::string(generic));
        return out;
    };
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> strides, windowInts("window_strides", "stride", 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> padding, windowInts("padding", "pad", -1));
    if (paddingOperand != nullptr) padding = *paddingOperand;
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> lhsDilation, windowInts("lhs_dilation", "lhs_dilate", 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> rhsDilation, windowInts("rhs_dilation", "rhs_dilate", 1));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> reversal, windowInts("window_reversal", "reverse", 0));
    if (strides.size() != spatial || padding.size() != 2 * spatial ||
        lhsDilation.size() != spatial || rhsDilation.size() != spatial || reversal.size() != spatial)
        return opError(ctx, "convolution window attributes do not match " +
                                std::to_string(spatial) + " spatial dimensions");
    Window w;
    for (size_t i = 0; i < spatial; ++i) {
        int64_t kd = dn.kernelSpatialDimensions[i];
        if (kd < 0 || kd >= kernel.rank()) return opError(ctx, "kernel spatial dimension out of range");
        WindowDimension d;
        d.size = kernel.dimensions(kd);
        d.stride = strides[i];
        d.paddingLow = padding[2 * i];
        d.paddingHigh = padding[2 * i + 1];
        d.baseDilation = lhsDilation[i];
        d.windowDilation = rhsDilation[i];
        d.windowReversal = reversal[i] != 0;
        w.dimensions.push_back(d);
    }
    HloInstruction* conv = ctx.b.add(HloOpcode::kConvolution, ctx.resultShapes[0],
                                     {ctx.operands[0], ctx.operands[1]});
    HloExtraAttributes& extra = conv->mutableExtra();
    extra.window = std::move(w);
    extra.convolutionDimensionNumbers = std::move(dn);
    HLO_ASSIGN_OR_RETURN(extra.featureGroupCount, intAttr(ctx, {"feature_group_count"}, 1));
    HLO_ASSIGN_OR_RETURN(extra.batchGroupCount, intAttr(ctx, {"batch_group_count"}, 1));
    applyPrecisionConfig(ctx, conv);
    return one(conv);
}

GatherDimensionNumbers gatherDimensionNumbers(const MlirAttr& a) {
    GatherDimensionNumbers dn;
    dn.offsetDims = fieldInts(a, "offset_dims");
    dn.collapsedSliceDims = fieldInts(a, "collapsed_slice_dims");
    dn.operandBatchingDims = fieldInts(a, "operand_batching_dims");
    dn.startIndicesBatchingDims = fieldInts(a, "start_indices_batching_dims");
    dn.startIndexMap = fieldInts(a, "start_index_map");
    std::vector<int64_t> ivd = fieldInts(a, "index_vector_dim");
    dn.indexVectorDim = ivd.empty() ? 0 : ivd[0];
    return dn;
}

StatusOr<Values> lowerGather(OpContext& ctx, const std::vector<int64_t>* sliceSizesOperand) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    const MlirAttr* dnAttr = ctx.op.attr("dimension_numbers");
    if (dnAttr == nullptr) return opError(ctx, "gather needs dimension_numbers");
    std::vector<int64_t> sliceSizes;
    if (sliceSizesOperand != nullptr) {
        sliceSizes = *sliceSizesOperand;
    } else {
        HLO_ASSIGN_OR_RETURN(sliceSizes, intsAttr(ctx, {"slice_sizes"}, std::nullopt));
    }
    HloInstruction* gather = ctx.b.add(HloOpcode::kGather, ctx.resultShapes[0],
                                       {ctx.operands[0], ctx.operands[1]});
    HloExtraAttributes& extra = gather->mutableExtra();
    extra.gatherDimensionNumbers = gatherDimensionNumbers(*dnAttr);
    extra.gatherSliceSizes = std::move(sliceSizes);
    extra.indicesAreSorted = boolAttr(ctx, {"indices_are_sorted"}, false);
    return one(gather);
}

StatusOr<Values> lowerReducePrecision(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    int64_t exponent = 0, mantissa = 0;
    if (const MlirAttr* format = ctx.op.attr("format")) {
        // `format = e5m10`
        std::string f = enumValue(format);
        size_t m = f.find('m');
        if (f.size() < 4 || f[0] != 'e' || m == std::string::npos ||
            !parseIntegerToken(f.substr(1, m - 1), exponent) ||
            !parseIntegerToken(f.substr(m + 1), mantissa))
            return opError(ctx, "bad reduce_precision format '" + f + "' (expected eXmY)");
    } else {
        HLO_ASSIGN_OR_RETURN(exponent, intAttr(ctx, {"exponent_bits"}, std::nullopt));
        HLO_ASSIGN_OR_RETURN(mantissa, intAttr(ctx, {"mantissa_bits"}, std::nullopt));
    }
    HloInstruction* r = ctx.b.add(HloOpcode::kReducePrecision, ctx.resultShapes[0], ctx.operands);
    r->mutableExtra().exponentBits = exponent;
    r->mutableExtra().mantissaBits = mantissa;
    return one(r);
}

StatusOr<Values> lowerFft(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    std::string type = enumAttr(ctx, {"fft_type", "type"});
    if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT")
        return opError(ctx, "fft needs fft_type FFT, IFFT, RFFT or IRFFT");
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> length, intsAttr(ctx, {"fft_length", "length"}, std::nullopt));
    HloInstruction* fft = ctx.b.add(HloOpcode::kFft, ctx.resultShapes[0], ctx.operands);
    fft->mutableExtra().fftType = type;
    fft->mutableExtra().fftLength = std::move(length);
    return one(fft);
}

StatusOr<Values> lowerRngBitGenerator(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 2));
    std::string algorithm = enumAttr(ctx, {"rng_algorithm", "algorithm"});
    std::string hlo = algorithm == "THREE_FRY" ? "rng_three_fry"
                      : algorithm == "PHILOX"  ? "rng_philox"
                                               : "rng_default";
    HloInstruction* rng = ctx.b.add(HloOpcode::kRngBitGenerator, resultShape(ctx), ctx.operands);
    rng->setAttribute("algorithm", hlo);
    return resultsOf(ctx, rng);
}

StatusOr<Values> lowerRng(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 3));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    std::string distribution = enumAttr(ctx, {"rng_distribution", "distribution"});
    HloInstruction* rng = ctx.b.add(HloOpcode::kRng, ctx.resultShapes[0],
                                    {ctx.operands[0], ctx.operands[1]});
    rng->mutableExtra().distribution = distribution == "NORMAL" ? "rng_normal" : "rng_uniform";
    return one(rng);
}

StatusOr<Values> lowerTriangularSolve(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HloInstruction* t = ctx.b.add(HloOpcode::kTriangularSolve, ctx.resultShapes[0], ctx.operands);
    std::string transpose = enumAttr(ctx, {"transpose_a"});
    if (transpose.empty()) transpose = "NO_TRANSPOSE";
    if (boolAttr(ctx, {"left_side"}, false)) t->setAttribute("left_side", "true");
    if (boolAttr(ctx, {"lower"}, false)) t->setAttribute("lower", "true");
    if (boolAttr(ctx, {"unit_diagonal"}, false)) t->setAttribute("unit_diagonal", "true");
    t->setAttribute("transpose_a", transpose);
    return one(t);
}

StatusOr<Values> lowerCholesky(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HloInstruction* c = ctx.b.add(HloOpcode::kCholesky, ctx.resultShapes[0], ctx.operands);
    if (boolAttr(ctx, {"lower"}, false)) c->setAttribute("lower", "true");
    return one(c);
}

StatusOr<Values> lowerBatchNorm(OpContext& ctx, HloOpcode opcode, size_t arity) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, arity));
    HloInstruction* bn = ctx.b.add(opcode, resultShape(ctx), ctx.operands);
    const MlirAttr* epsilon = ctx.op.attr("epsilon");
    if (epsilon == nullptr || !epsilon->isNumber()) return opError(ctx, "batch norm needs epsilon");
    HloExtraAttributes& extra = bn->mutableExtra();
    extra.epsilon = std::strtod(epsilon->number.c_str(), nullptr);
    extra.epsilonText = epsilon->number;
    HLO_ASSIGN_OR_RETURN(int64_t featureIndex, intAttr(ctx, {"feature_index"}, std::nullopt));
    extra.featureIndex = featureIndex;
    return resultsOf(ctx, bn);
}

StatusOr<Values> lowerSelect(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 3));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    if (ctx.operands[1]->shape().isTuple())
        return one(ctx.b.add(HloOpcode::kSelect, ctx.resultShapes[0], ctx.operands));
    return one(ctx.b.select(ctx.operands[0], ctx.operands[1], ctx.operands[2]));
}

StatusOr<Values> lowerSimpleNary(OpContext& ctx, HloOpcode opcode) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    return one(ctx.b.add(opcode, ctx.resultShapes[0], ctx.operands));
}

StatusOr<Values> lowerOptimizationBarrier(OpContext& ctx) {
    if (ctx.operands.size() == 1)
        return one(ctx.b.add(HloOpcode::kOptimizationBarrier, ctx.operands[0]->shape(), ctx.operands));
    HloInstruction* t = ctx.b.tuple(ctx.operands);
    HloInstruction* barrier = ctx.b.add(HloOpcode::kOptimizationBarrier, t->shape(), {t});
    return ctx.b.unpack(barrier);
}

StatusOr<Values> lowerGetDimensionSize(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"dimension", "dim"}, std::nullopt));
    HloInstruction* g = ctx.b.add(HloOpcode::kGetDimensionSize, ctx.resultShapes[0], ctx.operands);
    g->setDimensions({dim});
    return one(g);
}

// A dynamic-shape op whose shape operands are not constants and whose
// result is dynamic: kept as a custom call named after the op.
StatusOr<Values> passThroughDynamic(OpContext& ctx) {
    HloInstruction* call = ctx.b.add(HloOpcode::kCustomCall, resultShape(ctx), ctx.operands);
    call->mutableExtra().customCallTarget = ctx.op.name;
    for (const NamedAttr& a : ctx.op.attributes) {
        // Names HLO reserves for typed attributes cannot be kept verbatim.
        if (a.name.starts_with("_") || a.name.find('.') != std::string::npos ||
            HloInstruction::isTypedAttributeName(a.name))
            continue;
        call->setAttribute(a.name, verbatimValue(a.value));
    }
    return resultsOf(ctx, call);
}

const std::vector<int64_t>* constantOperand(OpContext& ctx, size_t i) {
    return i < ctx.operands.size() ? ctx.importer.constantInts(ctx.operands[i]) : nullptr;
}

StatusOr<Values> lowerDynamicOp(OpContext& ctx, std::string_view name) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    const Shape& result = ctx.resultShapes[0];
    bool staticResult = !result.isDynamic();
    if (name == "dynamic_broadcast_in_dim" && staticResult && !ctx.operands.empty()) {
        HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                             intsAttr(ctx, {"broadcast_dimensions", "dims"}, std::nullopt));
        if (dims.size() != static_cast<size_t>(ctx.operands[0]->shape().rank()))
            return opError(ctx, "broadcast_dimensions do not match the operand rank");
        return one(broadcastInDim(ctx.b, ctx.operands[0], result, dims));
    }
    if (name == "dynamic_reshape" && staticResult && !ctx.operands.empty())
        return one(ctx.b.reshape(ctx.operands[0], result));
    if (name == "dynamic_iota" && staticResult) {
        HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"iota_dimension", "dim"}, std::nullopt));
        HloInstruction* iota = ctx.b.add(HloOpcode::kIota, result, {});
        iota->setIotaDimension(dim);
        return one(iota);
    }
    if (name == "real_dynamic_slice" && ctx.operands.size() == 4) {
        const auto* starts = constantOperand(ctx, 1);
        const auto* limits = constantOperand(ctx, 2);
        const auto* strides = constantOperand(ctx, 3);
        if (starts && limits && strides) {
            HloInstruction* slice = ctx.b.add(HloOpcode::kSlice, result, {ctx.operands[0]});
            HLO_RETURN_IF_ERROR(makeSlice(ctx, slice, *starts, *limits, *strides));
            return one(slice);
        }
    }
    if (name == "dynamic_pad" && ctx.operands.size() == 5) {
        const auto* low = constantOperand(ctx, 2);
        const auto* high = constantOperand(ctx, 3);
        const auto* interior = constantOperand(ctx, 4);
        if (low && high && interior) {
            HloInstruction* pad =
                ctx.b.add(HloOpcode::kPad, result, {ctx.operands[0], ctx.operands[1]});
            HLO_RETURN_IF_ERROR(setPadding(ctx, pad, *low, *high, *interior));
            return one(pad);
        }
    }
    if (name == "dynamic_gather" && ctx.operands.size() == 3) {
        if (const auto* sizes = constantOperand(ctx, 2)) return lowerGather(ctx, sizes);
    }
    if (name == "dynamic_conv" && ctx.operands.size() == 3) {
        if (const auto* padding = constantOperand(ctx, 2)) return lowerConvolution(ctx, padding);
    }
    return passThroughDynamic(ctx);
}

struct SimpleOp {
    HloOpcode opcode;
    size_t arity;
};

const std::unordered_map<std::string_view, SimpleOp>& simpleOps() {
    static const std::unordered_map<std::string_view, SimpleOp> kOps = {
        {"abs", {HloOpcode::kAbs, 1}},
        {"cbrt", {HloOpcode::kCbrt, 1}},
        {"ceil", {HloOpcode::kCeil, 1}},
        {"cosine", {HloOpcode::kCos, 1}},
        {"count_leading_zeros", {HloOpcode::kClz, 1}},
        {"exponential", {HloOpcode::kExp, 1}},
        {"exponential_minus_one", {HloOpcode::kExpm1, 1}},
        {"floor", {HloOpcode::kFloor, 1}},
        {"imag", {HloOpcode::kImag, 1}},
        {"is_finite", {HloOpcode::kIsFinite, 1}},
        {"log", {HloOpcode::kLog, 1}},
        {"log_plus_one", {HloOpcode::kLog1p, 1}},
        {"logistic", {HloOpcode::kLogistic, 1}},
        {"negate", {HloOpcode::kNegate, 1}},
        {"not", {HloOpcode::kNot, 1}},
        {"popcnt", {HloOpcode::kPopulationCount, 1}},
        {"real", {HloOpcode::kReal, 1}},
        {"round_nearest_afz", {HloOpcode::kRoundNearestAfz, 1}},
        {"round_nearest_even", {HloOpcode::kRoundNearestEven, 1}},
        {"rsqrt", {HloOpcode::kRsqrt, 1}},
        {"sign", {HloOpcode::kSign, 1}},
        {"sine", {HloOpcode::kSin, 1}},
        {"sqrt", {HloOpcode::kSqrt, 1}},
        {"tan", {HloOpcode::kTan, 1}},
        {"tanh", {HloOpcode::kTanh, 1}},
        {"bitcast_convert", {HloOpcode::kBitcastConvert, 1}},
        {"reshape", {HloOpcode::kReshape, 1}},
        {"add", {HloOpcode::kAdd, 2}},
        {"and", {HloOpcode::kAnd, 2}},
        {"atan2", {HloOpcode::kAtan2, 2}},
        {"complex", {HloOpcode::kComplex, 2}},
        {"divide", {HloOpcode::kDivide, 2}},
        {"maximum", {HloOpcode::kMaximum, 2}},
        {"minimum", {HloOpcode::kMinimum, 2}},
        {"multiply", {HloOpcode::kMultiply, 2}},
        {"or", {HloOpcode::kOr, 2}},
        {"power", {HloOpcode::kPower, 2}},
        {"remainder", {HloOpcode::kRemainder, 2}},
        {"shift_left", {HloOpcode::kShiftLeft, 2}},
        {"shift_right_arithmetic", {HloOpcode::kShiftRightArithmetic, 2}},
        {"shift_right_logical", {HloOpcode::kShiftRightLogical, 2}},
        {"subtract", {HloOpcode::kSubtract, 2}},
        {"xor", {HloOpcode::kXor, 2}},
        {"dynamic_update_slice", {HloOpcode::kDynamicUpdateSlice, 0}},
    };
    return kOps;
}

StatusOr<Values> dispatch(OpContext& ctx, std::string_view name) {
    if (name == "bitcast_convert" && ctx.operands.size() == 1 && ctx.resultShapes.size() == 1) {
        // StableHLO's i1 is one bit wide, XLA's pred one byte: a bitcast
        // between pred and another width has no HLO equivalent.
        const PrimitiveType from = ctx.operands[0]->shape().elementType();
        const PrimitiveType to = ctx.resultShapes[0].elementType();
        if (from != to && (from == PrimitiveType::PRED || to == PrimitiveType::PRED))
            return opUnimplemented(ctx, "bitcast_convert between i1 and " +
                                            std::string(primitive_util::name(
                                                from == PrimitiveType::PRED ? to : from)) +
                                            " (StableHLO's i1 is 1 bit wide, HLO's pred 8 bits)");
    }
    if (auto it = simpleOps().find(name); it != simpleOps().end()) {
        if (it->second.arity == 0) return lowerSimpleNary(ctx, it->second.opcode);
        return lowerSimple(ctx, it->second.opcode, it->second.arity);
    }
    if (name == "constant") return lowerConstant(ctx);
    if (name == "convert") return lowerConvert(ctx);
    if (name == "compare") return lowerCompare(ctx);
    if (name == "select") return lowerSelect(ctx);
    if (name == "clamp") return lowerSimple(ctx, HloOpcode::kClamp, 3);
    if (name == "broadcast_in_dim") return lowerBroadcastInDim(ctx);
    if (name == "broadcast") {
        // Deprecated `broadcast` prepends `broadcast_sizes` dimensions.
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        int64_t rank = ctx.operands[0]->shape().rank();
        int64_t resultRank = ctx.resultShapes[0].rank();
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < rank; ++i) dims.push_back(resultRank - rank + i);
        return one(ctx.b.broadcast(ctx.operands[0], ctx.resultShapes[0], dims));
    }
    if (name == "transpose")
        return lowerWithDimensions(ctx, HloOpcode::kTranspose, 1, {"permutation", "dims"});
    if (name == "reverse")
        return lowerWithDimensions(ctx, HloOpcode::kReverse, 1, {"dimensions", "dims"});
    if (name == "iota") return lowerIota(ctx);
    if (name == "concatenate") return lowerConcatenate(ctx);
    if (name == "slice") return lowerSlice(ctx);
    if (name == "dynamic_slice") return lowerDynamicSlice(ctx);
    if (name == "pad") return lowerPad(ctx);
    if (name == "tuple") {
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        return one(ctx.b.tuple(ctx.operands));
    }
    if (name == "get_tuple_element") return lowerGetTupleElement(ctx);
    if (name == "dot_general") return lowerDotGeneral(ctx);
    if (name == "dot") return lowerDot(ctx);
    if (name == "convolution") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        return lowerConvolution(ctx, nullptr);
    }
    if (name == "gather") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        return lowerGather(ctx, nullptr);
    }
    if (name == "reduce_precision") return lowerReducePrecision(ctx);
    if (name == "fft") return lowerFft(ctx);
    if (name == "rng_bit_generator") return lowerRngBitGenerator(ctx);
    if (name == "rng") return lowerRng(ctx);
    if (name == "triangular_solve") return lowerTriangularSolve(ctx);
    if (name == "cholesky") return lowerCholesky(ctx);
    if (name == "batch_norm_training") return lowerBatchNorm(ctx, HloOpcode::kBatchNormTraining, 3);
    if (name == "batch_norm_inference") return lowerBatchNorm(ctx, HloOpcode::kBatchNormInference, 5);
    if (name == "batch_norm_grad") return lowerBatchNorm(ctx, HloOpcode::kBatchNormGrad, 5);
    if (name == "optimization_barrier") return lowerOptimizationBarrier(ctx);
    if (name == "get_dimension_size") return lowerGetDimensionSize(ctx);
    if (name == "after_all" || name == "create_token") {
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        return one(ctx.b.add(HloOpcode::kAfterAll, Shape::makeToken(), ctx.operands));
    }
    if (name == "replica_id") return lowerSimple(ctx, HloOpcode::kReplicaId, 0);
    if (name == "partition_id") return lowerSimple(ctx, HloOpcode::kPartitionId, 0);
    if (name == "dynamic_broadcast_in_dim" || name == "dynamic_reshape" || name == "dynamic_iota" ||
        name == "real_dynamic_slice" || name == "dynamic_pad" || name == "dynamic_gather" ||
        name == "dynamic_conv")
        return lowerDynamicOp(ctx, name);
    if (name == "uniform_quantize" || name == "uniform_dequantize")
        return opUnimplemented(ctx, "quantized operation '" + ctx.op.name +
                                        "' (quantized types are not supported)");
    if (auto result = lowerRegionOp(ctx, name)) return std::move(*result);
    return opUnimplemented(ctx, "unsupported operation '" + ctx.op.name + "'");
}

}  // namespace

StatusOr<std::vector<HloInstruction*>> lowerStableHloOp(OpContext& ctx) {
    std::string_view name = ctx.op.name;
    if (name.starts_with("stablehlo.")) {
        name.remove_prefix(10);
    } else if (name.starts_with("mhlo.")) {
        name.remove_prefix(5);
    } else if (name == "func.call" || name == "call") {
        name = "call";
    } else if (!name.starts_with("check.") && !name.starts_with("interpreter.")) {
        return opUnimplemented(ctx, "unsupported operation '" + ctx.op.name + "'");
    }
    HLO_ASSIGN_OR_RETURN(Values values, dispatch(ctx, name));
    if (!values.empty()) {
        HloInstruction* primary = values.front();
        if (primary->opcode() == HloOpcode::kGetTupleElement && primary->operandCount() == 1)
            primary = primary->operand(0);
        applyCommonAttributes(ctx, primary);
    }
    return values;
}

}  // namespace hloscope::stablehlo
