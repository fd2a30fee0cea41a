// AnnotationRemoverPass ("annotation-remover"): removes the custom-calls that
// only annotate a value for XLA's partitioner or memory-space assignment
// (`Sharding`, `SPMDFullToShardShape`, `SPMDShardToFullShape`, `MoveToHost`,
// `MoveToDevice`, `annotate_device_placement`, `LayoutConstraint`;
// core/lowering/library_calls.h) where they keep their operand's shape: on one device
// the value passes through, as the interpreter evaluates them, and its users
// read the operand itself. JAX's dumps carry them wherever a sharding was
// given; without this pass no backend compiles them. A call that changes the
// shape (a partitioned module's shard) is left, counted ("left").
//
// Rule: "remove-annotation". Ordering: early, before simplification and
// fusion, which then see the value's producer directly.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class AnnotationRemoverPass : public HloPass {
public:
    static constexpr std::string_view kName = "annotation-remover";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
