#include "compiler/pipeline/pipeline.h"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <future>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"

namespace hloscope {
namespace {

std::vector<std::string_view> splitList(std::string_view text) {
    std::vector<std::string_view> items;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view item = text.substr(start, end - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (!item.empty()) items.push_back(item);
        start = end + 1;
    }
    return items;
}

// The first line where two texts differ, for an audit failure.
std::string firstDifference(const std::string& a, const std::string& b) {
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    const size_t begin = a.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t from = begin == std::string::npos ? 0 : begin + 1;
    const auto lineOf = [from](const std::string& text) {
        const size_t end = text.find('\n', from);
        return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
    };
    return "'" + lineOf(a) + "' where a full print has '" + lineOf(b) + "'";
}

HloVerifierOptions verifierOptions() {
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    return options;
}

// Keeps a scheduled module's instruction order valid after a pass, as XLA's
// HloSchedule::Update does: existing instructions keep their relative order
// and each instruction a pass added is placed just before its first user
// (operands and control predecessors first, depth-first).
Status updateSchedule(HloModule& module) {
    for (const auto& computation : module.computations()) {
        const auto& instructions = computation->instructions();
        std::unordered_map<const HloInstruction*, size_t> position;
        position.reserve(instructions.size());
        for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i].get()] = i;
        bool inOrder = true;
        for (size_t i = 0; i < instructions.size() && inOrder; ++i) {
            for (const HloInstruction* operand : instructions[i]->operands())
                if (position[operand] > i) inOrder = false;
            for (const HloInstruction* pred : instructions[i]->controlPredecessors())
                if (position[pred] > i) inOrder = false;
        }
        if (inOrder) continue;
        std::vector<HloInstruction*> order;
        order.reserve(instructions.size());
        std::unordered_set<const HloInstruction*> emitted;
        std::vector<std::pair<HloInstruction*, size_t>> stack;
        for (const auto& start : instructions) {
            if (emitted.count(start.get())) continue;
            stack.push_back({start.get(), 0});
            while (!stack.empty()) {
                auto& [node, next] = stack.back();
                const size_t operands = node->operands().size();
                const size_t deps = operands + node->controlPredecessors().size();
                if (next < deps) {
                    HloInstruction* dep = next < operands ? node->operand(static_cast<int64_t>(next))
                                                          : node->controlPredecessors()[next - operands];
                    ++next;
                    if (!emitted.count(dep) && dep->parent() == computation.get())
                        stack.push_back({dep, 0});
                    continue;
                }
                if (emitted.insert(node).second) order.push_back(node);
                stack.pop_back();
            }
        }
        HLO_RETURN_IF_ERROR(computation->setInstructionOrder(order));
    }
    return Status::ok();
}

}  // namespace

StatusOr<Pipeline> pipelineFromList(std::string_view commaSeparated, const Pipeline& base) {
    if (!base.createPass)
        return failedPrecondition("pipeline " + base.name + " has no pass factory");
    Pipeline pipeline;
    pipeline.name = "custom";
    pipeline.createPass = base.createPass;
    for (std::string_view name : splitList(commaSeparated)) {
        PipelineStep step;
        step.pass = std::string(name);
        for (const PipelineStep& b : base.steps)
            if (b.pass == name) {
                step.options = b.options;
                break;
            }
        // An unknown name is an error here, listing the known ones.
        HLO_RETURN_IF_ERROR(base.createPass(name, step.options).status());
        pipeline.steps.push_back(std::move(step));
    }
    if (pipeline.steps.empty()) return invalidArgument("empty pass list");
    return pipeline;
}

StatusOr<int> findStep(const Pipeline& pipeline, std::string_view name) {
    int number = -1;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
    if (ec == std::errc() && end == name.data() + name.size()) {
        if (number < 0 || number >= static_cast<int>(pipeline.steps.size()))
            return invalidArgument("pipeline " + pipeline.name + " has no step " +
                                   std::string(name) + " (it has " +
                                   std::to_string(pipeline.steps.size()) + ")");
        return number;
    }
    for (size_t i = 0; i < pipeline.steps.size(); ++i)
        if (pipeline.steps[i].pass == name) return static_cast<int>(i);
    std::string known;
    for (const PipelineStep& s : pipeline.steps)
        known += (known.empty() ? "" : ", ") + s.pass;
    return invalidArgument("pipeline " + pipeline.name + " has no pass '" + std::string(name) +
                           "' (it runs: " + known + ")");
}

Status disablePasses(Pipeline& pipeline, std::string_view which) {
    for (std::string_view item : splitList(which)) {
        HLO_ASSIGN_OR_RETURN(int index, findStep(pipeline, item));
        bool numbered = std::isdigit(static_cast<unsigned char>(item.front()));
        if (numbered) {
            pipeline.steps[static_cast<size_t>(index)].enabled = false;
        } else {
            for (PipelineStep& step : pipeline.steps)
                if (step.pass == item) step.enabled = false;
        }
    }
    return Status::ok();
}

