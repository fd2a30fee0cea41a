// Lowering of StableHLO operations that carry regions or call functions
// (reduce, sort, scatter, while, if, case, collectives, custom_call,
// func.call, composite) and of the interpreter's check / interpreter ops.
#include <algorithm>

#include "core/stablehlo/stablehlo_literal.h"
#include "core/stablehlo/stablehlo_op_util.h"

namespace hloscope::stablehlo {
namespace {

Status expectRegions(const OpContext& ctx, size_t count) {
    if (ctx.op.regions.size() == count) return Status::ok();
    return opError(ctx, "expected " + std::to_string(count) + " region(s), found " +
                            std::to_string(ctx.op.regions.size()));
}

StatusOr<HloComputation*> scalarRegion(OpContext& ctx, size_t index) {
    RegionSpec spec;
    return ctx.importer.lowerRegion(ctx.op.regions[index], ctx.scope, spec);
}

std::vector<int64_t> ones(int64_t n) { return std::vector<int64_t>(static_cast<size_t>(n), 1); }

void applyChannelAndGroups(const OpContext& ctx, HloInstruction* instruction) {
    if (const MlirAttr* channel = ctx.op.attr("channel_handle")) {
        std::vector<int64_t> handle = fieldInts(*channel, "handle");
        if (!handle.empty() && handle[0] > 0)
            instruction->setAttribute("channel_id", std::to_string(handle[0]));
    }
    if (const MlirAttr* groups = ctx.op.attr("replica_groups"))
        instruction->setAttribute("replica_groups", intMatrixText(*groups));
    if (boolAttr(ctx, {"use_global_device_ids"}, false))
        instruction->setAttribute("use_global_device_ids", "true");
}

StatusOr<Values> lowerReduce(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    if (ctx.operands.empty() || ctx.operands.size() % 2 != 0)
        return opError(ctx, "reduce needs inputs and as many init values");
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dims, intsAttr(ctx, {"dimensions"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(HloComputation * reducer, scalarRegion(ctx, 0));
    HloInstruction* reduce = ctx.b.add(HloOpcode::kReduce, resultShape(ctx), ctx.operands);
    reduce->setDimensions(std::move(dims));
    reduce->setCalledComputation("to_apply", reducer);
    return resultsOf(ctx, reduce);
}

StatusOr<Window> windowFromAttributes(OpContext& ctx, int64_t rank) {
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                         intsAttr(ctx, {"window_dimensions"}, ones(rank)));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> strides, intsAttr(ctx, {"window_strides"}, ones(rank)));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> base, intsAttr(ctx, {"base_dilations"}, ones(rank)));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                         intsAttr(ctx, {"window_dilations"}, ones(rank)));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                         intsAttr(ctx, {"padding"}, std::vector<int64_t>(2 * static_cast<size_t>(rank), 0)));
    size_t n = static_cast<size_t>(rank);
    if (sizes.size() != n || strides.size() != n || base.size() != n || dilations.size() != n ||
        padding.size() != 2 * n)
        return opError(ctx, "window attributes do not match operand rank " + std::to_string(rank));
    Window window;
    for (size_t i = 0; i < n; ++i) {
        WindowDimension d;
        d.size = sizes[i];
        d.stride = strides[i];
        d.baseDilation = base[i];
        d.windowDilation = dilations[i];
        d.paddingLow = padding[2 * i];
        d.paddingHigh = padding[2 * i + 1];
        window.dimensions.push_back(d);
    }
    return window;
}

StatusOr<Values> lowerReduceWindow(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    if (ctx.operands.empty() || ctx.operands.size() % 2 != 0)
        return opError(ctx, "reduce_window needs inputs and as many init values");
    HLO_ASSIGN_OR_RETURN(Window window, windowFromAttributes(ctx, ctx.operands[0]->shape().rank()));
    HLO_ASSIGN_OR_RETURN(HloComputation * reducer, scalarRegion(ctx, 0));
    HloInstruction* rw = ctx.b.add(HloOpcode::kReduceWindow, resultShape(ctx), ctx.operands);
    rw->mutableExtra().window = std::move(window);
    rw->setCalledComputation("to_apply", reducer);
    return resultsOf(ctx, rw);
}

