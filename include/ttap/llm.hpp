// LLM classification (the paper's second stage) over any OpenAI-compatible
// chat-completions endpoint, through libcurl (which only src/llm/ includes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ttap/rules.hpp"

namespace ttap {

struct LlmConfig {
  std::string url;          // e.g. http://127.0.0.1:8080/v1 (…/chat/completions is appended when missing)
  std::string model;        // e.g. gpt-4o-mini, llama3
  std::string api_key;      // from TTAP_LLM_API_KEY or OPENAI_API_KEY; never printed or logged
  double timeout_s = 60;    // per request, connect included
  int retries = 3;          // on 429/5xx/transport errors, with backoff, jitter and Retry-After
  int max_concurrent = 4;   // requests in flight at once
  std::string cache_dir;    // on-disk response cache keyed by the request; "" = off
  bool redact = false;      // replace user module and file names before sending
  int max_rounds = 3;       // iterative refinement: widen the window and ask again
  bool enabled() const { return !url.empty(); }
};

struct LlmVerdict {
  bool ok = false;                // false: the endpoint failed; `error` says why
  std::string error;
  std::vector<std::string> ids;   // catalog ids ("none" when the window is clean)
  double confidence = 0;
  std::string explanation;
  std::string fix;
  int rounds = 0;                 // requests made for this window (refinement)
  int64_t begin = 0, end = 0;     // the window finally judged (ns), widened or not
  bool cached = false;            // every answer came from the cache
};

struct LlmWindow {
  int64_t begin = 0;  // ns
  int64_t end = 0;
  std::vector<RuleFinding> evidence;  // rule findings in that range
};

class LlmClassifier {
 public:
  explicit LlmClassifier(LlmConfig config);
  ~LlmClassifier();
  // Classifies each window (in parallel, at most max_concurrent requests in flight). Never
  // throws for endpoint failures: the verdict says what went wrong. The widening rounds
  // rerun the rule engine on the wider range.
  std::vector<LlmVerdict> classify(const Trace& trace, const EventTree& tree, const RuleEngine& rules,
                                   const std::vector<LlmWindow>& windows);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ttap
