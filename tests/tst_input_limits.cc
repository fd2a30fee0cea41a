// Limits on untrusted input (core/io/input_limits.h): one negative test
// per limit, each checking that the error names the place (file:line:col or
// the instruction) and the limit, and that nothing was allocated or run first.
#include <QFile>
#include <QTest>
#include <cstdio>
#include <string>

#include "compiler/backends/cpu/cpu_device.h"
#include "core/interpreter/interpreter.h"
#include "core/json/hlo_json.h"
#include "core/text/hlo_parser.h"
#include "core/io/input_limits.h"
#include "core/ir/literal.h"
#include "core/io/module_io.h"
#include "core/stablehlo/stablehlo_parser.h"

using namespace hloscope;

namespace {

bool contains(const Status& status, const std::string& text) {
    return status.toString().find(text) != std::string::npos;
}

#define EXPECT_ERROR(status, expectedCode, text)                                     \
    do {                                                                             \
        const Status s_ = (status);                                                  \
        QVERIFY2(!s_.isOk(), "expected an error");                                   \
        QVERIFY2(s_.code() == (expectedCode), s_.toString().c_str());                \
        QVERIFY2(contains(s_, text),                                                 \
                 (std::string("no '") + (text) + "' in: " + s_.toString()).c_str()); \
    } while (0)

std::string parameterModule(const std::string& shape) {
    return "HloModule m\n\nENTRY e {\n  ROOT p = " + shape + " parameter(0)\n}\n";
}

}  // namespace

class TestInputLimits : public QObject {
    Q_OBJECT
private slots:
    void fileSizeIsCheckedBeforeReading() {
        QTemporaryDir dir;
        const QString path = dir.filePath("big.hlo");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const QByteArray module = QByteArray::fromStdString(parameterModule("f32[2]"));
        QVERIFY(file.write(module) > 0);
        QVERIFY(file.write(QByteArray(3 << 20, ' ')) > 0);  // 3 MiB of trailing blanks
        file.close();
        qputenv("HLOSCOPE_MAX_INPUT_MB", "2");
        auto loaded = loadModuleFromFile(path.toStdString());
        qunsetenv("HLOSCOPE_MAX_INPUT_MB");
        QVERIFY(!loaded.isOk());
        EXPECT_ERROR(loaded.status(), StatusCode::kResourceExhausted, path.toStdString());
        EXPECT_ERROR(loaded.status(), StatusCode::kResourceExhausted, "over the 2 MiB input limit");
        // Under the default limit (1 GiB) the same file loads.
        QVERIFY(loadModuleFromFile(path.toStdString()).isOk());
        QCOMPARE(limits::maxInputFileBytes(), limits::kDefaultMaxInputFileBytes);
    }

    void rankOverTheLimit() {
        std::string dims;
        for (int i = 0; i <= limits::kMaxRank; ++i) dims += i ? ",1" : "1";
        auto parsed = parseHloModule(parameterModule("f32[" + dims + "]"));
        QVERIFY(!parsed.isOk());
        EXPECT_ERROR(parsed.status(), StatusCode::kInvalidArgument, "4:");  // line 4
        EXPECT_ERROR(parsed.status(), StatusCode::kInvalidArgument, "more than 64 dimensions");
        // 64 dimensions are fine.
        dims = "1";
        for (int i = 1; i < limits::kMaxRank; ++i) dims += ",1";
        QVERIFY(parseHloModule(parameterModule("f32[" + dims + "]")).isOk());
    }

    void elementCountOverTheLimitOrOverflowing() {
        for (const char* shape :
             {"f32[4611686018427387904]", "f32[4294967296,4294967296]",
              "f32[0,9223372036854775807,2]", "(f32[2], s8[2,4611686018427387904])",
              "f32[3037000500,3037000500,3037000500]", "c128[288230376151711745]"}) {
            auto parsed = parseHloModule(parameterModule(shape));
            QVERIFY2(!parsed.isOk(), shape);
            EXPECT_ERROR(parsed.status(), StatusCode::kInvalidArgument,
                         "more than 2^62 elements or 2^62 bytes");
            EXPECT_ERROR(parsed.status(), StatusCode::kInvalidArgument, "4:");
        }
        // Up to 2^62 bytes parse (a shape is only text until something allocates it): XLA's
        // own tests hold such shapes (s8[65536,65536,65536,128,16] is 2^59 elements).
        for (const char* shape : {"s8[4611686018427387904]", "s8[65536,65536,65536,128,16]",
                                  "c128[288230376151711744]", "f32[0,1099511627776]"})
            QVERIFY2(parseHloModule(parameterModule(shape)).isOk(), shape);
    }

    void stableHloTensorTypesAreChecked() {
        const std::string text =
            "func.func @main(%a: tensor<2147483648x2147483648xf32>) -> "
            "tensor<2147483648x2147483648xf32> {\n"
            "  return %a : tensor<2147483648x2147483648xf32>\n}\n";
        auto parsed = parseStableHlo(text, "big.mlir");
        QVERIFY(!parsed.isOk());
        EXPECT_ERROR(parsed.status(), StatusCode::kResourceExhausted, "big.mlir:1:");
        EXPECT_ERROR(parsed.status(), StatusCode::kResourceExhausted,
                     "more than 2^62 elements or 2^62 bytes");
    }