StatusOr<Values> lowerSelectAndScatter(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 2));
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 3));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(Window window, windowFromAttributes(ctx, ctx.operands[0]->shape().rank()));
    HLO_ASSIGN_OR_RETURN(HloComputation * select, scalarRegion(ctx, 0));
    HLO_ASSIGN_OR_RETURN(HloComputation * scatter, scalarRegion(ctx, 1));
    HloInstruction* s = ctx.b.add(HloOpcode::kSelectAndScatter, ctx.resultShapes[0], ctx.operands);
    s->mutableExtra().window = std::move(window);
    s->setCalledComputation("select", select);
    s->setCalledComputation("scatter", scatter);
    return Values{s};
}

StatusOr<Values> lowerScatter(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    if (ctx.operands.size() < 3 || ctx.operands.size() % 2 != 1)
        return opError(ctx, "scatter needs inputs, indices and as many updates as inputs");
    const MlirAttr* dnAttr = ctx.op.attr("scatter_dimension_numbers");
    if (dnAttr == nullptr) return opError(ctx, "scatter needs scatter_dimension_numbers");
    ScatterDimensionNumbers dn;
    dn.updateWindowDims = fieldInts(*dnAttr, "update_window_dims");
    dn.insertedWindowDims = fieldInts(*dnAttr, "inserted_window_dims");
    dn.inputBatchingDims = fieldInts(*dnAttr, "input_batching_dims");
    dn.scatterIndicesBatchingDims = fieldInts(*dnAttr, "scatter_indices_batching_dims");
    dn.scatterDimsToOperandDims = fieldInts(*dnAttr, "scatter_dims_to_operand_dims");
    std::vector<int64_t> ivd = fieldInts(*dnAttr, "index_vector_dim");
    dn.indexVectorDim = ivd.empty() ? 0 : ivd[0];
    HLO_ASSIGN_OR_RETURN(HloComputation * update, scalarRegion(ctx, 0));
    HloInstruction* s = ctx.b.add(HloOpcode::kScatter, resultShape(ctx), ctx.operands);
    HloExtraAttributes& extra = s->mutableExtra();
    extra.scatterDimensionNumbers = std::move(dn);
    extra.indicesAreSorted = boolAttr(ctx, {"indices_are_sorted"}, false);
    extra.uniqueIndices = boolAttr(ctx, {"unique_indices"}, false);
    s->setCalledComputation("to_apply", update);
    return resultsOf(ctx, s);
}

StatusOr<Values> lowerSort(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    if (ctx.operands.empty()) return opError(ctx, "sort needs operands");
    int64_t rank = ctx.operands[0]->shape().rank();
    HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"dimension"}, -1));
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
        return opError(ctx, "sort dimension out of range");
    HLO_ASSIGN_OR_RETURN(HloComputation * comparator, scalarRegion(ctx, 0));
    HloInstruction* sort = ctx.b.add(HloOpcode::kSort, resultShape(ctx), ctx.operands);
    sort->setDimensions({dim});
    if (boolAttr(ctx, {"is_stable"}, false)) sort->mutableExtra().isStable = true;
    sort->setCalledComputation("to_apply", comparator);
    return resultsOf(ctx, sort);
}

StatusOr<Values> lowerMap(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HLO_ASSIGN_OR_RETURN(HloComputation * fn, scalarRegion(ctx, 0));
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dims, intsAttr(ctx, {"dimensions"}, std::nullopt));
    HloInstruction* map = ctx.b.add(HloOpcode::kMap, ctx.resultShapes[0], ctx.operands);
    map->setDimensions(std::move(dims));
    map->setCalledComputation("to_apply", fn);
    return Values{map};
}

