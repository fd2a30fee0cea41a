// HloVerifier module-wide pairing checks: start/done and send/recv users
// and operands, channels, layout-constrained all-reduces, buffer shapes and
// (optionally) send/recv deadlocks.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "core/verifier/hlo_verifier_internal.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::verifier_internal {
namespace {

using shape_inference_internal::boolAttribute;
using shape_inference_internal::compatible;
using shape_inference_internal::intAttribute;
using shape_inference_internal::parsePairs;

std::string opName(const HloInstruction& instruction) {
    return std::string(hloOpcodeString(instruction.opcode()));
}

}  // namespace

namespace {

Status verifySingleUser(const HloInstruction& instruction, std::initializer_list<HloOpcode> expected) {
    if (instruction.userCount() != 1) {
        return instructionError(instruction, "The " + opName(instruction) +
                                                 " instruction requires one consumer, found " +
                                                 std::to_string(instruction.userCount()));
    }
    const HloInstruction* user = instruction.users()[0];
    if (std::find(expected.begin(), expected.end(), user->opcode()) == expected.end()) {
        std::string names;
        for (HloOpcode opcode : expected) {
            if (!names.empty()) names += ", ";
            names += hloOpcodeString(opcode);
        }
        return instructionError(instruction, "The consumer of a " + opName(instruction) +
                                                 " instruction needs to be one of (" + names +
                                                 "), found " + opName(*user));
    }
    return Status::ok();
}

Status verifySingleOperand(const HloInstruction& instruction, std::initializer_list<HloOpcode> expected,
                           bool extraOperandsAllowed = false) {
    if (instruction.operandCount() < 1 || (!extraOperandsAllowed && instruction.operandCount() != 1)) {
        return instructionError(instruction, "The " + opName(instruction) +
                                                 " instruction requires one operand, found " +
                                                 std::to_string(instruction.operandCount()));
    }
    const HloInstruction* operand = instruction.operand(0);
    if (std::find(expected.begin(), expected.end(), operand->opcode()) == expected.end()) {
        std::string names;
        for (HloOpcode opcode : expected) {
            if (!names.empty()) names += " or ";
            names += hloOpcodeString(opcode);
        }
        return instructionError(instruction, "The operand of a " + opName(instruction) +
                                                 " instruction needs to be " + names + ", found " +
                                                 opName(*operand));
    }
    return Status::ok();
}

std::unordered_set<const HloComputation*> asyncComputations(const HloModule& module) {
    std::unordered_set<const HloComputation*> out;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (hloOpcodeIsAsync(instruction->opcode()))
                for (const HloComputation* called : instruction->calledComputations()) out.insert(called);
    return out;
}

}  // namespace

Status verifyAsyncPairs(const HloModule& module, std::optional<uint64_t> since) {
    // Which computations async ops wrap: needed only for a send or recv at a root.
    std::optional<std::unordered_set<const HloComputation*>> async;
    for (const auto& computation : module.computations()) {
        // A pair's start and done share a computation, whose stamp covers both. A send or
        // recv at the root also depends on whether an async op wraps the computation.
        const HloOpcode rootOpcode = computation->root() ? computation->root()->opcode()
                                                         : HloOpcode::kParameter;
        if (since && computation->changeStamp() <= *since && rootOpcode != HloOpcode::kSend &&
            rootOpcode != HloOpcode::kRecv)
            continue;
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            const HloOpcode opcode = instruction.opcode();
            bool rootOfAsync = false;
            if ((opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv) && instruction.isRoot()) {
                if (!async) async = asyncComputations(module);
                rootOfAsync = async->count(computation.get()) > 0;
            }
            switch (instruction.opcode()) {
            case HloOpcode::kAsyncStart:
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone}));
                break;
            case HloOpcode::kAsyncUpdate:
                // An update may bind further operands after the first.
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone}));
                break;
            case HloOpcode::kAsyncDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate}));
                break;
            case HloOpcode::kAllReduceStart:
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kAllReduceDone}));
                break;
            case HloOpcode::kAllReduceDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kAllReduceStart}));
                break;
            case HloOpcode::kAllGatherStart:
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kAllGatherDone}));
                break;
            case HloOpcode::kCopyStart:
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kCopyDone}));
                break;
            case HloOpcode::kCopyDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kCopyStart}));
                break;
            case HloOpcode::kCollectivePermuteStart:
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kCollectivePermuteDone}));
                break;
            case HloOpcode::kCollectivePermuteDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kCollectivePermuteStart}));
                break;
            case HloOpcode::kSend:
                if (rootOfAsync) break;
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kSendDone, HloOpcode::kTuple}));
                break;
            case HloOpcode::kSendDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kSend, HloOpcode::kGetTupleElement}));
                break;
            case HloOpcode::kRecv:
                if (rootOfAsync) break;
                HLO_RETURN_IF_ERROR(verifySingleUser(instruction, {HloOpcode::kRecvDone, HloOpcode::kTuple}));
                break;
            case HloOpcode::kRecvDone:
                HLO_RETURN_IF_ERROR(verifySingleOperand(instruction, {HloOpcode::kRecv, HloOpcode::kGetTupleElement}));
                break;
            default: break;
            }
        }
    }
    return Status::ok();
}

