// TPU tiling rules and tiled storage sizes.
//
// defaultLayoutForTarget() gives the layout layout assignment uses for an
// array shape on each target; paddedSizeInBytes() computes how many bytes an
// array occupies with its tiled layout (XLA's tiled-layout semantics,
// https://openxla.org/xla/tiled_layout): the first tile is applied to the
// minor-most physical dimensions, each dimension padded up to a multiple of
// its tile size; the tiled shape is (ceil(d/t)..., t...); each further tile
// applies to the minor dimensions of that tiled shape in the same way. A
// tile with more dimensions than the shape sees leading dimensions of size 1;
// a `*` (combine) tile dimension covers its whole dimension (no padding).
//
// TPU default tiles (mirroring the layouts XLA TPU writes, e.g. in
// ../shared/corpus/hlo: f32 {1,0:T(8,128)}, bf16 {1,0:T(8,128)(2,1)},
// s8/pred {..:T(8,128)(4,1)}, s32[6]{0:T(128)}, s32[1024]{0:T(1024)}):
//   rank >= 2: T(8,128) for types of 32 bits or more; T(8,128)(2,1) for
//              16-bit types; T(8,128)(4,1) for 8-bit types and pred;
//              T(8,128)(32/bits,1) for sub-byte types (pack into 32-bit words).
//   rank 1:    32 bits or more: T(1024) from 1024 elements, else T(128).
//              narrower: T(1024)(128)(k,1) from 1024 elements, else
//              T(128*k)(128)(k,1), k = 32/bits (16-bit: T(256)(128)(2,1),
//              8-bit: T(512)(128)(4,1)): the smallest first tile is one
//              128-lane row of packed 32-bit words, as XLA TPU's scalar tiles
//              T(128)/T(256)/T(512) for s32/bf16/pred show.
//   scalars:   no tiles.
// Not modelled: XLA TPU's smaller row tiles (T(1,128), T(2,128), T(4,128))
// for arrays whose second-minor dimension is small.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/ir/shape.h"

namespace hloscope {

enum class LayoutTarget : uint8_t { kCpu, kGpu, kTpu };

std::string_view layoutTargetName(LayoutTarget target);  // "cpu", "gpu", "tpu"

// Default TPU tiles of an array shape (see above); empty for scalars and
// non-arrays.
std::vector<Tile> tpuDefaultTiles(const Shape& arrayShape);

// The layout `target` gives an array shape with the given minor_to_major
// (tiles on TPU; none on CPU/GPU). Sub-byte element sizes and the memory
// space are not set here.
Layout targetLayout(const Shape& arrayShape, std::vector<int64_t> minorToMajor,
                    LayoutTarget target);

// The sizes below saturate at this (the largest array the readers accept, core/io/input_limits.h):
// padding a tiled shape near it can exceed what an int64_t holds.
inline constexpr int64_t kMaxSizeInBytes = int64_t{1} << 62;
// a + b for sizes in [0, kMaxSizeInBytes], saturating at kMaxSizeInBytes.
inline int64_t saturatingAdd(int64_t a, int64_t b) {
    return a > kMaxSizeInBytes - b ? kMaxSizeInBytes : a + b;
}

// Bytes of the dense array (no tiling): ceil(bits * elements / 8) for
// sub-byte types (bits from the layout's element size when set). Tuples: the
// sum of their elements; tokens and opaque values: 0.
int64_t logicalSizeInBytes(const Shape& shape);

// Storage bytes of an array with its tiled layout (dimensions padded to tile
// multiples, see above); equals logicalSizeInBytes for untiled layouts.
// Tuples: the sum of their elements (no pointer table); tokens: 0.
int64_t paddedSizeInBytes(const Shape& shape);

}  // namespace hloscope
