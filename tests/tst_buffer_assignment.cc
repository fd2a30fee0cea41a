// Tests for the buffer assignment analysis and BufferAssignmentPass.
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/buffer_assignment_pass.h"
#include "compiler/buffers/heap_layout.h"
#include "core/text/hlo_parser.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> parse(const char* text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::move(*module);
}

BufferAssignment assign(const HloModule& module, BufferAssignmentOptions options = {}) {
    auto result = assignBuffers(module, options);
    if (!result.isOk()) qFatal("%s", result.status().toString().c_str());
    return std::move(*result);
}

const LogicalBuffer* bufferOf(const BufferAssignment& a, const char* name) {
    for (const LogicalBuffer& b : a.buffers)
        if (b.instruction && b.instruction->name() == name && !b.isTupleTable && !b.isCalleeTemporary)
            return &b;
    return nullptr;
}

const char* kChain = R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] exponential(a)
  c = f32[256] exponential(b)
  ROOT d = f32[256] exponential(c)
})";

}  // namespace

class TestBufferAssignment : public QObject {
    Q_OBJECT
private slots:
    void chainReuses() {
        auto module = parse(kChain);
        BufferAssignment a = assign(*module);
        QCOMPARE(a.buffers.size(), size_t(5));
        QCOMPARE(a.peakBytesNoReuse, int64_t(5 * 1024));
        // At most two chain buffers live at once, plus the parameter.
        QCOMPARE(a.peakLiveBytes, int64_t(3 * 1024));
        // p, d (output), and a/c sharing one allocation, b alone.
        QCOMPARE(a.allocations.size(), size_t(4));
        QCOMPARE(a.totalAllocatedBytes, int64_t(4 * 1024));
        QCOMPARE(bufferOf(a, "a")->allocation, bufferOf(a, "c")->allocation);
        QVERIFY(bufferOf(a, "a")->allocation != bufferOf(a, "b")->allocation);
        QVERIFY(a.allocations[static_cast<size_t>(bufferOf(a, "a")->allocation)].isReused);
        // Entry parameters live from 0 to the end; the root is an output.
        const LogicalBuffer* p = bufferOf(a, "p");
        QVERIFY(p->isEntryParameter);
        QCOMPARE(p->defineTime, int64_t(0));
        QCOMPARE(p->lastUseTime, int64_t(5));
        QVERIFY(bufferOf(a, "d")->isOutput);
        QCOMPARE(bufferOf(a, "a")->defineTime, int64_t(2));
        QCOMPARE(bufferOf(a, "a")->lastUseTime, int64_t(3));
        QCOMPARE(a.liveBytesOverTime.size(), size_t(6));
        QCOMPARE(a.liveBytesOverTime[0].second, int64_t(1024));
        QCOMPARE(a.liveBytesOverTime[3].second, int64_t(3072));
        QCOMPARE(peakMemoryBytes(*module), int64_t(3072));
    }

    // The runtime holds the entry's outputs for the whole run: with that
    // option the root's buffer is live from time 0.
    void outputsHeldForTheRun() {
        auto module = parse(kChain);
        BufferAssignmentOptions options;
        options.outputsLiveFromStart = true;
        BufferAssignment a = assign(*module, options);
        QCOMPARE(bufferOf(a, "d")->defineTime, int64_t(0));
        // p and d all along, plus two chain buffers at the peak.
        QCOMPARE(a.peakLiveBytes, int64_t(4 * 1024));
        QCOMPARE(peakMemoryBytesWithOutputsHeld(*module), int64_t(4 * 1024));
        QCOMPARE(peakMemoryBytes(*module), int64_t(3 * 1024));
    }

    // Heap packing: buffers alive together never share bytes, the others
    // reuse them, and the heap of a chain is its peak.
    void heapPacking() {
        // Times: a [1,2], b [2,3], c [3,4], d [1,4] (bytes 100, 200, 100, 50).
        const std::vector<HeapInterval> intervals = {{1, 2, 100}, {2, 3, 200}, {3, 4, 100}, {1, 4, 50}};
        const HeapLayout layout = packHeap(intervals, 64);
        QCOMPARE(layout.offsets.size(), intervals.size());
        for (size_t i = 0; i < intervals.size(); ++i) {
            QCOMPARE(layout.offsets[i] % 64, int64_t(0));
            for (size_t j = i + 1; j < intervals.size(); ++j) {
                const bool together = intervals[i].start <= intervals[j].end && intervals[j].start <= intervals[i].end;
                const int64_t iEnd = layout.offsets[i] + (intervals[i].bytes + 63) / 64 * 64;
                const int64_t jEnd = layout.offsets[j] + (intervals[j].bytes + 63) / 64 * 64;
                const bool overlap = layout.offsets[i] < jEnd && layout.offsets[j] < iEnd;
                QVERIFY2(!(together && overlap), qPrintable(QStringLiteral("%1 and %2 share bytes").arg(i).arg(j)));
            }
        }
        // a and c never live together: c reuses a's bytes. Peak: b + a|c + d = 256 + 128 + 64.
        QCOMPARE(layout.offsets[0], layout.offsets[2]);
        QCOMPARE(layout.bytes, int64_t(448));
        QCOMPARE(packHeap({}, 64).bytes, int64_t(0));
    }

