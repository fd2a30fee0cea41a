#include "tests/random_hlo.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

namespace hloscope::testing {
namespace {

// splitmix64: the same sequence on every platform.
class Rng {
public:
    explicit Rng(uint64_t seed) : m_state(seed) {}
    uint64_t next() {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi].
    int64_t uniform(int64_t lo, int64_t hi) {
        return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
    }
    bool chance(int percent) { return uniform(0, 99) < percent; }
    template <typename T>
    const T& pick(const std::vector<T>& items) {
        return items[static_cast<size_t>(uniform(0, static_cast<int64_t>(items.size()) - 1))];
    }

private:
    uint64_t m_state;
};

using Dims = std::vector<int64_t>;

int64_t elementCount(const Dims& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

std::string joined(const std::vector<std::string>& items, const char* separator = ",") {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
    return out;
}

std::string dimsText(const Dims& dims) {
    std::vector<std::string> items;
    for (int64_t d : dims) items.push_back(std::to_string(d));
    return joined(items);
}

struct Value {
    std::string name;
    std::string type;  // "f32", "s32", "bf16", "pred"
    Dims dims;
    bool exact = false;  // see the header: domain-sensitive ops may take it as it is

    std::string shape() const { return type + "[" + dimsText(dims) + "]"; }
    std::string ref() const { return "%" + name; }
};

class Generator {
public:
    Generator(uint64_t seed, const RandomHloOptions& options) : m_rng(seed), m_options(options) {}

    RandomHlo run() {
        const int steps = static_cast<int>(m_rng.uniform(4, std::max(4, m_options.maxSteps)));
        for (int i = 0; i < steps; ++i) step();
        return finish();
    }

private:
    // ---- values ------------------------------------------------------------

    Dims randomDims(int minRank = 0, int maxRank = 3) {
        static const std::vector<int64_t> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 32, 64};
        for (;;) {
            int rank = static_cast<int>(m_rng.uniform(minRank, maxRank));
            if (rank == 0 && minRank == 0 && !m_rng.chance(30)) rank = 1;
            Dims dims;
            for (int i = 0; i < rank; ++i) dims.push_back(m_rng.pick(sizes));
            if (elementCount(dims) <= std::min<int64_t>(m_options.maxElements, 8192)) return dims;
        }
    }

    Value parameter(const std::string& type, const Dims& dims) {
        Value v{"p" + std::to_string(m_parameters.size()), type, dims, true};
        m_parameters.push_back("  " + v.ref() + " = " + v.shape() + " parameter(" +
                               std::to_string(m_parameters.size()) + ")");
        m_values.push_back(v);
        return v;
    }

    Value emitValue(const std::string& type, const Dims& dims, const std::string& rhs, bool exact) {
        Value v{"v" + std::to_string(m_next++), type, dims, exact};
        m_body.push_back("  " + v.ref() + " = " + v.shape() + " " + rhs);
        m_values.push_back(v);
        m_last = v;
        return v;
    }

    // A scalar constant broadcast to `dims`.
    // Operands of later steps only now and then (mostly they would feed
    // constant folding, not the backends).
    Value splat(const std::string& type, const Dims& dims, const std::string& literal) {
        const size_t before = m_values.size();
        Value c = emitValue(type, {}, "constant(" + literal + ")", true);
        Value result =
            dims.empty() ? c : emitValue(type, dims, "broadcast(" + c.ref() + "), dimensions={}", true);
        if (!m_rng.chance(10)) m_values.resize(before);
        return result;
    }

    // An existing value of `type` (recent ones likelier), or a new parameter.
    Value pick(const std::string& type, int minRank = 0, bool exactOnly = false) {
        std::vector<Value> candidates;
        for (const Value& v : m_values)
            if (v.type == type && static_cast<int>(v.dims.size()) >= minRank &&
                (!exactOnly || v.exact))
                candidates.push_back(v);
        if (candidates.empty() || m_rng.chance(10)) return parameter(type, randomDims(minRank));
        if (m_rng.chance(60)) {  // one of the last three
            const int64_t n = static_cast<int64_t>(candidates.size());
            return candidates[static_cast<size_t>(
                m_rng.uniform(std::max<int64_t>(0, n - 3), n - 1))];
        }
        return m_rng.pick(candidates);
    }

    // A value of `type` with exactly `dims`: an existing one, a reshape of
    // one with as many elements, or a new parameter.
    Value withDims(const std::string& type, const Dims& dims, bool exactOnly = false) {
        std::vector<Value> same, sameCount;
        for (const Value& v : m_values) {
            if (v.type != type || (exactOnly && !v.exact)) continue;
            if (v.dims == dims)
                same.push_back(v);
            else if (elementCount(v.dims) == elementCount(dims))
                sameCount.push_back(v);
        }
        if (!same.empty() && m_rng.chance(75)) return m_rng.pick(same);
        if (!sameCount.empty() && m_rng.chance(50)) {
            ++m_kinds["reshape"];
            const Value& v = m_rng.pick(sameCount);
            return emitValue(type, dims, "reshape(" + v.ref() + ")", v.exact);
        }
        return parameter(type, dims);
    }

    // ---- steps -------------------------------------------------------------

    void step() {
        const int64_t r = m_rng.uniform(0, 99);
        if (r < 16)
            unary();
        else if (r < 30)
            binary();
        else if (r < 37)
            broadcast();
        else if (r < 47)
            reduce();
        else if (r < 56)
            dot();
        else if (r < 62)
            slice();
        else if (r < 68)
            concatenate();
        else if (r < 75)
            select();
        else if (r < 80)
            reshape();
        else if (r < 85)
            transpose();
        else if (r < 90)
            bf16Segment();
        else
            integers();
    }

    void unary() {
        static const std::vector<std::string> safeOps = {"negate", "abs",      "tanh",       "sine",
                                                         "cosine", "logistic", "exponential"};
        static const std::vector<std::string> domainOps = {
            "log", "sqrt", "rsqrt", "floor", "ceil", "round-nearest-afz", "sign", "log-plus-one"};
        Value x = pick("f32");
        if (m_rng.chance(50)) {
            const std::string op = m_rng.pick(safeOps);
            ++m_kinds["unary-" + op];
            emitValue("f32", x.dims, op + "(" + x.ref() + ")",
                 x.exact && (op == "negate" || op == "abs"));
            return;
        }
        const std::string op = m_rng.pick(domainOps);
        if (x.exact) {
            ++m_kinds["unary-domain-" + op];
            const bool exactResult =
                op == "floor" || op == "ceil" || op == "round-nearest-afz" || op == "sign";
            emitValue("f32", x.dims, op + "(" + x.ref() + ")", exactResult);
            return;
        }
        ++m_kinds["unary-safe-" + op];
        if (op == "floor" || op == "ceil" || op == "round-nearest-afz" || op == "sign") {
            // Discontinuous: keep it to values that are exact.
            Value e = pick("f32", 0, true);
            emitValue("f32", e.dims, op + "(" + e.ref() + ")", e.exact);
            return;
        }
        Value a = emitValue("f32", x.dims, "abs(" + x.ref() + ")", false);
        if (op == "sqrt") {
            emitValue("f32", x.dims, "sqrt(" + a.ref() + ")", false);
            return;
        }
        Value one = splat("f32", x.dims, "1");
        Value shifted = emitValue("f32", x.dims, "add(" + a.ref() + ", " + one.ref() + ")", false);
        emitValue("f32", x.dims, op + "(" + shifted.ref() + ")", false);
    }

    void binary() {
        static const std::vector<std::string> ops = {"add",     "subtract", "multiply", "maximum",
                                                     "minimum", "divide",   "atan2",    "power"};
        Value a = pick("f32");
        const std::string op = m_rng.pick(ops);
        Value b = m_rng.chance(15) ? splat("f32", a.dims, m_rng.chance(50) ? "0.5" : "-2")
                                   : withDims("f32", a.dims);
        if (m_rng.chance(10)) b = a;  // x op x
        ++m_kinds["binary-" + op];
        if ((op == "divide" || op == "atan2") && !(a.exact && b.exact)) {
            // x / (|y| + 1); atan2(y, |x| + 1): away from the discontinuities.
            Value abs = emitValue("f32", b.dims, "abs(" + b.ref() + ")", false);
            Value one = splat("f32", b.dims, "1");
            b = emitValue("f32", b.dims, "add(" + abs.ref() + ", " + one.ref() + ")", false);
        }
        if (op == "power") {
            // |a| + 0.5 to the power tanh(b): finite and away from 0^0.
            Value abs = emitValue("f32", a.dims, "abs(" + a.ref() + ")", false);
            Value half = splat("f32", a.dims, "0.5");
            a = emitValue("f32", a.dims, "add(" + abs.ref() + ", " + half.ref() + ")", false);
            b = emitValue("f32", b.dims, "tanh(" + b.ref() + ")", false);
        }
        const bool exact = a.exact && b.exact && (op == "maximum" || op == "minimum");
        emitValue("f32", a.dims, op + "(" + a.ref() + ", " + b.ref() + ")", exact);
    }

    void broadcast() {
        Value x = pick(m_rng.chance(85) ? "f32" : "s32");
        if (x.dims.size() >= 3) x = parameter(x.type, randomDims(0, 2));
        // Insert one or two new dimensions at random positions.
        Dims dims = x.dims;
        std::vector<bool> isNew(dims.size(), false);
        const int added = m_rng.chance(70) ? 1 : 2;
        for (int i = 0; i < added && dims.size() < 4; ++i) {
            const size_t at =
                static_cast<size_t>(m_rng.uniform(0, static_cast<int64_t>(dims.size())));
            dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(at), m_rng.uniform(1, 16));
            isNew.insert(isNew.begin() + static_cast<std::ptrdiff_t>(at), true);
        }
        if (elementCount(dims) > m_options.maxElements) return;
        std::vector<std::string> kept;
        for (size_t i = 0; i < dims.size(); ++i)
            if (!isNew[i]) kept.push_back(std::to_string(i));
        ++m_kinds["broadcast"];
        emitValue(x.type, dims, "broadcast(" + x.ref() + "), dimensions={" + joined(kept) + "}",
             x.exact);
    }

