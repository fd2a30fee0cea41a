// Pretty (custom assembly) operation forms of the MLIR text reader (see
// stablehlo_reader.h): keyword operands (`dims = [...]`), slice ranges,
// `batching_dims = [..] x [..]`, convolution `dim_numbers`, the reduce and
// while forms, and type signatures.
#include <cctype>

#include "core/stablehlo/stablehlo_reader.h"

namespace hloscope::stablehlo {
namespace {

bool isIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

bool isReturnOp(std::string_view name) {
    return name == "return" || name == "func.return" || name == "stablehlo.return" ||
           name == "mhlo.return";
}

MlirAttr makeDenseArray(const std::vector<int64_t>& values) {
    MlirAttr a;
    a.kind = MlirAttr::Kind::kDenseArray;
    a.type.kind = MlirType::Kind::kElement;
    a.type.elementType = PrimitiveType::S64;
    for (int64_t v : values) {
        MlirAttr e;
        e.kind = MlirAttr::Kind::kInt;
        e.number = std::to_string(v);
        a.elements.push_back(std::move(e));
    }
    return a;
}

}  // namespace

Status Reader::readSignature(Op& op) {
    skipTrivia();
    std::vector<MlirType> first;
    bool parenthesized = false;
    if (peek() == '(') {
        ++m_pos;
        parenthesized = true;
        if (!consume(')')) {
            HLO_RETURN_IF_ERROR(readTypeList(first));
            HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in the operand types"));
        }
    } else {
        HLO_RETURN_IF_ERROR(readTypeList(first));
    }
    op.hasSignature = true;
    if (consume("->")) {
        op.operandTypes = std::move(first);
        skipTrivia();
        if (peek() == '(') {
            ++m_pos;
            if (!consume(')')) {
                HLO_RETURN_IF_ERROR(readTypeList(op.resultTypes));
                HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in the result types"));
            }
        } else {
            HLO_ASSIGN_OR_RETURN(MlirType type, readType());
            op.resultTypes.push_back(std::move(type));
        }
        return Status::ok();
    }
    if (parenthesized) return error("expected '->' and the result types, found " + foundText());
    // Pretty forms: `: T` (all operands and the result), `: T1, T2` (select:
    // predicate type then result type; optimization_barrier: result types).
    size_t n = static_cast<size_t>(op.resultCount());
    if (first.size() >= n)
        op.resultTypes.assign(first.end() - static_cast<std::ptrdiff_t>(n), first.end());
    op.operandTypes = std::move(first);
    return Status::ok();
}

Status Reader::readReturnOp(Op& op) {
    skipTrivia();
    if (peek() == '%') {
        while (true) {
            ValueRef ref;
            HLO_RETURN_IF_ERROR(readValueRef(ref));
            op.operands.push_back(std::move(ref));
            if (consume(',')) continue;
            break;
        }
    }
    if (consume(':')) HLO_RETURN_IF_ERROR(readTypeList(op.operandTypes));
    return Status::ok();
}

Status Reader::readSliceRanges(Op& op) {
    HLO_RETURN_IF_ERROR(expect('[', "'[' to open slice ranges"));
    std::vector<int64_t> starts, limits, strides;
    if (!consume(']')) {
        while (true) {
            HLO_ASSIGN_OR_RETURN(int64_t start, integer());
            HLO_RETURN_IF_ERROR(expect(':', "':' in a slice range"));
            HLO_ASSIGN_OR_RETURN(int64_t limit, integer());
            int64_t stride = 1;
            if (consume(':')) {
                HLO_ASSIGN_OR_RETURN(stride, integer());
            }
            starts.push_back(start);
            limits.push_back(limit);
            strides.push_back(stride);
            if (consume(',')) continue;
            HLO_RETURN_IF_ERROR(expect(']', "',' or ']' in slice ranges"));
            break;
        }
    }
    op.attributes.push_back({"start_indices", makeDenseArray(starts)});
    op.attributes.push_back({"limit_indices", makeDenseArray(limits)});
    op.attributes.push_back({"strides", makeDenseArray(strides)});
    return Status::ok();
}

Status Reader::readPrettyItems(Op& op, bool inParens) {
    int positional = 0;
    while (true) {
        skipTrivia();
        char c = peek();
        if (c == '%') {
            ValueRef ref;
            HLO_RETURN_IF_ERROR(readValueRef(ref));
            skipTrivia();
            if (peek() == '[') {
                if (op.name.ends_with("get_tuple_element")) {
                    ++m_pos;
                    HLO_ASSIGN_OR_RETURN(int64_t index, integer());
                    HLO_RETURN_IF_ERROR(expect(']', "']' after the tuple index"));
                    MlirAttr a;
                    a.kind = MlirAttr::Kind::kInt;
                    a.number = std::to_string(index);
                    op.attributes.push_back({"index", std::move(a)});
                } else {
                    HLO_RETURN_IF_ERROR(readSliceRanges(op));
                }
            }
            op.operands.push_back(std::move(ref));
        } else if (c == '@') {
            ++m_pos;
            MlirAttr a;
            a.kind = MlirAttr::Kind::kSymbol;
            a.pos = here();
            HLO_ASSIGN_OR_RETURN(a.str, symbolName());
            op.attributes.push_back({"callee", std::move(a)});
            skipTrivia();
            if (peek() == '(') {
                ++m_pos;
                HLO_RETURN_IF_ERROR(readPrettyItems(op, true));
                HLO_RETURN_IF_ERROR(expect(')', "')' to close the call operands"));
            }
        } else if (c == ')' && inParens) {
            break;
        } else if (isIdStart(c)) {
            size_t save = m_pos;
            std::string key(bareIdentifier());
            skipTrivia();
            if (peek() == '=' && peek(1) != '=') {
                ++m_pos;
                skipTrivia();
                MlirAttr value;
                if (key == "dim_numbers") {
                    HLO_ASSIGN_OR_RETURN(value, readConvDims());
                } else {
                    HLO_ASSIGN_OR_RETURN(value, readAttribute(false));
                    skipTrivia();
                    // `batching_dims = [0] x [0]`
                    if (value.kind == MlirAttr::Kind::kArray && peek() == 'x' &&
                        !isIdChar(peek(1))) {
                        ++m_pos;
                        HLO_ASSIGN_OR_RETURN(MlirAttr rhs, readAttribute(false));
                        MlirAttr pair;
                        pair.kind = MlirAttr::Kind::kArray;
                        pair.elements.push_back(std::move(value));
                        pair.elements.push_back(std::move(rhs));
                        value = std::move(pair);
                    }
                }
                op.attributes.push_back({key, std::move(value)});
            } else if (key == "dense" || key == "array" || key == "dense_resource" ||
                       key == "true" || key == "false") {
                m_pos = save;
                HLO_ASSIGN_OR_RETURN(MlirAttr value, readAttribute(false));
                op.attributes.push_back({"value", std::move(value)});
            } else {
                MlirAttr a;
                a.kind = MlirAttr::Kind::kIdent;
                a.pos = posOf(save);
                a.str = key;
                a.text = key;
                op.attributes.push_back({"_pos" + std::to_string(positional++), std::move(a)});
            }
        } else if (c == '"') {
            MlirAttr a;
            a.kind = MlirAttr::Kind::kString;
            a.pos = here();
            HLO_ASSIGN_OR_RETURN(a.str, stringLiteral());
            op.attributes.push_back({"_str", std::move(a)});
            continue;  // `composite "name" %operands`: no comma follows the name
        } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) || c == '#' ||
                   c == '[') {
            HLO_ASSIGN_OR_RETURN(MlirAttr value, readAttribute(false));
            op.attributes.push_back({"value", std::move(value)});
        } else {
            break;
        }
        if (!consume(',')) break;
    }
    return Status::ok();
}

