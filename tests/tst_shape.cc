// Shapes and layouts: construction, printing, parsing, equality, sizes.
#include <QTest>

#include "core/text/hlo_parser.h"
#include "core/ir/shape.h"

using namespace hloscope;

class TestShape : public QObject {
    Q_OBJECT
private slots:
    void arrayPrinting();
    void tuplePrinting();
    void dynamicDimensions();
    void layoutPrinting();
    void parsePrintRoundTrip_data();
    void parsePrintRoundTrip();
    void parseErrors_data();
    void parseErrors();
    void equality();
    void byteSizes();
    void defaultLayouts();
};

void TestShape::arrayPrinting() {
    Shape s = Shape::makeArrayWithLayout(PrimitiveType::F32, {2, 3}, {1, 0});
    QCOMPARE(s.toString(), std::string("f32[2,3]{1,0}"));
    QCOMPARE(s.toString(false), std::string("f32[2,3]"));
    QCOMPARE(Shape::makeScalar(PrimitiveType::PRED).toString(), std::string("pred[]"));
    QCOMPARE(Shape::makeToken().toString(), std::string("token[]"));
    QCOMPARE(Shape::makeArray(PrimitiveType::BF16, {4}).toString(), std::string("bf16[4]"));
    QVERIFY(Shape::makeScalar(PrimitiveType::S32).isScalar());
    QCOMPARE(s.rank(), int64_t(2));
    QCOMPARE(s.elementCount(), int64_t(6));
}

void TestShape::tuplePrinting() {
    Shape t = Shape::makeTuple({Shape::makeScalar(PrimitiveType::F32),
                                Shape::makeArrayWithLayout(PrimitiveType::S32, {4}, {0}),
                                Shape::makeTuple({})});
    QCOMPARE(t.toString(), std::string("(f32[], s32[4]{0}, ())"));
    QVERIFY(t.isTuple());
    QCOMPARE(t.tupleCount(), int64_t(3));
    QCOMPARE(t.tupleShape(1).dimensions(0), int64_t(4));
}

void TestShape::dynamicDimensions() {
    Shape s = Shape::makeArrayWithLayout(PrimitiveType::F32, {5, 3}, {1, 0});
    QVERIFY(!s.isDynamic());
    s.setDynamicDimension(0, true);
    QVERIFY(s.isDynamic());
    QCOMPARE(s.toString(), std::string("f32[<=5,3]{1,0}"));
    s.setDynamicDimension(0, false);
    QVERIFY(!s.isDynamic());
    QVERIFY(s.dynamicDimensions().empty());
    Shape unbounded = Shape::makeArray(PrimitiveType::F32, {Shape::kUnboundedSize, 2});
    unbounded.setDynamicDimension(0, true);
    QCOMPARE(unbounded.toString(), std::string("f32[?,2]"));
    QCOMPARE(unbounded.elementCount(), int64_t(0));
}

void TestShape::layoutPrinting() {
    Layout layout({1, 0});
    QCOMPARE(layout.toString(), std::string("{1,0}"));
    layout.mutableTiles().push_back(Tile{{8, 128}});
    layout.mutableTiles().push_back(Tile{{2, 1}});
    QCOMPARE(layout.toString(), std::string("{1,0:T(8,128)(2,1)}"));
    layout.setMemorySpace(1);
    layout.setElementSizeInBits(4);
    QCOMPARE(layout.toString(), std::string("{1,0:T(8,128)(2,1)E(4)S(1)}"));
    layout.setSplitConfigs({SplitConfig{0, {1024}}});
    QCOMPARE(layout.toString(), std::string("{1,0:T(8,128)(2,1)E(4)S(1)SC(0:1024)}"));
    Layout combine({0});
    combine.mutableTiles().push_back(Tile{{Tile::kCombineDimension, 128}});
    QCOMPARE(combine.toString(), std::string("{0:T(*,128)}"));
    Layout sparse({0});
    sparse.setDimLevelTypes({DimLevelType::kCompressed}, {false}, {});
    sparse.setIndexPrimitiveType(PrimitiveType::S32);
    QCOMPARE(sparse.toString(), std::string("{0:D(C+)#(s32)}"));
    // Copies are deep.
    Layout copy = sparse;
    QCOMPARE(copy, sparse);
    copy.setIndexPrimitiveType(PrimitiveType::S64);
    QVERIFY(copy != sparse);
}

