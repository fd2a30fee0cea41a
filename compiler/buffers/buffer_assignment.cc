#include "compiler/buffers/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/layout/tpu_tiling.h"

namespace hloscope {

namespace {

struct Leaf {
    std::vector<int64_t> index;
    const Shape* shape;
};

void flatten(const Shape& shape, std::vector<int64_t>& index, std::vector<Leaf>& out) {
    if (shape.isTuple()) {
        for (int64_t i = 0; i < shape.tupleCount(); ++i) {
            index.push_back(i);
            flatten(shape.tupleShape(i), index, out);
            index.pop_back();
        }
        return;
    }
    if (shape.isArray()) out.push_back({index, &shape});
}

int64_t leafCount(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t n = 0;
        for (const Shape& element : shape.tupleShapes()) n += leafCount(element);
        return n;
    }
    return shape.isArray() ? 1 : 0;
}

// The leaf range [begin, end) of tuple element `index` of `shape`.
std::pair<int64_t, int64_t> elementRange(const Shape& shape, int64_t index) {
    int64_t begin = 0;
    for (int64_t i = 0; i < index; ++i) begin += leafCount(shape.tupleShape(i));
    return {begin, begin + leafCount(shape.tupleShape(index))};
}

bool aliasesOperand(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kBitcast:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kDomain:
    case HloOpcode::kWhile: return true;
    default: return false;
    }
}

}  // namespace

std::vector<const HloInstruction*> executionSequence(const HloComputation& computation, bool scheduled) {
    std::vector<const HloInstruction*> order;
    if (scheduled) {
        std::unordered_set<const HloInstruction*> seen;
        bool valid = true;
        for (const auto& instruction : computation.instructions()) {
            for (const HloInstruction* operand : instruction->operands())
                if (!seen.count(operand)) valid = false;
            for (const HloInstruction* predecessor : instruction->controlPredecessors())
                if (!seen.count(predecessor)) valid = false;
            if (!valid) break;
            seen.insert(instruction.get());
            order.push_back(instruction.get());
        }
        if (valid) return order;
        order.clear();
    }
    for (const HloInstruction* instruction : computation.postOrder()) order.push_back(instruction);
    return order;
}

namespace {

class Analyzer {
public:
    Analyzer(const HloModule& module, const BufferAssignmentOptions& options)
        : m_module(module), m_options(options) {}

    // Buffers and live ranges of one computation; `end` is N.
    struct Result {
        std::vector<LogicalBuffer> buffers;
        std::vector<int64_t> outputBuffers;  // root leaves, in leaf order (-1: external)
        std::unordered_map<const HloInstruction*, std::vector<int64_t>> leaves;
        int64_t end = 0;
    };
    StatusOr<Result> analyze(const HloComputation& computation, bool isEntry);
    StatusOr<int64_t> calleePeak(const HloComputation* computation);

private:
    // Steps of analyze. Tuple pointer tables by instruction:
    using Tables = std::unordered_map<const HloInstruction*, int64_t>;
    // A new buffer of `size` bytes defined at `time`; returns its id.
    static int64_t define(Result& result, const HloInstruction* instruction, std::vector<int64_t> index,
                          int64_t size, int64_t time);
    // Extends the live ranges of `operand`'s buffers (and table) to `time`.
    static void use(Result& result, const Tables& tables, const HloInstruction* operand, int64_t time);
    // The buffers `instruction` shares with its operands (get-tuple-element,
    // tuple, aliasing ops), -1 per leaf (external) for a nested
    // computation's parameter; otherwise empty: it defines its own.
    static std::vector<int64_t> sharedLeaves(Result& result, const HloInstruction& instruction, bool isEntry);
    // Defines a buffer per array leaf of `instruction` (entry parameters and
    // constants live throughout).
    static std::vector<int64_t> defineLeaves(Result& result, const HloInstruction& instruction, int64_t time,
                                             bool isEntry);
    // A tuple-shaped instruction's pointer table (tuplePointerBytes per
    // element), or the table of the operand it aliases.
    void addTupleTable(Result& result, Tables& tables, const HloInstruction& instruction, int64_t time,
                       bool isEntry) const;
    // A while/conditional/call/async-start's temporary: the largest peak of
    // its called computations.
    Status addCalleeTemporary(Result& result, const HloInstruction& instruction, int64_t time);
    // The root's buffers live to the end (and are outputs of the entry).
    Status markRoot(Result& result, const Tables& tables, const HloComputation& computation,
                    bool isEntry) const;

