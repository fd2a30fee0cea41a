// The flat tables the IR's hot paths use instead of node-based hash containers:
// PointerIndex (instruction -> index, HloComputation::postOrder and the batch removals) and
// NameHashSet (the names a module has handed out, HloModule::uniqueInstructionName).
#include <QTest>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/name_hash_set.h"
#include "core/support/pointer_index.h"
#include "core/text/hlo_parser.h"

using namespace hloscope;

class TestFlatTables : public QObject {
    Q_OBJECT

private slots:
    void pointerIndexFindsWhatWasInserted() {
        std::vector<std::unique_ptr<int>> keys;
        for (int i = 0; i < 1000; ++i) keys.push_back(std::make_unique<int>(i));
        // Sized for 10: the table grows past it and keeps every entry.
        PointerIndex index(10);
        for (size_t i = 0; i < keys.size(); ++i) QVERIFY(index.insert(keys[i].get(), static_cast<uint32_t>(i)));
        QCOMPARE(index.size(), keys.size());
        for (size_t i = 0; i < keys.size(); ++i) QCOMPARE(index.find(keys[i].get()), static_cast<uint32_t>(i));
        // A second insert keeps the first value.
        QVERIFY(!index.insert(keys[7].get(), 99));
        QCOMPARE(index.find(keys[7].get()), 7u);
        int other = 0;
        QCOMPARE(index.find(&other), PointerIndex::kAbsent);
        QCOMPARE(index.find(nullptr), PointerIndex::kAbsent);
    }

    void nameHashSetTracksNames() {
        NameHashSet names;
        QVERIFY(!names.contains("add"));
        for (int i = 0; i < 5000; ++i) QVERIFY(names.insert("add." + std::to_string(i)));
        QCOMPARE(names.size(), size_t{5000});
        QVERIFY(!names.insert("add.17"));
        QVERIFY(names.contains("add.4999"));
        QVERIFY(!names.contains("add.5000"));
        QVERIFY(names.insert(""));
        QVERIFY(names.contains(""));
        names.reserve(100000);
        QVERIFY(names.contains("add.123"));
        QCOMPARE(names.size(), size_t{5001});
    }

    // Unique names skip every name the module holds, those handed out since and those of
    // instructions added since, however many.
    void uniqueNamesAvoidTakenOnes() {
        auto module = parseHloModule(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  add.1 = f32[4] add(p, p)
  add.2 = f32[4] add(add.1, p)
  ROOT add.4 = f32[4] add(add.2, p)
})");
        QVERIFY(module.isOk());
        HloModule& m = **module;
        std::vector<std::string> made;
        for (int i = 0; i < 2000; ++i) made.push_back(m.uniqueInstructionName("add"));
        QCOMPARE(made.front(), std::string("add.3"));
        std::sort(made.begin(), made.end());
        QVERIFY(std::adjacent_find(made.begin(), made.end()) == made.end());
        for (const std::string& name : made) QVERIFY(name != "add.1" && name != "add.2" && name != "add.4");
    }
};

QTEST_GUILESS_MAIN(TestFlatTables)
#include "tst_flat_tables.moc"
