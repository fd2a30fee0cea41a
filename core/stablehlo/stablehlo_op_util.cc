// Helpers shared by the StableHLO / CHLO operation lowerings
// (stablehlo_op_util.h).
#include <cctype>

#include "core/stablehlo/stablehlo_literal.h"
#include "core/stablehlo/stablehlo_op_util.h"

namespace hloscope::stablehlo {
namespace {

std::string intListText(const std::vector<int64_t>& values) {
    std::string out = "{";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(values[i]);
    }
    return out + "}";
}

}  // namespace

std::string quoteString(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}


Status opError(const OpContext& ctx, std::string message) {
    return ctx.importer.invalidAt(ctx.op.pos, "'" + ctx.op.name + "': " + message);
}

Status opUnimplemented(const OpContext& ctx, std::string message) {
    return ctx.importer.errorAt(ctx.op.pos, StatusCode::kUnimplemented, std::move(message));
}

Status expectOperands(const OpContext& ctx, size_t count) {
    if (ctx.operands.size() == count) return Status::ok();
    return opError(ctx, "expected " + std::to_string(count) + " operand(s), found " +
                            std::to_string(ctx.operands.size()));
}

Status expectResults(const OpContext& ctx, size_t count) {
    if (ctx.resultShapes.size() == count) return Status::ok();
    return opError(ctx, "expected " + std::to_string(count) + " result(s), found " +
                            std::to_string(ctx.resultShapes.size()));
}

bool flattenInts(const MlirAttr& attr, std::vector<int64_t>& out) {
    switch (attr.kind) {
    case MlirAttr::Kind::kInt: {
        int64_t v = 0;
        if (!parseIntegerToken(attr.number, v)) return false;
        out.push_back(v);
        return true;
    }
    case MlirAttr::Kind::kBool: out.push_back(attr.boolValue ? 1 : 0); return true;
    case MlirAttr::Kind::kArray:
    case MlirAttr::Kind::kDenseArray:
        for (const MlirAttr& e : attr.elements)
            if (!flattenInts(e, out)) return false;
        return true;
    case MlirAttr::Kind::kDense: {
        if (attr.dense.hex || attr.dense.complexPairs) return false;
        std::vector<int64_t> values;
        for (const std::string& token : attr.dense.values) {
            int64_t v = 0;
            if (token == "true" || token == "false") {
                v = token == "true";
            } else if (!parseIntegerToken(token, v)) {
                return false;
            }
            values.push_back(v);
        }
        if (!attr.dense.bracketed && values.size() == 1 && attr.type.kind == MlirType::Kind::kTensor) {
            int64_t count = 1;
            for (int64_t d : attr.type.dims) count *= d < 0 ? 0 : d;
            if (count > 1 << 20) return false;
            values.assign(static_cast<size_t>(count), values[0]);
        }
        out.insert(out.end(), values.begin(), values.end());
        return true;
    }
    default: return false;
    }
}

StatusOr<std::vector<int64_t>> intsAttr(const OpContext& ctx,
                                        std::initializer_list<std::string_view> names,
                                        std::optional<std::vector<int64_t>> fallback) {
    const MlirAttr* a = ctx.op.attr(names);
    if (a == nullptr) {
        if (fallback) return *fallback;
        return opError(ctx, "missing attribute '" + std::string(*names.begin()) + "'");
    }
    std::vector<int64_t> out;
    if (!flattenInts(*a, out))
        return ctx.importer.invalidAt(a->pos, "'" + ctx.op.name + "': attribute '" +
                                                  std::string(*names.begin()) +
                                                  "' must be a list of integers, found " + a->text);
    return out;
}

StatusOr<int64_t> intAttr(const OpContext& ctx, std::initializer_list<std::string_view> names,
                          std::optional<int64_t> fallback) {
    const MlirAttr* a = ctx.op.attr(names);
    if (a == nullptr) {
        if (fallback) return *fallback;
        return opError(ctx, "missing attribute '" + std::string(*names.begin()) + "'");
    }
    int64_t v = 0;
    if (a->kind != MlirAttr::Kind::kInt || !parseIntegerToken(a->number, v))
        return ctx.importer.invalidAt(a->pos, "'" + ctx.op.name + "': attribute '" +
                                                  std::string(*names.begin()) +
                                                  "' must be an integer, found " + a->text);
    return v;
}

bool attrIsTrue(const MlirAttr* a, bool fallback) {
    if (a == nullptr) return fallback;
    if (a->kind == MlirAttr::Kind::kUnit) return true;
    if (a->kind == MlirAttr::Kind::kBool) return a->boolValue;
    if (a->kind == MlirAttr::Kind::kInt) return a->number != "0";
    return fallback;
}

bool boolAttr(const OpContext& ctx, std::initializer_list<std::string_view> names, bool fallback) {
    return attrIsTrue(ctx.op.attr(names), fallback);
}

std::string enumValue(const MlirAttr* a) {
    if (a == nullptr) return {};
    switch (a->kind) {
    case MlirAttr::Kind::kEnum:
    case MlirAttr::Kind::kIdent:
    case MlirAttr::Kind::kString: return a->str;
    case MlirAttr::Kind::kDialect:
        // #stablehlo.result_accuracy_mode<DEFAULT> and similar wrappers.
        if (a->elements.size() == 1) return enumValue(&a->elements[0]);
        return {};
    default: return {};
    }
}

