// Status and StatusOr: the error currency of core/ and compiler/.
//
// Malformed input is reported as a Status carrying a message and, where the
// error comes from text, the file:line:col it points at. No exceptions cross
// layer boundaries; `assert` is reserved for programming errors.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace hloscope {

enum class StatusCode {
    kOk = 0,
    kInvalidArgument,  // malformed input (parse errors, bad JSON, bad flags)
    kFailedPrecondition,  // well-formed but semantically invalid (verifier)
    kNotFound,
    kUnimplemented,
    kOutOfRange,
    kResourceExhausted,
    kCancelled,
    kInternal,
    kIoError,
};

std::string_view statusCodeName(StatusCode code);

// A position in a text input. line and column are 1-based; 0 means unknown.
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;

    bool isValid() const { return line > 0; }
    bool operator==(const SourceLocation&) const = default;
    // "file:line:col", or "file" / "" when parts are unknown.
    std::string toString() const;
};

class Status {
public:
    Status() = default;  // OK
    Status(StatusCode code, std::string message) : m_code(code), m_message(std::move(message)) {}
    Status(StatusCode code, std::string message, SourceLocation location)
        : m_code(code), m_message(std::move(message)), m_location(std::move(location)) {}

    static Status ok() { return Status(); }

    bool isOk() const { return m_code == StatusCode::kOk; }
    StatusCode code() const { return m_code; }
    const std::string& message() const { return m_message; }
    const std::optional<SourceLocation>& location() const { return m_location; }

    // Returns a copy with `context + ": "` prepended to the message.
    Status withContext(std::string_view context) const;
    Status withLocation(SourceLocation location) const;

    // "file:line:col: error: message" (the location part only when known).
    std::string toString() const;

    bool operator==(const Status& other) const = default;

private:
    StatusCode m_code = StatusCode::kOk;
    std::string m_message;
    std::optional<SourceLocation> m_location;
};

inline Status invalidArgument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status failedPrecondition(std::string message) {
    return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status unimplemented(std::string message) {
    return Status(StatusCode::kUnimplemented, std::move(message));
}
inline Status notFound(std::string message) {
    return Status(StatusCode::kNotFound, std::move(message));
}
inline Status internalError(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
}
inline Status ioError(std::string message) {
    return Status(StatusCode::kIoError, std::move(message));
}

template <typename T>
class StatusOr {
public:
    StatusOr(const Status& status) : m_value(status) { assert(!status.isOk()); }
    StatusOr(Status&& status) : m_value(std::move(status)) {
        assert(!std::get<Status>(m_value).isOk());
    }
    StatusOr(const T& value) : m_value(value) {}
    StatusOr(T&& value) : m_value(std::move(value)) {}
    template <typename U>
        requires(std::is_convertible_v<U &&, T> && !std::is_same_v<std::decay_t<U>, Status> &&
                 !std::is_same_v<std::decay_t<U>, T>)
    StatusOr(U&& value) : m_value(T(std::forward<U>(value))) {}

    bool isOk() const { return m_value.index() == 0; }
    const Status& status() const {
        static const Status kOk;
        return isOk() ? kOk : std::get<Status>(m_value);
    }

    T& value() & {
        assert(isOk());
        return std::get<T>(m_value);
    }
    const T& value() const& {
        assert(isOk());
        return std::get<T>(m_value);
    }
    T&& value() && {
        assert(isOk());
        return std::get<T>(std::move(m_value));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::variant<T, Status> m_value;
};

}  // namespace hloscope

#define HLO_STATUS_CONCAT_INNER(a, b) a##b
#define HLO_STATUS_CONCAT(a, b) HLO_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define HLO_RETURN_IF_ERROR(expr)                            \
    do {                                                     \
        ::hloscope::Status hlo_status_tmp_ = (expr);         \
        if (!hlo_status_tmp_.isOk()) return hlo_status_tmp_; \
    } while (false)

// `HLO_ASSIGN_OR_RETURN(auto x, makeX());` declares/assigns from a StatusOr.
#define HLO_ASSIGN_OR_RETURN(lhs, expr) \
    HLO_ASSIGN_OR_RETURN_IMPL(HLO_STATUS_CONCAT(hlo_statusor_, __LINE__), lhs, expr)
#define HLO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                            \
    if (!tmp.isOk()) return tmp.status();         \
    lhs = std::move(tmp).value()