    std::string reducer(const std::string& op, const std::string& type) {
        const std::string name = op + "_" + type;
        if (m_reducers.insert(name).second)
            m_computations.push_back(
                "%" + name + " (a: " + type + "[], b: " + type + "[]) -> " + type +
                "[] {\n  %a = " + type + "[] parameter(0)\n  %b = " + type +
                "[] parameter(1)\n  ROOT %r = " + type + "[] " + op + "(%a, %b)\n}\n");
        return name;
    }

    void reduce() {
        const std::string type = m_rng.chance(85) ? "f32" : "s32";
        Value x = pick(type, 1);
        static const std::vector<std::string> ops = {"add", "maximum", "minimum"};
        const std::string op = m_rng.pick(ops);
        const int rank = static_cast<int>(x.dims.size());
        std::vector<int> reduced;
        const int64_t how = m_rng.uniform(0, 3);
        std::string kind;
        if (how == 0) {
            reduced = {rank - 1}, kind = "row";
        } else if (how == 1) {
            reduced = {0}, kind = "column";
        } else if (how == 2) {
            for (int d = 0; d < rank; ++d) reduced.push_back(d);
            kind = "full";
        } else {
            for (int d = 0; d < rank; ++d)
                if (m_rng.chance(50)) reduced.push_back(d);
            if (reduced.empty()) reduced = {static_cast<int>(m_rng.uniform(0, rank - 1))};
            kind = "dims";
        }
        Dims dims;
        std::vector<std::string> reducedText;
        for (int d = 0; d < rank; ++d) {
            if (std::find(reduced.begin(), reduced.end(), d) == reduced.end())
                dims.push_back(x.dims[static_cast<size_t>(d)]);
            else
                reducedText.push_back(std::to_string(d));
        }
        std::string init = "0";
        if (op == "maximum") init = type == "f32" ? "-inf" : "-2147483648";
        if (op == "minimum") init = type == "f32" ? "inf" : "2147483647";
        if (m_rng.chance(15) && op == "add") init = "1";  // a non-identity init counts once
        Value initValue = emitValue(type, {}, "constant(" + init + ")", true);
        m_values.pop_back();
        ++m_kinds["reduce-" + kind];
        ++m_kinds["reduce-" + op];
        emitValue(type, dims,
             "reduce(" + x.ref() + ", " + initValue.ref() + "), dimensions={" +
                 joined(reducedText) + "}, to_apply=%" + reducer(op, type),
             x.exact && op != "add");
    }

