// Multi-device evaluation (core/interpreter/multi_device.h) and the device
// groups behind it (core/ir/collective_groups.h): groups in each of XLA's four
// modes, the grid a module runs on, and every collective between devices on
// hand-written modules whose per-device values are worked out by hand
// (reduction order checked with a non-commutative reducer), collectives in
// loops, and the errors that replace a deadlock.
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>
#include <string>
#include <vector>

#include "core/ir/collective_groups.h"
#include "core/ir/hlo_computation.h"
#include "core/text/hlo_parser.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"
#include "tests/evaluator_test_util.h"
#include "tests/multi_device_util.h"

using namespace hloscope;
using hloscope::testing::literal;

namespace {

const char* const kAdd =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n";
const char* const kSub =
    "sub {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] subtract(a, "
    "b)\n}\n";

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("parse: %s", module.status().toString().c_str());
    return std::move(*module);
}

const HloInstruction* find(const HloModule& module, const std::string& name) {
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->name() == name) return instruction.get();
    qFatal("no instruction %s", name.c_str());
}

// One argument list per device, each from a literal text per parameter.
using DeviceTexts = std::vector<std::vector<std::string>>;
std::vector<std::vector<Literal>> argumentsOf(const DeviceTexts& texts) {
    std::vector<std::vector<Literal>> arguments;
    for (const auto& device : texts) {
        arguments.emplace_back();
        for (const std::string& text : device) arguments.back().push_back(literal(text));
    }
    return arguments;
}

// Empty when every device's result equals its expected literal.
std::string mismatch(const std::string& text, const DeviceTexts& inputs,
                     const std::vector<std::string>& expected) {
    auto module = parse(text);
    auto grid = moduleDeviceGrid(*module);
    if (!grid.isOk()) return "grid: " + grid.status().toString();
    if (grid->count() != int64_t(expected.size()))
        return "grid of " + std::to_string(grid->count()) + " devices";
    auto arguments = argumentsOf(inputs);
    auto results = evaluateOnDevices(*module, *grid, arguments);
    if (!results.isOk()) return "evaluation failed: " + results.status().toString();
    for (size_t d = 0; d < expected.size(); ++d)
        if (!((*results)[d] == literal(expected[d])))
            return "device " + std::to_string(d) + ": got " + (*results)[d].toString() + "\nwant " +
                   expected[d];
    return {};
}

Status errorOf(const std::string& text, const DeviceTexts& inputs) {
    auto module = parse(text);
    auto grid = moduleDeviceGrid(*module);
    if (!grid.isOk()) return grid.status();
    auto results = evaluateOnDevices(*module, *grid, argumentsOf(inputs));
    return results.isOk() ? Status::ok() : results.status();
}

// Multi-device corpus modules that must evaluate on every device (583 of 852 do on a
// 2-core machine); the floor leaves room for the modules near the 5 s budget on a loaded
// machine. Raise it as support grows.
constexpr int kMultiDeviceCorpusFloor = 560;

// A failure's reason without the device and instruction names, for tallies.
std::string reasonOf(const Status& status) {
    std::string message = status.message();
    for (;;) {
        size_t colon = message.find(": ");
        if (colon == std::string::npos || colon > 60) break;
        const std::string head = message.substr(0, colon);
        if (head.rfind("device ", 0) != 0 && head.rfind("%", 0) != 0 &&
            head.rfind("module ", 0) != 0)
            break;
        message.erase(0, colon + 2);
    }
    return message.substr(0, 90);
}

DeviceTexts each(std::vector<std::string> perDevice) {
    DeviceTexts texts;
    for (std::string& t : perDevice) texts.push_back({std::move(t)});
    return texts;
}

}  // namespace