    void parallelBranches() {
        auto module = parse(R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(p)
  ROOT c = f32[256] add(a, b)
})");
        BufferAssignment a = assign(*module);
        // At c: p, a, b and c are all live.
        QCOMPARE(a.peakLiveBytes, int64_t(4096));
        QCOMPARE(a.totalAllocatedBytes, int64_t(4096));
        QCOMPARE(a.allocations.size(), size_t(4));
    }

    void tupleAndGetTupleElementAlias() {
        auto module = parse(R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  t = (f32[256], f32[256]) tuple(a, p)
  g = f32[256] get-tuple-element(t), index=0
  ROOT n = f32[256] negate(g)
})");
        BufferAssignment a = assign(*module);
        // p, a, n and t's pointer table (2 x 8 bytes); g aliases a.
        QCOMPARE(a.buffers.size(), size_t(4));
        QCOMPARE(a.peakBytesNoReuse, int64_t(3 * 1024 + 16));
        QCOMPARE(bufferOf(a, "a")->lastUseTime, int64_t(5));  // used through g by n
        QCOMPARE(a.peakLiveBytes, int64_t(3 * 1024));
        BufferAssignmentOptions noTables;
        noTables.tuplePointerBytes = 0;
        BufferAssignment b = assign(*module, noTables);
        QCOMPARE(b.buffers.size(), size_t(3));
        QCOMPARE(b.peakBytesNoReuse, int64_t(3 * 1024));
    }

    void whileAddsBodyTemporaries() {
        auto module = parse(R"(
HloModule m
cond {
  cp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[256] get-tuple-element(bp), index=1
  e = f32[256] exponential(v)
  e2 = f32[256] exponential(e)
  ROOT t = (s32[], f32[256]) tuple(i2, e2)
}
ENTRY e {
  p = f32[256] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[256]) tuple(z, p)
  w = (s32[], f32[256]) while(init), condition=cond, body=body
  ROOT r = f32[256] get-tuple-element(w), index=1
})");
        BufferAssignment a = assign(*module);
        // Body peak: i2 (4) + e (1024) + e2 (1024) while e2 is computed.
        const LogicalBuffer* temporary = nullptr;
        for (const LogicalBuffer& b : a.buffers)
            if (b.isCalleeTemporary) temporary = &b;
        QVERIFY(temporary);
        QCOMPARE(temporary->sizeBytes, int64_t(2052));
        QCOMPARE(temporary->instruction->name(), std::string("w"));
        // At the while: p (1024) + z (4) + init's table (16) + body peak.
        QCOMPARE(a.peakLiveBytes, int64_t(1024 + 4 + 16 + 2052));
        // The while aliases its init: no buffers of its own.
        QVERIFY(!bufferOf(a, "w"));
        QVERIFY(bufferOf(a, "p")->isOutput);
    }

    void constantsSeparate() {
        auto module = parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  ROOT n = f32[4] negate(a)
})");
        BufferAssignment a = assign(*module);
        const LogicalBuffer* c = bufferOf(a, "c");
        QVERIFY(c && c->isConstant);
        QCOMPARE(c->defineTime, int64_t(0));
        QCOMPARE(c->lastUseTime, int64_t(4));
        const BufferAllocation& allocation = a.allocations[static_cast<size_t>(c->allocation)];
        QVERIFY(allocation.isConstant);
        QCOMPARE(allocation.buffers.size(), size_t(1));
        QCOMPARE(a.peakLiveBytes, int64_t(16 * 4));  // at n: p, c, a, n
    }

    void inputOutputAlias() {
        auto module = parse(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[256] parameter(0)
  ROOT n = f32[256] negate(p)
})");
        BufferAssignment a = assign(*module);
        const LogicalBuffer* n = bufferOf(a, "n");
        const LogicalBuffer* p = bufferOf(a, "p");
        QVERIFY(n->isAliasedToParameter);
        QCOMPARE(n->allocation, p->allocation);
        QCOMPARE(a.allocations.size(), size_t(1));
        QVERIFY(a.allocations[0].isOutput && a.allocations[0].isParameter);
        QCOMPARE(a.totalAllocatedBytes, int64_t(1024));
        QCOMPARE(a.peakLiveBytes, int64_t(1024));
    }

    void tiledSizes() {
        auto module = parse(R"(
HloModule m
ENTRY e {
  p = f32[3,5]{1,0:T(8,128)} parameter(0)
  ROOT n = f32[3,5]{1,0:T(8,128)} negate(p)
})");
        BufferAssignment a = assign(*module);
        QCOMPARE(bufferOf(a, "p")->sizeBytes, int64_t(4096));
        QCOMPARE(a.peakLiveBytes, int64_t(8192));
        auto subByte = parse(R"(
HloModule m
ENTRY e {
  p = s4[5]{0:E(4)} parameter(0)
  ROOT n = s4[5]{0:E(4)} negate(p)
})");
        QCOMPARE(bufferOf(assign(*subByte), "p")->sizeBytes, int64_t(3));
    }

    void scheduledOrder() {
        // A scheduled module runs in its instruction order: b before a here.
        auto module = parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[256] parameter(0)
  b = f32[256] negate(p)
  a = f32[256] exponential(p)
  ROOT c = f32[256] add(a, b)
})");
        BufferAssignment a = assign(*module);
        QCOMPARE(bufferOf(a, "b")->defineTime, int64_t(2));
        QCOMPARE(bufferOf(a, "a")->defineTime, int64_t(3));
    }

    void passReportsAndChangesNothing() {
        auto module = parse(kChain);
        auto pass = BufferAssignmentPass::create({});
        QVERIFY(pass.isOk());
        auto changed = (*pass)->run(*module);
        QVERIFY(changed.isOk());
        QVERIFY(!*changed);
        const auto& stats = (*pass)->statistics();
        QCOMPARE(stats.at("peak_bytes_before"), int64_t(5120));
        QCOMPARE(stats.at("peak_bytes_after"), int64_t(4096));
        QCOMPARE(stats.at("peak_live_bytes"), int64_t(3072));
        QCOMPARE(stats.at("allocations"), int64_t(4));
        QCOMPARE(stats.at("buffers"), int64_t(5));
        auto* typed = static_cast<BufferAssignmentPass*>(pass->get());
        QVERIFY(typed->lastAssignment());
        QCOMPARE(typed->lastAssignment()->peakLiveBytes, int64_t(3072));
        QVERIFY(!BufferAssignmentPass::create({{"bogus", "1"}}).isOk());
    }

    void corpusModels() {
        const QString dir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models");
        if (!QDir(dir).exists()) QSKIP("corpus not available");
        int run = 0;
        qint64 totalMs = 0, mixtralMs = -1;
        bool checkedDeterminism = false;
        QDirIterator it(dir, {"*.hlo"}, QDir::Files, QDirIterator::Subdirectories);
        QStringList files;
        while (it.hasNext()) files << it.next();
        files.sort();
        for (const QString& path : files) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            auto module = parseHloModule(file.readAll().toStdString());
            if (!module.isOk()) continue;
            QElapsedTimer timer;
            timer.start();
            auto result = assignBuffers(**module);
            const qint64 ms = timer.elapsed();
            QVERIFY2(result.isOk(), (path.toStdString() + ": " + result.status().toString()).c_str());
            QVERIFY(result->peakLiveBytes <= result->peakBytesNoReuse);
            QVERIFY(result->peakLiveBytes <= result->totalAllocatedBytes);
            QVERIFY(result->totalAllocatedBytes <= result->peakBytesNoReuse);
            ++run;
            totalMs += ms;
            if (path.contains("mixtral_8x7b_bf16_1x8")) {
                mixtralMs = ms;
                // Determinism: a second run gives the same assignment.
                auto again = assignBuffers(**module);
                QVERIFY(again.isOk());
                QCOMPARE(again->buffers.size(), result->buffers.size());
                QCOMPARE(again->allocations.size(), result->allocations.size());
                for (size_t i = 0; i < result->buffers.size(); ++i) {
                    QCOMPARE(again->buffers[i].allocation, result->buffers[i].allocation);
                    QCOMPARE(again->buffers[i].lastUseTime, result->buffers[i].lastUseTime);
                }
                QCOMPARE(again->totalAllocatedBytes, result->totalAllocatedBytes);
                checkedDeterminism = true;
            }
        }
        qInfo("models: %d modules, %lld ms total, mixtral %lld ms", run,
              static_cast<long long>(totalMs), static_cast<long long>(mixtralMs));
        QVERIFY(run > 0);
        QVERIFY(checkedDeterminism);
    }
};

QTEST_GUILESS_MAIN(TestBufferAssignment)
#include "tst_buffer_assignment.moc"