    void dot() {
        const std::string precision =
            m_options.highestPrecision ? ", operand_precision={highest,highest}" : "";
        const int64_t how = m_rng.uniform(0, 3);
        auto small = [&] { return m_rng.pick(std::vector<int64_t>{1, 2, 3, 4, 5, 8, 16, 17, 32}); };
        if (how == 3) {  // batched: [b, m, k] x [b, k, n] (contracting dims vary)
            Value lhs = pick("f32", 3);
            if (lhs.dims.size() != 3 || lhs.dims[0] * lhs.dims[1] * lhs.dims[2] > 4096)
                lhs = parameter("f32", {small(), small(), small()});
            const int lc = m_rng.chance(50) ? 2 : 1;
            const int64_t b = lhs.dims[0], k = lhs.dims[static_cast<size_t>(lc)],
                          m = lhs.dims[static_cast<size_t>(3 - lc)], n = small();
            const int rc = m_rng.chance(50) ? 1 : 2;
            Value rhs = withDims("f32", rc == 1 ? Dims{b, k, n} : Dims{b, n, k});
            ++m_kinds["dot-batch"];
            emitValue("f32", {b, m, n},
                 "dot(" + lhs.ref() + ", " + rhs.ref() +
                     "), lhs_batch_dims={0}, lhs_contracting_dims={" + std::to_string(lc) +
                     "}, rhs_batch_dims={0}, rhs_contracting_dims={" + std::to_string(rc) + "}" +
                     precision,
                 false);
            return;
        }
        Value lhs = pick("f32", 2);
        if (lhs.dims.size() != 2 || lhs.dims[0] * lhs.dims[1] > 4096)
            lhs = parameter("f32", {small(), small()});
        const int lc = m_rng.chance(70) ? 1 : 0;
        const int64_t k = lhs.dims[static_cast<size_t>(lc)],
                      m = lhs.dims[static_cast<size_t>(1 - lc)];
        if (how == 2) {  // matrix-vector
            Value rhs = withDims("f32", {k});
            ++m_kinds["dot-vector"];
            emitValue("f32", {m},
                 "dot(" + lhs.ref() + ", " + rhs.ref() + "), lhs_contracting_dims={" +
                     std::to_string(lc) + "}, rhs_contracting_dims={0}" + precision,
                 false);
            return;
        }
        const int64_t n = small();
        const int rc = m_rng.chance(70) ? 0 : 1;
        Value rhs = withDims("f32", rc == 0 ? Dims{k, n} : Dims{n, k});
        ++m_kinds["dot-matrix"];
        emitValue("f32", {m, n},
             "dot(" + lhs.ref() + ", " + rhs.ref() + "), lhs_contracting_dims={" +
                 std::to_string(lc) + "}, rhs_contracting_dims={" + std::to_string(rc) + "}" +
                 precision,
             false);
    }