Status Reader::readPrettyOp(Op& op) {
    if (isReturnOp(op.name)) return readReturnOp(op);
    skipTrivia();
    if (op.name == "stablehlo.reduce" && peek() == '(') return readReduceOp(op);
    if (op.name == "stablehlo.while" && peek() == '(') return readWhileOp(op);
    if (peek() == '(') {
        ++m_pos;
        HLO_RETURN_IF_ERROR(readPrettyItems(op, true));
        HLO_RETURN_IF_ERROR(expect(')', "')' to close the operand list"));
        skipTrivia();
        if (isIdStart(peek())) HLO_RETURN_IF_ERROR(readPrettyItems(op, false));
    } else {
        HLO_RETURN_IF_ERROR(readPrettyItems(op, false));
    }
    skipTrivia();
    if (peek() == '{') HLO_RETURN_IF_ERROR(readAttrDict(op.attributes, '{', '}'));
    if (consume(':')) HLO_RETURN_IF_ERROR(readSignature(op));
    return Status::ok();
}

Status Reader::readReduceOp(Op& op) {
    // `(%a init: %ia), (%b init: %ib)`
    std::vector<ValueRef> inputs, inits;
    while (true) {
        ValueRef input, init;
        HLO_RETURN_IF_ERROR(expect('(', "'(' before a reduce operand"));
        HLO_RETURN_IF_ERROR(readValueRef(input));
        if (!consumeKeyword("init")) return error("expected 'init:' in reduce, found " + foundText());
        HLO_RETURN_IF_ERROR(expect(':', "':' after 'init'"));
        HLO_RETURN_IF_ERROR(readValueRef(init));
        HLO_RETURN_IF_ERROR(expect(')', "')' after a reduce operand"));
        inputs.push_back(std::move(input));
        inits.push_back(std::move(init));
        if (consume(',')) continue;
        break;
    }
    op.operands = inputs;
    op.operands.insert(op.operands.end(), inits.begin(), inits.end());
    std::string applies;
    TextPos appliesPos;
    if (consumeKeyword("applies")) {
        skipTrivia();
        appliesPos = here();
        applies = std::string(bareIdentifier());
        if (applies.empty()) return error("expected operation name after 'applies'");
    }
    if (!consumeKeyword("across") || !consumeKeyword("dimensions"))
        return error("expected 'across dimensions = [...]' in reduce, found " + foundText());
    HLO_RETURN_IF_ERROR(expect('=', "'='"));
    HLO_ASSIGN_OR_RETURN(MlirAttr dims, readAttribute(false));
    op.attributes.push_back({"dimensions", std::move(dims)});
    skipTrivia();
    if (peek() == '{') HLO_RETURN_IF_ERROR(readAttrDict(op.attributes, '{', '}'));
    HLO_RETURN_IF_ERROR(expect(':', "':' and the reduce type"));
    HLO_RETURN_IF_ERROR(readSignature(op));
    size_t n = inputs.size();
    op.regions.emplace_back();
    Region& region = op.regions.back();
    if (!applies.empty()) {
        if (op.operandTypes.size() != 2 * n)
            return error("reduce with 'applies' needs its operand types");
        Block block;
        std::vector<BlockArg> lhs, rhs;
        Op body;
        body.name = applies;
        body.pos = appliesPos;
        Op ret;
        ret.name = "stablehlo.return";
        ret.pos = appliesPos;
        for (size_t i = 0; i < n; ++i) {
            MlirType scalar = op.operandTypes[n + i];
            scalar.dims.clear();
            scalar.bounds.clear();
            lhs.push_back({"__lhs" + std::to_string(i), scalar, {}});
            rhs.push_back({"__rhs" + std::to_string(i), scalar, {}});
        }
        if (n != 1) return errorAt(appliesPos, "'applies' with several reduce inputs is not supported");
        body.operands.push_back({lhs[0].name, 0, false, appliesPos});
        body.operands.push_back({rhs[0].name, 0, false, appliesPos});
        body.results.push_back({"__result", 1});
        body.resultTypes.push_back(lhs[0].type);
        body.hasSignature = true;
        ret.operands.push_back({"__result", 0, false, appliesPos});
        block.args = lhs;
        block.args.insert(block.args.end(), rhs.begin(), rhs.end());
        block.ops.push_back(std::move(body));
        block.ops.push_back(std::move(ret));
        region.pos = appliesPos;
        region.blocks.push_back(std::move(block));
        return Status::ok();
    }
    if (!consumeKeyword("reducer")) return error("expected 'reducer' or 'applies' in reduce, found " + foundText());
    std::vector<BlockArg> lhs, rhs;
    for (size_t i = 0; i < n; ++i) {
        std::vector<BlockArg> pair;
        HLO_RETURN_IF_ERROR(readBlockArgs(pair));
        if (pair.size() != 2) return error("expected two reducer arguments per input");
        lhs.push_back(pair[0]);
        rhs.push_back(pair[1]);
    }
    std::vector<BlockArg> args = lhs;
    args.insert(args.end(), rhs.begin(), rhs.end());
    return readRegion(region, &args);
}

