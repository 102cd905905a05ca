// LLM classification (the paper's second stage) over any OpenAI-compatible
// chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama), through libcurl
// (which only src/llm/ includes).
//
// One window, one conversation: the catalog's definitions (system message), the window's
// condensed context and the rule evidence (user message) go out with a strict JSON schema
// for the answer; the answer is validated against the catalog. When the model says the
// window cuts the pattern off, or answers with less than `min_confidence`, the window is
// doubled around its centre and asked again (TorchTraceAP's iterative refinement), at most
// `max_rounds` requests per window.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ttap/rules.hpp"

namespace ttap {

// What one run may spend on the LLM, shared by the classifiers of all its traces: a
// wall-clock budget, and a circuit breaker that stops asking after `max_failures`
// consecutive transport failures (a hung or dead endpoint). Without them a hung endpoint
// costs every window of every trace its timeout times its retries. Thread-safe.
class LlmRunBudget {
 public:
  LlmRunBudget(double seconds, int max_failures);  // seconds <= 0: no time limit
  ~LlmRunBudget();
  // Seconds left of the budget (<= 0 once spent).
  double seconds_left() const;
  // No request may go out (breaker open or budget spent).
  bool closed() const;
  // "" while requests may go out; else why not, one sentence, and the request counts as
  // refused (the first refusal logs the run's one warning).
  std::string closed_reason() const;
  void transport_failure(const std::string& error);
  void answered();  // an HTTP response came back: the endpoint is there
  // The run's one warning, once a request was refused: why, and how many were; else "".
  std::string warning() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

struct LlmConfig {
  std::string url;          // e.g. http://127.0.0.1:8080/v1 (…/chat/completions is appended when missing)
  std::string model;        // e.g. gpt-4o-mini, llama3
  std::string api_key;      // from TTAP_LLM_API_KEY or OPENAI_API_KEY; never printed or logged
  double timeout_s = 60;    // per request, connect included
  double connect_timeout_s = 10;  // per request, capped at timeout_s
  int retries = 3;          // on 429/5xx/transport errors, with backoff, jitter and Retry-After
  double backoff_s = 1;     // first retry delay; doubles each retry, jittered to [1/2, 1] of it
  double max_retry_after_s = 60;  // a Retry-After longer than this ends the retries (error)
  int max_concurrent = 4;   // requests in flight at once
  std::string cache_dir;    // on-disk response cache keyed by the request; "" = off
  bool redact = false;      // replace user module and file names before sending
  int max_rounds = 3;       // iterative refinement: widen the window and ask again
  double min_confidence = 0.5;  // an answer below this counts as unsure and is refined
  double budget_s = 0;      // wall clock for the whole run (every trace), then the rules alone; 0 = no limit
                            // (`ttap analyze` defaults to 600)
  int breaker_failures = 3; // consecutive transport failures that stop all further requests
  // Shared by every copy of this config (one per trace); made from budget_s and
  // breaker_failures by the first endpoint that finds it empty.
  std::shared_ptr<LlmRunBudget> run_budget;
  bool enabled() const { return !url.empty(); }
};

struct LlmVerdict {
  bool ok = false;                // false: the endpoint failed; `error` says why
  std::string error;              // when ok: a refinement request that failed (the narrower
                                  // window's answer stands), else empty
  std::vector<std::string> ids;   // catalog ids ("none" when the window is clean)
  double confidence = 0;
  std::string explanation;
  std::string fix;
  bool needs_more_context = false;  // the last answer still said the window cuts the pattern off
  int rounds = 0;                 // requests made for this window (refinement)
  int64_t begin = 0, end = 0;     // the window finally judged (ns), widened or not
  bool cached = false;            // every answer came from the cache
  bool not_sent = false;          // failed without a request: the run's LLM budget or breaker stopped it
};

struct LlmWindow {
  int64_t begin = 0;  // ns
  int64_t end = 0;
  std::vector<RuleFinding> evidence;  // rule findings in that range
};

// The rule findings for [begin, end) (ns), asked again for each widened window.
using LlmEvidenceFn = std::function<std::vector<RuleFinding>(int64_t begin, int64_t end)>;

class LlmClassifier {
 public:
  explicit LlmClassifier(LlmConfig config);
  ~LlmClassifier();
  // Classifies each window (in parallel, at most max_concurrent requests in flight). Never
  // throws for endpoint failures: the verdict says what went wrong. The widening rounds
  // rerun the rule engine on the wider range.
  std::vector<LlmVerdict> classify(const Trace& trace, const EventTree& tree, const RuleEngine& rules,
                                   const std::vector<LlmWindow>& windows);
  // The same with the rule engine behind a function (calls are serialized, never
  // concurrent), so the classifier does not depend on how evidence is made.
  std::vector<LlmVerdict> classify(const Trace& trace, const EventTree& tree, const LlmEvidenceFn& evidence,
                                   const std::vector<LlmWindow>& windows);
  // Longest a classify() call can take per window and round: every attempt's timeout plus
  // every backoff at its longest (Retry-After is capped by max_retry_after_s).
  double worst_case_seconds_per_round() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- Building blocks (used by LlmClassifier; public so they can be tested alone) --------

// Replaces user code names with stable placeholders: python_function files that are not
// PyTorch's, the Python standard library's or a well-known public package's become
// user_file_N.py (N in order of first appearance in the trace, so the same trace always
// gives the same text and the cache still hits), functions defined in them user_fn_N,
// and nn.Module classes whose forward lives in such a file UserModule_N.
class LlmRedactor {
 public:
  LlmRedactor() = default;
  explicit LlmRedactor(const Trace& trace, const EventTree& tree);
  std::string apply(std::string_view text) const;
  size_t size() const { return files_.size() + identifiers_.size(); }

