// HloModule: computations (callees before callers, entry last, as XLA
// prints them) plus module-level attributes from the `HloModule` header line
// and the stack-frame tables of newer JAX dumps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <string_view>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/shape.h"
#include "core/support/name_hash_set.h"

namespace hloscope {

using ShapeIndex = std::vector<int64_t>;  // path into a tuple shape; {} = whole value

// entry_computation_layout={(p0, p1)->result}
struct ComputationLayout {
    std::vector<Shape> parameters;
    Shape result;
    bool operator==(const ComputationLayout&) const = default;
};

// input_output_alias={ {0}: (0, {1}, must-alias), ... }
struct InputOutputAlias {
    enum class Kind : uint8_t { kMayAlias, kMustAlias };
    ShapeIndex outputIndex;
    int64_t parameterNumber = 0;
    ShapeIndex parameterIndex;
    Kind kind = Kind::kMayAlias;
    bool kindWritten = false;  // `may-alias` printed explicitly
    bool operator==(const InputOutputAlias&) const = default;
};

// buffer_donor={ (1, {}), ... }
struct BufferDonor {
    int64_t parameterNumber = 0;
    ShapeIndex parameterIndex;
    bool operator==(const BufferDonor&) const = default;
};

// Stack-frame tables (FileNames / FunctionNames / FileLocations / StackFrames).
struct FileLocation {
    int64_t fileNameId = 0;
    int64_t functionNameId = 0;
    int64_t line = 0;
    int64_t endLine = 0;
    int64_t column = 0;
    int64_t endColumn = 0;
    bool operator==(const FileLocation&) const = default;
};
struct StackFrame {
    int64_t fileLocationId = 0;
    int64_t parentFrameId = 0;
    bool operator==(const StackFrame&) const = default;
};
struct StackFrameIndex {
    std::vector<std::string> fileNames;      // id i+1 at index i
    std::vector<std::string> functionNames;  // id i+1 at index i
    std::vector<FileLocation> fileLocations;
    std::vector<StackFrame> stackFrames;
    bool empty() const {
        return fileNames.empty() && functionNames.empty() && fileLocations.empty() &&
               stackFrames.empty();
    }
    bool operator==(const StackFrameIndex&) const = default;
};

// A call that closes a cycle in a module's call graph: `instruction` calls `called`, which is
// already on the call path `path` ("a -> b -> a").
struct HloCallCycle {
    const HloInstruction* instruction = nullptr;
    const HloComputation* called = nullptr;
    std::string path;
};

// The first call found among `computations` that makes a computation call itself, directly or
// through others; nullopt when their call graph is acyclic (HloModule::findCallCycle).
std::optional<HloCallCycle> findCallCycle(std::span<const std::unique_ptr<HloComputation>> computations);

class HloModule {
public:
    explicit HloModule(std::string name);
    ~HloModule();
    HloModule(const HloModule&) = delete;
    HloModule& operator=(const HloModule&) = delete;

    const std::string& name() const { return m_name; }
    void setName(std::string name) {
        noteHeaderMutation();
        m_name = std::move(name);
    }

    // Takes ownership; assigns unique ids to its instructions.
    HloComputation* addComputation(std::unique_ptr<HloComputation> computation,
                                   bool isEntry = false);
    // Removes a computation that nothing calls.
    Status removeComputation(HloComputation* computation);
    // Removes a set of computations at once (linear in the module): none may
    // be the entry or be called by an instruction of a computation outside
    // the set.
    Status removeComputations(std::span<HloComputation* const> computations);
    // Puts the computations in `order`, which must be a permutation of
    // computations() (the printer writes them in this order).
    Status reorderComputations(std::span<HloComputation* const> order);
    const std::vector<std::unique_ptr<HloComputation>>& computations() const {
        return m_computations;
    }
    int64_t computationCount() const { return static_cast<int64_t>(m_computations.size()); }
    HloComputation* entryComputation() const { return m_entry; }
    void setEntryComputation(HloComputation* entry) {
        noteHeaderMutation();
        m_entry = entry;
    }
    HloComputation* findComputation(std::string_view name) const;
    // The first call found that makes a computation call itself, directly or through others;
    // nullopt when the call graph is acyclic, as everything that walks called computations
    // (verifier, passes, interpreter, cost analysis, layers) needs it to be.
    std::optional<HloCallCycle> findCallCycle() const { return hloscope::findCallCycle(m_computations); }

    int64_t instructionCount() const;
    // Next unique id; instructions added via HloComputation::addInstruction
    // to a computation of this module get one automatically.
    int64_t nextUniqueId() { return m_nextUniqueId++; }

