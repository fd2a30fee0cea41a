#include "core/ir/fft_geometry.h"

#include "core/ir/primitive_type.h"

namespace hloscope {

StatusOr<FftGeometry> fftGeometry(const HloInstruction& fft, const Shape& inShape) {
    FftGeometry g;
    const HloExtraAttributes* extra = fft.extra();
    g.type = extra && extra->fftType ? *extra->fftType : "FFT";
    g.lengths = extra ? extra->fftLength : std::vector<int64_t>{};
    const size_t l = g.lengths.size();
    const Shape& outShape = fft.shape();
    if (!inShape.isArray() || l < 1 || l > 3 || static_cast<int64_t>(l) > inShape.rank())
        return invalidArgument("fft_length must name 1 to 3 trailing dimensions");
    if (!outShape.isArray() || outShape.rank() != inShape.rank())
        return invalidArgument("fft result rank differs from the operand");
    for (int64_t v : g.lengths)
        if (v < 0) return invalidArgument("negative fft_length");
    if (g.type != "FFT" && g.type != "IFFT" && g.type != "RFFT" && g.type != "IRFFT")
        return invalidArgument("unknown fft_type " + g.type);
    g.inverse = g.type == "IFFT" || g.type == "IRFFT";
    g.realInput = g.type == "RFFT";
    g.realOutput = g.type == "IRFFT";
    const bool inComplex = primitive_util::isComplex(inShape.elementType());
    const bool outComplex = primitive_util::isComplex(outShape.elementType());
    if (inComplex == g.realInput || outComplex == g.realOutput)
        return invalidArgument(g.type + " operand/result element types do not fit");
    const size_t lead = static_cast<size_t>(inShape.rank()) - l;
    int64_t batch = 1;
    for (size_t i = 0; i < lead; ++i) {
        if (inShape.dimensions(static_cast<int64_t>(i)) !=
            outShape.dimensions(static_cast<int64_t>(i)))
            return invalidArgument("fft batch dimensions differ");
        batch *= inShape.dimensions(static_cast<int64_t>(i));
    }
    auto trailing = [&](const Shape& shape) {
        std::vector<int64_t> dims = {batch};
        for (size_t i = lead; i < static_cast<size_t>(shape.rank()); ++i)
            dims.push_back(shape.dimensions(static_cast<int64_t>(i)));
        return dims;
    };
    g.inDims = trailing(inShape);
    g.outDims = trailing(outShape);
    g.workDims = {batch};
    g.workDims.insert(g.workDims.end(), g.lengths.begin(), g.lengths.end());
    if (g.realOutput) g.workDims.back() = g.lengths.back() / 2 + 1;
    return g;
}

}  // namespace hloscope
