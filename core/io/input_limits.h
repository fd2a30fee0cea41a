// Limits on untrusted input. Modules arrive from colleagues, bug
// reports and the internet; every reader checks these before it allocates, and
// a module beyond one gets a clear error naming the file, line and column (or
// the instruction) and the limit, never a crash or an exhausted machine.
//
//   input file size      1 GiB (HLOSCOPE_MAX_INPUT_MB overrides), checked
//                        before the file is read
//   nesting depth        512 in HLO text and literal text, 128 in StableHLO
//                        (regions, types, attributes); JSON is read without
//                        recursion
//   shape rank           64 dimensions
//   array size           2^62 elements and 2^62 bytes per array shape (4 EiB:
//                        XLA's own tests hold s8 arrays of 2^59 elements, for
//                        shapes never allocated); every element count and byte
//                        size is computed with overflow checks when the shape
//                        is read, so int64 shape arithmetic downstream cannot
//                        overflow
//   literal size         4 GiB per literal read from text or JSON
//                        (HLOSCOPE_MAX_LITERAL_MB overrides)
//   evaluation memory    what the interpreter may hold at once: half the
//                        machine's memory (HLOSCOPE_EVAL_MEMORY_MB overrides),
//                        checked before each result is allocated
//
// Custom calls are never executed as code: the interpreter implements a fixed
// list of targets by name (TopK, JAX's threefry2x32, the sharding and
// placement annotations, and the test checks its caller registers) and
// rejects every other target with an error naming the instruction; the
// backends compile only opcodes, and nothing is looked up with dlsym. Dump
// folders are read only through listDumpFolder, which ignores entries that
// resolve outside the folder.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/primitive_type.h"
#include "core/support/status.h"

namespace hloscope {
class Shape;
}

namespace hloscope::limits {

inline constexpr int64_t kDefaultMaxInputFileBytes = int64_t{1} << 30;
inline constexpr int kMaxNestingDepth = 512;
inline constexpr int kMaxRank = 64;
inline constexpr int64_t kMaxArrayElements = int64_t{1} << 62;
inline constexpr int64_t kMaxArrayBytes = int64_t{1} << 62;

// The input file limit in bytes (HLOSCOPE_MAX_INPUT_MB, else 1 GiB).
int64_t maxInputFileBytes();
// Error (kResourceExhausted) naming `path`, its size and the limit when
// `bytes` exceeds maxInputFileBytes().
Status checkInputFileSize(const std::string& path, int64_t bytes);

// Checks one shape read from input: rank <= kMaxRank and, for every array
// (tuple elements recursively), the element count <= kMaxArrayElements and the
// byte size <= kMaxArrayBytes, with no overflow. The error message names the
// limit; the caller adds the place.
Status checkShapeLimits(const Shape& shape);

// Whether an array of `dims` (unbounded sizes skipped) of `type` is within
// kMaxArrayElements and kMaxArrayBytes (a sub-byte type counts a byte per
// element), computed without overflow. The product of the non-zero sizes must
// fit even when another size is 0: strides and loop bounds multiply them too.
bool arrayWithinLimits(const int64_t* dims, size_t rank, PrimitiveType type);

// The message of an array over those limits.
std::string arraySizeLimitMessage();

// The most bytes a literal read from text or JSON may hold
// (HLOSCOPE_MAX_LITERAL_MB, else kMaxParsedLiteralBytes: 4 GiB).
int64_t maxParsedLiteralBytes();

// The interpreter's memory budget in bytes (HLOSCOPE_EVAL_MEMORY_MB, else half
// of the physical memory, at least 1 GiB).
int64_t evaluationMemoryLimitBytes();

}  // namespace hloscope::limits
