// TupleSimplifierPass ("tuple-simplifier"): removes tuple packing that is
// immediately unpacked, and unpacking that is immediately repacked.
//
//  * get-tuple-element(tuple(a0, ..., an), i) -> ai        ("gte-of-tuple")
//  * tuple(gte(x, 0), ..., gte(x, n-1)) -> x when x has
//    exactly that n-element tuple shape                    ("tuple-of-gtes")
//
// A replacement must have exactly the replaced instruction's shape (layout
// included), so the entry root's shape never changes. Instructions with
// control edges are left alone. Visits each computation in post order, so
// nested patterns collapse in one run. The tuples and get-tuple-elements
// left unused are removed only when they are the replaced instructions;
// run DCE afterwards for the rest.
//
// Rules: "gte-of-tuple", "tuple-of-gtes". Ordering: no constraint for
// correctness; the target pipelines run it after call inlining; follow
// with DCE.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class TupleSimplifierPass : public HloPass {
public:
    static constexpr std::string_view kName = "tuple-simplifier";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
