#include "compiler/pipeline/pipeline_session.h"

namespace hloscope {

PipelineSession::PipelineSession(std::unique_ptr<HloModule> module, SessionOptions options)
    : m_module(std::move(module)), m_recorder(std::move(options.peak)) {}

StatusOr<std::unique_ptr<PipelineSession>> PipelineSession::create(std::unique_ptr<HloModule> module,
                                                                   Pipeline pipeline,
                                                                   SessionOptions options) {
    if (!module) return invalidArgument("no module");
    const RunnerOptions runnerOptions = options.runner;
    std::unique_ptr<PipelineSession> session(new PipelineSession(std::move(module), std::move(options)));
    HLO_ASSIGN_OR_RETURN(session->m_runner,
                         PipelineRunner::create(*session->m_module, std::move(pipeline), runnerOptions));
    session->m_runner->addInstrumentation(&session->m_recorder);
    return session;
}

Status PipelineSession::start() { return m_runner->start(); }
Status PipelineSession::step() { return m_runner->runNext(); }
Status PipelineSession::runUntil(int endIndex) { return m_runner->runUntil(endIndex); }
Status PipelineSession::runThrough(std::string_view pass) { return m_runner->runThrough(pass); }
Status PipelineSession::runAll() { return m_runner->runAll(); }

void PipelineSession::addInstrumentation(PassInstrumentation* instrumentation) {
    m_runner->addInstrumentation(instrumentation);
}

}  // namespace hloscope
