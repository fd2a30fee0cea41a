// The GPU plan's routing (PlanBuilder::planRouting): instructions that pass buffers on
// rather than compute, as the interpreter passes values on (collectives on one device,
// async and copy start/update/done pairs around their computations, calls and some
// fusions planned in place, set-dimension-size and dynamic-reshape of bounded shapes);
// and the instructions planned across devices (gpu_plan_peer.cc, gpu_plan_ragged.cc,
// gpu_plan_collectives.cc).
#include <algorithm>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "compiler/buffers/buffer_assignment.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/async_wrapping.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_plan_internal {

PlanBuilder::Leaves PlanBuilder::zeroLeaves(const HloInstruction& instruction, const Shape& shape,
                                            int64_t time) {
    Leaves zeros;
    for (const Shape* leaf : leavesOf(shape)) {
        const int buffer =
            newBuffer("%" + instruction.name() + ".zeros" + std::to_string(m_plan.buffers.size()),
                      denseBytes(*leaf), time);
        addMemset(instruction, instruction.name() + ".zero", buffer, denseBytes(*leaf), 0, -1);
        zeros.ids.push_back(buffer);
        zeros.shapes.push_back(leaf);
    }
    return zeros;
}

StatusOr<PlanBuilder::Leaves> PlanBuilder::planCalled(const HloInstruction& caller,
                                                      const HloComputation* computation,
                                                      const std::vector<Leaves>& arguments) {
    if (!computation) return notOnGpu(caller, "missing called computation");
    if (computation->parameterCount() != static_cast<int64_t>(arguments.size()))
        return notOnGpu(caller, "called computation's parameters do not match the operands");
    for (int64_t i = 0; i < computation->parameterCount(); ++i) {
        const HloInstruction* parameter = computation->parameter(i);
        const Leaves& argument = arguments[static_cast<size_t>(i)];
        if (!sameLeaves(leavesOf(parameter->shape()), argument.shapes))
            return notOnGpu(caller, "operand shapes differ from %" + parameter->name() + "'s");
        m_leaves[parameter] = argument.ids;
    }
    for (const HloInstruction* inner : executionSequence(*computation, m_module.isScheduled()))
        if (inner->opcode() != HloOpcode::kParameter)
            HLO_RETURN_IF_ERROR(planInstruction(*inner, m_time++));
    return leavesOfValue(*computation->root());
}

StatusOr<bool> PlanBuilder::route(const Routing& routing, const Leaves& value) {
    const HloInstruction& instruction = routing.instruction;
    if (!sameLeaves(leavesOf(instruction.shape()), value.shapes))
        return notOnGpu(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                         " whose result differs from the value it passes on");
    m_leaves[&instruction] = value.ids;
    return true;
}

StatusOr<bool> PlanBuilder::routeStartResult(const Routing& routing, const HloInstruction& start) {
    const Shape& shape = routing.instruction.shape();
    const Shape& from = start.shape();
    const Leaves all = leavesOfValue(start);
    if (from.isTuple() && from.tupleCount() >= 2 &&
        (!shape.isTuple() ||
         (sameArrayShape(from.tupleShape(1), shape) && !sameArrayShape(from, shape))))
        return route(routing, all.slice(elementLeaves(from, 1)));
    return route(routing, all);
}

StatusOr<bool> PlanBuilder::routeStartTuple(const Routing& routing, const Leaves& first,
                                            const Leaves& result) {
    const Shape& shape = routing.instruction.shape();
    Leaves all = first;
    all.append(result);
    for (int64_t k = 2; k < shape.tupleCount(); ++k)
        all.append(zeroLeaves(routing.instruction, shape.tupleShape(k), routing.time));
    return route(routing, all);
}

StatusOr<bool> PlanBuilder::planAcrossDevices(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    if ((opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv ||
         opcode == HloOpcode::kSendDone || opcode == HloOpcode::kRecvDone) &&
        !isHostTransfer(instruction)) {
        HLO_RETURN_IF_ERROR(planPeerTransfer(instruction, time));
        return true;
    }
    if (opcode == HloOpcode::kRaggedAllToAll) {
        HLO_RETURN_IF_ERROR(planRaggedAllToAll(instruction, time));
        return true;
    }
    if (m_grid.count() > 1 && exchangesBetweenDevices(opcode)) {
        HLO_RETURN_IF_ERROR(planCollective(instruction, time));
        return true;
    }
    return false;
}

