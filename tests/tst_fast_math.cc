// fast_math: every approximation against double-precision libm rounded to
// float, over every 97th float bit pattern of its domain (about 44 million
// inputs each), in ulps; special values (NaN, infinities, zeros, denormals).
// The bounds checked are those stated in compiler/runtime/fast_math.h.
#include <QTest>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/runtime/fast_math.h"

using namespace hloscope;

namespace {

struct Sweep {
    int64_t maxUlp = 0;
    float worstInput = 0;
    double maxAbs = 0;
    int64_t count = 0;
};

// Every `stride`-th bit pattern (both signs) whose float passes `inDomain`.
Sweep sweep(const std::function<float(float)>& approx, const std::function<double(double)>& exact,
            const std::function<bool(float)>& inDomain, uint32_t stride = 97) {
    Sweep s;
    for (uint64_t bits = 0; bits <= 0xffffffffull; bits += stride) {
        const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
        if (std::isnan(x) || !inDomain(x)) continue;
        const float want = static_cast<float>(exact(static_cast<double>(x)));
        const float got = approx(x);
        const int64_t ulp = fast_math::ulpDistance(got, want);
        ++s.count;
        if (ulp > s.maxUlp) {
            s.maxUlp = ulp;
            s.worstInput = x;
        }
        if (std::isfinite(want) && std::isfinite(got)) s.maxAbs = std::max(s.maxAbs, std::fabs(double(got) - want));
    }
    return s;
}

bool all(float) { return true; }

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

class TestFastMath : public QObject {
    Q_OBJECT
    void expectUlp(const char* name, const Sweep& s, int64_t bound) {
        qInfo("%s: max %lld ulp at %.9g over %lld inputs", name, static_cast<long long>(s.maxUlp), s.worstInput,
              static_cast<long long>(s.count));
        QVERIFY2(s.maxUlp <= bound, qPrintable(QStringLiteral("%1: %2 ulp at %3").arg(name).arg(s.maxUlp).arg(s.worstInput, 0, 'g', 9)));
    }

private slots:
    void expAllFloats() {
        expectUlp("exp", sweep(fast_math::exp, [](double x) { return std::exp(x); }, all), 2);
    }
    void logNonNegative() {
        expectUlp("log", sweep(fast_math::log, [](double x) { return std::log(x); }, [](float x) { return x >= 0; }), 2);
    }
    void tanhAllFloats() {
        expectUlp("tanh", sweep(fast_math::tanh, [](double x) { return std::tanh(x); }, all), 3);
    }
    void logisticAllFloats() { expectUlp("logistic", sweep(fast_math::logistic, logistic, all), 4); }
    void sinCosReducedRange() {
        // Near the zeros of sin and cos the result is tiny and ulps count the
        // reduction's absolute error (about 1e-12) many times over: ulps where
        // |result| >= 2^-10 or |x| < 0.5 (sin x ~ x), absolute error everywhere.
        auto domain = [](float x) { return std::fabs(x) <= 1.0e7f; };
        for (bool cosine : {false, true}) {
            auto approx = cosine ? fast_math::cos : fast_math::sin;
            auto exact = cosine ? [](double x) { return std::cos(x); } : [](double x) { return std::sin(x); };
            const Sweep away = sweep(approx, exact, [&](float x) {
                return domain(x) && (std::fabs(exact(x)) >= 1.0 / 1024 || std::fabs(x) < 0.5f);
            });
            expectUlp(cosine ? "cos" : "sin", away, 3);
            const Sweep all = sweep(approx, exact, domain, 389);
            qInfo("%s, |x| <= 1e7: max abs error %g", cosine ? "cos" : "sin", all.maxAbs);
            QVERIFY(all.maxAbs <= 2e-7);
        }
        for (float x : {1e10f, -3e38f, 16777216.0f}) {
            QVERIFY(std::fabs(fast_math::sin(x)) <= 1.0f);
            QVERIFY(std::fabs(fast_math::cos(x)) <= 1.0f);
        }
    }
    void erfAllFloats() {
        const Sweep small = sweep(fast_math::erf, [](double x) { return std::erf(x); },
                                  [](float x) { return std::fabs(x) < 1.0f; });
        expectUlp("erf |x| < 1", small, 2);
        const Sweep big = sweep(fast_math::erf, [](double x) { return std::erf(x); },
                                [](float x) { return std::fabs(x) >= 1.0f; });
        qInfo("erf |x| >= 1: max abs error %g (%lld ulp)", big.maxAbs, static_cast<long long>(big.maxUlp));
        QVERIFY(big.maxAbs <= 1e-7);
    }
    void specialValues() {
        constexpr float inf = std::numeric_limits<float>::infinity();
        constexpr float nan = std::numeric_limits<float>::quiet_NaN();
        for (auto f : {fast_math::exp, fast_math::log, fast_math::tanh, fast_math::logistic, fast_math::sin,
                       fast_math::cos, fast_math::erf})
            QVERIFY(std::isnan(f(nan)));
        QCOMPARE(fast_math::exp(-inf), 0.0f);
        QCOMPARE(fast_math::exp(inf), inf);
        QCOMPARE(fast_math::exp(0.0f), 1.0f);
        QCOMPARE(fast_math::exp(88.8f), inf);  // overflow
        QVERIFY(fast_math::exp(-100.0f) > 0 && fast_math::exp(-100.0f) < std::numeric_limits<float>::min());  // denormal
        QCOMPARE(fast_math::log(0.0f), -inf);
        QCOMPARE(fast_math::log(-0.0f), -inf);
        QCOMPARE(fast_math::log(inf), inf);
        QVERIFY(std::isnan(fast_math::log(-1.0f)));
        QCOMPARE(fast_math::log(1.0f), 0.0f);
        QVERIFY(fast_math::ulpDistance(fast_math::log(1e-40f), float(std::log(1e-40))) <= 2);  // denormal input
        QCOMPARE(fast_math::tanh(inf), 1.0f);
        QCOMPARE(fast_math::tanh(-inf), -1.0f);
        QCOMPARE(fast_math::logistic(inf), 1.0f);
        QCOMPARE(fast_math::logistic(-inf), 0.0f);
        QVERIFY(fast_math::logistic(-88.0f) > 0);  // no early underflow
        QVERIFY(std::isnan(fast_math::sin(inf)));
        QVERIFY(std::isnan(fast_math::cos(-inf)));
        QCOMPARE(fast_math::erf(inf), 1.0f);
        QCOMPARE(fast_math::erf(-inf), -1.0f);
        QCOMPARE(fast_math::sin(-0.0f), -0.0f);
        QVERIFY(std::signbit(fast_math::sin(-0.0f)));
    }
    void ulpDistance() {
        QCOMPARE(fast_math::ulpDistance(1.0f, 1.0f), int64_t(0));
        QCOMPARE(fast_math::ulpDistance(1.0f, std::nextafter(1.0f, 2.0f)), int64_t(1));
        QCOMPARE(fast_math::ulpDistance(0.0f, -0.0f), int64_t(0));
        QCOMPARE(fast_math::ulpDistance(std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()),
                 int64_t(2));
        QVERIFY(fast_math::ulpDistance(1.0f, std::numeric_limits<float>::quiet_NaN()) > 1000000);
    }
};

QTEST_GUILESS_MAIN(TestFastMath)
#include "tst_fast_math.moc"
