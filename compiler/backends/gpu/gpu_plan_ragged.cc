// ragged-all-to-all in a GPU plan (PlanBuilder::planRaggedAllToAll; gpu_plan_builder.h), on
// one device or between the devices of a multi-device plan. Its row ranges are values in
// device memory, known only when the plan runs, so the copy is a kernel that reads them: the
// receiver at index i of its group gets, from each member j in member order, the updates
// k = i*U .. i*U+U-1 of j's offsets (U per member): rows [input_offsets[k], + send_sizes[k])
// of j's input written at rows output_offsets[k] of its output, later updates over earlier
// ones (the interpreter's copyRaggedUpdates, XLA's GPU kernel's indexing). The kernel
// computes every output row r, with rows flattened to [rows, inner]:
//   acc = output
//   for each (j, k):  inside = output_offsets[k] <= r < output_offsets[k] + send_sizes[k]
//                     acc[r] = inside ? input_j[r - output_offsets[k] + input_offsets[k]] : acc[r]
// the source row clamped into input_j (a gather), so a range that runs past either array
// copies the clamped rows where the interpreter reports the range as out of bounds. One kernel
// serves every receiver of a group size: i is read from a one-byte buffer a memset step sets
// on each device before the launch.
#include <map>
#include <string>
#include <utility>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_plan_internal {

// The kernels of one ragged-all-to-all: the receiver's result as HLO built from synthetic
// instructions (element by element, as the top comment writes it), one kernel per group size.
struct PlanBuilder::RaggedKernels {
    using H = HloInstruction*;

    PlanBuilder& builder;
    const HloInstruction& instruction;
    const Shape& input;
    const Shape& output;
    const Shape& offsets;  // input_offsets; send_sizes and output_offsets below
    const Shape& sendSizes;
    const Shape& outputOffsets;
    int64_t outRows = 0, inRows = 0, inner = 0;
    std::map<int64_t, GpuKernelInfo> kernels{};  // by group size
    std::vector<H> leaves{};                       // of the kernel being built

