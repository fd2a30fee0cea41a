#include "core/support/status.h"

namespace hloscope {

std::string_view statusCodeName(StatusCode code) {
    switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kIoError: return "i/o error";
    }
    return "unknown";
}

std::string SourceLocation::toString() const {
    std::string out = file;
    if (line > 0) {
        if (!out.empty()) out += ':';
        out += std::to_string(line);
        if (column > 0) {
            out += ':';
            out += std::to_string(column);
        }
    }
    return out;
}

Status Status::withContext(std::string_view context) const {
    if (isOk()) return *this;
    Status copy = *this;
    copy.m_message = std::string(context) + ": " + m_message;
    return copy;
}

Status Status::withLocation(SourceLocation location) const {
    Status copy = *this;
    copy.m_location = std::move(location);
    return copy;
}

std::string Status::toString() const {
    if (isOk()) return "ok";
    std::string out;
    if (m_location) {
        std::string loc = m_location->toString();
        if (!loc.empty()) out = loc + ": ";
    }
    out += "error: ";
    out += m_message;
    return out;
}

}  // namespace hloscope
