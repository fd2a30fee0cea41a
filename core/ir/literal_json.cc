// Literal <-> JSON:
//   {"shape": "f32[2,2]{1,0}", "values": [[1, 2], [3, 4]]}
//   {"shape": "(f32[], s32[2]{0})", "elements": [{...}, {...}]}
// Arrays nest by dimension (a scalar's "values" is the bare value). Floats
// are JSON numbers carrying the shortest decimal that reads back to the same
// element ("nan", "inf", "-inf" as strings; a NaN's sign and payload are not
// kept); integers are JSON integers (u64 up to 2^64-1); pred is true/false
// (0/1 accepted on input); complex values are [re, im]; token and opaque
// literals carry only their shape.
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/ir/literal.h"
#include "core/ir/literal_internal.h"

namespace hloscope {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------
// Writing.

OrderedJson floatToJson(PrimitiveType type, double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    // The shortest text for the element type, as a double: "0.1", not
    // 0.10000000149011612, for the f32 value 0.1f.
    const std::string text = literal_internal::formatFiniteOrInf(type, value);
    double shortest = value;
    std::from_chars(text.data(), text.data() + text.size(), shortest);
    return shortest;
}

OrderedJson elementToJson(const Literal& literal, int64_t index) {
    const PrimitiveType type = literal.elementType();
    if (type == PrimitiveType::PRED) return literal.getAsInt64(index) != 0;
    if (primitive_util::isSignedInteger(type)) return literal.getAsInt64(index);
    if (primitive_util::isUnsignedInteger(type)) return literal.getAsUint64(index);
    if (primitive_util::isComplex(type)) {
        const PrimitiveType component = primitive_util::complexComponentType(type);
        const std::complex<double> value = literal.getAsComplex(index);
        return OrderedJson::array(
            {floatToJson(component, value.real()), floatToJson(component, value.imag())});
    }
    return floatToJson(type, literal.getAsDouble(index));
}

OrderedJson valuesToJson(const Literal& literal, size_t dim, int64_t& linear) {
    const Shape& shape = literal.shape();
    if (dim == static_cast<size_t>(shape.rank())) return elementToJson(literal, linear++);
    OrderedJson array = OrderedJson::array();
    const int64_t size = std::max<int64_t>(shape.dimensions(static_cast<int64_t>(dim)), 0);
    for (int64_t i = 0; i < size; ++i) array.push_back(valuesToJson(literal, dim + 1, linear));
    return array;
}

OrderedJson literalToJsonValue(const Literal& literal) {
    OrderedJson object = OrderedJson::object();
    object["shape"] = literal.shape().toString(/*printLayout=*/true);
    if (literal.isTuple()) {
        OrderedJson elements = OrderedJson::array();
        for (const Literal& element : literal.tupleElements()) {
            elements.push_back(literalToJsonValue(element));
        }
        object["elements"] = std::move(elements);
    } else if (literal_internal::holdsElements(literal.shape())) {
        int64_t linear = 0;
        object["values"] = valuesToJson(literal, 0, linear);
    }
    return object;
}

// ---------------------------------------------------------------------------
// Reading.

std::string describeJson(const Json& value) {
    switch (value.type()) {
        case Json::value_t::null:
            return "null";
        case Json::value_t::object:
            return "an object";
        case Json::value_t::array:
            return "an array";
        case Json::value_t::string:
            return "the string \"" + value.get<std::string>() + "\"";
        case Json::value_t::boolean:
            return value.get<bool>() ? "true" : "false";
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
        case Json::value_t::number_float:
            return "the number " + value.dump();
        default:
            return "an unsupported value";
    }
}

class JsonReader {
public:
    explicit JsonReader(std::string fileName) : m_fileName(std::move(fileName)) {}

    Status error(const std::string& path, const std::string& message) const {
        return Status(
            StatusCode::kInvalidArgument,
            "at JSON path '" + (path.empty() ? std::string("(root)") : path) + "': " + message,
            SourceLocation{m_fileName, 0, 0});
    }

