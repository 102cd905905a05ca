// LlmClassifier: windows in parallel (one worker per allowed request in flight), each
// window asked, and while the answer is unsure or says the window cuts the pattern off,
// widened around its centre and asked again.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "chat_endpoint.hpp"
#include "text_format.hpp"
#include "ttap/llm.hpp"

namespace ttap {

struct LlmClassifier::Impl {
  LlmConfig config;
  llm::ChatEndpoint endpoint;
  std::string system_prompt = llm_system_prompt();
  explicit Impl(LlmConfig c) : config(std::move(c)), endpoint(config) {}
};

namespace {

// What one classify() call shares between its workers.
struct Run {
  const Trace& trace;
  const EventTree& tree;
  const LlmEvidenceFn& evidence;
  std::mutex evidence_mutex;  // the rule engine is asked from one thread at a time
  LlmRedactor redactor;
  int64_t origin = 0;         // first event start
  int64_t last = 0;           // last event end: windows never widen past the trace
};

std::string previous_round_note(const LlmVerdict& v, int round, int max_rounds, int64_t origin) {
  std::string ids;
  for (const auto& id : v.ids) ids += (ids.empty() ? "" : ", ") + id;
  return fmt::format(
      "\nThis is a wider view (request {} of at most {}). On the narrower window {} to {} the answer was [{}] with "
      "confidence {:.2f}{}; judge this wider window on its own.\n",
      round, max_rounds, llm::offset_text(v.begin, origin), llm::offset_text(v.end, origin), ids, v.confidence,
      v.needs_more_context ? ", saying the window cut the pattern off" : "");
}

}  // namespace

LlmClassifier::LlmClassifier(LlmConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
LlmClassifier::~LlmClassifier() = default;

double LlmClassifier::worst_case_seconds_per_round() const { return impl_->endpoint.worst_case_seconds(); }

std::vector<LlmVerdict> LlmClassifier::classify(const Trace& trace, const EventTree& tree, const LlmEvidenceFn& evidence,
                                                const std::vector<LlmWindow>& windows) {
  std::vector<LlmVerdict> verdicts(windows.size());
  if (windows.empty()) return verdicts;
  const LlmConfig& config = impl_->config;
  Run run{trace, tree, evidence, {}, {}, 0, 0};
  if (config.redact) run.redactor = LlmRedactor(trace, tree);
  run.origin = llm_trace_origin(trace);
  run.last = run.origin;
  for (size_t e = 0; e < trace.size(); ++e) run.last = std::max(run.last, trace.end(e));
  const int max_rounds = std::max(1, config.max_rounds);

  const auto classify_one = [&](size_t index) {
    const LlmWindow& window = windows[index];
    LlmVerdict& verdict = verdicts[index];
    verdict.begin = window.begin;
    verdict.end = window.end;
    if (window.end <= window.begin) {
      verdict.error = "empty window (end is not after begin)";
      return;
    }
    int64_t begin = window.begin, end = window.end;
    std::vector<RuleFinding> findings = window.evidence;
    LlmVerdict previous;
    bool all_cached = true;
    for (int round = 1; round <= max_rounds; ++round) {
      std::string user = llm_window_context(trace, tree, begin, end, run.origin);
      user += '\n';
      user += llm_evidence_text(findings, run.origin);
      if (round > 1) user += previous_round_note(previous, round, max_rounds, run.origin);
      if (config.redact) user = run.redactor.apply(user);
      const llm::ChatResult asked = impl_->endpoint.ask(llm_request_body(config.model, impl_->system_prompt, user));
      verdict.rounds = round;
      all_cached = all_cached && asked.cached;
      if (!asked.answer.ok) {
        if (round == 1) {
          verdict.ok = false;
          verdict.error = asked.answer.error;
          verdict.not_sent = asked.attempts == 0;
        } else {
          // The narrower window's answer stands; say why it was not refined.
          verdict.error = fmt::format("refinement request {} failed: {}", round, asked.answer.error);
        }
        break;
      }
      const LlmAnswer& a = asked.answer;
      verdict.ok = true;
      verdict.error.clear();
      verdict.ids = a.ids;
      verdict.confidence = a.confidence;
      verdict.explanation = a.explanation;
      verdict.fix = a.fix;
      verdict.needs_more_context = a.needs_more_context;
      verdict.begin = begin;
      verdict.end = end;
      verdict.cached = all_cached;
      spdlog::debug("llm: window {} [{} .. {}] request {}: [{}] confidence {:.2f}{}{}", index, llm::offset_text(begin, run.origin),
                    llm::offset_text(end, run.origin), round, fmt::join(a.ids, ", "), a.confidence, a.needs_more_context ? ", needs more context" : "", asked.cached ? " (cached)" : "");
      if (!a.needs_more_context && a.confidence >= config.min_confidence) break;
      if (round == max_rounds) break;
      // Twice as wide around the same centre, within the trace.
      const int64_t width = end - begin;
      const int64_t centre = begin + width / 2;
      const int64_t wider_begin = std::max(run.origin, centre - width);
      const int64_t wider_end = std::min(run.last, centre + width);
      if (wider_begin >= begin && wider_end <= end) break;  // already the whole trace
      begin = std::min(begin, wider_begin);
      end = std::max(end, wider_end);
      previous = verdict;
      std::lock_guard lock(run.evidence_mutex);
      findings = run.evidence ? run.evidence(begin, end) : std::vector<RuleFinding>{};
    }
  };

  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < windows.size(); i = next++) {
      try {
        classify_one(i);
      } catch (const std::exception& e) {
        // The rule engine or an allocation failed: this window fails, the others go on.
        // An answer already given for the narrower window stands.
        verdicts[i].error = std::string(verdicts[i].ok ? "refinement failed: " : "classification failed: ") + e.what();
      }
    }
  };
  const size_t workers = std::min<size_t>(std::max(1, config.max_concurrent), windows.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return verdicts;
}

}  // namespace ttap