class TestMultiDevice : public QObject {
    Q_OBJECT

private slots:
    void groupsInEachMode_data() {
        QTest::addColumn<QString>("attributes");
        QTest::addColumn<QString>("expected");
        // Grid: 2 replicas x 2 partitions; device = replica * 2 + partition.
        QTest::newRow("cross-replica") << "replica_groups={{0,1}}"
                                       << "{0,2}{1,3}";
        QTest::newRow("cross-replica, empty groups") << "replica_groups={}"
                                                     << "{0,2}{1,3}";
        QTest::newRow("cross-partition (channel, all-to-all)")
            << "channel_id=1, replica_groups={{1,0}}|a2a"
            << "{1,0}{3,2}";
        QTest::newRow("cross-replica-and-partition") << "channel_id=1, replica_groups={{0},{1}}"
                                                     << "{0,1}{2,3}";
        QTest::newRow("flattened ids") << "channel_id=1, replica_groups={{0,3},{2,1}}, "
                                          "use_global_device_ids=true"
                                       << "{0,3}{2,1}";
        QTest::newRow("iota form, transposed")
            << "channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true"
            << "{0,2}{1,3}";
        // XLA's mesh form: a group varies the listed axes and fixes the others.
        QTest::newRow("mesh, the minor axis")
            << "channel_id=1, replica_groups=mesh['x'=2,'y'=2] {'y'}, use_global_device_ids=true"
            << "{0,1}{2,3}";
        QTest::newRow("mesh, the major axis")
            << "channel_id=1, replica_groups=mesh['x'=2,'y'=2] {'x'}, use_global_device_ids=true"
            << "{0,2}{1,3}";
        QTest::newRow("mesh, both axes, minor first")
            << "channel_id=1, replica_groups=mesh['x'=2,'y'=2] {'y','x'}, "
               "use_global_device_ids=true"
            << "{0,2,1,3}";
        QTest::newRow("mesh with device ids")
            << "channel_id=1, replica_groups=mesh['x'=2,'y'=2, device_ids=(3,1,2,0)] {'y'}, "
               "use_global_device_ids=true"
            << "{3,1}{2,0}";
    }
    void groupsInEachMode() {
        QFETCH(QString, attributes);
        QFETCH(QString, expected);
        QString attrs = attributes;
        const bool allToAll = attrs.endsWith("|a2a");
        if (allToAll) attrs.chop(4);
        const std::string op =
            allToAll ? "all-to-all(p), dimensions={0}" : "all-reduce(p), to_apply=add";
        auto module = parse(std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAdd +
                            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] " + op + ", " +
                            attrs.toStdString() + "\n}\n");
        auto groups = collectiveDeviceGroups(*find(*module, "c"), DeviceGrid{2, 2});
        QVERIFY2(groups.isOk(), groups.status().toString().c_str());
        std::string text;
        for (const auto& group : *groups) {
            text += "{";
            for (size_t i = 0; i < group.size(); ++i)
                text += (i ? "," : "") + std::to_string(group[i]);
            text += "}";
        }
        QCOMPARE(QString::fromStdString(text), expected);
    }

    void groupErrors_data() {
        QTest::addColumn<QString>("attributes");
        QTest::addColumn<QString>("error");
        QTest::newRow("replica beyond the grid") << "replica_groups={{0,2}}"
                                                 << "names replica 2 but the module has 2 replicas";
        QTest::newRow("device left out") << "channel_id=1, replica_groups={{0,1}}, "
                                            "use_global_device_ids=true"
                                         << "device 2 (replica 1, partition 0) is in 0 of";
        QTest::newRow("flattened without groups") << "channel_id=1, use_global_device_ids=true"
                                                  << "must be given in flattened-id mode";
    }
    void groupErrors() {
        QFETCH(QString, attributes);
        QFETCH(QString, error);
        auto module =
            parseHloModule(std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAdd +
                           "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] all-reduce(p), "
                           "to_apply=add, " +
                           attributes.toStdString() + "\n}\n");
        QVERIFY(module.isOk());
        auto groups = collectiveDeviceGroups(*find(**module, "c"), DeviceGrid{2, 2});
        QVERIFY(!groups.isOk());
        QVERIFY2(groups.status().message().find(error.toStdString()) != std::string::npos,
                 groups.status().message().c_str());
        QVERIFY(groups.status().message().rfind("%c: ", 0) == 0);
    }

    void moduleGrid_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("replicas");
        QTest::addColumn<int>("partitions");
        const std::string body = "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] ";
        QTest::newRow("header") << QString::fromStdString(
                                       "HloModule m, replica_count=2, num_partitions=4\n" +
                                       std::string(kAdd) + body +
                                       "all-reduce(p), to_apply=add\n}\n")
                                << 2 << 4;
        QTest::newRow("header, replicas only")
            << QString::fromStdString("HloModule m, replica_count=3\n" + std::string(kAdd) + body +
                                      "all-reduce(p), to_apply=add, replica_groups={{0,1,2}}\n}\n")
            << 3 << 1;
        QTest::newRow("replica groups")
            << QString::fromStdString(
                   "HloModule m\n" + std::string(kAdd) + body +
                   "all-reduce(p), to_apply=add, replica_groups={{0,2},{1,3}}\n}\n")
            << 4 << 1;
        QTest::newRow("partitions from a channel permute")
            << QString::fromStdString("HloModule m\n" + body +
                                      "collective-permute(p), channel_id=1, "
                                      "source_target_pairs={{0,1},{1,2},{2,0}}\n}\n")
            << 1 << 3;
        QTest::newRow("flattened ids")
            << QString::fromStdString(
                   "HloModule m\n" + std::string(kAdd) + body +
                   "all-reduce(p), to_apply=add, channel_id=1, replica_groups={{0,1,2,3,4,5}}, "
                   "use_global_device_ids=true\n}\n")
            << 6 << 1;
        QTest::newRow("all-gather's shapes, empty groups")
            << QString::fromStdString("HloModule m\n" + body +
                                      "all-gather(p), dimensions={0}, replica_groups={}\n}\n")
                   .replace("f32[4] all-gather", "f32[12] all-gather")
            << 3 << 1;
        QTest::newRow("reduce-scatter's shapes")
            << QString::fromStdString("HloModule m\n" + std::string(kAdd) + body +
                                      "reduce-scatter(p), dimensions={0}, to_apply=add\n}\n")
                   .replace("f32[4] reduce-scatter", "f32[1] reduce-scatter")
            << 4 << 1;
        QTest::newRow("header's partitions kept, replicas grown")
            << QString::fromStdString(
                   "HloModule m, num_partitions=2\n" + std::string(kAdd) + body +
                   "all-reduce(p), to_apply=add, channel_id=1, replica_groups={{0,1,2,3,4,5}}, "
                   "use_global_device_ids=true\n}\n")
            << 3 << 2;
        QTest::newRow("no collectives")
            << QString::fromStdString("HloModule m\n" + body + "negate(p)\n}\n") << 1 << 1;
    }
    void moduleGrid() {
        QFETCH(QString, text);
        QFETCH(int, replicas);
        QFETCH(int, partitions);
        auto module = parse(text.toStdString());
        auto grid = moduleDeviceGrid(*module);
        QVERIFY2(grid.isOk(), grid.status().toString().c_str());
        QCOMPARE(grid->replicas, int64_t(replicas));
        QCOMPARE(grid->partitions, int64_t(partitions));
    }

    void onePartitionKeepsPartitionGroups() {
        // A channel op's ids name partitions even on one partition (StableHLO's
        // cross_partition_single_partition case): every device is its own group.
        auto module = parse(
            "HloModule m, replica_count=4\nENTRY e {\n  p = f32[4] parameter(0)\n"
            "  ROOT c = f32[4] collective-broadcast(p), channel_id=1, replica_groups={{0}}\n}\n");
        auto groups = collectiveDeviceGroups(*find(*module, "c"), DeviceGrid{4, 1});
        QVERIFY2(groups.isOk(), groups.status().toString().c_str());
        QCOMPARE(*groups, (DeviceGroups{{0}, {1}, {2}, {3}}));
    }

    void deviceArgumentsDifferButScalarsAgree() {
        auto module = parse(
            "HloModule m, replica_count=3\nENTRY e {\n  n = s32[] parameter(0)\n"
            "  p = f32[4] parameter(1)\n  ROOT c = f32[4] negate(p)\n}\n");
        auto arguments = makeDeviceArguments(*module->entryComputation(), DeviceGrid{3, 1}, 5);
        QCOMPARE(arguments.size(), size_t(3));
        for (size_t d = 1; d < 3; ++d) {
            QVERIFY(arguments[d][0] == arguments[0][0]);
            QVERIFY(!(arguments[d][1] == arguments[0][1]));
        }
    }

    void allReduce() {
        const std::string head = "HloModule m, replica_count=4\n" + std::string(kAdd) + kSub;
        const DeviceTexts inputs =
            each({"f32[2] {0, 0}", "f32[2] {1, 10}", "f32[2] {2, 20}", "f32[2] {3, 30}"});
        // Sum over everyone; sums over pairs.
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] all-reduce(p), "
                       "to_apply=add\n}\n",
                inputs, {"f32[2] {6, 60}", "f32[2] {6, 60}", "f32[2] {6, 60}", "f32[2] {6, 60}"})),
            QString());
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] all-reduce(p), "
                       "to_apply=add, replica_groups={{0,2},{1,3}}\n}\n",
                inputs, {"f32[2] {2, 20}", "f32[2] {4, 40}", "f32[2] {2, 20}", "f32[2] {4, 40}"})),
            QString());
        // Group order is fold order: (v3 - v1) - v0 = 2; ((v1 - v2) - v3) - v0 = -4.
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] all-reduce(p), "
                       "to_apply=sub, replica_groups={{3,1,0},{2}}\n}\n",
                inputs, {"f32[2] {2, 20}", "f32[2] {2, 20}", "f32[2] {2, 20}", "f32[2] {2, 20}"})),
            QString());
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] all-reduce(p), "
                       "to_apply=sub, replica_groups={{1,2,3,0}}\n}\n",
                inputs,
                {"f32[2] {-4, -40}", "f32[2] {-4, -40}", "f32[2] {-4, -40}", "f32[2] {-4, -40}"})),
            QString());
        // Two operands: a tuple of two sums; all-reduce-start/done.
        QCOMPARE(QString::fromStdString(mismatch(
                     head + "ENTRY e {\n  p = f32[2] parameter(0)\n  n = f32[2] negate(p)\n"
                            "  ROOT c = (f32[2], f32[2]) all-reduce(p, n), to_apply=add, "
                            "replica_groups={{0,1},{2,3}}\n}\n",
                     inputs,
                     {"(f32[2] {1, 10}, f32[2] {-1, -10})", "(f32[2] {1, 10}, f32[2] {-1, -10})",
                      "(f32[2] {5, 50}, f32[2] {-5, -50})", "(f32[2] {5, 50}, f32[2] {-5, -50})"})),
                 QString());
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  s = f32[2] all-reduce-start(p), "
                       "to_apply=add, replica_groups={{0,3},{1,2}}\n"
                       "  ROOT d = f32[2] all-reduce-done(s)\n}\n",
                inputs, {"f32[2] {3, 30}", "f32[2] {3, 30}", "f32[2] {3, 30}", "f32[2] {3, 30}"})),
            QString());
    }

    void allGatherAndReduceScatter() {
        const std::string head = "HloModule m, replica_count=4\n" + std::string(kAdd);
        const DeviceTexts inputs =
            each({"f32[2] {0, 1}", "f32[2] {10, 11}", "f32[2] {20, 21}", "f32[2] {30, 31}"});
        QCOMPARE(QString::fromStdString(mismatch(
                     head + "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[4] "
                            "all-gather(p), dimensions={0}, replica_groups={{1,0},{3,2}}\n}\n",
                     inputs,
                     {"f32[4] {10, 11, 0, 1}", "f32[4] {10, 11, 0, 1}", "f32[4] {30, 31, 20, 21}",
                      "f32[4] {30, 31, 20, 21}"})),
                 QString());
        // Along dimension 1 of a [2,1] operand: rows interleave.
        QCOMPARE(QString::fromStdString(mismatch(
                     head + "ENTRY e {\n  p = f32[2] parameter(0)\n  r = f32[2,1] reshape(p)\n"
                            "  ROOT c = f32[2,2] all-gather(r), dimensions={1}, "
                            "replica_groups={{0,1},{2,3}}\n}\n",
                     inputs,
                     {"f32[2,2] {{0, 10}, {1, 11}}", "f32[2,2] {{0, 10}, {1, 11}}",
                      "f32[2,2] {{20, 30}, {21, 31}}", "f32[2,2] {{20, 30}, {21, 31}}"})),
                 QString());
        // The sum of all four, one element each.
        const DeviceTexts wide =
            each({"f32[4] {1, 2, 3, 4}", "f32[4] {10, 20, 30, 40}", "f32[4] {100, 200, 300, 400}",
                  "f32[4] {1000, 2000, 3000, 4000}"});
        QCOMPARE(QString::fromStdString(mismatch(
                     head + "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[1] "
                            "reduce-scatter(p), dimensions={0}, to_apply=add\n}\n",
                     wide, {"f32[1] {1111}", "f32[1] {2222}", "f32[1] {3333}", "f32[1] {4444}"})),
                 QString());
        // Pairs {1,0},{2,3}: member index, not device, picks the slice.
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[2] reduce-scatter(p), "
                       "dimensions={0}, to_apply=add, replica_groups={{1,0},{2,3}}\n}\n",
                wide,
                {"f32[2] {33, 44}", "f32[2] {11, 22}", "f32[2] {1100, 2200}",
                 "f32[2] {3300, 4400}"})),
            QString());
    }

    void allToAll() {
        const std::string head = "HloModule m, replica_count=2\n";
        QCOMPARE(QString::fromStdString(
                     mismatch(head + "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] "
                                     "all-to-all(p), dimensions={0}\n}\n",
                              each({"f32[4] {0, 1, 2, 3}", "f32[4] {10, 11, 12, 13}"}),
                              {"f32[4] {0, 1, 10, 11}", "f32[4] {2, 3, 12, 13}"})),
                 QString());
        QCOMPARE(
            QString::fromStdString(mismatch(
                head + "ENTRY e {\n  p = f32[2] parameter(0)\n  n = f32[2] negate(p)\n"
                       "  ROOT c = (f32[2], f32[2]) all-to-all(p, n), replica_groups={{0,1}}\n}\n",
                each({"f32[2] {1, 2}", "f32[2] {10, 20}"}),
                {"(f32[2] {1, 2}, f32[2] {10, 20})", "(f32[2] {-1, -2}, f32[2] {-10, -20})"})),
            QString());
    }

    void permuteAndBroadcast() {
        const DeviceTexts three = each({"s32[2] {1, 2}", "s32[2] {3, 4}", "s32[2] {5, 6}"});
        QCOMPARE(
            QString::fromStdString(mismatch(
                "HloModule m, replica_count=3\nENTRY e {\n  p = s32[2] parameter(0)\n"
                "  ROOT c = s32[2] collective-permute(p), source_target_pairs={{0,1},{1,2}}\n}\n",
                three, {"s32[2] {0, 0}", "s32[2] {1, 2}", "s32[2] {3, 4}"})),
            QString());
        // With a channel the pairs name partitions, within each replica.
        QCOMPARE(QString::fromStdString(mismatch(
                     "HloModule m, replica_count=2, num_partitions=2\nENTRY e {\n  p = s32[2] "
                     "parameter(0)\n"
                     "  s = (s32[2], s32[2]) collective-permute-start(p), channel_id=1, "
                     "source_target_pairs={{1,0}}\n"
                     "  ROOT d = s32[2] collective-permute-done(s)\n}\n",
                     each({"s32[2] {1, 2}", "s32[2] {3, 4}", "s32[2] {5, 6}", "s32[2] {7, 8}"}),
                     {"s32[2] {3, 4}", "s32[2] {0, 0}", "s32[2] {7, 8}", "s32[2] {0, 0}"})),
                 QString());
        QCOMPARE(QString::fromStdString(mismatch(
                     "HloModule m, replica_count=3\nENTRY e {\n  p = s32[2] parameter(0)\n"
                     "  ROOT c = s32[2] collective-broadcast(p), replica_groups={{2,0,1}}\n}\n",
                     three, {"s32[2] {5, 6}", "s32[2] {5, 6}", "s32[2] {5, 6}"})),
                 QString());
        // collective-reduce: the fold for the group's first member only.
        QCOMPARE(QString::fromStdString(
                     mismatch("HloModule m, replica_count=3\nmax {\n  a = s32[] parameter(0)\n"
                              "  b = s32[] parameter(1)\n  ROOT r = s32[] maximum(a, b)\n}\n"
                              "ENTRY e {\n  p = s32[2] parameter(0)\n"
                              "  ROOT c = s32[2] collective-reduce(p), replica_groups={{1,2},{0}}, "
                              "to_apply=max\n}\n",
                              three, {"s32[2] {1, 2}", "s32[2] {5, 6}", "s32[2] {0, 0}"})),
                 QString());
    }

    void raggedAllToAll() {
        // Device 0 sends its row 0 to itself (at row 0) and rows 1..2 to
        // device 1 (at row 1); device 1 sends its row 0 to device 0 (at row 1)
        // and its row 3 to itself (at row 3). Rows nobody writes keep the
        // output operand's values.
        const std::string text =
            "HloModule m, replica_count=2\nENTRY e {\n  in = f32[4] parameter(0)\n"
            "  out = f32[4] parameter(1)\n  io = s32[2] parameter(2)\n  ss = s32[2] parameter(3)\n"
            "  oo = s32[2] parameter(4)\n  rs = s32[2] parameter(5)\n"
            "  ROOT c = f32[4] ragged-all-to-all(in, out, io, ss, oo, rs), "
            "replica_groups={{0,1}}\n}\n";
        const DeviceTexts inputs = {
            {"f32[4] {1, 2, 3, 4}", "f32[4] {-1, -1, -1, -1}", "s32[2] {0, 1}", "s32[2] {1, 2}",
             "s32[2] {0, 1}", "s32[2] {1, 1}"},
            {"f32[4] {10, 20, 30, 40}", "f32[4] {-2, -2, -2, -2}", "s32[2] {0, 3}", "s32[2] {1, 1}",
             "s32[2] {1, 3}", "s32[2] {2, 1}"}};
        QCOMPARE(QString::fromStdString(
                     mismatch(text, inputs, {"f32[4] {1, 10, -1, -1}", "f32[4] {-2, 2, 3, 40}"})),
                 QString());
    }

    void raggedAllToAllSeveralUpdatesPerMember() {
        // Offsets of 4 for 2 members: 2 updates per member, receiver i taking
        // updates 2i and 2i+1 of every sender, sender 0 first. Device 0 gets
        // sender 0's rows [0,2) at 0 and row 2 at 3, then sender 1's, which
        // overwrite them; device 1 gets rows 3 and 5 at rows 1 and 4.
        const std::string text =
            "HloModule m, replica_count=2\nENTRY e {\n  in = f32[6] parameter(0)\n"
            "  out = f32[5] parameter(1)\n  io = s32[4] parameter(2)\n  ss = s32[4] parameter(3)\n"
            "  oo = s32[4] parameter(4)\n  ROOT c = f32[5] ragged-all-to-all(in, out, io, ss, oo, "
            "ss), replica_groups={{0,1}}\n}\n";
        const std::vector<std::string> offsets = {"s32[4] {0, 2, 3, 5}", "s32[4] {2, 1, 1, 1}",
                                                  "s32[4] {0, 3, 1, 4}"};
        const DeviceTexts inputs = {
            {"f32[6] {0, 1, 2, 3, 4, 5}", "f32[5] {-1, -1, -1, -1, -1}", offsets[0], offsets[1],
             offsets[2]},
            {"f32[6] {100, 101, 102, 103, 104, 105}", "f32[5] {-1, -1, -1, -1, -1}", offsets[0],
             offsets[1], offsets[2]}};
        QCOMPARE(
            QString::fromStdString(mismatch(
                text, inputs, {"f32[5] {100, 101, -1, 102, -1}", "f32[5] {-1, 103, -1, -1, 105}"})),
            QString());

        // Offsets that are not a multiple of the members, and a row range past
        // the output, are errors naming the sender.
        const std::string three =
            "HloModule m, replica_count=2\nENTRY e {\n  in = f32[6] parameter(0)\n"
            "  out = f32[5] parameter(1)\n  io = s32[3] parameter(2)\n  ss = s32[3] parameter(3)\n"
            "  oo = s32[3] parameter(4)\n  ROOT c = f32[5] ragged-all-to-all(in, out, io, ss, oo, "
            "ss), replica_groups={{0,1}}\n}\n";
        DeviceTexts odd = inputs;
        for (auto& device : odd)
            for (size_t k = 2; k < 5; ++k) device[k] = "s32[3] {0, 0, 0}";
        Status status = errorOf(three, odd);
        QVERIFY2(
            status.message().find("not the same multiple of the 2 members") != std::string::npos,
            status.toString().c_str());
        DeviceTexts past = inputs;
        past[1][4] = "s32[4] {0, 3, 4, 5}";
        status = errorOf(text, past);
        QVERIFY2(status.message().find(
                     "update 3 of member 1: rows [5, 6) of 6 to rows [5, 6) of 5 out of range") !=
                     std::string::npos,
                 status.toString().c_str());
    }

    void raggedAllToAllAsXlaExpects() {
        // XLA's ragged_all_to_all_e2e_test (offsets from replica-id): replica 0
        // gets {0, -1, 10, -1} and replica 1 {2, -1, 12, -1}.
        const std::string text =
            "HloModule m, replica_count=2\nENTRY e {\n  io = f32[4] iota(), iota_dimension=0\n"
            "  id = u32[] replica-id()\n  ten = u32[] constant(10)\n  id2 = u32[] multiply(id, "
            "ten)\n"
            "  id3 = f32[] convert(id2)\n  id4 = f32[4] broadcast(id3), dimensions={}\n"
            "  input = f32[4] add(io, id4)\n  output = f32[4] constant({-1,-1,-1,-1})\n"
            "  sizes = s32[2] constant({1,1})\n  input_offsets = s32[2] constant({0, 2})\n"
            "  step = u32[] constant(2)\n  oof = u32[] multiply(id, step)\n"
            "  oof2 = s32[] convert(oof)\n  output_offsets = s32[2] broadcast(oof2), "
            "dimensions={}\n"
            "  ROOT ra2a = f32[4] ragged-all-to-all(input, output, input_offsets, sizes, "
            "output_offsets, sizes), replica_groups={{0,1}}\n}\n";
        QCOMPARE(QString::fromStdString(mismatch(
                     text, {{}, {}}, {"f32[4] {0, -1, 10, -1}", "f32[4] {2, -1, 12, -1}"})),
                 QString());
    }

    void collectivesInALoop() {
        // Three iterations, each adding the sum of the replica ids (0+1+2 = 3).
        const std::string text =
            "HloModule m, replica_count=3\n" + std::string(kAdd) +
            "cond {\n  s = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
            "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
            "body {\n  s = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
            "  v = f32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
            "  j = s32[] add(i, one)\n  r = u32[] replica-id()\n  rf = f32[] convert(r)\n"
            "  sum = f32[] all-reduce(rf), to_apply=add\n  w = f32[] add(v, sum)\n"
            "  ROOT t = (s32[], f32[]) tuple(j, w)\n}\n"
            "ENTRY e {\n  p = f32[] parameter(0)\n  z = s32[] constant(0)\n"
            "  t = (s32[], f32[]) tuple(z, p)\n  w = (s32[], f32[]) while(t), condition=cond, "
            "body=body\n"
            "  ROOT v = f32[] get-tuple-element(w), index=1\n}\n";
        QCOMPARE(QString::fromStdString(mismatch(text, each({"f32[] 0", "f32[] 100", "f32[] 200"}),
                                                 {"f32[] 9", "f32[] 109", "f32[] 209"})),
                 QString());
    }

    void failuresEndTheEvaluation() {
        // Device 1 takes a branch with an op the evaluator lacks, before the
        // all-reduce the others wait at: its own error is reported.
        const std::string failing =
            "HloModule m, replica_count=3\n" + std::string(kAdd) +
            "good {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n"
            "bad {\n  x = f32[] parameter(0)\n  ROOT y = f32[] custom-call(x), "
            "custom_call_target=\"no_such_target\"\n}\n"
            "ENTRY e {\n  p = f32[] parameter(0)\n  r = u32[] replica-id()\n  one = u32[] "
            "constant(1)\n"
            "  is1 = pred[] compare(r, one), direction=EQ\n"
            "  c = f32[] conditional(is1, p, p), true_computation=bad, false_computation=good\n"
            "  ROOT s = f32[] all-reduce(c), to_apply=add\n}\n";
        Status status = errorOf(failing, each({"f32[] 1", "f32[] 2", "f32[] 3"}));
        QVERIFY(!status.isOk());
        QVERIFY2(status.message().rfind("device 1 (replica 1, partition 0): ", 0) == 0,
                 status.message().c_str());
        QVERIFY2(status.message().find("no_such_target") != std::string::npos,
                 status.message().c_str());

        // Device 0 skips the all-reduce the others reach: they fail, naming it.
        const std::string skipping =
            "HloModule m, replica_count=2\n" + std::string(kAdd) +
            "plain {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n"
            "reduce {\n  x = f32[] parameter(0)\n  ROOT y = f32[] all-reduce(x), to_apply=add\n}\n"
            "ENTRY e {\n  p = f32[] parameter(0)\n  r = u32[] replica-id()\n  zero = u32[] "
            "constant(0)\n"
            "  is0 = pred[] compare(r, zero), direction=EQ\n"
            "  ROOT c = f32[] conditional(is0, p, p), true_computation=plain, "
            "false_computation=reduce\n}\n";
        status = errorOf(skipping, each({"f32[] 1", "f32[] 2"}));
        QVERIFY(!status.isOk());
        QVERIFY2(status.message().find("%y: device 1 (replica 1, partition 0) waits in vain") !=
                     std::string::npos,
                 status.message().c_str());
        QVERIFY2(status.message().find(
                     "device 0 (replica 0, partition 0) finished without reaching it") !=
                     std::string::npos,
                 status.message().c_str());

        // Arguments for the wrong number of devices.
        auto module = parse(skipping);
        auto results = evaluateOnDevices(*module, DeviceGrid{2, 1}, argumentsOf(each({"f32[] 1"})));
        QVERIFY(!results.isOk());
        QCOMPARE(results.status().code(), StatusCode::kInvalidArgument);
    }

    void sendAndRecvBetweenDevices() {
        // channel_id=0: the pairs name replicas. Replica 1 sends {11, 11} to
        // replica 0; the recv comes first in the text (XLA's SendRecv test),
        // and replica 1, which nobody sends to, receives zeros.
        const std::string replicas =
            "HloModule m, replica_count=2\nENTRY e {\n  r = u32[] replica-id()\n"
            "  ten = u32[] constant(10)\n  sum = u32[] add(r, ten)\n"
            "  p = u32[2] broadcast(sum), dimensions={}\n  a = token[] after-all()\n"
            "  recv = (u32[2], u32[], token[]) recv(a), channel_id=0, "
            "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{1,0}}\"}\n"
            "  send = (u32[2], u32[], token[]) send(p, a), channel_id=0, "
            "control-predecessors={recv}, "
            "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{1,0}}\"}\n"
            "  done = (u32[2], token[]) recv-done(recv), channel_id=0\n"
            "  sent = token[] send-done(send), channel_id=0\n"
            "  ROOT data = u32[2] get-tuple-element(done), index=0\n}\n";
        QCOMPARE(QString::fromStdString(
                     mismatch(replicas, {{}, {}}, {"u32[2] {11, 11}", "u32[2] {0, 0}"})),
                 QString());

        // channel_id>0: partitions, in a ring, three times round a loop; the
        // send and recv have different channels (XLA:GPU pairs them by peer
        // and order). Each step passes the value one partition on.
        const std::string ring =
            "HloModule m, num_partitions=3\n"
            "cond {\n  s = (u32[], f32[]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
            "  n = u32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
            "body {\n  s = (u32[], f32[]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
            "  v = f32[] get-tuple-element(s), index=1\n  a = token[] after-all()\n"
            "  send = (f32[], u32[], token[]) send(v, a), channel_id=1, "
            "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,0}}}\n"
            "  recv = (f32[], u32[], token[]) recv(a), channel_id=2, "
            "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,0}}}\n"
            "  sent = token[] send-done(send), channel_id=1\n"
            "  done = (f32[], token[]) recv-done(recv), channel_id=2\n"
            "  got = f32[] get-tuple-element(done), index=0\n  one = u32[] constant(1)\n"
            "  j = u32[] add(i, one)\n  ten = f32[] constant(10)\n  w = f32[] multiply(got, ten)\n"
            "  ROOT t = (u32[], f32[]) tuple(j, w)\n}\n"
            "ENTRY e {\n  p = f32[] parameter(0)\n  z = u32[] constant(0)\n"
            "  t = (u32[], f32[]) tuple(z, p)\n"
            "  w = (u32[], f32[]) while(t), condition=cond, body=body\n"
            "  ROOT v = f32[] get-tuple-element(w), index=1\n}\n";
        // After three steps round a ring of three, every value is home, x 1000.
        QCOMPARE(QString::fromStdString(mismatch(ring, each({"f32[] 1", "f32[] 2", "f32[] 3"}),
                                                 {"f32[] 1000", "f32[] 2000", "f32[] 3000"})),
                 QString());

        // The grid comes from the pairs when the header gives none.
        auto module = parse(std::string(replicas).replace(0, 28, "HloModule m\n"));
        auto grid = moduleDeviceGrid(*module);
        QVERIFY2(grid.isOk(), grid.status().toString().c_str());
        QCOMPARE(*grid, (DeviceGrid{2, 1}));

        // Receiving before sending round a ring waits forever on a real
        // machine too: here it is a deadlock error naming where each waits.
        std::string stuck = ring;
        const size_t sendAt = stuck.find("  send = ");
        const size_t sendEnd = stuck.find("\n", sendAt) + 1;
        const std::string sendLine = stuck.substr(sendAt, sendEnd - sendAt);
        stuck.erase(sendAt, sendEnd - sendAt);
        const size_t doneEnd = stuck.find("\n", stuck.find("  done = ")) + 1;
        stuck.insert(doneEnd, sendLine);
        // The send now follows the recv-done it feeds: ordered by a control edge.
        const std::string plainSend = "send(v, a), channel_id=1, ";
        stuck.replace(stuck.find(plainSend), plainSend.size(),
                      plainSend + "control-predecessors={done}, ");
        Status status = errorOf(stuck, each({"f32[] 1", "f32[] 2", "f32[] 3"}));
        QVERIFY2(status.message().find("deadlock: every device still running waits for another") !=
                         std::string::npos &&
                     status.message().find("at %done") != std::string::npos,
                 status.toString().c_str());

        // A pair naming a partition the grid lacks.
        std::string far = ring;
        far.replace(far.find("{2,0}}}\n  recv"), 5, "{5,0}");
        status = errorOf(far, each({"f32[] 1", "f32[] 2", "f32[] 3"}));
        QVERIFY2(status.message().find("names partition 5 of 3") != std::string::npos,
                 status.toString().c_str());
    }

    void combinedPermute() {
        // Two arrays moved along the same pairs (XLA's collective_ops_e2e test):
        // replica 0 gets replica 1's and the reverse.
        const std::string text =
            "HloModule m, replica_count=2\nENTRY e {\n  r = u32[] replica-id()\n"
            "  ten = u32[] constant(10)\n  sum = u32[] add(r, ten)\n"
            "  a = u32[2] broadcast(r), dimensions={}\n  b = u32[2] broadcast(sum), dimensions={}\n"
            "  p = (u32[2], u32[2]) collective-permute(a, b), source_target_pairs={{1,0},{0,1}}\n"
            "  x = u32[2] get-tuple-element(p), index=0\n  y = u32[2] get-tuple-element(p), "
            "index=1\n"
            "  ROOT c = u32[4] concatenate(x, y), dimensions={0}\n}\n";
        QCOMPARE(QString::fromStdString(
                     mismatch(text, {{}, {}}, {"u32[4] {1, 1, 11, 11}", "u32[4] {0, 0, 10, 10}"})),
                 QString());
    }

    void divergentCollectivesAreADeadlock() {
        // Replica 0 waits at one all-reduce, replica 1 at another: neither
        // can finish, and the evaluation says so rather than hanging.
        const std::string text =
            "HloModule m, replica_count=2\n" + std::string(kAdd) +
            "left {\n  x = f32[] parameter(0)\n  ROOT y = f32[] all-reduce(x), to_apply=add\n}\n"
            "right {\n  x = f32[] parameter(0)\n  ROOT z = f32[] all-reduce(x), to_apply=add\n}\n"
            "ENTRY e {\n  p = f32[] parameter(0)\n  r = u32[] replica-id()\n"
            "  zero = u32[] constant(0)\n  is0 = pred[] compare(r, zero), direction=EQ\n"
            "  ROOT c = f32[] conditional(is0, p, p), true_computation=left, "
            "false_computation=right\n}\n";
        Status status = errorOf(text, each({"f32[] 1", "f32[] 2"}));
        QVERIFY2(status.message().find("deadlock") != std::string::npos &&
                     status.message().find("device 0 (replica 0, partition 0) at %y") !=
                         std::string::npos &&
                     status.message().find("device 1 (replica 1, partition 0) at %z") !=
                         std::string::npos,
                 status.toString().c_str());
    }

    // Every corpus module whose collectives span several devices, on seeded
    // random arguments: evaluated on all of them within 5 s, or a named
    // reason, tallied (modules over 16M elements on all devices are left
    // out). The count is a floor: it only goes up.
    void corpusModulesOnEveryDevice() {
        const QString root = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");
        if (!QDir(root).exists())
            QSKIP("../shared/corpus is absent: the multi-device sweep is skipped");
        constexpr int kFloor = kMultiDeviceCorpusFloor;
        int evaluated = 0, modules = 0;
        std::map<std::string, int> reasons;
        QDirIterator it(root, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
        QStringList files;
        while (it.hasNext()) files << it.next();
        files.sort();
        for (const QString& file : files) {
            auto module = loadModuleFromFile(file.toStdString());
            if (!module.isOk() || (*module)->entryComputation() == nullptr) continue;
            auto grid = moduleDeviceGrid(**module);
            if (grid.isOk() && grid->count() <= 1) continue;
            ++modules;
            if (!grid.isOk()) {
                ++reasons[reasonOf(grid.status())];
                continue;
            }
            // A single dot of billions of flops is not cancellable midway: the largest are
            // left out.
            if (testing::moduleArrayElements(**module) * grid->count() > (int64_t{1} << 24)) {
                ++reasons["over 16M elements on all devices"];
                continue;
            }
            const auto started = std::chrono::steady_clock::now();
            auto results = testing::evaluateOnDevicesWithin(
                **module, *grid, makeDeviceArguments(*(*module)->entryComputation(), *grid, 0), 5);
            if (qEnvironmentVariableIsSet("HLOSCOPE_MULTI_DEVICE_LIST"))
                qInfo("%s: %.2f s: %s", qPrintable(QFileInfo(file).fileName()),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                          .count(),
                      results.isOk() ? "ok" : results.status().message().substr(0, 120).c_str());
            if (results.isOk()) {
                ++evaluated;
                QCOMPARE(int64_t(results->size()), grid->count());
            } else {
                ++reasons[results.status().code() == StatusCode::kCancelled
                              ? std::string("over 5 s")
                              : reasonOf(results.status())];
            }
        }
        qInfo("%d of %d multi-device corpus modules evaluated on every device", evaluated, modules);
        std::vector<std::pair<int, std::string>> sorted;
        for (const auto& [reason, count] : reasons) sorted.emplace_back(count, reason);
        std::sort(sorted.rbegin(), sorted.rend());
        for (const auto& [count, reason] : sorted) qInfo("%5d  %s", count, reason.c_str());
        QVERIFY2(evaluated >= kFloor,
                 qPrintable(QString::number(evaluated) + QStringLiteral(" < floor ") +
                            QString::number(kFloor)));
    }

    void oneDeviceStillPassesOperandsThrough() {
        // Without an exchange, a one-participant all-reduce is its operand.
        QCOMPARE(QString::fromStdString(hloscope::testing::mismatch(
                     std::string("HloModule m\n") + kAdd +
                         "ENTRY e {\n  p = f32[2] constant({1, 2})\n  ROOT c = f32[2] "
                         "all-reduce(p), to_apply=add\n}\n",
                     "f32[2] {1, 2}")),
                 QString());
    }
};

QTEST_GUILESS_MAIN(TestMultiDevice)
#include "tst_multi_device.moc"