    void slice() {
        Value x = pick(m_rng.chance(85) ? "f32" : "s32", 1);
        Dims dims;
        std::vector<std::string> ranges;
        bool strided = false;
        for (int64_t d : x.dims) {
            const int64_t start = m_rng.uniform(0, d - 1), limit = m_rng.uniform(start + 1, d);
            const int64_t stride = m_rng.chance(70) ? 1 : m_rng.uniform(2, 3);
            strided = strided || stride > 1;
            dims.push_back((limit - start + stride - 1) / stride);
            ranges.push_back("[" + std::to_string(start) + ":" + std::to_string(limit) +
                             (stride > 1 ? ":" + std::to_string(stride) : "") + "]");
        }
        ++m_kinds[strided ? "slice-strided" : "slice"];
        emitValue(x.type, dims, "slice(" + x.ref() + "), slice={" + joined(ranges, ", ") + "}", x.exact);
    }

    void concatenate() {
        Value x = pick(m_rng.chance(85) ? "f32" : "s32", 1);
        const size_t dim =
            static_cast<size_t>(m_rng.uniform(0, static_cast<int64_t>(x.dims.size()) - 1));
        std::vector<Value> operands = {x};
        Dims dims = x.dims;
        const int more = m_rng.chance(70) ? 1 : 2;
        for (int i = 0; i < more; ++i) {
            Dims other = x.dims;
            other[dim] = m_rng.uniform(1, 8);
            if (elementCount(dims) / std::max<int64_t>(dims[dim], 1) * (dims[dim] + other[dim]) >
                m_options.maxElements)
                break;
            Value next = m_rng.chance(20) ? x : withDims(x.type, other);
            if (elementCount(dims) / std::max<int64_t>(dims[dim], 1) *
                    (dims[dim] + next.dims[dim]) >
                m_options.maxElements)
                break;
            operands.push_back(next);
            dims[dim] += next.dims[dim];
        }
        if (operands.size() < 2) return;
        std::vector<std::string> refs;
        bool exact = true;
        for (const Value& v : operands) refs.push_back(v.ref()), exact = exact && v.exact;
        ++m_kinds["concatenate"];
        emitValue(x.type, dims,
             "concatenate(" + joined(refs, ", ") + "), dimensions={" + std::to_string(dim) + "}",
             exact);
    }