Status Reader::readWhileOp(Op& op) {
    HLO_RETURN_IF_ERROR(expect('(', "'('"));
    std::vector<std::string> names;
    if (!consume(')')) {
        while (true) {
            HLO_RETURN_IF_ERROR(expect('%', "loop-carried value name"));
            HLO_ASSIGN_OR_RETURN(std::string name, suffixId());
            HLO_RETURN_IF_ERROR(expect('=', "'=' in while operands"));
            ValueRef ref;
            HLO_RETURN_IF_ERROR(readValueRef(ref));
            names.push_back(std::move(name));
            op.operands.push_back(std::move(ref));
            if (consume(',')) continue;
            HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in while operands"));
            break;
        }
    }
    if (consume(':')) HLO_RETURN_IF_ERROR(readTypeList(op.resultTypes));
    op.operandTypes = op.resultTypes;
    op.hasSignature = true;
    if (op.resultTypes.size() != names.size())
        return error("while: " + std::to_string(names.size()) + " operands but " +
                     std::to_string(op.resultTypes.size()) + " types");
    if (consumeKeyword("attributes")) HLO_RETURN_IF_ERROR(readAttrDict(op.attributes, '{', '}'));
    std::vector<BlockArg> args;
    for (size_t i = 0; i < names.size(); ++i) args.push_back({names[i], op.resultTypes[i], {}});
    if (!consumeKeyword("cond")) return error("expected 'cond' in while, found " + foundText());
    op.regions.emplace_back();
    HLO_RETURN_IF_ERROR(readRegion(op.regions.back(), &args));
    if (!consumeKeyword("do")) return error("expected 'do' in while, found " + foundText());
    op.regions.emplace_back();
    return readRegion(op.regions.back(), &args);
}

}  // namespace hloscope::stablehlo
