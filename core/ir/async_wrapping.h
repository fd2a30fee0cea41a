// XLA's async sugar: `%s = ((f32[8]), f32[4], u32[]) reduce-scatter-start(%x),
// replica_groups=..., to_apply=%add` and its `-update` / `-done` stand for an
// async-start whose called computation wraps one reduce-scatter of its
// parameters. Every opcode without an async form of its own may be written so
// (dot, slice, custom-call, fusion, call, ...).
//
// The parser and the JSON reader turn each such start into that form
// (wrapAsyncSugar): a computation of parameters and one instruction holding
// the start's typed attributes and called computations, which the start then
// calls. Everything downstream (interpreter, backends, cost models, passes)
// sees an ordinary async-start with `calls=`; the printer writes the sugar
// back (asyncSugarRoot) and leaves the wrapper computation out.
#pragma once

#include "core/support/status.h"

namespace hloscope {

class HloComputation;
class HloInstruction;
class HloModule;

// For an async-start printed as `X-start`: the wrapped X (the root of its
// `calls` computation, which holds only parameters and X of the parameters
// in order, and X's opcode is the start's async wrapped opcode); nullptr for
// any other instruction.
const HloInstruction* asyncSugarRoot(const HloInstruction& instruction);

// Whether an async op with an async wrapped opcode is written as `X-start`,
// `X-update`, `X-done` (text and JSON): not when its chain's `X-start` calls a
// wrapper that passes have changed; the chain is then written in full
// (async-start calls=..., async-done). Ops without a wrapped opcode: true.
bool asyncWrittenAsSugar(const HloInstruction& instruction);

// The async-start of the chain `instruction` (an async-start, -update or
// -done) belongs to; nullptr when its first operands do not lead to one.
const HloInstruction* asyncChainStart(const HloInstruction& instruction);

// Whether an async-start binds fewer operands than its computation takes
// (the rest come with async-updates): the computation then runs at the done.
bool asyncBindsLate(const HloInstruction& start);

// Wraps every async-start that carries an async wrapped opcode but no wrapper
// computation yet: X takes the start's typed attributes, called computations,
// verbatim attributes and metadata (the start keeps its metadata and the
// verbatim attributes any instruction may carry: async_execution_thread,
// backend_config, frontend_attributes, sharding, ...). Wrapper computations go just before the
// computation of their start. Fails, naming the instruction, when the start's shape is not
// ((operands...), result, ...).
Status wrapAsyncSugar(HloModule& module);

}  // namespace hloscope