    void select() {
        static const std::vector<std::string> directions = {"EQ", "NE", "LT", "LE", "GT", "GE"};
        const std::string compareType = m_rng.chance(80) ? "f32" : "s32";
        Value a = pick(compareType, 0, true);
        Value b = m_rng.chance(20) ? a : withDims(compareType, a.dims, true);
        Value predicate = emitValue(
            "pred", a.dims,
            "compare(" + a.ref() + ", " + b.ref() + "), direction=" + m_rng.pick(directions), true);
        Value onTrue = withDims("f32", a.dims);
        Value onFalse = withDims("f32", a.dims);
        ++m_kinds["select"];
        emitValue("f32", a.dims,
             "select(" + predicate.ref() + ", " + onTrue.ref() + ", " + onFalse.ref() + ")",
             onTrue.exact && onFalse.exact);
    }

    void reshape() {
        Value x = pick(m_rng.chance(85) ? "f32" : "s32");
        // A random factorisation of the element count, rank 0 to 3.
        int64_t left = elementCount(x.dims);
        Dims dims;
        const int rank = static_cast<int>(m_rng.uniform(1, 3));
        for (int i = 0; i + 1 < rank; ++i) {
            std::vector<int64_t> divisors;
            for (int64_t d = 1; d <= left; ++d)
                if (left % d == 0) divisors.push_back(d);
            dims.push_back(m_rng.pick(divisors));
            left /= dims.back();
        }
        dims.push_back(left);
        if (m_rng.chance(20)) dims.insert(dims.begin(), 1);
        ++m_kinds["reshape"];
        emitValue(x.type, dims, "reshape(" + x.ref() + ")", x.exact);
    }

    void transpose() {
        Value x = pick(m_rng.chance(85) ? "f32" : "s32", 2);
        std::vector<int> permutation(x.dims.size());
        std::iota(permutation.begin(), permutation.end(), 0);
        for (size_t i = permutation.size(); i > 1; --i)
            std::swap(
                permutation[i - 1],
                permutation[static_cast<size_t>(m_rng.uniform(0, static_cast<int64_t>(i) - 1))]);
        Dims dims;
        std::vector<std::string> text;
        for (int p : permutation) {
            dims.push_back(x.dims[static_cast<size_t>(p)]);
            text.push_back(std::to_string(p));
        }
        ++m_kinds["transpose"];
        emitValue(x.type, dims, "transpose(" + x.ref() + "), dimensions={" + joined(text) + "}",
             x.exact);
    }

    // f32 -> bf16, one or two bf16 ops, back to f32.
    void bf16Segment() {
        static const std::vector<std::string> ops = {"add",    "multiply", "maximum", "minimum",
                                                     "negate", "abs",      "tanh"};
        Value x = pick("f32");
        Value v = emitValue("bf16", x.dims, "convert(" + x.ref() + ")", false);
        const int count = m_rng.chance(50) ? 1 : 2;
        for (int i = 0; i < count; ++i) {
            const std::string op = m_rng.pick(ops);
            ++m_kinds["bf16-" + op];
            if (op == "negate" || op == "abs" || op == "tanh") {
                v = emitValue("bf16", v.dims, op + "(" + v.ref() + ")", false);
            } else {
                Value y = withDims("f32", v.dims);
                Value yb = emitValue("bf16", v.dims, "convert(" + y.ref() + ")", false);
                v = emitValue("bf16", v.dims, op + "(" + v.ref() + ", " + yb.ref() + ")", false);
            }
        }
        emitValue("f32", v.dims, "convert(" + v.ref() + ")", false);
    }