    StatusOr<Literal> readLiteral(const Json& json, const std::string& path, int depth) {
        if (depth > 256) return error(path, "literal nested too deeply");
        if (!json.is_object()) return error(path, "expected an object, got " + describeJson(json));
        auto shapeIt = json.find("shape");
        if (shapeIt == json.end() || !shapeIt->is_string()) {
            return error(path, "expected a \"shape\" string");
        }
        StatusOr<Shape> shape = literal_internal::parseShapeText(shapeIt->get<std::string>());
        if (!shape.isOk()) {
            std::string where;
            if (const auto& location = shape.status().location();
                location && location->column > 0) {
                where = " (column " + std::to_string(location->column) + ")";
            }
            return error(path + "/shape", "invalid shape \"" + shapeIt->get<std::string>() + "\"" +
                                              where + ": " + shape.status().message());
        }
        if (depth == 0) {
            if (Status size = literal_internal::checkLiteralSize(*shape); !size.isOk()) {
                return error(path + "/shape", size.message());
            }
        }
        Literal literal(*shape);
        if (shape->isTuple()) {
            auto elementsIt = json.find("elements");
            if (elementsIt == json.end() || !elementsIt->is_array()) {
                return error(path, "expected an \"elements\" array for a tuple literal");
            }
            if (elementsIt->size() != static_cast<size_t>(shape->tupleCount())) {
                return error(path + "/elements", "expected " + std::to_string(shape->tupleCount()) +
                                                     " elements, got " +
                                                     std::to_string(elementsIt->size()));
            }
            for (size_t i = 0; i < elementsIt->size(); ++i) {
                const std::string elementPath = path + "/elements/" + std::to_string(i);
                HLO_ASSIGN_OR_RETURN(Literal element,
                                     readLiteral((*elementsIt)[i], elementPath, depth + 1));
                const Shape& expected = shape->tupleShape(static_cast<int64_t>(i));
                if (element.shape().elementType() != expected.elementType() ||
                    element.shape().dimensions() != expected.dimensions() ||
                    element.shape().tupleCount() != expected.tupleCount()) {
                    return error(elementPath, "element shape " + element.shape().toString() +
                                                  " does not match the tuple's " +
                                                  expected.toString());
                }
                literal.mutableTupleElements()[i] = std::move(element);
            }
            return literal;
        }
        if (!literal_internal::holdsElements(*shape)) return literal;  // token, opaque
        auto valuesIt = json.find("values");
        if (valuesIt == json.end()) return error(path, "expected \"values\"");
        int64_t linear = 0;
        HLO_RETURN_IF_ERROR(readValues(literal, *valuesIt, path + "/values", 0, linear));
        return literal;
    }

private:
    Status readValues(Literal& literal, const Json& json, const std::string& path, size_t dim,
                      int64_t& linear) {
        const Shape& shape = literal.shape();
        if (dim == static_cast<size_t>(shape.rank()))
            return readElement(literal, linear++, json, path);
        const int64_t size = std::max<int64_t>(shape.dimensions(static_cast<int64_t>(dim)), 0);
        if (!json.is_array() || json.size() != static_cast<size_t>(size)) {
            return error(path, "expected an array of " + std::to_string(size) +
                                   " elements for dimension " + std::to_string(dim) + ", got " +
                                   (json.is_array() ? "an array of " + std::to_string(json.size())
                                                    : describeJson(json)));
        }
        for (size_t i = 0; i < json.size(); ++i) {
            HLO_RETURN_IF_ERROR(
                readValues(literal, json[i], path + "/" + std::to_string(i), dim + 1, linear));
        }
        return Status::ok();
    }

    // A floating-point component: a number or "nan" / "inf" / "-inf".
    StatusOr<double> readFloating(PrimitiveType type, const Json& json, const std::string& path) {
        const std::string typeName(primitive_util::name(type));
        if (json.is_string()) {
            const std::string text = json.get<std::string>();
            const double inf = std::numeric_limits<double>::infinity();
            const double nan = std::numeric_limits<double>::quiet_NaN();
            if (text == "nan" || text == "+nan") return nan;
            if (text == "-nan") return -nan;
            if (text == "inf" || text == "+inf") return inf;
            if (text == "-inf") return -inf;
        }
        if (!json.is_number()) {
            return error(path, "expected a number, \"nan\", \"inf\" or \"-inf\" for " + typeName +
                                   ", got " + describeJson(json));
        }
        const double value = json.get<double>();
        bool finite = true;
        if (type == PrimitiveType::F32) {
            finite = std::isfinite(static_cast<float>(value));
        } else if (type != PrimitiveType::F64) {
            finite =
                std::isfinite(float_util::bitsToFloat(type, float_util::doubleToBits(type, value)));
        }
        if (std::isfinite(value) && !finite) {
            return error(path, "value " + json.dump() + " is out of range for " + typeName);
        }
        return value;
    }