StatusOr<Values> lowerWhile(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 2));
    RegionSpec spec;
    spec.tupleParameter = true;
    HLO_RETURN_IF_ERROR(ctx.importer.resolveCaptures({&ctx.op.regions[0], &ctx.op.regions[1]},
                                                     ctx.op.pos, ctx.scope, ctx.b, spec));
    std::vector<HloInstruction*> carried = ctx.operands;
    carried.insert(carried.end(), spec.captureValues.begin(), spec.captureValues.end());
    if (carried.empty()) return opError(ctx, "while without operands");
    HloInstruction* init = carried.size() == 1 ? carried[0] : ctx.b.tuple(carried);
    HLO_ASSIGN_OR_RETURN(HloComputation * cond,
                         ctx.importer.lowerRegion(ctx.op.regions[0], ctx.scope, spec));
    spec.passCapturesThrough = true;
    HLO_ASSIGN_OR_RETURN(HloComputation * body,
                         ctx.importer.lowerRegion(ctx.op.regions[1], ctx.scope, spec));
    HloInstruction* loop = ctx.b.add(HloOpcode::kWhile, init->shape(), {init});
    loop->setCalledComputation("condition", cond);
    loop->setCalledComputation("body", body);
    if (carried.size() == 1) return Values{loop};
    Values results;
    for (size_t i = 0; i < ctx.resultShapes.size(); ++i)
        results.push_back(ctx.b.getTupleElement(loop, static_cast<int64_t>(i)));
    return results;
}

// if / case: each branch receives the values it uses from outside as its
// operand: the value itself when there is one, else a tuple of them (as
// XLA's CreateTupleIfMultipleOps does).
StatusOr<Values> lowerConditional(OpContext& ctx, bool isIf) {
    if (ctx.operands.size() != 1) return opError(ctx, "expected one predicate/index operand");
    if (isIf) HLO_RETURN_IF_ERROR(expectRegions(ctx, 2));
    if (ctx.op.regions.empty()) return opError(ctx, "case needs at least one branch");
    std::vector<HloInstruction*> operands = {ctx.operands[0]};
    std::vector<HloComputation*> branches;
    for (const Region& region : ctx.op.regions) {
        RegionSpec spec;
        spec.tupleParameter = true;
        spec.nameHint = "region";
        HLO_RETURN_IF_ERROR(ctx.importer.resolveCaptures({&region}, ctx.op.pos, ctx.scope, ctx.b, spec));
        operands.push_back(spec.captureValues.size() == 1 ? spec.captureValues[0]
                                                          : ctx.b.tuple(spec.captureValues));
        if (!region.blocks.empty() && !region.blocks.front().args.empty())
            return opError(ctx, "branch regions take no arguments");
        HLO_ASSIGN_OR_RETURN(HloComputation * branch, ctx.importer.lowerRegion(region, ctx.scope, spec));
        branches.push_back(branch);
    }
    HloInstruction* cond = ctx.b.add(HloOpcode::kConditional, resultShape(ctx), operands);
    if (isIf) {
        cond->setCalledComputation("true_computation", branches[0]);
        cond->setCalledComputation("false_computation", branches[1]);
    } else {
        cond->setCalledComputationList("branch_computations", branches);
    }
    return resultsOf(ctx, cond);
}

StatusOr<Values> lowerAllReduceLike(OpContext& ctx, HloOpcode opcode) {
    HLO_RETURN_IF_ERROR(expectRegions(ctx, 1));
    HLO_ASSIGN_OR_RETURN(HloComputation * reducer, scalarRegion(ctx, 0));
    HloInstruction* r = ctx.b.add(opcode, resultShape(ctx), ctx.operands);
    applyChannelAndGroups(ctx, r);
    if (opcode == HloOpcode::kReduceScatter) {
        HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"scatter_dimension"}, std::nullopt));
        r->setDimensions({dim});
    }
    r->setCalledComputation("to_apply", reducer);
    return resultsOf(ctx, r);
}

StatusOr<Values> lowerAllGather(OpContext& ctx) {
    HLO_ASSIGN_OR_RETURN(int64_t dim, intAttr(ctx, {"all_gather_dim"}, std::nullopt));
    HloInstruction* g = ctx.b.add(HloOpcode::kAllGather, resultShape(ctx), ctx.operands);
    applyChannelAndGroups(ctx, g);
    g->setDimensions({dim});
    return resultsOf(ctx, g);
}