    void integers() {
        static const std::vector<std::string> ops = {"add", "subtract", "multiply", "maximum",
                                                     "minimum"};
        const int64_t how = m_rng.uniform(0, 3);
        if (how == 0) {  // f32 -> s32 of an exact value (rounds toward zero)
            Value x = pick("f32", 0, true);
            Value big = splat("f32", x.dims, "8");
            Value scaled =
                emitValue("f32", x.dims, "multiply(" + x.ref() + ", " + big.ref() + ")", true);
            ++m_kinds["convert-f32-s32"];
            emitValue("s32", x.dims, "convert(" + scaled.ref() + ")", true);
            return;
        }
        Value a = pick("s32");
        if (how == 1) {
            ++m_kinds["convert-s32-f32"];
            emitValue("f32", a.dims, "convert(" + a.ref() + ")", true);
            return;
        }
        Value b = withDims("s32", a.dims);
        const std::string op = m_rng.pick(ops);
        ++m_kinds["s32-" + op];
        emitValue("s32", a.dims, op + "(" + a.ref() + ", " + b.ref() + ")", true);
    }

    RandomHlo finish() {
        if (m_body.empty()) unary();
        // The last instruction, and (see below) others.
        // m_last is the instruction of the last body line.
        std::vector<Value> outputs = {m_last};
        // 70% of the time a tuple root of the last instruction and the
        // values nothing uses (up to 6 in all, so that little of the module
        // is dead), or of one to three others when every value is used.
        if (m_rng.chance(70)) {
            std::string body;
            for (const std::string& line : m_body) body += line.substr(line.find('=')) + "\n";
            std::vector<Value> unused, others;
            for (const Value& v : m_values) {
                if (v.type == "pred" || v.name == m_last.name || v.name[0] == 'p') continue;
                const bool used = body.find(v.ref() + ")") != std::string::npos ||
                                  body.find(v.ref() + ",") != std::string::npos;
                (used ? others : unused).push_back(v);
            }
            while (unused.size() > 5)
                unused.erase(unused.begin() + static_cast<std::ptrdiff_t>(m_rng.uniform(
                                                  0, static_cast<int64_t>(unused.size()) - 1)));
            for (const Value& v : unused) outputs.push_back(v);
            if (unused.empty() && !others.empty()) {
                const int more = static_cast<int>(m_rng.uniform(1, 3));
                for (int i = 0; i < more; ++i) outputs.push_back(m_rng.pick(others));
            }
        }
        RandomHlo result;
        result.kinds = std::move(m_kinds);
        if (outputs.size() == 1) {
            m_body.back().replace(0, 2, "  ROOT ");
        } else {
            std::vector<std::string> shapes, refs;
            for (const Value& v : outputs) shapes.push_back(v.shape()), refs.push_back(v.ref());
            m_body.push_back("  ROOT %out = (" + joined(shapes, ", ") + ") tuple(" +
                             joined(refs, ", ") + ")");
            ++result.kinds["tuple-root"];
        }
        std::string text = "HloModule random\n\n";
        for (const std::string& computation : m_computations) text += computation + "\n";
        text += "ENTRY %main {\n";
        for (const std::string& line : m_parameters) text += line + "\n";
        for (const std::string& line : m_body) text += line + "\n";
        text += "}\n";
        result.text = std::move(text);
        return result;
    }

    Rng m_rng;
    RandomHloOptions m_options;
    std::vector<Value> m_values;
    std::vector<std::string> m_parameters, m_body, m_computations;
    std::set<std::string> m_reducers;
    std::map<std::string, int> m_kinds;
    Value m_last;
    int m_next = 0;
};

}  // namespace

RandomHlo generateRandomHlo(uint64_t seed, const RandomHloOptions& options) {
    return Generator(seed, options).run();
}

}  // namespace hloscope::testing