Status setPassOption(Pipeline& pipeline, std::string_view assignment) {
    const size_t dot = assignment.find('.');
    const size_t eq = assignment.find('=');
    if (dot == std::string_view::npos || eq == std::string_view::npos || eq < dot)
        return invalidArgument("expected PASS.KEY=VALUE, got '" + std::string(assignment) + "'");
    const std::string pass(assignment.substr(0, dot));
    const std::string key(assignment.substr(dot + 1, eq - dot - 1));
    const std::string value(assignment.substr(eq + 1));
    bool found = false;
    for (PipelineStep& step : pipeline.steps)
        if (step.pass == pass) {
            step.options.set(key, value);
            found = true;
        }
    if (!found) HLO_RETURN_IF_ERROR(findStep(pipeline, pass).status());
    return Status::ok();
}

StatusOr<std::unique_ptr<PipelineRunner>> PipelineRunner::create(HloModule& module,
                                                                 Pipeline pipeline,
                                                                 RunnerOptions options) {
    std::vector<std::unique_ptr<HloPass>> passes;
    for (size_t i = 0; i < pipeline.steps.size(); ++i) {
        const PipelineStep& step = pipeline.steps[i];
        if (!step.enabled) {
            passes.push_back(nullptr);
            continue;
        }
        if (!pipeline.createPass)
            return failedPrecondition("pipeline " + pipeline.name + " has no pass factory");
        auto pass = pipeline.createPass(step.pass, step.options);
        if (!pass.isOk())
            return pass.status().withContext("step " + std::to_string(i) + " of pipeline " +
                                             pipeline.name);
        passes.push_back(std::move(*pass));
    }
    return std::make_unique<PipelineRunner>(module, std::move(pipeline), std::move(passes),
                                            options);
}

PipelineRunner::PipelineRunner(HloModule& module, Pipeline pipeline,
                               std::vector<std::unique_ptr<HloPass>> passes,
                               RunnerOptions options)
    : m_module(module),
      m_pipeline(std::move(pipeline)),
      m_passes(std::move(passes)),
      m_options(options),
      m_textCache(std::make_unique<HloTextCache>()) {
    m_passes.resize(m_pipeline.steps.size());
}

PipelineRunner::~PipelineRunner() = default;

StatusOr<std::shared_ptr<const std::string>> PipelineRunner::printNow(const std::string& where) {
    if (m_options.fullChecks)
        return std::make_shared<const std::string>(printModule(m_module, HloPrintOptions::canonical()));
    auto text = std::make_shared<const std::string>(m_textCache->print(m_module));
    if (m_options.auditMutations) {
        const std::string full = printModule(m_module, HloPrintOptions::canonical());
        if (full != *text)
            return Status(StatusCode::kInternal,
                          where + " left a stale line in the incremental print (a mutator of "
                                  "core/ir that does not stamp what it changed): " +
                              firstDifference(*text, full));
    }
    return std::shared_ptr<const std::string>(std::move(text));
}

Status PipelineRunner::verifyNow(const std::string& where, bool* auditFailed) {
    *auditFailed = false;
    const HloVerifierOptions options = verifierOptions();
    const bool incremental = m_verifiedAt != 0 && !m_options.fullChecks;
    Status verified = incremental ? verifyModuleChangedSince(m_module, m_verifiedAt, options)
                                  : verifyModule(m_module, options);
    if (verified.isOk() && incremental && m_options.auditMutations) {
        Status full = verifyModule(m_module, options);
        if (!full.isOk()) {
            *auditFailed = true;
            return Status(StatusCode::kInternal,
                          where + " broke the module where the incremental verifier did not "
                                  "look (a mutator of core/ir that does not stamp what it "
                                  "changed): " +
                              full.toString());
        }
    }
    if (verified.isOk()) m_verifiedAt = m_module.mutationCount();
    return verified;
}

void PipelineRunner::addInstrumentation(PassInstrumentation* instrumentation) {
    m_instrumentations.push_back(instrumentation);
}

void PipelineRunner::removeInstrumentation(PassInstrumentation* instrumentation) {
    std::erase(m_instrumentations, instrumentation);
}

bool auditMutationsFromEnvironment() {
    const char* value = std::getenv("HLOSCOPE_AUDIT_MUTATIONS");
    return value && std::string_view(value) == "1";
}