// XlaBuilder::AllToAll: an all-to-all along the split dimension, then a
// reshape/transpose/reshape moving the split chunks to the concat dimension.
// Variadic all_to_all is lowered operand by operand (the operands are
// exchanged independently).
StatusOr<HloInstruction*> allToAllOne(OpContext& ctx, HloInstruction* operand, const Shape& result,
                                      int64_t split, int64_t concat, int64_t count) {
    const Shape& in = operand->shape();
    int64_t rank = in.rank();
    if (split < 0 || split >= rank || concat < 0 || concat >= rank || count <= 0 ||
        in.dimensions(split) % count != 0)
        return opError(ctx, "bad all_to_all split/concat dimensions or split_count");
    HloInstruction* a2a = ctx.b.add(HloOpcode::kAllToAll, in, {operand});
    applyChannelAndGroups(ctx, a2a);
    a2a->setDimensions({split});
    if (split == concat) return a2a;
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < rank; ++i) {
        if (i != split) {
            sizes.push_back(in.dimensions(i));
            continue;
        }
        sizes.push_back(count);
        sizes.push_back(in.dimensions(i) / count);
    }
    HloInstruction* reshaped = ctx.b.reshape(a2a, Shape(in.elementType(), sizes));
    std::vector<int64_t> permutation;
    for (int64_t i = 0; i < rank; ++i) {
        int64_t after = i >= split ? i + 1 : i;
        if (i == concat) permutation.push_back(split);
        permutation.push_back(after);
    }
    std::vector<int64_t> transposedSizes;
    for (int64_t p : permutation) transposedSizes.push_back(sizes[static_cast<size_t>(p)]);
    HloInstruction* transposed =
        ctx.b.add(HloOpcode::kTranspose, Shape(in.elementType(), transposedSizes), {reshaped});
    transposed->setDimensions(permutation);
    return ctx.b.reshape(transposed, result);
}