    H add(HloOpcode opcode, const Shape& to, std::vector<H> from, const std::string& what) {
        H made = builder.synthetic(std::make_unique<HloInstruction>(
            opcode, instruction.name() + "." + what, Shape(to.elementType(), to.dimensions())));
        for (H operand : from) made->appendOperand(operand);
        return made;
    }
    H parameter(const Shape& of, const std::string& what) {
        leaves.push_back(add(HloOpcode::kParameter, of, {}, what));
        return leaves.back();
    }
    Shape rowsShape() const { return Shape::makeArray(PrimitiveType::S64, {outRows}); }
    Shape flat() const { return Shape::makeArray(output.elementType(), {outRows, inner}); }
    Shape scalar() const { return Shape::makeScalar(PrimitiveType::S64); }
    Shape mask() const { return Shape::makeArray(PrimitiveType::PRED, {outRows}); }
    H broadcastRows(H value, const Shape& to, std::vector<int64_t> dims) {
        H b = add(HloOpcode::kBroadcast, to, {value}, "broadcast");
        b->setDimensions(std::move(dims));
        return b;
    }
    H scalarConstant(int64_t value) {
        H c = add(HloOpcode::kConstant, scalar(), {}, "constant");
        c->setLiteralText(std::to_string(value));
        return c;
    }
    H constant(int64_t value) { return broadcastRows(scalarConstant(value), rowsShape(), {}); }
    // Element k (an s64[] value) of an offsets vector, as s64 on every row.
    H element(H vector, H k) {
        const Shape& of = vector->shape();
        H slice = add(HloOpcode::kDynamicSlice, Shape::makeArray(of.elementType(), {1}),
                      {vector, k}, "slice");
        slice->mutableExtra().dynamicSliceSizes = {1};
        H one = add(HloOpcode::kReshape, Shape::makeScalar(of.elementType()), {slice}, "element");
        H wide = add(HloOpcode::kConvert, scalar(), {one}, "wide");
        return broadcastRows(wide, rowsShape(), {});
    }
    H compare(H a, H b, ComparisonDirection direction) {
        H c = add(HloOpcode::kCompare, mask(), {a, b}, "compare");
        c->mutableExtra().comparisonDirection = direction;
        return c;
    }
    // `acc` with update k of a member applied: its rows gathered from `source` (the member's
    // input, flattened) where `rows` lie in the update's output range.
    H applyUpdate(H acc, H rows, H source, H k, H inputOffsets, H sendSizes, H outputOffsets) {
        H at = element(outputOffsets, k);
        H end = add(HloOpcode::kAdd, rowsShape(), {at, element(sendSizes, k)}, "end");
        H inside = add(HloOpcode::kAnd, mask(),
                       {compare(rows, at, ComparisonDirection::kGe),
                        compare(rows, end, ComparisonDirection::kLt)},
                       "inside");
        H shifted = add(HloOpcode::kSubtract, rowsShape(), {rows, at}, "shifted");
        H from = add(HloOpcode::kAdd, rowsShape(), {shifted, element(inputOffsets, k)}, "from");
        H clamped = add(HloOpcode::kClamp, rowsShape(), {constant(0), from, constant(inRows - 1)},
                        "clamped");
        H indices = add(HloOpcode::kReshape, Shape::makeArray(PrimitiveType::S64, {outRows, 1}),
                        {clamped}, "indices");
        H gathered = add(HloOpcode::kGather, flat(), {source, indices}, "gathered");
        GatherDimensionNumbers numbers;
        numbers.offsetDims = {1};
        numbers.collapsedSliceDims = {0};
        numbers.startIndexMap = {0};
        numbers.indexVectorDim = 1;
        gathered->mutableExtra().gatherDimensionNumbers = numbers;
        gathered->mutableExtra().gatherSliceSizes = {1, inner};
        H where =
            broadcastRows(inside, Shape::makeArray(PrimitiveType::PRED, {outRows, inner}), {0});
        return add(HloOpcode::kSelect, flat(), {where, gathered, acc}, "update");
    }
    // The kernel of a receiver in a group of `members`; its leaves: the receiver's index in
    // the group (u8[], set on each device by a memset, so that one kernel serves every
    // receiver), its output, then each member's input, input_offsets, send_sizes and
    // output_offsets.
    StatusOr<GpuKernelInfo> kernelFor(int64_t members) {
        if (auto it = kernels.find(members); it != kernels.end()) return it->second;
        const int64_t updates = offsets.dimensions(0);
        if (updates % members != 0)
            return notOnGpu(instruction, "ragged-all-to-all offsets hold " +
                                             std::to_string(updates) +
                                             " updates, not a multiple of the " +
                                             std::to_string(members) + " members");
        const int64_t perMember = updates / members;
        leaves.clear();
        H index = add(HloOpcode::kConvert, scalar(),
                      {parameter(Shape::makeScalar(PrimitiveType::U8), "index")}, "index");
        H first =
            add(HloOpcode::kMultiply, scalar(), {index, scalarConstant(perMember)}, "first");
        H acc = add(HloOpcode::kReshape, flat(), {parameter(output, "output")}, "flat");
        H rows = add(HloOpcode::kIota, rowsShape(), {}, "rows");
        rows->setIotaDimension(0);
        const Shape inFlat = Shape::makeArray(input.elementType(), {inRows, inner});
        for (int64_t j = 0; j < members; ++j) {
            const std::string member = "member" + std::to_string(j);
            H in = parameter(input, member + ".input");
            H inputOffsets = parameter(offsets, member + ".input_offsets");
            H sizes = parameter(sendSizes, member + ".send_sizes");
            H outputAt = parameter(outputOffsets, member + ".output_offsets");
            if (inRows == 0) continue;  // nothing to send
            H source = add(HloOpcode::kReshape, inFlat, {in}, "source");
            for (int64_t u = 0; u < perMember; ++u) {
                H k = add(HloOpcode::kAdd, scalar(), {first, scalarConstant(u)}, "update");
                acc = applyUpdate(acc, rows, source, k, inputOffsets, sizes, outputAt);
            }
        }
        H root = add(HloOpcode::kReshape, instruction.shape(), {acc}, "result");
        KernelSpec spec;
        spec.name = builder.entryName();
        spec.outputs = {root};
        spec.leaves.assign(leaves.begin(), leaves.end());
        HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, builder.m_emitter.emitKernel(spec));
        if (info.slices > 1) return internalError("%" + instruction.name() + ": split kernel");
        ++builder.m_plan.kernels;
        kernels.emplace(members, info);
        return info;
    }
};