    const HloModule& m_module;
    const BufferAssignmentOptions& m_options;
    std::unordered_map<const HloComputation*, int64_t> m_peaks;
    std::unordered_set<const HloComputation*> m_inProgress;
};

std::vector<int64_t> liveProfile(const std::vector<LogicalBuffer>& buffers, int64_t end) {
    std::vector<int64_t> delta(static_cast<size_t>(end + 2), 0);
    for (const LogicalBuffer& buffer : buffers) {
        if (buffer.isAliasedToParameter || buffer.sizeBytes == 0) continue;
        delta[static_cast<size_t>(buffer.defineTime)] += buffer.sizeBytes;
        delta[static_cast<size_t>(buffer.lastUseTime + 1)] -= buffer.sizeBytes;
    }
    std::vector<int64_t> live(static_cast<size_t>(end + 1), 0);
    int64_t running = 0;
    for (int64_t t = 0; t <= end; ++t) {
        running += delta[static_cast<size_t>(t)];
        live[static_cast<size_t>(t)] = running;
    }
    return live;
}

StatusOr<int64_t> Analyzer::calleePeak(const HloComputation* computation) {
    if (auto it = m_peaks.find(computation); it != m_peaks.end()) return it->second;
    if (!m_inProgress.insert(computation).second)
        return invalidArgument("buffer assignment: computation " + computation->name() +
                               " calls itself");
    HLO_ASSIGN_OR_RETURN(Result result, analyze(*computation, /*isEntry=*/false));
    m_inProgress.erase(computation);
    int64_t peak = 0;
    for (int64_t bytes : liveProfile(result.buffers, result.end)) peak = std::max(peak, bytes);
    m_peaks.emplace(computation, peak);
    return peak;
}

StatusOr<Analyzer::Result> Analyzer::analyze(const HloComputation& computation, bool isEntry) {
    Result result;
    const std::vector<const HloInstruction*> sequence = executionSequence(computation, m_module.isScheduled());
    const int64_t end = static_cast<int64_t>(sequence.size());
    result.end = end;
    result.leaves.reserve(sequence.size());
    Tables tables;
    for (int64_t position = 0; position < end; ++position) {
        const HloInstruction* instruction = sequence[static_cast<size_t>(position)];
        const int64_t time = position + 1;
        for (const HloInstruction* operand : instruction->operands()) use(result, tables, operand, time);
        std::vector<int64_t> ids = sharedLeaves(result, *instruction, isEntry);
        if (static_cast<int64_t>(ids.size()) != leafCount(instruction->shape()))
            ids = defineLeaves(result, *instruction, time, isEntry);
        addTupleTable(result, tables, *instruction, time, isEntry);
        result.leaves[instruction] = std::move(ids);
        HLO_RETURN_IF_ERROR(addCalleeTemporary(result, *instruction, time));
    }
    HLO_RETURN_IF_ERROR(markRoot(result, tables, computation, isEntry));
    return result;
}

int64_t Analyzer::define(Result& result, const HloInstruction* instruction, std::vector<int64_t> index,
                         int64_t size, int64_t time) {
    auto& buffers = result.buffers;
    LogicalBuffer buffer;
    buffer.id = static_cast<int64_t>(buffers.size());
    buffer.instruction = instruction;
    buffer.shapeIndex = std::move(index);
    buffer.sizeBytes = size;
    buffer.defineTime = time;
    buffer.lastUseTime = time;
    buffers.push_back(std::move(buffer));
    return buffers.back().id;
}

void Analyzer::use(Result& result, const Tables& tables, const HloInstruction* operand, int64_t time) {
    auto& buffers = result.buffers;
    auto it = result.leaves.find(operand);
    if (it != result.leaves.end())
        for (int64_t id : it->second)
            if (id >= 0) buffers[static_cast<size_t>(id)].lastUseTime = std::max(buffers[static_cast<size_t>(id)].lastUseTime, time);
    if (auto table = tables.find(operand); table != tables.end())
        buffers[static_cast<size_t>(table->second)].lastUseTime =
            std::max(buffers[static_cast<size_t>(table->second)].lastUseTime, time);
}

std::vector<int64_t> Analyzer::sharedLeaves(Result& result, const HloInstruction& instruction, bool isEntry) {
    auto& leaves = result.leaves;
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    std::vector<int64_t> ids;
    if (opcode == HloOpcode::kParameter && !isEntry) {
        ids.assign(static_cast<size_t>(leafCount(shape)), -1);
    } else if (opcode == HloOpcode::kGetTupleElement && instruction.operandCount() == 1 &&
               instruction.operand(0)->shape().isTuple() && instruction.tupleIndex() >= 0 &&
               instruction.tupleIndex() < instruction.operand(0)->shape().tupleCount()) {
        const auto& source = leaves[instruction.operand(0)];
        auto [begin, stop] = elementRange(instruction.operand(0)->shape(), instruction.tupleIndex());
        if (stop <= static_cast<int64_t>(source.size()))
            ids.assign(source.begin() + begin, source.begin() + stop);
    } else if (opcode == HloOpcode::kTuple) {
        for (const HloInstruction* operand : instruction.operands()) {
            const auto& source = leaves[operand];
            ids.insert(ids.end(), source.begin(), source.end());
        }
    } else if (aliasesOperand(opcode) && instruction.operandCount() >= 1 &&
               leafCount(instruction.operand(0)->shape()) == leafCount(shape)) {
        ids = leaves[instruction.operand(0)];
    }
    return ids;
}

std::vector<int64_t> Analyzer::defineLeaves(Result& result, const HloInstruction& instruction, int64_t time,
                                            bool isEntry) {
    const HloOpcode opcode = instruction.opcode();
    std::vector<int64_t> ids;
    std::vector<Leaf> flat;
    std::vector<int64_t> index;
    flatten(instruction.shape(), index, flat);
    const bool entryParameter = opcode == HloOpcode::kParameter;
    const bool constant = opcode == HloOpcode::kConstant;
    for (const Leaf& leaf : flat) {
        const int64_t id = define(result, &instruction, leaf.index, paddedSizeInBytes(*leaf.shape),
                                  entryParameter || constant ? 0 : time);
        LogicalBuffer& buffer = result.buffers[static_cast<size_t>(id)];
        buffer.isEntryParameter = entryParameter;
        buffer.isConstant = constant && isEntry;
        if (entryParameter || buffer.isConstant) buffer.lastUseTime = result.end;
        ids.push_back(id);
    }
    return ids;
}

void Analyzer::addTupleTable(Result& result, Tables& tables, const HloInstruction& instruction, int64_t time,
                             bool isEntry) const {
    auto& buffers = result.buffers;
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    if (shape.isTuple() && m_options.tuplePointerBytes > 0 && opcode != HloOpcode::kGetTupleElement &&
        !aliasesOperand(opcode) && !(opcode == HloOpcode::kParameter && !isEntry)) {
        const int64_t id = define(result, &instruction, {}, m_options.tuplePointerBytes * shape.tupleCount(),
                                  opcode == HloOpcode::kParameter ? 0 : time);
        buffers[static_cast<size_t>(id)].isTupleTable = true;
        if (opcode == HloOpcode::kParameter) {
            buffers[static_cast<size_t>(id)].isEntryParameter = true;
            buffers[static_cast<size_t>(id)].lastUseTime = result.end;
        }
        tables[&instruction] = id;
    } else if (aliasesOperand(opcode) && instruction.operandCount() >= 1) {
        if (auto table = tables.find(instruction.operand(0)); table != tables.end())
            tables[&instruction] = table->second;
    }
}

Status Analyzer::addCalleeTemporary(Result& result, const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    int64_t temporary = 0;
    if (opcode == HloOpcode::kWhile || opcode == HloOpcode::kConditional ||
        opcode == HloOpcode::kCall || opcode == HloOpcode::kAsyncStart) {
        for (const HloComputation* callee : instruction.calledComputations()) {
            if (!callee) continue;
            HLO_ASSIGN_OR_RETURN(int64_t peak, calleePeak(callee));
            temporary = std::max(temporary, peak);
        }
    }
    if (temporary > 0) {
        const int64_t id = define(result, &instruction, {}, temporary, time);
        result.buffers[static_cast<size_t>(id)].isCalleeTemporary = true;
    }
    return Status::ok();
}

Status Analyzer::markRoot(Result& result, const Tables& tables, const HloComputation& computation,
                          bool isEntry) const {
    const HloInstruction* root = computation.root();
    if (!root) return Status::ok();
    auto& buffers = result.buffers;
    const int64_t end = result.end;
    auto it = result.leaves.find(root);
    if (it == result.leaves.end())
        return invalidArgument("buffer assignment: root of " + computation.name() +
                               " is not in its sequence");
    result.outputBuffers = it->second;
    for (int64_t id : it->second) {
        if (id < 0) continue;
        LogicalBuffer& buffer = buffers[static_cast<size_t>(id)];
        buffer.lastUseTime = end;
        if (isEntry) buffer.isOutput = true;
        if (isEntry && m_options.outputsLiveFromStart && !buffer.isEntryParameter && !buffer.isConstant)
            buffer.defineTime = 0;
    }
    if (auto table = tables.find(root); table != tables.end()) {
        buffers[static_cast<size_t>(table->second)].lastUseTime = end;
        if (isEntry) buffers[static_cast<size_t>(table->second)].isOutput = true;
    }
    return Status::ok();
}

// Leaf position of `index` within `shape` (-1 when it names no array leaf).
int64_t leafPosition(const Shape& shape, const std::vector<int64_t>& index) {
    const Shape* current = &shape;
    int64_t position = 0;
    for (int64_t i : index) {
        if (!current->isTuple() || i < 0 || i >= current->tupleCount()) return -1;
        position += elementRange(*current, i).first;
        current = &current->tupleShape(i);
    }
    return current->isArray() ? position : -1;
}

bool overlaps(const std::set<std::pair<int64_t, int64_t>>& intervals, int64_t start, int64_t stop) {
    // Intervals are disjoint: only the one starting last at or before `stop` can overlap.
    auto it = intervals.upper_bound({stop, INT64_MAX});
    if (it == intervals.begin()) return false;
    --it;
    return it->second >= start;
}

}  // namespace