// A fusion around what no loop kernel computes is planned in place, as a call: a
// collective between devices (XLA:GPU's Triton collective fusions; no kernel reads other
// arenas), a sort (XLA:GPU's sort fusions, the iota of its indices fused in) or a scatter
// of several operands (each its own steps).
StatusOr<bool> PlanBuilder::planFusionAsCall(const Routing& routing) {
    const HloInstruction& instruction = routing.instruction;
    if (instruction.opcode() != HloOpcode::kFusion || !instruction.fusedComputation())
        return false;
    const auto& inside = instruction.fusedComputation()->instructions();
    const bool severalDevices = m_grid.count() > 1;
    if (!std::any_of(inside.begin(), inside.end(), [&](const auto& i) {
            return (severalDevices &&
                    (exchangesBetweenDevices(i->opcode()) || isPeerTransfer(*i))) ||
                   i->opcode() == HloOpcode::kSort ||
                   (i->opcode() == HloOpcode::kScatter && i->operandCount() > 3);
        }))
        return false;
    HLO_ASSIGN_OR_RETURN(
        Leaves result, planCalled(instruction, instruction.fusedComputation(), routing.arguments));
    return route(routing, result);
}

StatusOr<bool> PlanBuilder::routeCollectivePermute(const Routing& routing) {
    const HloInstruction& instruction = routing.instruction;
    const Shape& shape = instruction.shape();
    if (isCombinedPermute(instruction)) {
        HLO_ASSIGN_OR_RETURN(const bool keeps, collectivePermuteKeepsOperand(instruction));
        return route(routing,
                     keeps ? routing.operands : zeroLeaves(instruction, shape, routing.time));
    }
    if (instruction.operandCount() != 1)
        return notOnGpu(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                         " with several operands in the in-place form");
    HLO_ASSIGN_OR_RETURN(const bool keeps, collectivePermuteKeepsOperand(instruction));
    const bool tuple =
        instruction.opcode() == HloOpcode::kCollectivePermuteStart && shape.isTuple();
    const Shape& resultShape = tuple ? shape.tupleShape(1) : shape;
    const Leaves result =
        keeps ? routing.operands : zeroLeaves(instruction, resultShape, routing.time);
    return tuple ? routeStartTuple(routing, routing.operands, result) : route(routing, result);
}

StatusOr<bool> PlanBuilder::routeAsyncStart(const Routing& routing) {
    const HloInstruction& instruction = routing.instruction;
    const Shape& shape = instruction.shape();
    std::vector<HloComputation*> called = instruction.calledComputations();
    if (called.empty()) return notOnGpu(instruction, "async-start without a computation");
    // Operands bound later by async-updates: the computation runs at the done.
    if (asyncBindsLate(instruction) && shape.isTuple() && shape.tupleCount() >= 2)
        return routeStartTuple(routing, routing.operands,
                               zeroLeaves(instruction, shape.tupleShape(1), routing.time));
    HLO_ASSIGN_OR_RETURN(Leaves result,
                         planCalled(instruction, called.front(), routing.arguments));
    if (!shape.isTuple() || shape.tupleCount() < 2) return route(routing, result);
    const bool wrapped = shape.tupleShape(0).isTuple() || routing.arguments.empty();
    return routeStartTuple(routing, wrapped ? routing.operands : routing.arguments.front(),
                           result);
}

StatusOr<bool> PlanBuilder::routeAsyncUpdate(const Routing& routing) {
    const HloInstruction& instruction = routing.instruction;
    const Shape& shape = instruction.shape();
    const std::vector<Leaves>& arguments = routing.arguments;
    if (arguments.size() == 1) return route(routing, arguments.at(0));
    // Binds more operands: they join the bound ones (element 0).
    const Shape& previous = instruction.operand(0)->shape();
    if (!previous.isTuple() || previous.tupleCount() < 1 || !shape.isTuple())
        return notOnGpu(instruction, "async-update operand is not an async-start tuple");
    Leaves all = arguments[0].slice(elementLeaves(previous, 0));
    for (size_t i = 1; i < arguments.size(); ++i) all.append(arguments[i]);
    for (int64_t k = 1; k < shape.tupleCount(); ++k)
        all.append(k < previous.tupleCount() &&
                           sameArrayShape(previous.tupleShape(k), shape.tupleShape(k))
                       ? arguments[0].slice(elementLeaves(previous, k))
                       : zeroLeaves(instruction, shape.tupleShape(k), routing.time));
    return route(routing, all);
}