Status verifyChannels(const HloModule& module) {
    // Every check below starts from a send, a recv or their dones: without one there is
    // nothing to check (reading each instruction's channel_id costs more than this walk).
    const auto isSendRecvOpcode = [](HloOpcode opcode) {
        return opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv ||
               opcode == HloOpcode::kSendDone || opcode == HloOpcode::kRecvDone;
    };
    const bool any = std::any_of(
        module.computations().begin(), module.computations().end(), [&](const auto& computation) {
            return std::any_of(computation->instructions().begin(),
                               computation->instructions().end(),
                               [&](const auto& i) { return isSendRecvOpcode(i->opcode()); });
        });
    if (!any) return Status::ok();
    struct Channel {
        std::vector<const HloInstruction*> instructions;
    };
    std::map<int64_t, Channel> channels;
    for (const auto& computation : module.computations()) {
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            auto channel = intAttribute(instruction, "channel_id");
            if (!channel) continue;
            channels[*channel].instructions.push_back(&instruction);
            HloOpcode opcode = instruction.opcode();
            if ((opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv) && instruction.userCount() == 1) {
                const HloInstruction* done = instruction.users()[0];
                bool isDone = done->opcode() == HloOpcode::kSendDone || done->opcode() == HloOpcode::kRecvDone;
                if (isDone) {
                    auto doneChannel = intAttribute(*done, "channel_id");
                    if (doneChannel && *doneChannel != *channel) {
                        return instructionError(instruction, "Expected to have the same channel id, "
                                                             "actual channel ids are: %" +
                                                                 instruction.name() + " (" +
                                                                 std::to_string(*channel) + "), %" +
                                                                 done->name() + " (" +
                                                                 std::to_string(*doneChannel) + ")");
                    }
                    bool a = boolAttribute(instruction, "is_host_transfer").value_or(false);
                    bool b = boolAttribute(*done, "is_host_transfer").value_or(false);
                    if (a != b) {
                        return instructionError(instruction, "Expected instructions to have the same "
                                                             "is-host-transfer property: %" +
                                                                 instruction.name() + ", %" + done->name());
                    }
                }
            }
        }
    }
    auto isSendRecv = [](HloOpcode opcode) {
        return opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv ||
               opcode == HloOpcode::kSendDone || opcode == HloOpcode::kRecvDone;
    };
    for (const auto& [id, channel] : channels) {
        const HloInstruction* first = channel.instructions[0];
        if (!isSendRecv(first->opcode())) continue;
        std::map<HloOpcode, const HloInstruction*> hostTransferReference;
        for (const HloInstruction* instruction : channel.instructions) {
            if (!isSendRecv(instruction->opcode())) {
                return instructionError(*instruction, "channel " + std::to_string(id) +
                                                          " is used for different types of channel "
                                                          "instructions");
            }
            if (!boolAttribute(*instruction, "is_host_transfer").value_or(false)) continue;
            auto [it, inserted] = hostTransferReference.emplace(instruction->opcode(), instruction);
            if (inserted) continue;
            const HloInstruction* reference = it->second;
            auto frontend = [](const HloInstruction* i) {
                auto text = i->attribute("frontend_attributes");
                return text ? std::string(*text) : std::string();
            };
            if (!compatible(reference->shape(), instruction->shape()) ||
                frontend(reference) != frontend(instruction)) {
                return instructionError(*instruction,
                                        "Host-transfer send/recv instructions that use the same "
                                        "channel must be identical: %" +
                                            reference->name() + " and %" + instruction->name() +
                                            " use channel " + std::to_string(id));
            }
        }
    }
    return Status::ok();
}

