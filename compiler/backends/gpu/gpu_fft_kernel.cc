// The GPU's FFT kernel (GpuKernelEmitter::emitFftAxis): one axis of a transform, a thread per
// output element in a grid-stride loop, each summing its line directly. The twiddle of term t
// for output k is table[(k * t) mod n], its index kept exactly by adding k modulo n at each
// step, so no angle is ever rounded on the device; the table (gpu_plan_fft.cc) is computed on
// the host in long double. O(n) work per element: a direct sum rather than a radix-2
// butterfly, which keeps every length (primes included) on one path, and for the short axes of
// the modules that use FFT costs less than the launches around it.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"

namespace hloscope {

namespace gpu_internal {
namespace {

Value* c64(llvm::IRBuilderBase& b, int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }

// Component `part` (0 re, 1 im) of complex element `at` of a (re, im) array of `real`s.
Value* loadPart(llvm::IRBuilderBase& b, llvm::Type* real, Value* base, Value* at, int part) {
    Value* slot = b.CreateAdd(b.CreateShl(at, c64(b, 1)), c64(b, part));
    return b.CreateLoad(real, b.CreateInBoundsGEP(real, base, slot));
}

// Output element i's line: whether it is inside (every coordinate but the axis within src,
// the axis below the transform's length), the source position of its line's start, and its
// coordinate k along the axis.
struct FftLine {
    Value* inside;
    Value* base;
    Value* k;
};
FftLine fftLine(llvm::IRBuilderBase& b, const GpuFftAxis& fft, Value* i,
                const std::vector<int64_t>& srcStride) {
    const std::vector<int64_t>& src = fft.srcDims;
    const std::vector<int64_t>& dst = fft.dstDims;
    Value* rest = i;
    FftLine line{b.getTrue(), c64(b, 0), c64(b, 0)};
    for (size_t d = dst.size(); d-- > 0;) {
        Value* coordinate = d == 0 ? rest : b.CreateURem(rest, c64(b, dst[d]));
        if (d > 0) rest = b.CreateUDiv(rest, c64(b, dst[d]));
        if (d == fft.axis) {
            line.k = coordinate;
            line.inside = b.CreateAnd(line.inside, b.CreateICmpULT(coordinate, c64(b, fft.length)));
        } else {
            if (dst[d] > src[d])
                line.inside = b.CreateAnd(line.inside, b.CreateICmpULT(coordinate, c64(b, src[d])));
            line.base = b.CreateAdd(line.base, b.CreateMul(coordinate, c64(b, srcStride[d])));
        }
    }
    return line;
}

// Term t of the line at `base` in `source`: x(t), read from the `stored` terms (mirrored and
// conjugated beyond the stored half of a Hermitian line), zero beyond them; (re, im).
std::pair<Value*, Value*> fftTerm(llvm::IRBuilderBase& b, const GpuFftAxis& fft, llvm::Type* real,
                                  Value* source, Value* base, Value* t, int64_t stored,
                                  int64_t stride) {
    const int64_t n = fft.length;
    Value* zero = llvm::ConstantFP::get(real, 0.0);
    Value* at = t;
    Value* mirrored = b.getFalse();
    if (fft.hermitian) {
        mirrored = b.CreateICmpUGE(t, c64(b, n / 2 + 1));
        at = b.CreateSelect(mirrored, b.CreateSub(c64(b, n), t), t);
    }
    Value* present = b.CreateICmpULT(at, c64(b, stored));
    Value* element = b.CreateAdd(
        base, b.CreateMul(b.CreateSelect(present, at, c64(b, 0)), c64(b, stride)));
    Value* xr = nullptr;
    Value* xi = zero;
    if (fft.realSource) {
        xr = b.CreateLoad(real, b.CreateInBoundsGEP(real, source, element));
    } else {
        xr = loadPart(b, real, source, element, 0);
        xi = loadPart(b, real, source, element, 1);
        if (fft.hermitian) xi = b.CreateSelect(mirrored, b.CreateFNeg(xi), xi);
    }
    return {b.CreateSelect(present, xr, zero), b.CreateSelect(present, xi, zero)};
}

}  // namespace

StatusOr<GpuKernelInfo> GpuKernelGen::emitFftAxis(const GpuFftAxis& fft) {
    const std::vector<int64_t>& src = fft.srcDims;
    const std::vector<int64_t>& dst = fft.dstDims;
    const size_t rank = dst.size();
    if (src.size() != rank || fft.axis >= rank || fft.length < 0)
        return internalError("FFT kernel " + m_spec.name + ": inconsistent axis description");
    const int64_t n = fft.length;
    const int64_t elements = product(dst);
    // Source terms along the axis: the line cut to the transform's length, or for a Hermitian
    // line the stored half (n / 2 + 1 at most) that every term is read from.
    const int64_t stored =
        fft.hermitian ? std::min(src[fft.axis], n / 2 + 1) : std::min(src[fft.axis], n);
    const int64_t terms = stored == 0 ? 0 : n;
    std::vector<int64_t> srcStride(rank, 1);
    for (size_t d = rank; d-- > 1;) srcStride[d - 1] = srcStride[d] * src[d];

    GpuKernelInfo info;
    info.entry = m_spec.name;
    info.kind = GpuKernelKind::kLoop;
    info.outputElements = elements;
    info.launch = loopLaunch(elements);
    std::vector<Value*> params = beginEntry(m_spec.name, 3, info.launch.block[0]);
    llvm::LLVMContext& context = m_b.getContext();
    llvm::Type* real = fft.doublePrecision ? m_b.getDoubleTy() : m_b.getFloatTy();
    auto constant = [&](double v) { return llvm::ConstantFP::get(real, v); };

    GridLoop loop = beginGridLoop(elements, "element");
    Value* i = loop.position;
    const FftLine line = fftLine(m_b, fft, i, srcStride);
    llvm::BasicBlock* sum = llvm::BasicBlock::Create(context, "sum", m_function);
    llvm::BasicBlock* term = llvm::BasicBlock::Create(context, "term", m_function);
    llvm::BasicBlock* store = llvm::BasicBlock::Create(context, "store", m_function);
    llvm::BasicBlock* entryBlock = m_b.GetInsertBlock();
    m_b.CreateCondBr(m_b.CreateAnd(line.inside, m_b.getInt1(terms > 0)), sum, store);

    m_b.SetInsertPoint(sum);
    m_b.CreateBr(term);
    m_b.SetInsertPoint(term);
    llvm::PHINode* t = m_b.CreatePHI(i64(), 2, "t");
    llvm::PHINode* twiddle = m_b.CreatePHI(i64(), 2, "twiddle");
    llvm::PHINode* re = m_b.CreatePHI(real, 2, "re");
    llvm::PHINode* im = m_b.CreatePHI(real, 2, "im");
    t->addIncoming(c64(0), sum);
    twiddle->addIncoming(c64(0), sum);
    re->addIncoming(constant(0), sum);
    im->addIncoming(constant(0), sum);
    const auto [xr, xi] =
        fftTerm(m_b, fft, real, params[1], line.base, t, stored, srcStride[fft.axis]);
    Value* wr = loadPart(m_b, real, params[2], twiddle, 0);
    Value* wi = loadPart(m_b, real, params[2], twiddle, 1);
    Value* nextRe =
        m_b.CreateFAdd(re, m_b.CreateFSub(m_b.CreateFMul(xr, wr), m_b.CreateFMul(xi, wi)));
    Value* nextIm =
        m_b.CreateFAdd(im, m_b.CreateFAdd(m_b.CreateFMul(xr, wi), m_b.CreateFMul(xi, wr)));
    Value* stepped = m_b.CreateAdd(twiddle, line.k);
    Value* nextTwiddle = m_b.CreateSelect(m_b.CreateICmpUGE(stepped, c64(n)),
                                          m_b.CreateSub(stepped, c64(n)), stepped);
    Value* nextT = m_b.CreateAdd(t, c64(1));
    t->addIncoming(nextT, term);
    twiddle->addIncoming(nextTwiddle, term);
    re->addIncoming(nextRe, term);
    im->addIncoming(nextIm, term);
    m_b.CreateCondBr(m_b.CreateICmpULT(nextT, c64(terms)), term, store);

    m_b.SetInsertPoint(store);
    llvm::PHINode* outRe = m_b.CreatePHI(real, 2, "out.re");
    llvm::PHINode* outIm = m_b.CreatePHI(real, 2, "out.im");
    outRe->addIncoming(constant(0), entryBlock);
    outIm->addIncoming(constant(0), entryBlock);
    outRe->addIncoming(nextRe, term);
    outIm->addIncoming(nextIm, term);
    Value* scaledRe = m_b.CreateFMul(outRe, constant(fft.scale));
    Value* scaledIm = m_b.CreateFMul(outIm, constant(fft.scale));
    if (fft.realResult) {
        m_b.CreateStore(scaledRe, m_b.CreateInBoundsGEP(real, params[0], i));
    } else {
        Value* slot = m_b.CreateShl(i, c64(1));
        m_b.CreateStore(scaledRe, m_b.CreateInBoundsGEP(real, params[0], slot));
        m_b.CreateStore(scaledIm,
                        m_b.CreateInBoundsGEP(real, params[0], m_b.CreateAdd(slot, c64(1))));
    }
    endGridLoop(loop, elements);
    m_b.CreateRetVoid();
    return info;
}

}  // namespace gpu_internal

StatusOr<GpuKernelInfo> GpuKernelEmitter::emitFftAxis(const std::string& name,
                                                      const GpuFftAxis& axis) {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: emit after compileToPtx");
    KernelSpec spec;
    spec.name = name;
    gpu_internal::GpuKernelGen gen(m_impl->code, spec);
    HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, gen.emitFftAxis(axis));
    ++m_impl->code.kernels;
    return info;
}

}  // namespace hloscope