StatusOr<bool> PlanBuilder::routeAsyncDone(const Routing& routing) {
    const HloInstruction& instruction = routing.instruction;
    const std::vector<Leaves>& arguments = routing.arguments;
    if (const HloInstruction* start = asyncChainStart(instruction);
        start && asyncBindsLate(*start)) {
        const HloComputation* called = start->calledComputation("calls");
        const Shape& state = instruction.operand(0)->shape();
        if (!state.isTuple() || state.tupleCount() < 1 || !state.tupleShape(0).isTuple() ||
            state.tupleShape(0).tupleCount() != called->parameterCount())
            return notOnGpu(instruction,
                            "its chain binds operands " + called->name() + " does not take");
        const Leaves bound = arguments.at(0).slice(elementLeaves(state, 0));
        std::vector<Leaves> parameters;
        for (int64_t k = 0; k < called->parameterCount(); ++k)
            parameters.push_back(bound.slice(elementLeaves(state.tupleShape(0), k)));
        HLO_ASSIGN_OR_RETURN(Leaves result, planCalled(instruction, called, parameters));
        return route(routing, result);
    }
    const Shape& start = instruction.operand(0)->shape();
    if (!start.isTuple() || start.tupleCount() < 2)
        return notOnGpu(instruction, "async-done operand is not an async-start tuple");
    return route(routing, arguments.at(0).slice(elementLeaves(start, 1)));
}

// After the instructions planned across devices and the fusions planned as calls, a dispatch
// over the routing opcodes.
StatusOr<bool> PlanBuilder::planRouting(const HloInstruction& instruction, int64_t time) {
    HLO_ASSIGN_OR_RETURN(const bool acrossDevices, planAcrossDevices(instruction, time));
    if (acrossDevices) return true;
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    Routing routing{instruction, time, {}, {}};
    for (const HloInstruction* operand : instruction.operands()) {
        routing.arguments.push_back(leavesOfValue(*operand));
        routing.operands.append(routing.arguments.back());
    }
    const std::vector<Leaves>& arguments = routing.arguments;
    HLO_ASSIGN_OR_RETURN(const bool call, planFusionAsCall(routing));
    if (call) return true;
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce: {
            // One participant: the operands are the result (the evaluator's
            // operandsAsResult); an older all-gather-start pairs them twice.
            if (collectiveParticipantCount(instruction) != 1)
                return notOnGpu(instruction, std::string(hloOpcodeString(opcode)) +
                                                 " with more than one participant");
            if (opcode == HloOpcode::kAllGatherStart && shape.isTuple() &&
                shape.tupleCount() == 2 && routing.operands.ids.size() * 2 == leafCount(shape)) {
                Leaves twice = routing.operands;
                twice.append(routing.operands);
                return route(routing, twice);
            }
            return route(routing, routing.operands);
        }
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
            return routeCollectivePermute(routing);
        case HloOpcode::kAllReduceDone:
        case HloOpcode::kAllGatherDone:
        case HloOpcode::kCollectivePermuteDone:
            return routeStartResult(routing, *instruction.operand(0));
        case HloOpcode::kAsyncStart:
            return routeAsyncStart(routing);
        case HloOpcode::kAsyncUpdate:
            return routeAsyncUpdate(routing);
        case HloOpcode::kAsyncDone:
            return routeAsyncDone(routing);
        case HloOpcode::kCopyStart:
            if (!shape.isTuple()) return route(routing, arguments.at(0));
            return routeStartTuple(routing, arguments.at(0), arguments.at(0));
        case HloOpcode::kCopyDone: {
            const Shape& start = instruction.operand(0)->shape();
            if (start.isTuple() && start.tupleCount() > 0)
                return route(routing, arguments.at(0).slice(elementLeaves(start, 0)));
            return route(routing, arguments.at(0));
        }
        case HloOpcode::kCall: {
            const HloComputation* callee = instruction.toApply();
            if (!callee) callee = instruction.calledComputation("calls");
            HLO_ASSIGN_OR_RETURN(Leaves result, planCalled(instruction, callee, arguments));
            return route(routing, result);
        }
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape: {
            // Bounded dimensions at their bound: the same bytes (as the evaluator).
            const Shape& from = instruction.operand(0)->shape();
            if (!from.isArray() || from.elementType() != shape.elementType() ||
                from.elementCount() != shape.elementCount())
                return false;
            m_leaves[&instruction] = m_leaves[instruction.operand(0)];
            return true;
        }
        default:
            return false;
    }
}

}  // namespace hloscope::gpu_plan_internal