std::string enumAttr(const OpContext& ctx, std::initializer_list<std::string_view> names) {
    return enumValue(ctx.op.attr(names));
}

std::vector<int64_t> fieldInts(const MlirAttr& attr, std::string_view name) {
    std::vector<int64_t> out;
    if (const MlirAttr* f = attr.field(name)) flattenInts(*f, out);
    return out;
}

Shape resultShape(const OpContext& ctx) {
    if (ctx.resultShapes.size() == 1) return ctx.resultShapes[0];
    return Shape::makeTuple(ctx.resultShapes);
}

Values resultsOf(OpContext& ctx, HloInstruction* instruction) {
    if (ctx.resultShapes.size() == 1) return Values{instruction};
    if (ctx.resultShapes.empty()) return Values{};
    return ctx.b.unpack(instruction);
}

std::string intMatrixText(const MlirAttr& attr) {
    std::vector<int64_t> values;
    if (!flattenInts(attr, values)) return quoteString(attr.text);
    int64_t columns = 0;
    if (attr.kind == MlirAttr::Kind::kDense && attr.type.dims.size() == 2) {
        columns = attr.type.dims[1];
    } else if (attr.kind == MlirAttr::Kind::kDense && attr.dense.nestedShape.size() == 2) {
        columns = attr.dense.nestedShape[1];
    } else {
        return intListText(values);
    }
    if (columns > 0 && values.size() % static_cast<size_t>(columns) != 0)
        return quoteString(attr.text);  // not whole rows: kept as written
    std::string out = "{";
    if (columns > 0) {
        for (size_t row = 0; row * static_cast<size_t>(columns) < values.size(); ++row) {
            if (row) out += ',';
            out += '{';
            for (int64_t c = 0; c < columns; ++c) {
                if (c) out += ',';
                out += std::to_string(values[row * static_cast<size_t>(columns) + static_cast<size_t>(c)]);
            }
            out += '}';
        }
    }
    return out + "}";
}

std::string verbatimValue(const MlirAttr& attr) {
    switch (attr.kind) {
    case MlirAttr::Kind::kInt:
    case MlirAttr::Kind::kFloat: return attr.number;
    case MlirAttr::Kind::kBool: return attr.boolValue ? "true" : "false";
    case MlirAttr::Kind::kUnit: return "true";
    case MlirAttr::Kind::kString: return quoteString(attr.str);
    case MlirAttr::Kind::kIdent:
    case MlirAttr::Kind::kEnum: return attr.str;
    case MlirAttr::Kind::kArray:
    case MlirAttr::Kind::kDenseArray:
    case MlirAttr::Kind::kDense: {
        std::vector<int64_t> values;
        if (attr.kind == MlirAttr::Kind::kDense && attr.type.dims.size() == 2)
            return intMatrixText(attr);
        if (flattenInts(attr, values)) return intListText(values);
        return quoteString(attr.text);
    }
    default: return quoteString(attr.text);
    }
}

void applyCommonAttributes(const OpContext& ctx, HloInstruction* instruction) {
    if (const MlirAttr* s = ctx.op.attr("mhlo.sharding");
        s != nullptr && s->kind == MlirAttr::Kind::kString && !s->str.empty())
        instruction->setAttribute("sharding", s->str);
    if (const MlirAttr* f = ctx.op.attr("mhlo.frontend_attributes");
        f != nullptr && f->kind == MlirAttr::Kind::kDict && !f->fieldNames.empty()) {
        std::string text = "{";
        for (size_t i = 0; i < f->fieldNames.size(); ++i) {
            if (i) text += ',';
            const MlirAttr& v = f->fieldValues[i];
            text += f->fieldNames[i] + "=" +
                    quoteString(v.kind == MlirAttr::Kind::kString ? v.str : v.text);
        }
        instruction->setAttribute("frontend_attributes", text + "}");
    }
}

void applyPrecisionConfig(const OpContext& ctx, HloInstruction* instruction) {
    const MlirAttr* a = ctx.op.attr({"precision_config", "precision"});
    if (a == nullptr || a->kind != MlirAttr::Kind::kArray) return;
    bool nonDefault = false;
    std::string text = "{";
    for (size_t i = 0; i < a->elements.size(); ++i) {
        std::string v = enumValue(&a->elements[i]);
        if (v.empty()) v = "DEFAULT";
        nonDefault |= v != "DEFAULT";
        if (i) text += ',';
        for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        text += v;
    }
    if (nonDefault) instruction->setAttribute("operand_precision", text + "}");
}

HloInstruction* broadcastInDim(HloBuilder& b, HloInstruction* operand, const Shape& shape,
                               const std::vector<int64_t>& dimensions) {
    const Shape& in = operand->shape();
    std::vector<int64_t> keptDims, keptSizes;
    bool degenerate = false;
    for (size_t i = 0; i < dimensions.size(); ++i) {
        int64_t size = in.dimensions(static_cast<int64_t>(i));
        int64_t outSize = shape.dimensions(dimensions[i]);
        if (size == 1 && outSize != 1) {
            degenerate = true;
            continue;
        }
        keptDims.push_back(dimensions[i]);
        keptSizes.push_back(size);
    }
    if (!degenerate) return b.broadcast(operand, shape, dimensions);
    HloInstruction* reshaped = b.reshape(operand, Shape(in.elementType(), keptSizes));
    return b.broadcast(reshaped, shape, keptDims);
}

}  // namespace hloscope::stablehlo