// A layout-constrained all-reduce pins its operands' layouts; mixing such
// all-reduces with unconstrained ones is an error (XLA's layout assignment
// cannot handle it). Constraints that only fix default layouts constrain
// nothing, so the mix is reported when a constrained all-reduce actually
// pins a non-default layout.
Status verifyLayoutConstrainedAllReduce(const HloModule& module) {
    const HloInstruction* constrainedReference = nullptr;
    const HloInstruction* unconstrainedReference = nullptr;
    bool pinsNonDefaultLayout = false;
    auto nonDefault = [](const Shape& shape) {
        std::vector<const Shape*> pending = {&shape};
        while (!pending.empty()) {
            const Shape* s = pending.back();
            pending.pop_back();
            if (s->isTuple()) {
                for (const Shape& e : s->tupleShapes()) pending.push_back(&e);
            } else if (s->isArray() && s->hasLayout() &&
                       s->layout().minorToMajor() != Layout::descending(s->rank()).minorToMajor()) {
                return true;
            }
        }
        return false;
    };
    for (const auto& computation : module.computations()) {
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            if (instruction.opcode() != HloOpcode::kAllReduce &&
                instruction.opcode() != HloOpcode::kAllReduceStart)
                continue;
            bool constrained = boolAttribute(instruction, "constrain_layout").value_or(false);
            if (constrained) {
                if (!constrainedReference) constrainedReference = &instruction;
                if (nonDefault(instruction.shape())) pinsNonDefaultLayout = true;
                for (const HloInstruction* operand : instruction.operands())
                    if (nonDefault(operand->shape())) pinsNonDefaultLayout = true;
            } else if (!unconstrainedReference) {
                unconstrainedReference = &instruction;
            }
        }
    }
    if (constrainedReference && unconstrainedReference && pinsNonDefaultLayout) {
        return instructionError(*unconstrainedReference,
                                "HloModule has a mix of layout constrained and unconstrained "
                                "AllReduce instructions (%" +
                                    constrainedReference->name() + " is constrained)");
    }
    return Status::ok();
}

namespace {

// Index paths of the buffer leaves of `shape`.
void bufferLeaves(const Shape& shape, std::vector<int64_t>& prefix,
                  std::vector<std::vector<int64_t>>& out) {
    if (shape.isBuffer()) {
        out.push_back(prefix);
        return;
    }
    if (!shape.isTuple()) return;
    for (int64_t i = 0; i < shape.tupleCount(); ++i) {
        prefix.push_back(i);
        bufferLeaves(shape.tupleShape(i), prefix, out);
        prefix.pop_back();
    }
}

std::vector<std::vector<int64_t>> bufferLeaves(const Shape& shape) {
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> prefix;
    bufferLeaves(shape, prefix, out);
    return out;
}

bool isCustomCallLike(const HloInstruction& instruction) {
    if (instruction.opcode() == HloOpcode::kCustomCall) return true;
    return instruction.opcode() == HloOpcode::kAsyncStart && instruction.extra() &&
           instruction.extra()->asyncWrappedOpcode == HloOpcode::kCustomCall;
}

}  // namespace

