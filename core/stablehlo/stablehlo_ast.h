// Internal to the StableHLO importer: the syntax tree that the MLIR text
// reader (stablehlo_reader.cc) produces and the converter
// (stablehlo_import.cc, stablehlo_ops.cc, chlo_decompose.cc) lowers to HLO.
//
// Pretty (custom assembly) forms are normalised by the reader into the
// generic shape of an operation: name, operands, named attributes, regions,
// operand and result types. Pretty keywords keep their pretty names (e.g.
// `dims`); the converter accepts both the generic and the pretty spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/primitive_type.h"

namespace hloscope::stablehlo {

// A 1-based position in the input text.
struct TextPos {
    int line = 0;
    int column = 0;
};

// `tensor<2x?xf32>`, `tuple<...>`, `!stablehlo.token`, or a bare element
// type such as `i64` (as used in typed attributes).
struct MlirType {
    enum class Kind : uint8_t { kInvalid, kTensor, kTuple, kToken, kElement, kFunction, kOther };
    Kind kind = Kind::kInvalid;
    PrimitiveType elementType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::vector<int64_t> dims;       // Shape::kUnboundedSize for `?`
    std::vector<int64_t> bounds;     // from #stablehlo.bounds; -1 where none
    std::vector<MlirType> elements;  // tuple elements; function: inputs then results
    int functionInputs = 0;          // kFunction: how many of `elements` are inputs
    std::string text;                // spelling, for messages
    std::string unsupported;         // non-empty: why no HLO shape exists for it

    bool isValid() const { return kind != Kind::kInvalid; }
};

// The contents of `dense<...>`.
struct DenseData {
    bool hex = false;                 // dense<"0x...">
    std::string bytes;                // hex-decoded bytes
    std::vector<std::string> values;  // flattened scalar tokens (complex: re, im pairs)
    bool complexPairs = false;        // values were written as (re, im)
    bool bracketed = false;           // written with [...] (else a splat)
    std::vector<int64_t> nestedShape; // shape implied by the brackets
};

struct MlirAttr {
    enum class Kind : uint8_t {
        kNone,
        kUnit,
        kBool,
        kInt,
        kFloat,
        kString,
        kSymbol,
        kArray,
        kDenseArray,
        kDense,
        kDict,
        kEnum,
        kDialect,
        kType,
        kIdent,
        kConvDims,
        kOpaque,
    };
    Kind kind = Kind::kNone;
    TextPos pos;
    std::string text;   // source spelling (whitespace collapsed)
    bool boolValue = false;
    std::string number;    // kInt / kFloat token ("-3", "0x7FC00000", "1.5e+00")
    std::string str;       // kString value, kSymbol name, kEnum/kIdent value, kDialect name
    std::string enumKind;  // kEnum: e.g. "comparison_direction"
    std::vector<MlirAttr> elements;       // kArray, kDenseArray
    std::vector<std::string> fieldNames;  // kDict, kDialect
    std::vector<MlirAttr> fieldValues;
    MlirType type;  // typed literal, dense, dense array element type, kType
    DenseData dense;
    ConvolutionDimensionNumbers conv;  // kConvDims

    const MlirAttr* field(std::string_view name) const {
        for (size_t i = 0; i < fieldNames.size(); ++i)
            if (fieldNames[i] == name) return &fieldValues[i];
        return nullptr;
    }
    bool isNumber() const { return kind == Kind::kInt || kind == Kind::kFloat; }
};

struct NamedAttr {
    std::string name;
    MlirAttr value;
};

// `%name`, `%name#3`.
struct ValueRef {
    std::string name;
    int64_t index = 0;
    bool hasIndex = false;
    TextPos pos;
};

// `%name` or `%name:3` on the left of `=`.
struct ResultGroup {
    std::string name;
    int64_t count = 1;
};

struct BlockArg {
    std::string name;
    MlirType type;
    std::vector<NamedAttr> attributes;  // function arguments only
};

struct Op;

struct Block {
    std::vector<BlockArg> args;
    std::vector<Op> ops;
};

struct Region {
    std::vector<Block> blocks;
    TextPos pos;
};

struct Op {
    std::string name;  // "stablehlo.add"
    TextPos pos;
    std::vector<ResultGroup> results;
    std::vector<ValueRef> operands;
    std::vector<NamedAttr> attributes;
    std::vector<Region> regions;
    std::vector<MlirType> operandTypes;
    std::vector<MlirType> resultTypes;
    bool hasSignature = false;  // `: ...` seen

    const MlirAttr* attr(std::string_view attrName) const {
        for (const NamedAttr& a : attributes)
            if (a.name == attrName) return &a.value;
        return nullptr;
    }
    // The first present attribute of several spellings.
    const MlirAttr* attr(std::initializer_list<std::string_view> names) const {
        for (std::string_view n : names)
            if (const MlirAttr* a = attr(n)) return a;
        return nullptr;
    }
    int64_t resultCount() const {
        int64_t n = 0;
        for (const ResultGroup& g : results) n += g.count;
        return n;
    }
};

struct Func {
    std::string name;
    std::string visibility;  // "public" (default), "private", "nested"
    TextPos pos;
    std::vector<BlockArg> args;
    std::vector<MlirType> resultTypes;
    std::vector<std::vector<NamedAttr>> resultAttributes;
    std::vector<NamedAttr> attributes;
    Region body;
    bool hasBody = false;
};

struct ModuleAst {
    std::string name;
    TextPos pos;
    std::vector<NamedAttr> attributes;
    std::vector<Func> funcs;
};

}  // namespace hloscope::stablehlo