    void jsonShapesAreChecked() {
        QFile seed(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/fuzz/seeds/json/sin_plus_exp.json"));
        QVERIFY(seed.open(QIODevice::ReadOnly));
        std::string json = seed.readAll().toStdString();
        QVERIFY(moduleFromJson(json, "seed.json").isOk());
        for (size_t at = json.find("f32[1024]{0}"); at != std::string::npos;
             at = json.find("f32[1024]{0}", at))
            json.replace(at, 12, "f32[4294967296,2147483648]{1,0}");
        auto module = moduleFromJson(json, "big.json");
        QVERIFY(!module.isOk());
        QVERIFY2(contains(module.status(), "2^62"), module.status().toString().c_str());
        QVERIFY2(contains(module.status(), "big.json"), module.status().toString().c_str());
    }

    void literalSizeIsCheckedBeforeAllocation() {
        auto literal = Literal::parse("f32[2000000000] {1}");  // 8 GB: over the 4 GiB limit
        QVERIFY(!literal.isOk());
        QVERIFY2(contains(literal.status(), "is too large (more than 4096 MiB"),
                 literal.status().toString().c_str());
        qputenv("HLOSCOPE_MAX_LITERAL_MB", "1");  // 1 MiB: 300,000 f32 elements are too many
        auto smaller = Literal::parse("f32[300000] 1");
        qunsetenv("HLOSCOPE_MAX_LITERAL_MB");
        QVERIFY(!smaller.isOk());
        QVERIFY2(contains(smaller.status(), "more than 1 MiB"),
                 smaller.status().toString().c_str());
        auto constant = parseHloModule(
            "HloModule m\n\nENTRY e {\n  ROOT c = f32[2000000000] constant({1})\n}\n");
        QVERIFY(!constant.isOk());
    }

    void nestingDepthInEveryParser() {
        // HLO text: a tuple shape nested 600 deep.
        std::string shape = "f32[]";
        for (int i = 0; i < 600; ++i) shape = "(" + shape + ")";
        auto hlo = parseHloModule(parameterModule(shape));
        QVERIFY(!hlo.isOk());
        EXPECT_ERROR(hlo.status(), StatusCode::kInvalidArgument, "nesting depth");
        // JSON: 100,000 nested arrays (the JSON reader is not recursive; no stack overflow).
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        auto json = moduleFromJson(deep, "deep.json");
        QVERIFY(!json.isOk());
        auto literalJson = literalFromJson(deep, "deep.json");
        QVERIFY(!literalJson.isOk());
        // StableHLO: regions nested 300 deep.
        std::string mlir = "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n";
        for (int i = 0; i < 300; ++i)
            mlir += "  %r" + std::to_string(i) + " = \"stablehlo.optimization_barrier\"(%a) ({\n";
        auto stable = parseStableHlo(mlir, "deep.mlir");
        QVERIFY(!stable.isOk());
        EXPECT_ERROR(stable.status(), StatusCode::kInvalidArgument, "deep.mlir:");
    }

    void evaluationMemoryIsCheckedBeforeEachResult() {
        // 64 MiB each; the limit is 100 MiB, so the second result goes over while the
        // first is still needed.
        auto module = parseHloModule(R"(HloModule m

ENTRY e {
  p = f32[] parameter(0)
  a = f32[4096,4096] broadcast(p), dimensions={}
  b = f32[4096,4096] broadcast(p), dimensions={}
  ROOT s = f32[4096,4096] add(a, b)
})");
        QVERIFY(module.isOk());
        HloEvaluatorOptions options;
        options.memoryLimitBytes = int64_t{100} << 20;
        HloEvaluator evaluator(options);
        Literal argument = Literal::parse("f32[] 1").value();
        auto result = evaluator.evaluate(**module, std::span<const Literal>(&argument, 1));
        QVERIFY(!result.isOk());
        EXPECT_ERROR(result.status(), StatusCode::kResourceExhausted, "%b");
        EXPECT_ERROR(result.status(), StatusCode::kResourceExhausted, "memory limit is 100 MiB");
        // The same module within a 200 MiB budget runs (a and b die as s is made).
        options.memoryLimitBytes = int64_t{200} << 20;
        HloEvaluator roomy(options);
        QVERIFY(roomy.evaluate(**module, std::span<const Literal>(&argument, 1)).isOk());
        // The environment sets the default.
        qputenv("HLOSCOPE_EVAL_MEMORY_MB", "100");
        QCOMPARE(limits::evaluationMemoryLimitBytes(), int64_t{100} << 20);
        HloEvaluator fromEnvironment;
        QVERIFY(!fromEnvironment.evaluate(**module, std::span<const Literal>(&argument, 1)).isOk());
        qunsetenv("HLOSCOPE_EVAL_MEMORY_MB");
        QVERIFY(limits::evaluationMemoryLimitBytes() >= int64_t{1} << 30);
    }

    void customCallsAreNeverExecutedAsCode() {
        // Targets that name libc functions: the interpreter and the CPU backend
        // refuse them by name; nothing is looked up or called.
        for (const char* target : {"abort", "system", "exit", "_exit", "dlopen"}) {
            const std::string text = std::string(R"(HloModule m

ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target=")") +
                                     target + "\"\n}\n";
            auto module = parseHloModule(text);
            QVERIFY2(module.isOk(), module.status().toString().c_str());
            Literal argument = Literal::parse("f32[2] {1, 2}").value();
            HloEvaluator evaluator;
            auto evaluated = evaluator.evaluate(**module, std::span<const Literal>(&argument, 1));
            QVERIFY(!evaluated.isOk());
            EXPECT_ERROR(evaluated.status(), StatusCode::kUnimplemented, target);
            EXPECT_ERROR(evaluated.status(), StatusCode::kUnimplemented, "%c");
            CpuDevice cpu;
            auto ran = cpu.run(**module, {argument}, ExecutionOptions{});
            QVERIFY(!ran.isOk());
            QVERIFY2(contains(ran.status(), target), ran.status().toString().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestInputLimits)
#include "tst_input_limits.moc"
