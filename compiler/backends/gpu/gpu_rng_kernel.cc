// The GPU's rng-bit-generator kernel (GpuKernelGen::emitRngBitGenerator): the interpreter's
// generators (core/interpreter/interpreter.cc, XLA's prng bit for bit) with a thread per counter value,
// since every block of bits depends only on the key and its counter:
//   * rng_three_fry: ThreeFry-2x32 of counter + i; 64-bit outputs take both words, narrower
//     ones put the two words next to each other along the first even dimension (or the
//     longest), as XLA does;
//   * rng_philox (and rng_default): Philox-4x32 of the 128-bit counter (low, high) + i, four
//     32-bit words (or two 64-bit values) per counter.
// Thread 0 also writes the new state (the counter advanced by the values used). The state is
// read on the device: a plan that loops over a generator sees it advance. Parameters
// [new state, bits, state]; outputs of 8, 16, 32 or 64 bits hold the low bits of each value.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/prng_layout.h"

namespace hloscope::gpu_internal {
namespace {

// What an rng-bit-generator computes: its output's element bits and count, the state's
// words, the algorithm, ThreeFry's split dimension and the counter values the kernel uses.
struct RngFormat {
    int bits = 0;
    int64_t words = 0;
    bool threeFry = false;
    int64_t n = 0;
    ThreeFrySplit layout;
    int64_t counters = 0;
};

StatusOr<RngFormat> rngFormat(const HloInstruction& rng) {
    const Shape& shape = rng.shape();
    if (!shape.isTuple() || shape.tupleCount() != 2 || !shape.tupleShape(1).isArray())
        return unsupportedAt(rng, "rng-bit-generator whose result is not (state, bits)");
    const Shape& data = shape.tupleShape(1);
    const PrimitiveType type = data.elementType();
    RngFormat format;
    format.bits = primitive_util::bitWidth(type);
    const int bits = format.bits;
    if (type == PrimitiveType::PRED || primitive_util::isComplex(type) ||
        (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        return unsupportedAt(rng, "rng-bit-generator of " +
                                      std::string(primitive_util::name(type)) +
                                      " (8, 16, 32 and 64-bit types are compiled)");
    const Shape& stateShape = rng.operand(0)->shape();
    format.words = stateShape.isArray() ? stateShape.elementCount() : 0;
    if (!stateShape.isArray() || stateShape.elementType() != PrimitiveType::U64 ||
        !shape.tupleShape(0).isArray() || shape.tupleShape(0).elementCount() != format.words)
        return unsupportedAt(rng, "rng-bit-generator state must be u64[N] in and out");
    std::string algorithm = "rng_default";
    if (auto text = rng.attribute("algorithm")) algorithm = std::string(*text);
    if (algorithm == "rng_default") algorithm = "rng_philox";
    format.threeFry = algorithm == "rng_three_fry";
    if (!format.threeFry && algorithm != "rng_philox")
        return unsupportedAt(rng, "rng-bit-generator algorithm " + algorithm);
    if (format.threeFry ? format.words != 2 : format.words != 2 && format.words != 3)
        return unsupportedAt(rng, format.threeFry ? "three_fry state must be u64[2]"
                                                  : "philox state must be u64[2] or u64[3]");
    const int64_t n = format.n = data.elementCount();
    // ThreeFry with outputs under 64 bits: a dimension split into halves (core/ir/prng_layout.h).
    if (format.threeFry && bits != 64) format.layout = threeFrySplit(data.dimensions());
    const int64_t half = (format.layout.size + 1) / 2;
    format.counters =
        format.threeFry ? (bits == 64 ? n : format.layout.outer * half * format.layout.inner)
                        : (bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4);
    return format;
}

// The generators' arithmetic on 32-bit words, and the stores of their values into `bits`.
struct RngIr {
    llvm::IRBuilderBase& b;
    llvm::Function* function;
    Value* bits;  // the output's elements
    const RngFormat& format;

    llvm::Type* i32() { return b.getInt32Ty(); }
    llvm::Type* i64() { return b.getInt64Ty(); }
    Value* c64(int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }
    Value* u32(uint32_t v) { return b.getInt32(v); }
    Value* low(Value* v) { return b.CreateTrunc(v, i32()); }
    Value* high(Value* v) { return b.CreateTrunc(b.CreateLShr(v, c64(32)), i32()); }
    Value* join(Value* lo, Value* hi) {
        return b.CreateOr(b.CreateZExt(lo, i64()), b.CreateShl(b.CreateZExt(hi, i64()), 32));
    }
    Value* rotl(Value* v, int r) {
        return b.CreateIntrinsic(llvm::Intrinsic::fshl, {i32()}, {v, v, u32(uint32_t(r))});
    }
    // Stores the low bits of `value` at element `at`, when `at` < n.
    void store(Value* at, Value* value) {
        llvm::Type* out = b.getIntNTy(static_cast<unsigned>(format.bits));
        llvm::BasicBlock* yes = llvm::BasicBlock::Create(b.getContext(), "store", function);
        llvm::BasicBlock* after = llvm::BasicBlock::Create(b.getContext(), "stored", function);
        b.CreateCondBr(b.CreateICmpULT(at, c64(format.n)), yes, after);
        b.SetInsertPoint(yes);
        b.CreateStore(b.CreateTrunc(value, out), b.CreateInBoundsGEP(out, bits, at));
        b.CreateBr(after);
        b.SetInsertPoint(after);
    }
    // ThreeFry-2x32 of counter s1 + i under `key`, stored.
    void threeFry(Value* i, const std::array<Value*, 2>& key, Value* s1) {
        static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
        const std::array<Value*, 3> ks = {
            key[0], key[1], b.CreateXor(u32(0x1BD11BDAu), b.CreateXor(key[0], key[1]))};
        Value* counter = b.CreateAdd(s1, i);
        Value* x0 = b.CreateAdd(low(counter), ks[0]);
        Value* x1 = b.CreateAdd(high(counter), ks[1]);
        for (uint32_t block = 1; block <= 5; ++block) {
            const int first = block % 2 == 1 ? 0 : 4;
            for (int r = first; r < first + 4; ++r) {
                x0 = b.CreateAdd(x0, x1);
                x1 = b.CreateXor(rotl(x1, kRotations[r]), x0);
            }
            x0 = b.CreateAdd(x0, ks[block % 3]);
            x1 = b.CreateAdd(x1, b.CreateAdd(ks[(block + 1) % 3], u32(block)));
        }
        if (format.bits == 64) {
            store(i, join(x0, x1));
            return;
        }
        const int64_t inner = format.layout.inner, d = format.layout.size;
        const int64_t half = (d + 1) / 2;
        Value* o = b.CreateUDiv(i, c64(half * inner));
        Value* h = b.CreateURem(b.CreateUDiv(i, c64(inner)), c64(half));
        Value* r = b.CreateURem(i, c64(inner));
        Value* values[2] = {x0, x1};
        for (int64_t k = 0; k < 2; ++k) {
            Value* j = b.CreateAdd(b.CreateMul(h, c64(2)), c64(k));
            Value* at =
                b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(o, c64(d)), j), c64(inner)), r);
            // j < d: an odd dimension's last pair has one element.
            store(b.CreateSelect(b.CreateICmpULT(j, c64(d)), at, c64(format.n)), values[k]);
        }
    }
    // Philox-4x32 of the 128-bit counter (s1, carryWord) + i under `key`, stored.
    void philox(Value* i, const std::array<Value*, 2>& key, Value* s1, Value* carryWord) {
        Value* lo = b.CreateAdd(s1, i);
        Value* hi =
            b.CreateSelect(b.CreateICmpULT(lo, s1), b.CreateAdd(carryWord, c64(1)), carryWord);
        std::array<Value*, 4> x = {low(lo), high(lo), low(hi), high(hi)};
        Value* k0 = key[0];
        Value* k1 = key[1];
        for (int round = 0; round < 10; ++round) {
            Value* p0 = b.CreateMul(b.CreateZExt(x[0], i64()), c64(0xD2511F53));
            Value* p1 = b.CreateMul(b.CreateZExt(x[2], i64()), c64(0xCD9E8D57));
            x = {b.CreateXor(b.CreateXor(high(p1), x[1]), k0), low(p1),
                 b.CreateXor(b.CreateXor(high(p0), x[3]), k1), low(p0)};
            k0 = b.CreateAdd(k0, u32(0x9E3779B9u));
            k1 = b.CreateAdd(k1, u32(0xBB67AE85u));
        }
        if (format.bits == 64) {
            for (int64_t k = 0; k < 2; ++k)
                store(b.CreateAdd(b.CreateMul(i, c64(2)), c64(k)),
                      join(x[static_cast<size_t>(2 * k)], x[static_cast<size_t>(2 * k + 1)]));
        } else {
            for (int64_t k = 0; k < 4; ++k)
                store(b.CreateAdd(b.CreateMul(i, c64(4)), c64(k)),
                      b.CreateZExt(x[static_cast<size_t>(k)], i64()));
        }
    }
};

}  // namespace