    Status readElement(Literal& literal, int64_t index, const Json& json, const std::string& path) {
        const PrimitiveType type = literal.elementType();
        const std::string typeName(primitive_util::name(type));
        if (type == PrimitiveType::PRED) {
            if (json.is_boolean()) {
                literal.setFromInt64(index, json.get<bool>() ? 1 : 0);
            } else if (json.is_number_integer()) {
                literal.setFromInt64(index, json.get<int64_t>() != 0 ? 1 : 0);
            } else {
                return error(path, "expected true or false for pred, got " + describeJson(json));
            }
            return Status::ok();
        }
        if (primitive_util::isInteger(type)) {
            if (!json.is_number_integer()) {
                return error(path,
                             "expected an integer for " + typeName + ", got " + describeJson(json));
            }
            const int bits = primitive_util::bitWidth(type);
            if (primitive_util::isSignedInteger(type)) {
                const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max()
                                               : (int64_t{1} << (bits - 1)) - 1;
                const int64_t min = -max - 1;
                if (json.is_number_unsigned() &&
                    json.get<uint64_t>() > static_cast<uint64_t>(max)) {
                    return error(path, "value " + json.dump() + " is out of range for " + typeName);
                }
                const auto value = json.get<int64_t>();
                if (value < min || value > max) {
                    return error(path, "value " + json.dump() + " is out of range for " + typeName);
                }
                literal.setFromInt64(index, value);
            } else {
                const uint64_t max =
                    bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
                if (!json.is_number_unsigned() && json.get<int64_t>() < 0) {
                    return error(path, "value " + json.dump() + " is out of range for " + typeName);
                }
                const auto value = json.get<uint64_t>();
                if (value > max) {
                    return error(path, "value " + json.dump() + " is out of range for " + typeName);
                }
                literal.setFromInt64(index, static_cast<int64_t>(value));
            }
            return Status::ok();
        }
        if (primitive_util::isComplex(type)) {
            if (!json.is_array() || json.size() != 2) {
                return error(path,
                             "expected [re, im] for " + typeName + ", got " + describeJson(json));
            }
            const PrimitiveType component = primitive_util::complexComponentType(type);
            HLO_ASSIGN_OR_RETURN(double re, readFloating(component, json[0], path + "/0"));
            HLO_ASSIGN_OR_RETURN(double im, readFloating(component, json[1], path + "/1"));
            literal.setFromComplex(index, {re, im});
            return Status::ok();
        }
        HLO_ASSIGN_OR_RETURN(double value, readFloating(type, json, path));
        literal.setFromDouble(index, value);
        return Status::ok();
    }

    std::string m_fileName;
};

}  // namespace

std::string literalToJson(const Literal& literal) { return literalToJsonValue(literal).dump(); }

namespace {

// Parses JSON text; a syntax error is reported at its line:column.
StatusOr<Json> parseJson(std::string_view text, const std::string& fileName) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        int line = 1;
        int column = 1;
        for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return Status(StatusCode::kInvalidArgument, std::string("invalid JSON: ") + e.what(),
                      SourceLocation{fileName, line, column});
    } catch (const Json::exception& e) {
        // A number out of double's range ("1e999") and the like: no position.
        return Status(StatusCode::kInvalidArgument, std::string("invalid JSON: ") + e.what(),
                      SourceLocation{fileName, 0, 0});
    }
}

}  // namespace

StatusOr<Literal> literalFromJson(std::string_view text, const std::string& fileName) {
    HLO_ASSIGN_OR_RETURN(Json document, parseJson(text, fileName));
    JsonReader reader(fileName);
    return reader.readLiteral(document, "", 0);
}

StatusOr<std::vector<Literal>> literalsFromJson(std::string_view text,
                                                const std::string& fileName) {
    HLO_ASSIGN_OR_RETURN(Json document, parseJson(text, fileName));
    JsonReader reader(fileName);
    std::vector<Literal> literals;
    if (!document.is_array()) {
        HLO_ASSIGN_OR_RETURN(Literal literal, reader.readLiteral(document, "", 0));
        literals.push_back(std::move(literal));
        return literals;
    }
    for (size_t i = 0; i < document.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(Literal literal,
                             reader.readLiteral(document[i], "/" + std::to_string(i), 0));
        literals.push_back(std::move(literal));
    }
    return literals;
}

}  // namespace hloscope
