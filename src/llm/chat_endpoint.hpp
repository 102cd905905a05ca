// One question to the endpoint, answered: the cache first, then POSTs with retries
// (exponential backoff with jitter, Retry-After honored) on 429, 5xx and transport errors.
// Client errors (other 4xx) and answers that fail validation are not retried: asking the
// same thing again at temperature 0 gives the same wrong thing.
#pragma once

#include <memory>
#include <string>

#include "response_cache.hpp"
#include "ttap/llm.hpp"

namespace ttap::llm {

struct ChatResult {
  LlmAnswer answer;  // answer.ok false: answer.error says why (never mentions the key)
  int attempts = 0;  // HTTP requests made (0 when the cache answered)
  bool cached = false;
};

class ChatEndpoint {
 public:
  explicit ChatEndpoint(const LlmConfig& config);
  ChatResult ask(const std::string& body) const;
  // Longest one ask() can take: every attempt's timeout plus every wait between them.
  double worst_case_seconds() const;

 private:
  // `text` with the API key blanked out, for anything shown or logged.
  std::string scrub(std::string text) const;
  LlmConfig config_;
  std::shared_ptr<LlmRunBudget> budget_;  // config_.run_budget, or one of its own
  std::string endpoint_;
  ResponseCache cache_;
};

}  // namespace ttap::llm
