#include "core/io/input_limits.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "core/ir/shape.h"

namespace hloscope::limits {
namespace {

// A positive integer environment variable in MiB, or 0 when unset or malformed.
int64_t environmentMiB(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return 0;
    char* end = nullptr;
    const long long mib = std::strtoll(value, &end, 10);
    if (end == value || *end != '\0' || mib <= 0 || mib > (int64_t{1} << 40)) return 0;
    return static_cast<int64_t>(mib) << 20;
}

std::string mib(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

Status checkArray(const Shape& shape) {
    if (shape.rank() > kMaxRank)
        return Status(StatusCode::kResourceExhausted, "shape has " + std::to_string(shape.rank()) +
                                                          " dimensions; the limit is " +
                                                          std::to_string(kMaxRank));
    const auto& dims = shape.dimensions();
    if (!arrayWithinLimits(dims.data(), dims.size(), shape.elementType()))
        return Status(StatusCode::kResourceExhausted,
                      "shape " + shape.toString() + ": " + arraySizeLimitMessage());
    return Status::ok();
}

}  // namespace

int64_t maxInputFileBytes() {
    const int64_t fromEnvironment = environmentMiB("HLOSCOPE_MAX_INPUT_MB");
    return fromEnvironment > 0 ? fromEnvironment : kDefaultMaxInputFileBytes;
}

Status checkInputFileSize(const std::string& path, int64_t bytes) {
    const int64_t limit = maxInputFileBytes();
    if (bytes <= limit) return Status::ok();
    return Status(StatusCode::kResourceExhausted,
                  path + ": the file is " + mib(bytes) + ", over the " + mib(limit) +
                      " input limit (HLOSCOPE_MAX_INPUT_MB raises it)");
}

bool arrayWithinLimits(const int64_t* dims, size_t rank, PrimitiveType type) {
    int64_t product = 1;
    bool empty = false;
    for (size_t i = 0; i < rank; ++i) {
        const int64_t d = dims[i];
        if (d == Shape::kUnboundedSize) continue;  // "?": no static size
        if (d == 0) {
            empty = true;
            continue;
        }
        if (d < 0 || product > kMaxArrayElements / d) return false;
        product *= d;
    }
    const int64_t width = std::max<int64_t>(1, primitive_util::byteWidth(type));
    return empty || product <= kMaxArrayBytes / width;
}

std::string arraySizeLimitMessage() {
    return "more than 2^62 elements or 2^62 bytes in one array (the limit)";
}

Status checkShapeLimits(const Shape& shape) {
    if (shape.isTuple()) {
        for (int64_t i = 0; i < shape.tupleCount(); ++i)
            HLO_RETURN_IF_ERROR(checkShapeLimits(shape.tupleShape(i)));
        return Status::ok();
    }
    if (shape.isArray()) return checkArray(shape);
    return Status::ok();
}

int64_t maxParsedLiteralBytes() {
    const int64_t fromEnvironment = environmentMiB("HLOSCOPE_MAX_LITERAL_MB");
    return fromEnvironment > 0 ? fromEnvironment : int64_t{4} << 30;
}

int64_t evaluationMemoryLimitBytes() {
    const int64_t fromEnvironment = environmentMiB("HLOSCOPE_EVAL_MEMORY_MB");
    if (fromEnvironment > 0) return fromEnvironment;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    int64_t half = pages > 0 && pageSize > 0 ? static_cast<int64_t>(pages) * pageSize / 2 : 0;
    return std::max<int64_t>(half, int64_t{1} << 30);
}

}  // namespace hloscope::limits