Status verifyBuffers(const HloModule& module, std::optional<uint64_t> since) {
    for (const auto& computation : module.computations()) {
        // What is checked (an instruction, its operands and users) lies in one computation.
        if (since && computation->changeStamp() <= *since) continue;
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            if (isCustomCallLike(instruction)) {
                std::vector<OperandAlias> aliases;
                if (auto text = instruction.attribute("output_to_operand_aliasing")) {
                    auto parsed = parseOperandAliasing(*text);
                    if (parsed) aliases = *parsed;
                }
                // Every buffer operand is updated in place: it must alias an output.
                for (int64_t i = 0; i < instruction.operandCount(); ++i) {
                    for (const auto& leaf : bufferLeaves(instruction.operand(i)->shape())) {
                        int64_t uses = 0;
                        for (const OperandAlias& alias : aliases)
                            if (alias.operandNumber == i && alias.operandIndex == leaf) ++uses;
                        if (uses == 0) {
                            return instructionError(instruction,
                                                    "buffer is used in operands but not in results: "
                                                    "operand " +
                                                        std::to_string(i) + " at index " +
                                                        indexString(leaf) +
                                                        " has no output-to-operand aliasing");
                        }
                        if (uses > 1) {
                            return instructionError(instruction,
                                                    "buffer is used in results multiple times: operand " +
                                                        std::to_string(i) + " at index " +
                                                        indexString(leaf) + " is aliased " +
                                                        std::to_string(uses) + " times");
                        }
                    }
                }
                // Every buffer result comes from an operand (Pin creates one
                // from an array operand through its aliasing).
                if (instruction.opcode() == HloOpcode::kCustomCall) {
                    for (const auto& leaf : bufferLeaves(instruction.shape())) {
                        bool aliased = false;
                        for (const OperandAlias& alias : aliases)
                            if (alias.outputIndex == leaf) aliased = true;
                        if (!aliased) {
                            return instructionError(instruction,
                                                    "buffer is used in results but not in operands: "
                                                    "output index " +
                                                        indexString(leaf) +
                                                        " has no output-to-operand aliasing");
                        }
                    }
                }
            }
            // A buffer value is written by its (single) consumer.
            if (instruction.shape().isBuffer()) {
                int64_t writers = 0;
                for (const HloInstruction* user : instruction.users())
                    if (user->opcode() != HloOpcode::kGetTupleElement) ++writers;
                if (writers > 1) {
                    return instructionError(instruction,
                                            "an HLO buffer value has more than one writers: %" +
                                                instruction.name() + " is used by " +
                                                std::to_string(writers) + " instructions");
                }
            }
        }
    }
    return Status::ok();
}

namespace {

struct SendRecv {
    const HloInstruction* instruction;
    std::string pairs;
    bool matched = false;
};

}  // namespace

Status verifySendRecvDeadlocks(const HloModule& module) {
    if (!module.isScheduled()) return Status::ok();
    // Pairs are matched across the whole module (a send in a loop body may
    // match a recv in its caller).
    std::vector<SendRecv> sends;
    std::vector<SendRecv> recvs;
    for (const auto& computation : module.computations()) {
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            if (instruction.opcode() != HloOpcode::kSend && instruction.opcode() != HloOpcode::kRecv)
                continue;
            auto pairs = frontendAttribute(instruction, "_xla_send_recv_source_target_pairs");
            if (!pairs) continue;
            (instruction.opcode() == HloOpcode::kSend ? sends : recvs).push_back({&instruction, *pairs});
        }
    }
    {
        for (SendRecv& send : sends) {
            for (SendRecv& recv : recvs) {
                if (!recv.matched && recv.pairs == send.pairs) {
                    recv.matched = send.matched = true;
                    break;
                }
            }
        }
        for (const SendRecv& recv : recvs) {
            if (!recv.matched) {
                return instructionError(*recv.instruction,
                                        "Expected send to match recv: no send in the module has "
                                        "the source-target pairs " +
                                            recv.pairs);
            }
        }
        for (const SendRecv& send : sends) {
            if (!send.matched) {
                return instructionError(*send.instruction,
                                        "Expected recv to match send: no recv in the module has "
                                        "the source-target pairs " +
                                            send.pairs);
            }
            auto pairs = parsePairs(send.pairs);
            if (!pairs) continue;
            std::set<int64_t> sources;
            std::set<int64_t> targets;
            std::map<int64_t, int64_t> next;
            for (const auto& [source, target] : *pairs) {
                if (!sources.insert(source).second || !targets.insert(target).second) {
                    return instructionError(*send.instruction,
                                            "Expected send and recv instructions to have unique "
                                            "source and target pairs: " +
                                                send.pairs);
                }
                next[source] = target;
            }
            for (const auto& [start, unused] : next) {
                int64_t node = start;
                for (size_t steps = 0; steps <= next.size(); ++steps) {
                    auto it = next.find(node);
                    if (it == next.end()) break;
                    node = it->second;
                    if (node == start) {
                        return instructionError(*send.instruction,
                                                "Expected send and recv instructions to have "
                                                "non-cyclical source-target pairs: " +
                                                    send.pairs);
                    }
                }
            }
        }
    }
    return Status::ok();
}

}  // namespace hloscope::verifier_internal
