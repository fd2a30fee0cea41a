// HLO text parser: the module header (`HloModule name, attributes...`) and
// the stack-frame tables (FileNames, FunctionNames, FileLocations,
// StackFrames) that may follow it.
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/ir/attribute_text.h"
#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

Status Parser::parseHeader() {
    m_lexer.next();  // HloModule
    Token name = m_lexer.next();
    if (!isName(name) && name.kind != TokenKind::kString) return expected("a module name", name);
    m_module->setName(name.kind == TokenKind::kString ? unquoteAttributeString(name.text)
                                                      : std::string(name.text));
    if (m_lexer.charAt(m_lexer.position()) == ':') m_lexer.resetTo(m_lexer.position() + 1);
    std::vector<std::string_view> seen;
    while (m_lexer.consumeIf(TokenKind::kComma)) {
        Token attr = m_lexer.next();
        if (attr.kind != TokenKind::kIdentifier) return expected("an attribute name", attr);
        HLO_RETURN_IF_ERROR(expectToken(
            TokenKind::kEqual, "'=' after attribute name '" + std::string(attr.text) + "'"));
        if (std::find(seen.begin(), seen.end(), attr.text) != seen.end())
            return error(attr.offset, "attribute " + std::string(attr.text) + " already exists");
        seen.push_back(attr.text);
        if (attr.text == "is_scheduled") {
            bool value = false;
            HLO_RETURN_IF_ERROR(parseBoolValue(&value));
            m_module->setIsScheduled(value);
        } else if (attr.text == "replica_count") {
            int64_t value = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&value));
            m_module->setReplicaCount(value);
        } else if (attr.text == "num_partitions") {
            int64_t value = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&value));
            m_module->setNumPartitions(value);
        } else if (attr.text == "entry_computation_layout") {
            ComputationLayout layout;
            HLO_RETURN_IF_ERROR(parseComputationLayout(&layout));
            m_module->setEntryComputationLayout(std::move(layout));
        } else if (attr.text == "input_output_alias") {
            HLO_RETURN_IF_ERROR(parseAliasing(m_module.get()));
        } else if (attr.text == "buffer_donor") {
            HLO_RETURN_IF_ERROR(parseBufferDonor(m_module.get()));
        } else {
            std::string value;
            size_t valueOffset = 0;
            HLO_RETURN_IF_ERROR(parseVerbatimValue(&value, &valueOffset));
            if (attr.text == "debug_attributes")
                HLO_RETURN_IF_ERROR(checkDebugAttributes(value, valueOffset));
            m_module->mutableAttributes().push_back({std::string(attr.text), std::move(value)});
        }
    }
    return Status::ok();
}

namespace {

// `{name=int ...}` sub-attributes of the stack-frame tables; all required.
Status parseIntSubAttributes(Parser& parser,
                             std::initializer_list<std::pair<std::string_view, int64_t*>> fields,
                             bool required) {
    HloLexer& lexer = parser.m_lexer;
    Token open = lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return parser.expected("'{' to start sub attributes", open);
    std::vector<std::string_view> seen;
    while (true) {
        lexer.consumeIf(TokenKind::kComma);
        if (lexer.consumeIf(TokenKind::kRbrace)) break;
        Token name = lexer.next();
        if (name.kind != TokenKind::kIdentifier)
            return parser.expected("a sub-attribute name", name);
        HLO_RETURN_IF_ERROR(parser.expectToken(TokenKind::kEqual, "'='"));
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const auto& f) { return f.first == name.text; });
        if (it == fields.end())
            return parser.error(name.offset,
                                "unexpected attribute \"" + std::string(name.text) + "\"");
        if (std::find(seen.begin(), seen.end(), name.text) != seen.end())
            return parser.error(name.offset,
                                "attribute " + std::string(name.text) + " already exists");
        seen.push_back(name.text);
        size_t valueOffset = lexer.cursor();
        HLO_RETURN_IF_ERROR(parser.parseInt64Value(it->second));
        if (*it->second < INT32_MIN || *it->second > INT32_MAX)
            return parser.error(valueOffset, "value out of range for int32_t");
    }
    for (const auto& field : fields)
        if (required && std::find(seen.begin(), seen.end(), field.first) == seen.end())
            return parser.error(open.offset, "sub-attribute " + std::string(field.first) +
                                                 " is expected but not seen");
    return Status::ok();
}

}  // namespace

Status Parser::parseStackFrames() {
    const Token& first = m_lexer.peek();
    if (first.kind != TokenKind::kIdentifier || first.text != "FileNames") return Status::ok();
    m_lexer.next();
    StackFrameIndex& frames = m_module->mutableStackFrames();
    auto parseNames = [&](std::vector<std::string>* names) -> Status {
        while (m_lexer.consumeIf(TokenKind::kInt)) {
            std::string value;
            HLO_RETURN_IF_ERROR(parseStringValue(&value));
            names->push_back(std::move(value));
        }
        return Status::ok();
    };
    auto keyword = [&](std::string_view word) -> Status {
        Token token = m_lexer.next();
        if (token.kind != TokenKind::kIdentifier || token.text != word)
            return expected("'" + std::string(word) + "'", token);
        return Status::ok();
    };
    HLO_RETURN_IF_ERROR(parseNames(&frames.fileNames));
    HLO_RETURN_IF_ERROR(keyword("FunctionNames"));
    HLO_RETURN_IF_ERROR(parseNames(&frames.functionNames));
    HLO_RETURN_IF_ERROR(keyword("FileLocations"));
    while (m_lexer.consumeIf(TokenKind::kInt)) {
        FileLocation loc;
        HLO_RETURN_IF_ERROR(parseIntSubAttributes(*this,
                                                  {{"file_name_id", &loc.fileNameId},
                                                   {"function_name_id", &loc.functionNameId},
                                                   {"line", &loc.line},
                                                   {"end_line", &loc.endLine},
                                                   {"column", &loc.column},
                                                   {"end_column", &loc.endColumn}},
                                                  /*required=*/false));
        frames.fileLocations.push_back(loc);
    }
    HLO_RETURN_IF_ERROR(keyword("StackFrames"));
    while (m_lexer.consumeIf(TokenKind::kInt)) {
        StackFrame frame;
        HLO_RETURN_IF_ERROR(parseIntSubAttributes(*this,
                                                  {{"file_location_id", &frame.fileLocationId},
                                                   {"parent_frame_id", &frame.parentFrameId}},
                                                  /*required=*/false));
        frames.stackFrames.push_back(frame);
    }
    return Status::ok();
}

}  // namespace hloscope::hlo_parser_internal