Status PlanBuilder::planRaggedAllToAll(const HloInstruction& instruction, int64_t time) {
    const Shape& shape = instruction.shape();
    if (instruction.operandCount() != 6)
        return notOnGpu(instruction, "ragged-all-to-all needs 6 operands");
    std::vector<Leaves> operands;
    for (const HloInstruction* operand : instruction.operands()) {
        operands.push_back(leavesOfValue(*operand));
        if (operands.back().ids.size() != 1 || !operand->shape().isArray())
            return notOnGpu(instruction, "ragged-all-to-all of a tuple operand");
    }
    RaggedKernels ragged{*this,
                         instruction,
                         *operands[0].shapes[0],
                         *operands[1].shapes[0],
                         *operands[2].shapes[0],
                         *operands[3].shapes[0],
                         *operands[4].shapes[0]};
    const Shape& input = ragged.input;
    const Shape& output = ragged.output;
    if (!shape.isArray() || !sameArrayShape(shape, output) || output.rank() == 0 ||
        input.rank() == 0 || input.elementType() != output.elementType())
        return notOnGpu(instruction,
                        "ragged-all-to-all whose input, output and result are not arrays of one "
                        "element type with rows");
    ragged.outRows = output.dimensions(0);
    ragged.inRows = input.dimensions(0);
    ragged.inner = ragged.outRows == 0 ? 0 : output.elementCount() / ragged.outRows;
    if (ragged.inRows > 0 && input.elementCount() / ragged.inRows != ragged.inner)
        return notOnGpu(instruction, "ragged-all-to-all input and output rows differ");
    for (int k = 2; k < 5; ++k) {
        const Shape& o = *operands[static_cast<size_t>(k)].shapes[0];
        if (o.rank() != 1 || o.dimensions(0) != ragged.offsets.dimensions(0) ||
            !primitive_util::isInteger(o.elementType()))
            return notOnGpu(instruction,
                            "ragged-all-to-all offsets and sizes that are not integer vectors of "
                            "one length");
    }

    HLO_ASSIGN_OR_RETURN(DeviceGroups groups, collectiveDeviceGroups(instruction, m_grid));
    const int result = newBuffer("%" + instruction.name(), denseBytes(shape), time);
    // Each device's index in its group, for the kernel to read.
    const int indexBuffer = newBuffer("%" + instruction.name() + ".index", 1, time);
    use(indexBuffer, time);
    std::vector<bool> placed(static_cast<size_t>(m_grid.count()), false);
    for (const std::vector<int64_t>& group : groups) {
        const int64_t members = static_cast<int64_t>(group.size());
        for (int64_t index = 0; index < members; ++index) {
            const int64_t device = group[static_cast<size_t>(index)];
            placed[static_cast<size_t>(device)] = true;
            if (denseBytes(shape) == 0) continue;
            HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, ragged.kernelFor(members));
            addMemset(instruction, instruction.name() + ".index", indexBuffer, 1,
                      static_cast<int>(index), device);  // index < kMaxDevices = 256
            std::vector<int> args{result, indexBuffer, operands[1].ids[0]};
            std::vector<int64_t> argDevices{device, device, device};
            for (int64_t member : group) {
                for (size_t k : {size_t{0}, size_t{2}, size_t{3}, size_t{4}}) {
                    args.push_back(operands[k].ids[0]);
                    argDevices.push_back(member);
                }
            }
            GpuPlanStep step = launchStep(instruction, info, std::move(args));
            step.device = device;
            step.argDevices = std::move(argDevices);
            m_plan.steps.push_back(std::move(step));
        }
    }
    for (int64_t device = 0; device < m_grid.count(); ++device) {
        if (placed[static_cast<size_t>(device)] || denseBytes(shape) == 0) continue;
        // In no group (the interpreter's zeros for a device a collective leaves out).
        addMemset(instruction, instruction.name() + ".zeros", result, denseBytes(shape), 0, device);
    }
    for (const Leaves& operand : operands) use(operand.ids[0], time);
    m_leaves[&instruction] = {result};
    return Status::ok();
}

}  // namespace hloscope::gpu_plan_internal
