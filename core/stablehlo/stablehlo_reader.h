// Internal to the StableHLO importer: reads MLIR text (StableHLO, CHLO,
// func, and the interpreter's check/interpreter dialects) into the syntax
// tree of stablehlo_ast.h. Pretty and generic operation forms are both
// accepted; `loc(...)` annotations, `#loc` lines and comments are skipped;
// attribute and type aliases are resolved.
//
// The reader is a character-level recursive-descent parser (types such as
// `tensor<2x3xf32>` do not tokenise well). Nesting is bounded, so no input
// can exhaust the stack.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/stablehlo/stablehlo_ast.h"
#include "core/support/status.h"

namespace hloscope::stablehlo {

// 1-based line/column of byte offsets of one text.
class LineIndex {
public:
    explicit LineIndex(std::string_view text);
    TextPos at(size_t offset) const;

private:
    std::vector<size_t> m_lineStarts;
};

class Reader {
public:
    // Reads bytes [begin, end) of `text`; positions refer to the whole text.
    Reader(std::string_view text, size_t begin, size_t end, const std::string& fileName,
           const LineIndex& lines);

    StatusOr<ModuleAst> readModule();

    // Used by the importer for error locations.
    SourceLocation location(TextPos pos) const;

private:
    friend class ReaderTestPeer;

    // Lexical helpers (stablehlo_reader.cc).
    void skipTrivia();
    bool atEnd();
    char peek(size_t ahead = 0) const;
    bool lookingAt(std::string_view s) const;
    bool consume(char c);
    bool consume(std::string_view s);
    bool consumeKeyword(std::string_view word);
    Status expect(char c, std::string_view what);
    Status expect(std::string_view s, std::string_view what);
    std::string_view bareIdentifier();
    std::string_view peekBareIdentifier() const;
    StatusOr<std::string> suffixId();  // after `%`, `^`, `#`, `!`
    StatusOr<std::string> stringLiteral();
    StatusOr<std::string> symbolName();  // after '@'
    StatusOr<int64_t> integer();
    std::string_view numberToken();  // "" when none
    Status skipBalanced();           // skips one (), [], {}, <> group
    TextPos here() const;
    TextPos posOf(size_t offset) const;
    Status error(std::string message) const;
    Status errorAt(TextPos pos, std::string message) const;
    std::string foundText() const;
    Status enter();
    void leave() { --m_depth; }

    // Structure (stablehlo_reader.cc).
    Status readTopLevelItem(ModuleAst& module);
    Status readAliasDefinition();
    Status readModuleBody(ModuleAst& module);
    Status readFunc(ModuleAst& module);
    // `"builtin.module"() (...)` and `"func.func"() <{...}> (...)` in the
    // generic operation form.
    Status readGenericTopLevel(ModuleAst& module);
    Status addGenericOp(Op& op, ModuleAst& module, int depth);
    Status readRegion(Region& region, const std::vector<BlockArg>* entryArgs = nullptr);
    Status readBlockArgs(std::vector<BlockArg>& args);
    Status readOperation(Block& block);
    Status readGenericOp(Op& op);
    Status readPrettyOp(Op& op);
    Status readPrettyItems(Op& op, bool inParens);
    Status readReduceOp(Op& op);
    Status readWhileOp(Op& op);
    Status readReturnOp(Op& op);
    Status readSignature(Op& op);
    Status readValueRef(ValueRef& ref);
    Status readSliceRanges(Op& op);

    // Types and attributes (stablehlo_reader_attrs.cc).
    StatusOr<MlirType> readType();
    StatusOr<MlirType> readTensorType();
    StatusOr<MlirType> readElementType();
    bool atType() const;
    Status readTypeList(std::vector<MlirType>& types);
    // `allowTypeSuffix`: consume `: type` after literals (attribute
    // dictionaries), not in pretty operand lists where `:` starts the
    // signature.
    StatusOr<MlirAttr> readAttribute(bool allowTypeSuffix);
    Status readAttrDict(std::vector<NamedAttr>& attrs, char open, char close);
    StatusOr<MlirAttr> readDense();
    Status readDenseElements(DenseData& data, int depth, std::vector<int64_t>& shape);
    // A bracketed dense literal's element count against its tensor type (error at the literal).
    Status checkDenseCount(const MlirAttr& attr);
    StatusOr<MlirAttr> readDenseArray();
    StatusOr<MlirAttr> readHashAttribute();
    StatusOr<MlirAttr> readDialectBody(MlirAttr attr);
    StatusOr<MlirAttr> readConvDims();
    StatusOr<MlirAttr> readArrayAttr(bool allowTypeSuffix);
    StatusOr<MlirAttr> readWindowBody();
    void finishText(MlirAttr& attr, size_t start) const;

    std::string_view m_text;
    size_t m_pos;
    size_t m_end;
    std::string m_fileName;
    const LineIndex& m_lines;
    int m_depth = 0;
    std::map<std::string, MlirAttr, std::less<>> m_attrAliases;
    std::map<std::string, MlirType, std::less<>> m_typeAliases;
};

// Maps an MLIR element type spelling (i32, ui8, bf16, f8E4M3FN, ...) to a
// primitive type; nullopt when there is none.
std::optional<PrimitiveType> elementTypeFromMlir(std::string_view name);

}  // namespace hloscope::stablehlo