    // How many changes the module has had: every mutator of the module, its computations and
    // their instructions counts one (the mutable accessors count when called). The pipeline
    // runner takes an unchanged count for an unchanged module and prints it only after a
    // pass that changed it; HLOSCOPE_AUDIT_MUTATIONS=1 makes it print after every pass and
    // fail a pass whose change was not counted.
    uint64_t mutationCount() const { return m_mutations; }
    void noteMutation() { ++m_mutations; }
    // The count at the last change of the header (name, entry, layouts, aliasing,
    // attributes, stack frames): what every instruction's verification may read.
    uint64_t headerStamp() const { return m_headerStamp; }
    void noteHeaderMutation() { m_headerStamp = ++m_mutations; }
    // Renumbers every instruction 0..N-1 in computation/instruction order.
    void renumber();
    // A name no instruction (or computation) of the module has yet, made from
    // `base` ("add" -> "add.7"); the name is reserved.
    std::string uniqueInstructionName(std::string_view base);
    std::string uniqueComputationName(std::string_view base);
    // Records a name taken by an instruction added outside
    // uniqueInstructionName (HloComputation::addInstruction calls it), so
    // that later unique names avoid it.
    void noteName(const std::string& name) {
        if (m_usedNamesBuilt) m_usedNames.insert(name);
    }

    // Header attributes.
    const std::optional<ComputationLayout>& entryComputationLayout() const {
        return m_entryComputationLayout;
    }
    void setEntryComputationLayout(std::optional<ComputationLayout> layout) {
        noteHeaderMutation();
        m_entryComputationLayout = std::move(layout);
    }
    bool isScheduled() const { return m_isScheduled; }
    void setIsScheduled(bool scheduled) {
        noteHeaderMutation();
        m_isScheduled = scheduled;
    }
    std::optional<int64_t> replicaCount() const { return m_replicaCount; }
    void setReplicaCount(std::optional<int64_t> n) {
        noteHeaderMutation();
        m_replicaCount = n;
    }
    std::optional<int64_t> numPartitions() const { return m_numPartitions; }
    void setNumPartitions(std::optional<int64_t> n) {
        noteHeaderMutation();
        m_numPartitions = n;
    }
    const std::vector<InputOutputAlias>& inputOutputAliases() const { return m_aliases; }
    std::vector<InputOutputAlias>& mutableInputOutputAliases() {
        noteHeaderMutation();
        return m_aliases;
    }
    bool hasInputOutputAliasAttribute() const { return m_hasAliasAttribute; }
    void setHasInputOutputAliasAttribute(bool has) {
        noteHeaderMutation();
        m_hasAliasAttribute = has;
    }
    const std::vector<BufferDonor>& bufferDonors() const { return m_bufferDonors; }
    std::vector<BufferDonor>& mutableBufferDonors() {
        noteHeaderMutation();
        return m_bufferDonors;
    }
    bool hasBufferDonorAttribute() const { return m_hasBufferDonorAttribute; }
    void setHasBufferDonorAttribute(bool has) {
        noteHeaderMutation();
        m_hasBufferDonorAttribute = has;
    }
    // Other header attributes (frontend_attributes, allow_spmd_..., ...)
    // verbatim, in order.
    const std::vector<HloAttribute>& attributes() const { return m_attributes; }
    std::vector<HloAttribute>& mutableAttributes() {
        noteHeaderMutation();
        return m_attributes;
    }

    const StackFrameIndex& stackFrames() const { return m_stackFrames; }
    StackFrameIndex& mutableStackFrames() {
        noteHeaderMutation();
        return m_stackFrames;
    }

    // A deep copy: every computation, instruction, header attribute and stack frame, with the
    // same names, unique ids, order (and so schedule), operand, user and control-edge order,
    // called computations and the name counters, so that passes run on the copy exactly as on
    // this module. The copy shares nothing with this module.
    std::unique_ptr<HloModule> clone() const;

    // Structural equality: header attributes, stack frames, computations
    // (by order and name), instructions (HloInstruction::identicalTo,
    // operands by name), roots.
    bool structurallyEqual(const HloModule& other, std::string* whyNot = nullptr) const;

private:
    std::string m_name;
    std::vector<std::unique_ptr<HloComputation>> m_computations;
    HloComputation* m_entry = nullptr;
    int64_t m_nextUniqueId = 0;
    uint64_t m_mutations = 0;
    uint64_t m_headerStamp = 0;
    // Names handed out by unique*Name (built on first use from the module).
    NameHashSet m_usedNames;
    bool m_usedNamesBuilt = false;
    int64_t m_nameCounter = 0;
    std::optional<ComputationLayout> m_entryComputationLayout;
    bool m_isScheduled = false;
    std::optional<int64_t> m_replicaCount;
    std::optional<int64_t> m_numPartitions;
    std::vector<InputOutputAlias> m_aliases;
    bool m_hasAliasAttribute = false;
    std::vector<BufferDonor> m_bufferDonors;
    bool m_hasBufferDonorAttribute = false;
    std::vector<HloAttribute> m_attributes;
    StackFrameIndex m_stackFrames;
};

}  // namespace hloscope
