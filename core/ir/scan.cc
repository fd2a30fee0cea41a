#include "core/ir/scan.h"

#include <charconv>
#include <string>

#include "core/ir/hlo_computation.h"

namespace hloscope {
namespace {

Status scanError(const HloInstruction& scan, const std::string& what) {
    return invalidArgument("%" + scan.name() + ": " + what);
}

// The shapes a value of `shape` holds: a tuple's elements, or itself.
std::vector<Shape> elementsOf(const Shape& shape) {
    if (!shape.isTuple()) return {shape};
    std::vector<Shape> elements;
    for (int64_t i = 0; i < shape.tupleCount(); ++i) elements.push_back(shape.tupleShape(i));
    return elements;
}

}  // namespace

Shape insertDimension(const Shape& shape, int64_t dimension, int64_t size) {
    std::vector<int64_t> dims = shape.dimensions();
    dims.insert(dims.begin() + dimension, size);
    return Shape::makeArray(shape.elementType(), std::move(dims));
}

Shape removeDimension(const Shape& shape, int64_t dimension) {
    std::vector<int64_t> dims = shape.dimensions();
    dims.erase(dims.begin() + dimension);
    return Shape::makeArray(shape.elementType(), std::move(dims));
}

StatusOr<ScanGeometry> scanGeometry(const HloInstruction& scan) {
    ScanGeometry g;
    const HloComputation* body = scan.toApply();
    if (body == nullptr) return scanError(scan, "scan has no to_apply computation");
    if (scan.dimensions().size() != 1)
        return scanError(scan, "scan takes exactly one scanned dimension, got " +
                                   std::to_string(scan.dimensions().size()));
    g.dimension = scan.dimensions(0);
    if (auto text = scan.attribute("num_carries")) {
        auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), g.carryCount);
        if (ec != std::errc() || end != text->data() + text->size() || g.carryCount < 0)
            return scanError(scan, "num_carries must be a non-negative integer");
    }
    if (auto text = scan.attribute("is_reverse")) g.reverse = *text == "true";
    g.inputCount = scan.operandCount() - g.carryCount;
    if (g.inputCount < 0)
        return scanError(scan, "num_carries=" + std::to_string(g.carryCount) + " but only " +
                                   std::to_string(scan.operandCount()) + " operands");

    // Inputs: arrays with the scanned dimension, all of one length.
    g.length = -1;
    for (int64_t i = 0; i < g.inputCount; ++i) {
        const Shape& input = scan.operand(i)->shape();
        if (!input.isArray() || g.dimension < 0 || g.dimension >= input.rank())
            return scanError(scan, "scan input " + std::to_string(i) + " (" +
                                       input.toString(false) + ") has no dimension " +
                                       std::to_string(g.dimension));
        const int64_t length = input.dimensions(g.dimension);
        if (g.length >= 0 && length != g.length)
            return scanError(scan, "scan inputs differ in length along dimension " +
                                       std::to_string(g.dimension) + ": " +
                                       std::to_string(g.length) + " and " + std::to_string(length));
        g.length = length;
    }

    // The body: (slices..., carries...) -> (outputs..., carries...).
    if (body->parameterCount() != scan.operandCount())
        return scanError(scan, "to_apply %" + body->name() + " takes " +
                                   std::to_string(body->parameterCount()) +
                                   " parameters, the scan has " +
                                   std::to_string(scan.operandCount()) + " operands");
    for (int64_t i = 0; i < scan.operandCount(); ++i) {
        const Shape& operand = scan.operand(i)->shape();
        const Shape expected = i < g.inputCount ? removeDimension(operand, g.dimension) : operand;
        const Shape& parameter = body->parameter(i)->shape();
        if (!parameter.compatible(expected))
            return scanError(
                scan, "to_apply parameter " + std::to_string(i) + " is " +
                          parameter.toString(false) + ", expected " + expected.toString(false) +
                          (i < g.inputCount ? " (the input's slice)" : " (the carry)"));
    }
    const Shape& rootShape = body->root()->shape();
    const std::vector<Shape> results = elementsOf(rootShape);
    g.tupleResult = rootShape.isTuple();
    g.outputCount = static_cast<int64_t>(results.size()) - g.carryCount;
    if (g.outputCount < 0)
        return scanError(scan, "to_apply returns " + std::to_string(results.size()) +
                                   " values, fewer than its " + std::to_string(g.carryCount) +
                                   " carries");
    for (int64_t j = 0; j < g.carryCount; ++j) {
        const Shape& init = scan.operand(g.inputCount + j)->shape();
        const Shape& next = results[static_cast<size_t>(g.outputCount + j)];
        if (!next.compatible(init))
            return scanError(scan, "to_apply returns carry " + std::to_string(j) + " as " +
                                       next.toString(false) + ", its initial value is " +
                                       init.toString(false));
        g.carryShapes.push_back(init);
    }
    for (int64_t o = 0; o < g.outputCount; ++o) {
        const Shape& output = results[static_cast<size_t>(o)];
        if (!output.isArray())
            return scanError(scan, "scan output " + std::to_string(o) + " (" +
                                       output.toString(false) + ") is not an array");
        g.outputShapes.push_back(output);
    }

    // The result: stacked outputs, then the carries.
    const std::vector<Shape> declared = elementsOf(scan.shape());
    if (scan.shape().isTuple() != g.tupleResult || declared.size() != results.size())
        return scanError(scan, "scan result " + scan.shape().toString(false) +
                                   " does not match to_apply's result " +
                                   rootShape.toString(false));
    for (int64_t o = 0; o < g.outputCount; ++o) {
        const Shape& stacked = declared[static_cast<size_t>(o)];
        if (g.length < 0) {
            // No inputs: the length is the stacked output's.
            if (!stacked.isArray() || g.dimension < 0 || g.dimension >= stacked.rank())
                return scanError(scan, "scan result " + std::to_string(o) + " has no dimension " +
                                           std::to_string(g.dimension));
            g.length = stacked.dimensions(g.dimension);
        }
        if (g.dimension > g.outputShapes[static_cast<size_t>(o)].rank())
            return scanError(
                scan, "scan output " + std::to_string(o) + " has rank " +
                          std::to_string(g.outputShapes[static_cast<size_t>(o)].rank()) +
                          ", too small to stack along dimension " + std::to_string(g.dimension));
        const Shape expected =
            insertDimension(g.outputShapes[static_cast<size_t>(o)], g.dimension, g.length);
        if (!stacked.compatible(expected))
            return scanError(scan, "scan result " + std::to_string(o) + " is " +
                                       stacked.toString(false) + ", expected " +
                                       expected.toString(false) + " (output " + std::to_string(o) +
                                       " stacked along dimension " + std::to_string(g.dimension) +
                                       ")");
    }
    for (int64_t j = 0; j < g.carryCount; ++j) {
        const Shape& carry = declared[static_cast<size_t>(g.outputCount + j)];
        if (!carry.compatible(g.carryShapes[static_cast<size_t>(j)]))
            return scanError(scan, "scan result " + std::to_string(g.outputCount + j) + " is " +
                                       carry.toString(false) + ", expected the carry's " +
                                       g.carryShapes[static_cast<size_t>(j)].toString(false));
    }
    if (g.length < 0)
        return scanError(scan, "scan has neither inputs nor outputs to give it a length");
    return g;
}

}  // namespace hloscope