 private:
  void add_file(const std::string& path);
  void add_identifier(const std::string& name, const char* prefix, int& counter);
  std::vector<std::pair<std::string, std::string>> files_;  // path -> placeholder, longest first
  std::unordered_map<std::string, std::string> identifiers_;  // function / class -> placeholder
  int file_count_ = 0, function_count_ = 0, module_count_ = 0;
};

// The system message: what to do, the catalog's definitions, the answer's shape.
std::string llm_system_prompt();
// The first event's start (ns): prompts give times from here, so they read as "+12.5 ms".
int64_t llm_trace_origin(const Trace& trace);
// The condensed context of [begin, end) (ns): time range, GPU busy/idle and copies, launch
// figures, the longest events with durations and launch delays, a tree excerpt. At most
// kLlmContextChars characters.
inline constexpr size_t kLlmContextChars = 12000;
std::string llm_window_context(const Trace& trace, const EventTree& tree, int64_t begin, int64_t end,
                               int64_t origin);
// The rule findings as evidence lines, at most kLlmEvidenceChars characters.
inline constexpr size_t kLlmEvidenceChars = 6000;
std::string llm_evidence_text(const std::vector<RuleFinding>& findings, int64_t origin);
// The JSON body of one chat-completions request (temperature 0, strict json_schema).
std::string llm_request_body(std::string_view model, std::string_view system, std::string_view user);
// `url` ending in /chat/completions, appended when missing.
std::string llm_endpoint(std::string_view url);

struct LlmAnswer {
  bool ok = false;
  std::string error;  // why the answer was rejected ("schema error: ...", "malformed response: ...")
  std::vector<std::string> ids;
  double confidence = 0;
  std::string explanation;
  std::string fix;
  bool needs_more_context = false;
};
// Validates the answer text (message.content: JSON, possibly in a ```json fence).
LlmAnswer parse_llm_answer(std::string_view content);
// The answer in a whole chat-completions response body (choices[0].message.content).
LlmAnswer parse_llm_response(std::string_view response_body);

}  // namespace ttap