Status PipelineRunner::start() {
    if (m_started) return Status::ok();
    // Passes may assume a valid module, and a module that was invalid before
    // a pass must not be reported as broken by it. The verifier and the printer only
    // read the module: they run at once.
    bool auditFailed = false;
    std::future<Status> verified;
    if (m_options.verify)
        verified = std::async(std::launch::async, [&] { return verifyNow("the input", &auditFailed); });
    StatusOr<std::shared_ptr<const std::string>> text = std::shared_ptr<const std::string>();
    if (m_options.checkChanges) text = printNow("the input");
    if (verified.valid()) {
        Status status = verified.get();
        if (!status.isOk())
            return Status(StatusCode::kFailedPrecondition,
                          "the input module does not verify, so no pass runs on it: " +
                              status.toString());
    }
    m_started = true;
    if (!text.isOk()) return text.status();
    m_text = std::move(*text);
    for (PassInstrumentation* i : m_instrumentations)
        HLO_RETURN_IF_ERROR(i->beforePipelinePrinted(m_module, m_text));
    return Status::ok();
}

Status PipelineRunner::runNext() {
    if (finished()) return Status::ok();
    HLO_RETURN_IF_ERROR(start());
    if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
        return Status(StatusCode::kCancelled, "pipeline cancelled");
    const int index = m_next++;
    const PipelineStep& step = m_pipeline.steps[static_cast<size_t>(index)];
    HloPass* pass = m_passes[static_cast<size_t>(index)].get();
    PassRunInfo info{index, &step, pass};
    PassRunResult result;
    result.text = m_text;
    if (!step.enabled || pass == nullptr) {
        result.enabled = false;
        for (PassInstrumentation* i : m_instrumentations) i->beforePass(info, m_module);
        for (PassInstrumentation* i : m_instrumentations)
            HLO_RETURN_IF_ERROR(i->afterPass(info, m_module, result));
        return Status::ok();
    }
    for (PassInstrumentation* i : m_instrumentations) i->beforePass(info, m_module);
    pass->clearRewrites();
    const uint64_t mutationsBefore = m_module.mutationCount();
    const auto start = std::chrono::steady_clock::now();
    StatusOr<bool> changed = pass->run(m_module);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string where = "pass " + std::to_string(index) + " (" + step.pass + ")";
    if (!changed.isOk()) return changed.status().withContext(where);
    result.changed = *changed;
    if (result.changed && m_module.isScheduled())
        HLO_RETURN_IF_ERROR(updateSchedule(m_module).withContext(where));
    result.rewrites = pass->takeRewrites();
    result.decisions = pass->takeDecisions();
    result.statistics = pass->statistics();
    const bool counted = m_module.mutationCount() != mutationsBefore;
    // A module the pass may have changed is verified while it is printed (both only read
    // it); an unchanged module verifies as it did before the pass. Returning early waits
    // for the verifier (the future's destructor).
    bool auditFailed = false;
    std::future<Status> verified;
    if (m_options.verify && (m_options.checkChanges ? counted : result.changed))
        verified = std::async(std::launch::async, [&] { return verifyNow(where, &auditFailed); });
    if (m_options.checkChanges && (counted || m_options.auditMutations)) {
        HLO_ASSIGN_OR_RETURN(std::shared_ptr<const std::string> now, printNow(where));
        const bool textChanged = *now != *m_text;
        if (textChanged && !counted)
            return Status(StatusCode::kInternal,
                          where + " changed the module without a counted mutation (a mutator of "
                                  "core/ir that does not call noteMutation)");
        if (textChanged && !result.changed)
            return Status(StatusCode::kInternal,
                          where + " reported no change but changed the module");
        result.changed = textChanged;
        if (textChanged) m_text = std::move(now);
        result.text = m_text;
    } else if (m_options.checkChanges) {
        // Nothing was mutated: the module is as it was, whatever the pass reported.
        result.changed = false;
        result.text = m_text;
    }
    for (PassInstrumentation* i : m_instrumentations) i->prepareAfterPass(info, m_module, result);
    if (verified.valid()) {
        Status status = verified.get();
        if (auditFailed) return status;
        if (!status.isOk())
            return Status(StatusCode::kInternal, where + " broke the module: " + status.toString());
    }
    for (PassInstrumentation* i : m_instrumentations)
        HLO_RETURN_IF_ERROR(i->afterPass(info, m_module, result));
    return Status::ok();
}

Status PipelineRunner::runUntil(int endIndex) {
    while (m_next < endIndex && !finished()) HLO_RETURN_IF_ERROR(runNext());
    return Status::ok();
}

Status PipelineRunner::runAll() { return runUntil(stepCount()); }

Status PipelineRunner::runThrough(std::string_view name) {
    for (int i = m_next; i < stepCount(); ++i)
        if (m_pipeline.steps[static_cast<size_t>(i)].pass == name) return runUntil(i + 1);
    HLO_ASSIGN_OR_RETURN(int index, findStep(m_pipeline, name));
    return runUntil(index + 1);
}

}  // namespace hloscope
