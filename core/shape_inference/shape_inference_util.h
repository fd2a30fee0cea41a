// Helpers shared by shape inference, the verifier and collective groups: error formatting,
// type predicates, window arithmetic, program shapes of called computations, reducer checks and
// the readers of replica groups and source-target pairs. Other rooms use the public
// shape_inference.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"
#include "core/support/status.h"

namespace hloscope::shape_inference_internal {

// kFailedPrecondition "%name: message".
Status fail(const HloInstruction& instruction, std::string_view message);

// Shape text without layout, e.g. "f32[2,3]".
std::string str(const Shape& shape);
std::string str(std::span<const int64_t> values);  // "{1,2}"
std::string typeName(PrimitiveType type);

// XLA's ElementIsFloating / ElementIsSigned / ElementIsIntegral.
bool isFloat(PrimitiveType type);
bool isSignedOrFloat(PrimitiveType type);
bool isIntegral(PrimitiveType type);

bool sameElementTypeIgnoringFp(PrimitiveType a, PrimitiveType b);
PrimitiveType higherPrecision(PrimitiveType a, PrimitiveType b);

// Dimension sizes equal, treating an unbounded `?` as equal to anything.
bool dimEqual(int64_t a, int64_t b);
// Same dimensions (unbounded-aware), element types and tuple structure;
// layouts and dynamism ignored.
bool compatible(const Shape& a, const Shape& b);
// Like compatible(), but any two floating-point element types match.
bool compatibleIgnoringFp(const Shape& a, const Shape& b);
// Same dimensions only (array shapes), unbounded-aware.
bool sameDims(const Shape& a, const Shape& b);

// Array shape with dynamism taken from `dynamic` (may be shorter/empty).
Shape makeArray(PrimitiveType type, std::vector<int64_t> dims,
                const std::vector<bool>& dynamic = {});

// Window arithmetic (XLA's window_util).
int64_t dilatedBound(int64_t bound, int64_t dilation);
int64_t stridedBound(int64_t bound, int64_t windowSize, int64_t stride);

// Output dimensions of a window applied to `base` (reduce-window,
// select-and-scatter, convolution spatial dims). Errors name `instruction`.
StatusOr<Shape> inferWindowOutputShape(const HloInstruction& instruction, const Shape& base,
                                       const Window& window, PrimitiveType elementType);

// Program shape of a called computation.
struct ProgramShape {
    std::vector<Shape> parameters;
    Shape result;
};
// nullopt when the computation has no root or a parameter gap.
std::optional<ProgramShape> programShape(const HloComputation* computation);

// Checks a reducer (reduce, reduce-window, all-reduce, scatter...):
// 2*inputs scalar parameters, result scalar or tuple of `inputs` scalars.
Status verifyReducerShape(const HloInstruction& instruction, const ProgramShape& reducer,
                          std::span<const Shape* const> initShapes,
                          std::span<const PrimitiveType> inputTypes, int64_t inputs);

// The program shape of the computation named by `attribute`, or an error
// naming the instruction.
StatusOr<ProgramShape> reducerProgram(const HloInstruction& instruction,
                                      std::string_view attribute = "to_apply");

// The computation named by `attribute`, or an error naming the instruction.
StatusOr<const HloComputation*> requireComputation(const HloInstruction& instruction,
                                                   std::string_view attribute);

// Parses an integer-list-of-lists attribute such as `{{0,1},{2,3}}` or the
// iota form `[2,2]<=[4]` / `[2,2]<=[2,2]T(1,0)`, or the mesh form
// `mesh['x'=2,'y'=2] {'y'}` (groups vary the listed axes). nullopt when malformed.
std::optional<std::vector<std::vector<int64_t>>> parseReplicaGroups(std::string_view text);
// `{{0,1},{1,2}}` as pairs.
std::optional<std::vector<std::pair<int64_t, int64_t>>> parsePairs(std::string_view text);
// `true`/`false` verbatim attribute; nullopt when absent.
std::optional<bool> boolAttribute(const HloInstruction& instruction, std::string_view name);
std::optional<int64_t> intAttribute(const HloInstruction& instruction, std::string_view name);

// Common checks; errors name the instruction.
Status expectOperandCount(const HloInstruction& instruction, int64_t count);
Status expectAtLeastOperands(const HloInstruction& instruction, int64_t count);
Status expectArray(const HloInstruction& instruction, const Shape& shape, std::string_view what);
std::string opName(const HloInstruction& instruction);  // "add"
bool isSortedUnique(const std::vector<int64_t>& values);
bool allUnique(const std::vector<int64_t>& values);
bool contains(const std::vector<int64_t>& values, int64_t value);
Status checkDimsInRange(const HloInstruction& instruction, const std::vector<int64_t>& dims,
                        int64_t rank, std::string_view what);

// Tuples, control flow, calls, tokens, side effects (shape_inference_control.cc).
StatusOr<Shape> inferGetTupleElement(const HloInstruction& instruction);
StatusOr<Shape> inferTuple(const HloInstruction& instruction);
StatusOr<Shape> inferWhile(const HloInstruction& instruction);
StatusOr<Shape> inferConditional(const HloInstruction& instruction);
StatusOr<Shape> inferCall(const HloInstruction& instruction);
StatusOr<Shape> inferFusion(const HloInstruction& instruction);
StatusOr<Shape> inferSend(const HloInstruction& instruction);
StatusOr<Shape> inferSendDone(const HloInstruction& instruction);
StatusOr<Shape> inferRecv(const HloInstruction& instruction);
StatusOr<Shape> inferRecvDone(const HloInstruction& instruction);
StatusOr<Shape> inferInfeed(const HloInstruction& instruction);
StatusOr<Shape> inferOutfeed(const HloInstruction& instruction);
StatusOr<Shape> inferAfterAll(const HloInstruction& instruction);
StatusOr<Shape> inferAddDependency(const HloInstruction& instruction);
StatusOr<Shape> inferGetDimensionSize(const HloInstruction& instruction);
StatusOr<Shape> inferSetDimensionSize(const HloInstruction& instruction);
StatusOr<Shape> inferTopK(const HloInstruction& instruction);
StatusOr<Shape> inferRng(const HloInstruction& instruction);
StatusOr<Shape> inferRngBitGenerator(const HloInstruction& instruction);
StatusOr<Shape> inferCopyStart(const HloInstruction& instruction);
StatusOr<Shape> inferCopyDone(const HloInstruction& instruction);
// The shape of a -done: element `element` of its -start operand's tuple
// (the whole shape when element < 0); the operand must be `startOpcode`.
StatusOr<Shape> inferStartDone(const HloInstruction& instruction, HloOpcode startOpcode,
                               int64_t element);

// Data movement (shape_inference_data_movement.cc).
StatusOr<Shape> inferBroadcast(const HloInstruction& instruction);
StatusOr<Shape> inferReshape(const HloInstruction& instruction);
StatusOr<Shape> inferDynamicReshape(const HloInstruction& instruction);
StatusOr<Shape> inferTranspose(const HloInstruction& instruction);
StatusOr<Shape> inferSlice(const HloInstruction& instruction);
StatusOr<Shape> inferDynamicSlice(const HloInstruction& instruction);
StatusOr<Shape> inferDynamicUpdateSlice(const HloInstruction& instruction);
StatusOr<Shape> inferConcatenate(const HloInstruction& instruction);
StatusOr<Shape> inferPad(const HloInstruction& instruction);
StatusOr<Shape> inferReverse(const HloInstruction& instruction);
StatusOr<Shape> inferIota(const HloInstruction& instruction);

// Dot, convolution, reductions, sort, map, fft, linear algebra, batch norm
// (shape_inference_ops.cc), gather/scatter (shape_inference_gather.cc) and
// collectives (shape_inference_collectives.cc).
StatusOr<Shape> inferDot(const HloInstruction& instruction);
StatusOr<Shape> inferRaggedDot(const HloInstruction& instruction);
StatusOr<Shape> inferScaledDot(const HloInstruction& instruction);
StatusOr<Shape> inferConvolution(const HloInstruction& instruction);
StatusOr<Shape> inferReduce(const HloInstruction& instruction);
StatusOr<Shape> inferReduceWindow(const HloInstruction& instruction);
StatusOr<Shape> inferSelectAndScatter(const HloInstruction& instruction);
StatusOr<Shape> inferGather(const HloInstruction& instruction);
StatusOr<Shape> inferScatter(const HloInstruction& instruction);
StatusOr<Shape> inferSort(const HloInstruction& instruction);
StatusOr<Shape> inferMap(const HloInstruction& instruction);
StatusOr<Shape> inferFft(const HloInstruction& instruction);
StatusOr<Shape> inferTriangularSolve(const HloInstruction& instruction);
StatusOr<Shape> inferCholesky(const HloInstruction& instruction);
StatusOr<Shape> inferBatchNorm(const HloInstruction& instruction);
StatusOr<Shape> inferAllReduce(const HloInstruction& instruction);
StatusOr<Shape> inferAllGather(const HloInstruction& instruction);
StatusOr<Shape> inferReduceScatter(const HloInstruction& instruction);
StatusOr<Shape> inferAllToAll(const HloInstruction& instruction);
StatusOr<Shape> inferRaggedAllToAll(const HloInstruction& instruction);
StatusOr<Shape> inferCollectivePermute(const HloInstruction& instruction);
StatusOr<Shape> inferCollectiveBroadcast(const HloInstruction& instruction);

}  // namespace hloscope::shape_inference_internal
