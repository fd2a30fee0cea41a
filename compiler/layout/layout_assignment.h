// LayoutAssignmentPass ("layout-assignment"): gives every array shape of the
// module (all computations, fused ones included, tuple leaves) a layout for
// the chosen target, inserting copies where an operand's layout is not the
// one its user needs.
//
// Option `target` = cpu | gpu | tpu (default cpu).
//
// Layouts chosen (the instruction's memory space and sub-byte element size
// are kept):
//  * Entry parameters and the entry root: the module's
//    entry_computation_layout where it sets a layout (honoured exactly,
//    tiles included); missing parts of a present entry_computation_layout are
//    filled in with the layouts chosen here.
//  * get-tuple-element, tuple, optimization-barrier and copy-done forward
//    their operands' layouts.
//  * Pinned instructions keep their layouts exactly and require their
//    operands to keep theirs: bitcast (a physical reinterpretation),
//    copy-start, infeed/outfeed, custom-calls with operand_layout_constraints
//    (operands then follow the constraints) or output_to_operand_aliasing,
//    and collectives with constrain_layout=true. send/recv data take the
//    default (send's operand is copied to it when needed).
//    copy keeps its own layout (it is the layout-changing op).
//  * gpu: convolutions with f16/bf16 input use NHWC-style layouts (input and
//    output feature dimension minor, batch major; kernel output feature
//    major, input feature minor).
//  * Everything else: the target default, row-major ({n-1,...,0}) with no
//    tiles on cpu/gpu; on tpu row-major with the dimensions of size 1 moved
//    most major (the same element order) plus the TPU tiles of
//    compiler/layout/tpu_tiling.h, so tiles pad real dimensions, never
//    degenerate ones (XLA TPU avoids those layouts too). Parameters and roots of every non-entry computation use the
//    default, so called computations and their callers agree.
//
// Operand requirements (a copy converts an operand whose layout differs;
// tuples are converted element-wise through get-tuple-element/tuple):
//  * ops XLA does not let change layouts (elementwise, concatenate, slice,
//    pad, reverse, dynamic-(update-)slice, map, reduce-window, scatter, sort,
//    ...): operands of the result's rank use the result's minor_to_major;
//  * call / while / conditional / fusion / async-start operands and computation roots: the
//    default layouts of the callee's parameters and result;
//  * dot: cpu: both operands row-major. gpu (XLA GPU's rule for cuBLAS):
//    an operand is kept when its batch dimensions are the most major and
//    its remaining dimensions are row- or column-major, i.e. the physical
//    order is [batch..., non-contracting..., contracting...] or
//    [batch..., contracting..., non-contracting...]; otherwise it is copied
//    to [batch, non-contracting, contracting] for the lhs and
//    [batch, contracting, non-contracting] for the rhs (row-major GEMM);
//  * convolution: gpu f16/bf16: NHWC as above; elsewhere row-major.
//
// tpu: a bitcast written without layouts (or with dense row-major ones) is
// a row-major reshape; under tiled layouts its two sides hold their bytes
// differently, so one that changes dimensions becomes that reshape (rule
// "bitcast-to-reshape"; on a TPU a relayout): a bitcast never reinterprets
// tiles it was not written for.
//
// Rewrites: "assign-layout" per instruction whose layout changed,
// "insert-copy" per inserted copy. Statistics: copies_inserted,
// logical_bytes and padded_bytes (sum over the arrays instructions define in
// non-fused computations, aliases such as get-tuple-element/tuple/bitcast
// excluded; padded = tiled storage size minus logical size).
//
// Running it twice changes nothing the second time. Ordering: run after the
// simplification passes and before buffer assignment. Limitation: inserted
// copies are appended to their computation's instruction list, so a
// scheduled module's sequence no longer lists them in order.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/layout/tpu_tiling.h"
#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class LayoutAssignmentPass : public HloPass {
public:
    static constexpr std::string_view kName = "layout-assignment";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);

    explicit LayoutAssignmentPass(LayoutTarget target = LayoutTarget::kCpu) : m_target(target) {}
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

    LayoutTarget target() const { return m_target; }

private:
    LayoutTarget m_target;
};

}  // namespace hloscope