void TestShape::parsePrintRoundTrip_data() {
    QTest::addColumn<QString>("text");
    for (const char* text :
         {"f32[]", "f32[2,3]{1,0}", "f32[2,3]{0,1}", "pred[7]{0}", "bf16[1,2,3,4]{3,2,1,0}",
          "f32[<=5,3]{1,0}", "f32[?,2]", "(f32[], s32[4]{0})", "((f32[]), ())", "token[]",
          "opaque[]", "f32[8,128]{1,0:T(8,128)}", "f32[8,128]{1,0:T(8,128)(2,1)S(1)}",
          "s4[16]{0:E(4)}", "f32[1024]{0:T(1024)S(1)SC(0:512)}", "f32[]{:T(256)}",
          "u8[2,2]{0,1:T(2,128)(4,1)}", "b(f32[2,4]{1,0})", "f8e4m3fn[4,4]{1,0}", "c128[3]{0}", "s2[8]{0:E(2)}"}) {
        QTest::newRow(text) << QString::fromLatin1(text);
    }
}

void TestShape::parsePrintRoundTrip() {
    QFETCH(QString, text);
    auto shape = parseShape(text.toStdString());
    QVERIFY2(shape.isOk(), shape.status().toString().c_str());
    QCOMPARE(QString::fromStdString(shape->toString()), text);
}

void TestShape::parseErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown type") << "f31[2]" << "f31";
    QTest::newRow("unterminated dims") << "f32[2,3" << "]";
    QTest::newRow("bad dim") << "f32[2,x]" << "dimension";
    QTest::newRow("unterminated layout") << "f32[2]{0" << "}";
    QTest::newRow("unterminated tuple") << "(f32[], s32[]" << ")";
    QTest::newRow("empty") << "" << "shape";
}

void TestShape::parseErrors() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    auto shape = parseShape(text.toStdString());
    QVERIFY(!shape.isOk());
    QString message = QString::fromStdString(shape.status().message());
    QVERIFY2(message.contains(expected, Qt::CaseInsensitive), qPrintable(message));
}

void TestShape::equality() {
    Shape a = Shape::makeArrayWithLayout(PrimitiveType::F32, {2, 3}, {1, 0});
    Shape b = Shape::makeArrayWithLayout(PrimitiveType::F32, {2, 3}, {0, 1});
    Shape c = Shape::makeArray(PrimitiveType::F32, {2, 3});
    QVERIFY(a != b);
    QVERIFY(a.compatible(b));
    QVERIFY(a != c);
    QVERIFY(a.compatible(c));
    QVERIFY(!a.compatible(Shape::makeArray(PrimitiveType::F16, {2, 3})));
    QVERIFY(a.sameDimensions(Shape::makeArray(PrimitiveType::F16, {2, 3})));
    // A scalar's trivial layout is not printed, so it equals none.
    Shape scalarWithLayout = Shape::makeArrayWithLayout(PrimitiveType::F32, {}, {});
    QCOMPARE(scalarWithLayout, Shape::makeScalar(PrimitiveType::F32));
}

void TestShape::byteSizes() {
    QCOMPARE(Shape::makeArray(PrimitiveType::F32, {32, 128, 768}).byteSize(),
             int64_t(32) * 128 * 768 * 4);
    QCOMPARE(Shape::makeArray(PrimitiveType::PRED, {10}).byteSize(), int64_t(10));
    Shape packed = Shape::makeArrayWithLayout(PrimitiveType::S4, {10}, {0});
    QCOMPARE(packed.byteSize(), int64_t(10));  // unpacked: one byte per element
    packed.mutableLayout().setElementSizeInBits(4);
    QCOMPARE(packed.byteSize(), int64_t(5));
    Shape tuple = Shape::makeTuple(
        {Shape::makeArray(PrimitiveType::F64, {2}), Shape::makeArray(PrimitiveType::S8, {3})});
    QCOMPARE(tuple.byteSize(), int64_t(19));
    QCOMPARE(Shape::makeToken().byteSize(), int64_t(0));
}

void TestShape::defaultLayouts() {
    Shape t = Shape::makeTuple({Shape::makeArray(PrimitiveType::F32, {2, 3, 4}),
                                Shape::makeScalar(PrimitiveType::S32)});
    t.setDefaultLayoutIfMissing();
    QCOMPARE(t.toString(), std::string("(f32[2,3,4]{2,1,0}, s32[])"));
    QCOMPARE(Layout::descending(3).minorToMajor(), (std::vector<int64_t>{2, 1, 0}));
}

QTEST_APPLESS_MAIN(TestShape)
#include "tst_shape.moc"