StatusOr<BufferAssignment> assignBuffers(const HloModule& module,
                                         const BufferAssignmentOptions& options) {
    const HloComputation* entry = module.entryComputation();
    if (!entry) return invalidArgument("buffer assignment: module has no entry computation");
    Analyzer analyzer(module, options);
    HLO_ASSIGN_OR_RETURN(Analyzer::Result result, analyzer.analyze(*entry, /*isEntry=*/true));
    BufferAssignment assignment;
    assignment.buffers = std::move(result.buffers);
    auto& buffers = assignment.buffers;

    // input_output_alias: outputs that live in a parameter's buffer.
    std::map<int64_t, int64_t> aliasedTo;  // output buffer id -> parameter buffer id
    if (entry->root()) {
        for (const InputOutputAlias& alias : module.inputOutputAliases()) {
            const int64_t out = leafPosition(entry->root()->shape(), alias.outputIndex);
            if (alias.parameterNumber < 0 || alias.parameterNumber >= entry->parameterCount()) continue;
            const HloInstruction* parameter = entry->parameter(alias.parameterNumber);
            if (!parameter) continue;
            const int64_t in = leafPosition(parameter->shape(), alias.parameterIndex);
            auto params = result.leaves.find(parameter);
            if (out < 0 || in < 0 || params == result.leaves.end() ||
                out >= static_cast<int64_t>(result.outputBuffers.size()) ||
                in >= static_cast<int64_t>(params->second.size()))
                continue;
            const int64_t outId = result.outputBuffers[static_cast<size_t>(out)];
            const int64_t inId = params->second[static_cast<size_t>(in)];
            if (outId < 0 || inId < 0 || outId == inId) continue;
            LogicalBuffer& output = buffers[static_cast<size_t>(outId)];
            if (output.isEntryParameter || output.isConstant) continue;
            output.isAliasedToParameter = true;
            aliasedTo[outId] = inId;
        }
    }

    const std::vector<int64_t> live = liveProfile(buffers, result.end);
    for (size_t t = 0; t < live.size(); ++t) {
        assignment.liveBytesOverTime.emplace_back(static_cast<int64_t>(t), live[t]);
        assignment.peakLiveBytes = std::max(assignment.peakLiveBytes, live[t]);
    }
    for (const LogicalBuffer& buffer : buffers)
        if (!buffer.isAliasedToParameter) assignment.peakBytesNoReuse += buffer.sizeBytes;
    if (!options.assignAllocations) return assignment;

    auto& allocations = assignment.allocations;
    auto newAllocation = [&](LogicalBuffer& buffer) {
        BufferAllocation allocation;
        allocation.index = static_cast<int64_t>(allocations.size());
        allocation.sizeBytes = buffer.sizeBytes;
        allocation.buffers.push_back(buffer.id);
        allocation.isParameter = buffer.isEntryParameter;
        allocation.isOutput = buffer.isOutput;
        allocation.isConstant = buffer.isConstant;
        buffer.allocation = allocation.index;
        allocations.push_back(std::move(allocation));
    };
    std::vector<int64_t> reusable;
    for (LogicalBuffer& buffer : buffers) {
        if (buffer.isAliasedToParameter) continue;
        if (buffer.isEntryParameter || buffer.isConstant || buffer.isOutput) newAllocation(buffer);
        else reusable.push_back(buffer.id);
    }
    for (const auto& [outId, inId] : aliasedTo) {
        LogicalBuffer& output = buffers[static_cast<size_t>(outId)];
        BufferAllocation& allocation = allocations[static_cast<size_t>(buffers[static_cast<size_t>(inId)].allocation)];
        allocation.buffers.push_back(outId);
        allocation.isOutput = true;
        allocation.sizeBytes = std::max(allocation.sizeBytes, output.sizeBytes);
        output.allocation = allocation.index;
    }
    std::sort(reusable.begin(), reusable.end(), [&](int64_t a, int64_t b) {
        const LogicalBuffer& x = buffers[static_cast<size_t>(a)];
        const LogicalBuffer& y = buffers[static_cast<size_t>(b)];
        if (x.sizeBytes != y.sizeBytes) return x.sizeBytes > y.sizeBytes;
        if (x.defineTime != y.defineTime) return x.defineTime < y.defineTime;
        return x.id < y.id;
    });
    // Reusable allocations in creation order: sizes are non-increasing, so
    // the best fit is the last one (smallest) without an overlap.
    std::vector<int64_t> pool;
    std::vector<std::set<std::pair<int64_t, int64_t>>> intervals;
    for (int64_t id : reusable) {
        LogicalBuffer& buffer = buffers[static_cast<size_t>(id)];
        int64_t chosen = -1;
        for (size_t k = pool.size(); k-- > 0;) {
            if (!overlaps(intervals[k], buffer.defineTime, buffer.lastUseTime)) {
                chosen = static_cast<int64_t>(k);
                break;
            }
        }
        if (chosen < 0) {
            newAllocation(buffer);
            pool.push_back(buffer.allocation);
            intervals.emplace_back();
            chosen = static_cast<int64_t>(pool.size()) - 1;
        } else {
            BufferAllocation& allocation = allocations[static_cast<size_t>(pool[static_cast<size_t>(chosen)])];
            allocation.buffers.push_back(id);
            allocation.sizeBytes = std::max(allocation.sizeBytes, buffer.sizeBytes);
            buffer.allocation = allocation.index;
        }
        intervals[static_cast<size_t>(chosen)].emplace(buffer.defineTime, buffer.lastUseTime);
    }
    for (BufferAllocation& allocation : allocations) {
        allocation.isReused = allocation.buffers.size() > 1;
        assignment.totalAllocatedBytes += allocation.sizeBytes;
    }
    return assignment;
}

int64_t peakMemoryBytes(const HloModule& module) {
    BufferAssignmentOptions options;
    options.assignAllocations = false;
    auto assignment = assignBuffers(module, options);
    return assignment.isOk() ? assignment->peakLiveBytes : 0;
}

int64_t peakMemoryBytesWithOutputsHeld(const HloModule& module) {
    BufferAssignmentOptions options;
    options.assignAllocations = false;
    options.outputsLiveFromStart = true;
    auto assignment = assignBuffers(module, options);
    return assignment.isOk() ? assignment->peakLiveBytes : 0;
}

}  // namespace hloscope
