// send and recv between the devices of a GPU plan (PlanBuilder::planPeerTransfer;
// gpu_plan_builder.h), as the interpreter gives them (evaluatePeerTransfer): a device sends
// to at most one device and receives from at most one (core/ir/collective_groups.h peerLinks),
// and a link's receives take its sends in order, as NCCL pairs a peer's sends with its
// receives. The plan pairs them when it is built: the k-th recv on link (s, t) takes the
// k-th send on it, which must be planned in the same computation before that recv's
// recv-done (so that in a loop both run once per iteration, the send first). Then
//   send       its data stays in its operand's buffer (kept alive until the recv-done)
//   recv       zeros (its data comes at the recv-done)
//   recv-done  on each device t: a copy from the paired send's buffer on s, or zeros when
//              no device sends to t
//   send-done  nothing (a token)
// A recv-done whose operand is not its recv (carried through a loop, say) has no pairing
// to read, and is refused.
#include <string>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_plan_internal {

Status PlanBuilder::planPeerTransfer(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    const std::string op(hloOpcodeString(opcode));
    const int64_t devices = m_grid.count();
    switch (opcode) {
        case HloOpcode::kSend:
        case HloOpcode::kRecv: {
            if (!shape.isTuple() || shape.tupleCount() != 3 || !shape.tupleShape(0).isArray())
                return notOnGpu(instruction, op + " that does not give (array, u32[], token[])");
            if (!isPeerTransfer(instruction))
                return notOnGpu(instruction,
                                op + " without _xla_send_recv_source_target_pairs (no peer "
                                     "device named)");
            std::vector<PeerLinks> links;
            for (int64_t device = 0; device < devices; ++device) {
                HLO_ASSIGN_OR_RETURN(PeerLinks link, peerLinks(instruction, m_grid, device));
                links.push_back(link);
            }
            Leaves value;
            if (opcode == HloOpcode::kSend) {
                const Leaves data = leavesOfValue(*instruction.operand(0));
                if (data.ids.size() != 1 || !sameArrayShape(*data.shapes[0], shape.tupleShape(0)))
                    return notOnGpu(instruction, "send whose data differs from its result's");
                for (int64_t device = 0; device < devices; ++device)
                    if (const int64_t target = links[static_cast<size_t>(device)].target;
                        target >= 0)
                        m_peerSends[{device, target}].push_back(
                            PeerSend{data.ids[0], &instruction});
                value = data;
            } else {
                std::vector<int64_t>& bookings = m_peerBookings[&instruction];
                bookings.assign(static_cast<size_t>(devices), -1);
                for (int64_t device = 0; device < devices; ++device)
                    if (const int64_t source = links[static_cast<size_t>(device)].source;
                        source >= 0)
                        bookings[static_cast<size_t>(device)] = m_peerBooked[{source, device}]++;
                value = zeroLeaves(instruction, shape.tupleShape(0), time);
            }
            value.append(zeroLeaves(instruction, shape.tupleShape(1), time));
            m_leaves[&instruction] = value.ids;
            return Status::ok();
        }
        case HloOpcode::kSendDone:
            m_leaves[&instruction] = {};
            return Status::ok();
        case HloOpcode::kRecvDone: {
            const HloInstruction* recv =
                instruction.operandCount() == 1 ? instruction.operand(0) : nullptr;
            auto booked = recv ? m_peerBookings.find(recv) : m_peerBookings.end();
            if (booked == m_peerBookings.end())
                return notOnGpu(instruction,
                                "recv-done whose operand is not its recv (the plan pairs a "
                                "recv with its send when it is built)");
            if (!shape.isTuple() || shape.tupleCount() != 2 ||
                !sameArrayShape(shape.tupleShape(0), recv->shape().tupleShape(0)))
                return notOnGpu(instruction, "recv-done that does not give its recv's data");
            const int64_t bytes = denseBytes(shape.tupleShape(0));
            const int result = newBuffer("%" + instruction.name(), bytes, time);
            for (int64_t device = 0; device < devices; ++device) {
                const int64_t k = booked->second[static_cast<size_t>(device)];
                if (k < 0) {
                    // No device sends to this one: zeros, as the interpreter.
                    addMemset(instruction, instruction.name() + ".zeros", result, bytes, 0, device);
                    continue;
                }
                HLO_ASSIGN_OR_RETURN(PeerLinks link, peerLinks(*recv, m_grid, device));
                const auto& sends = m_peerSends[{link.source, device}];
                if (k >= static_cast<int64_t>(sends.size()))
                    return notOnGpu(instruction, "recv-done before the send it receives (receive " +
                                                     std::to_string(k + 1) + " from " +
                                                     std::to_string(link.source) + " to " +
                                                     std::to_string(device) + ")");
                const PeerSend& send = sends[static_cast<size_t>(k)];
                if (send.instruction->parent() != instruction.parent())
                    return notOnGpu(instruction, "recv-done whose send %" +
                                                     send.instruction->name() +
                                                     " is in another computation");
                use(send.buffer, time);
                addCopy(instruction, instruction.name(), send.buffer, result, bytes, device,
                        link.source);
            }
            m_leaves[&instruction] = {result};
            return Status::ok();
        }
        default:
            return notOnGpu(instruction, op + " is not a send or recv");
    }
}

}  // namespace hloscope::gpu_plan_internal