StatusOr<Values> lowerAllToAll(OpContext& ctx) {
    if (ctx.operands.empty() || ctx.operands.size() != ctx.resultShapes.size())
        return opError(ctx, "all_to_all needs as many results as operands");
    HLO_ASSIGN_OR_RETURN(int64_t split, intAttr(ctx, {"split_dimension"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(int64_t concat, intAttr(ctx, {"concat_dimension"}, std::nullopt));
    HLO_ASSIGN_OR_RETURN(int64_t count, intAttr(ctx, {"split_count"}, std::nullopt));
    Values results;
    for (size_t i = 0; i < ctx.operands.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(HloInstruction * r, allToAllOne(ctx, ctx.operands[i], ctx.resultShapes[i],
                                                             split, concat, count));
        results.push_back(r);
    }
    return results;
}

StatusOr<Values> lowerCollectivePermute(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    HloInstruction* p = ctx.b.add(HloOpcode::kCollectivePermute, ctx.resultShapes[0], ctx.operands);
    applyChannelAndGroups(ctx, p);
    if (const MlirAttr* pairs = ctx.op.attr("source_target_pairs"))
        p->setAttribute("source_target_pairs", intMatrixText(*pairs));
    return Values{p};
}

StatusOr<Values> lowerCollectiveBroadcast(OpContext& ctx) {
    HloInstruction* p = ctx.b.add(HloOpcode::kCollectiveBroadcast, resultShape(ctx), ctx.operands);
    applyChannelAndGroups(ctx, p);
    // The interpreter's dynamic-root extension (an extra root operand).
    if (boolAttr(ctx, {"has_dynamic_root"}, false)) p->setAttribute("has_dynamic_root", "true");
    return resultsOf(ctx, p);
}

StatusOr<Values> lowerInfeed(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    if (ctx.resultShapes.empty()) return opError(ctx, "infeed needs a token result");
    std::vector<Shape> data(ctx.resultShapes.begin(), ctx.resultShapes.end() - 1);
    Shape shape = Shape::makeTuple({Shape::makeTuple(data), Shape::makeToken()});
    HloInstruction* infeed = ctx.b.add(HloOpcode::kInfeed, shape, ctx.operands);
    if (const MlirAttr* config = ctx.op.attr("infeed_config");
        config != nullptr && config->kind == MlirAttr::Kind::kString && !config->str.empty())
        infeed->setAttribute("infeed_config", quoteString(config->str));
    Values results;
    if (!data.empty()) results = ctx.b.unpack(ctx.b.getTupleElement(infeed, 0));
    results.push_back(ctx.b.getTupleElement(infeed, 1));
    return results;
}

StatusOr<Values> lowerOutfeed(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    if (ctx.operands.empty()) return opError(ctx, "outfeed needs a token operand");
    std::vector<HloInstruction*> data(ctx.operands.begin(), ctx.operands.end() - 1);
    HloInstruction* t = ctx.b.tuple(data);
    HloInstruction* outfeed =
        ctx.b.add(HloOpcode::kOutfeed, Shape::makeToken(), {t, ctx.operands.back()});
    outfeed->setAttribute("outfeed_shape", t->shape().toString());
    if (const MlirAttr* config = ctx.op.attr("outfeed_config");
        config != nullptr && config->kind == MlirAttr::Kind::kString && !config->str.empty())
        outfeed->setAttribute("outfeed_config", quoteString(config->str));
    return Values{outfeed};
}

StatusOr<std::vector<HloComputation*>> symbolComputations(OpContext& ctx, const MlirAttr& attr) {
    std::vector<HloComputation*> out;
    if (attr.kind == MlirAttr::Kind::kSymbol) {
        HLO_ASSIGN_OR_RETURN(HloComputation * c, ctx.importer.functionComputation(attr.str, attr.pos));
        out.push_back(c);
        return out;
    }
    if (attr.kind != MlirAttr::Kind::kArray)
        return ctx.importer.invalidAt(attr.pos, "expected function symbol(s), found " + attr.text);
    for (const MlirAttr& e : attr.elements) {
        HLO_ASSIGN_OR_RETURN(std::vector<HloComputation*> nested, symbolComputations(ctx, e));
        for (HloComputation* c : nested)
            if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
    return out;
}

StatusOr<Values> lowerCustomCall(OpContext& ctx) {
    std::string target;
    if (const MlirAttr* t = ctx.op.attr("call_target_name"))
        target = t->str;
    else if (const MlirAttr* t = ctx.op.attr("callee"))
        target = t->str;
    if (target.empty()) return opError(ctx, "custom_call needs a call target");
    HloInstruction* call = ctx.b.add(HloOpcode::kCustomCall, resultShape(ctx), ctx.operands);
    call->mutableExtra().customCallTarget = target;
    if (boolAttr(ctx, {"has_side_effect"}, false))
        call->setAttribute("custom_call_has_side_effect", "true");
    if (const MlirAttr* config = ctx.op.attr({"backend_config", "mhlo.backend_config"})) {
        if (config->kind == MlirAttr::Kind::kString) {
            if (!config->str.empty()) call->setAttribute("backend_config", quoteString(config->str));
        } else if (config->kind == MlirAttr::Kind::kDict) {
            call->setAttribute("backend_config", config->text);
        }
    }
    if (const MlirAttr* version = ctx.op.attr("api_version")) {
        std::vector<int64_t> v;
        std::string name = enumValue(version);
        if (name.empty() && flattenInts(*version, v) && v.size() == 1) {
            static const char* kNames[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                           "API_VERSION_STATUS_RETURNING",
                                           "API_VERSION_STATUS_RETURNING_UNIFIED",
                                           "API_VERSION_TYPED_FFI"};
            if (v[0] >= 0 && v[0] <= 4) name = kNames[v[0]];
        }
        if (!name.empty() && name != "API_VERSION_ORIGINAL" && name != "API_VERSION_UNSPECIFIED")
            call->setAttribute("api_version", name);
    }
    if (const MlirAttr* called = ctx.op.attr("called_computations")) {
        HLO_ASSIGN_OR_RETURN(std::vector<HloComputation*> comps, symbolComputations(ctx, *called));
        if (!comps.empty()) call->setCalledComputationList("called_computations", comps);
    }
    return resultsOf(ctx, call);
}

// A call's arguments and result type must match the callee's signature (the
// verifier would reject the module otherwise, far from the op's position).
Status checkCallSignature(const OpContext& ctx, const HloComputation& fn, const Shape& result) {
    if (fn.parameterCount() != static_cast<int64_t>(ctx.operands.size()))
        return opError(ctx, "@" + fn.name() + " takes " + std::to_string(fn.parameterCount()) +
                                " argument(s); the call passes " +
                                std::to_string(ctx.operands.size()));
    for (size_t i = 0; i < ctx.operands.size(); ++i) {
        const Shape& expected = fn.parameter(static_cast<int64_t>(i))->shape();
        if (!expected.compatible(ctx.operands[i]->shape()))
            return opError(ctx, "argument " + std::to_string(i) + " is " +
                                    ctx.operands[i]->shape().toString() + " but @" + fn.name() +
                                    " takes " + expected.toString());
    }
    if (fn.root() != nullptr && !fn.root()->shape().compatible(result))
        return opError(ctx, "the call's result type " + result.toString() + " differs from @" +
                                fn.name() + "'s " + fn.root()->shape().toString());
    return Status::ok();
}

StatusOr<Values> lowerCall(OpContext& ctx) {
    const MlirAttr* callee = ctx.op.attr("callee");
    if (callee == nullptr || callee->kind != MlirAttr::Kind::kSymbol)
        return opError(ctx, "call needs a callee (@name)");
    HLO_ASSIGN_OR_RETURN(HloComputation * fn, ctx.importer.functionComputation(callee->str, callee->pos));
    HLO_RETURN_IF_ERROR(checkCallSignature(ctx, *fn, resultShape(ctx)));
    HloInstruction* call = ctx.b.add(HloOpcode::kCall, resultShape(ctx), ctx.operands);
    call->setCalledComputation("to_apply", fn);
    return resultsOf(ctx, call);
}

StatusOr<Values> lowerComposite(OpContext& ctx) {
    const MlirAttr* decomposition = ctx.op.attr("decomposition");
    if (decomposition == nullptr || decomposition->kind != MlirAttr::Kind::kSymbol)
        return opError(ctx, "composite needs decomposition = @function");
    HLO_ASSIGN_OR_RETURN(HloComputation * fn,
                         ctx.importer.functionComputation(decomposition->str, decomposition->pos));
    std::string name;
    if (const MlirAttr* n = ctx.op.attr({"name", "_str"})) name = n->str;
    HLO_ASSIGN_OR_RETURN(int64_t version, intAttr(ctx, {"version"}, 0));
    std::string attributes = "{}";
    if (const MlirAttr* a = ctx.op.attr("composite_attributes")) attributes = a->text;
    HLO_RETURN_IF_ERROR(checkCallSignature(ctx, *fn, resultShape(ctx)));
    HloInstruction* call = ctx.b.add(HloOpcode::kCall, resultShape(ctx), ctx.operands);
    call->setCalledComputation("to_apply", fn);
    call->setAttribute("is_composite", "true");
    call->setAttribute("frontend_attributes", "{composite.attributes=" + attributes +
                                                  ",composite.name=" + quoteString(name) +
                                                  ",composite.version=" +
                                                  quoteString(std::to_string(version)) + "}");
    return resultsOf(ctx, call);
}

// check.* and interpreter.* of the StableHLO interpreter's tests: custom
// calls named after the op, operands = the checked values (plus the expected
// constant for *_const), other attributes kept verbatim.
StatusOr<Values> lowerTestingOp(OpContext& ctx) {
    std::vector<HloInstruction*> operands = ctx.operands;
    if (const MlirAttr* value = ctx.op.attr("value")) {
        if (value->kind != MlirAttr::Kind::kDense)
            return opError(ctx, "expected value = dense<...>");
        Shape shape;
        if (value->type.kind == MlirType::Kind::kTensor) {
            HLO_ASSIGN_OR_RETURN(shape, ctx.importer.shapeOf(value->type, value->pos));
        } else if (!ctx.operands.empty()) {
            shape = ctx.operands[0]->shape();
        } else {
            return opError(ctx, "cannot tell the type of the expected value");
        }
        auto text = denseToLiteralText(value->dense, shape);
        if (!text.isOk()) return Status(text.status()).withLocation(ctx.importer.location(value->pos));
        operands.push_back(ctx.b.constant(shape, std::move(*text)));
    }
    HloInstruction* call = ctx.b.add(HloOpcode::kCustomCall, resultShape(ctx), operands);
    call->mutableExtra().customCallTarget = ctx.op.name;
    call->setAttribute("custom_call_has_side_effect", "true");
    if (ctx.op.name == "interpreter.run_parallel") {
        if (const MlirAttr* programs = ctx.op.attr("programs")) {
            HLO_ASSIGN_OR_RETURN(std::vector<HloComputation*> comps, symbolComputations(ctx, *programs));
            call->setCalledComputationList("called_computations", comps);
            call->setAttribute("programs", quoteString(programs->text));
            // Each device's computation, row-major (replicas x partitions), by its HLO name.
            std::string names;
            for (const MlirAttr& row : programs->elements)
                for (const MlirAttr& program : row.elements) {
                    HLO_ASSIGN_OR_RETURN(HloComputation * c, ctx.importer.functionComputation(
                                                                 program.str, program.pos));
                    names += (names.empty() ? "" : ",") + c->name();
                }
            call->setAttribute("program_computations", quoteString(names));
            const size_t columns =
                programs->elements.empty() ? 0 : programs->elements[0].elements.size();
            for (const MlirAttr& row : programs->elements)
                if (row.elements.size() != columns)
                    return opError(ctx, "run_parallel's programs are not a matrix");
            call->setAttribute("program_grid",
                               quoteString(std::to_string(programs->elements.size()) + "x" +
                                           std::to_string(columns)));
        }
        return resultsOf(ctx, call);
    }
    for (const NamedAttr& a : ctx.op.attributes) {
        if (a.name == "value" || a.name.starts_with("_") ||
            HloInstruction::isTypedAttributeName(a.name))
            continue;
        call->setAttribute(a.name, verbatimValue(a.value));
    }
    // The op form's default tolerance (1e-4) differs from the custom-call
    // form's (1e-3), so it is written out.
    if (ctx.op.name == "check.expect_almost_eq" && !ctx.op.attr("tolerance"))
        call->setAttribute("tolerance", "0.0001");
    return resultsOf(ctx, call);
}

}  // namespace

std::optional<StatusOr<Values>> lowerRegionOp(OpContext& ctx, std::string_view name) {
    if (name.starts_with("check.") || name.starts_with("interpreter.")) return lowerTestingOp(ctx);
    if (name == "reduce") return lowerReduce(ctx);
    if (name == "reduce_window") return lowerReduceWindow(ctx);
    if (name == "select_and_scatter") return lowerSelectAndScatter(ctx);
    if (name == "scatter") return lowerScatter(ctx);
    if (name == "sort") return lowerSort(ctx);
    if (name == "map") return lowerMap(ctx);
    if (name == "while") return lowerWhile(ctx);
    if (name == "if") return lowerConditional(ctx, true);
    if (name == "case") return lowerConditional(ctx, false);
    if (name == "all_reduce") return lowerAllReduceLike(ctx, HloOpcode::kAllReduce);
    if (name == "reduce_scatter") return lowerAllReduceLike(ctx, HloOpcode::kReduceScatter);
    if (name == "collective_reduce") return lowerAllReduceLike(ctx, HloOpcode::kCollectiveReduce);
    if (name == "all_gather") return lowerAllGather(ctx);
    if (name == "all_to_all") return lowerAllToAll(ctx);
    if (name == "collective_permute") return lowerCollectivePermute(ctx);
    if (name == "collective_broadcast") return lowerCollectiveBroadcast(ctx);
    if (name == "infeed") return lowerInfeed(ctx);
    if (name == "outfeed") return lowerOutfeed(ctx);
    if (name == "custom_call") return lowerCustomCall(ctx);
    if (name == "call") return lowerCall(ctx);
    if (name == "composite") return lowerComposite(ctx);
    return std::nullopt;
}

}  // namespace hloscope::stablehlo