StatusOr<GpuKernelInfo> GpuKernelGen::emitRngBitGenerator(GpuKernelInfo info) {
    const HloInstruction& rng = *m_spec.outputs[0];
    HLO_ASSIGN_OR_RETURN(const RngFormat format, rngFormat(rng));
    const int64_t counters = format.counters;
    info.kind = GpuKernelKind::kLoop;
    info.outputElements = format.n;
    info.launch = loopLaunch(std::max<int64_t>(counters, 1));
    m_outputsAreReduces = false;
    std::vector<Value*> params = beginEntry(m_spec.name, 3, info.launch.block[0]);
    RngIr ir{m_b, m_function, params[1], format};
    auto word = [&](int64_t k) {
        return m_b.CreateLoad(i64(), m_b.CreateInBoundsGEP(i64(), params[2], c64(k)));
    };
    Value* s0 = word(0);
    Value* s1 = word(1);
    Value* carryWord = format.words == 3 ? word(2) : s0;  // philox's high counter word
    const std::array<Value*, 2> key = {ir.low(s0), ir.high(s0)};

    // The new state, by thread 0.
    {
        Value* first = globalThread();
        llvm::BasicBlock* write = llvm::BasicBlock::Create(m_b.getContext(), "state", m_function);
        llvm::BasicBlock* next = llvm::BasicBlock::Create(m_b.getContext(), "bits", m_function);
        m_b.CreateCondBr(m_b.CreateICmpEQ(first, c64(0)), write, next);
        m_b.SetInsertPoint(write);
        Value* advanced = m_b.CreateAdd(s1, c64(counters));
        std::vector<Value*> state = {s0, advanced};
        if (format.words == 3)
            state.push_back(m_b.CreateSelect(m_b.CreateICmpULT(advanced, s1),
                                             m_b.CreateAdd(carryWord, c64(1)), carryWord));
        for (size_t k = 0; k < state.size(); ++k)
            m_b.CreateStore(state[k], m_b.CreateInBoundsGEP(i64(), params[0], c64(int64_t(k))));
        m_b.CreateBr(next);
        m_b.SetInsertPoint(next);
    }
    if (counters == 0) {
        m_b.CreateRetVoid();
        return info;
    }
    GridLoop loop = beginGridLoop(counters, "counter");
    if (format.threeFry)
        ir.threeFry(loop.position, key, s1);
    else
        ir.philox(loop.position, key, s1, carryWord);
    endGridLoop(loop, counters);
    m_b.CreateRetVoid();
    return info;
}

}  // namespace hloscope::gpu_internal
