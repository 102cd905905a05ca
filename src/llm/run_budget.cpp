// LlmRunBudget: the run's deadline and circuit breaker (see ttap/llm.hpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <algorithm>
#include <limits>
#include <mutex>

#include "ttap/llm.hpp"

namespace ttap {

struct LlmRunBudget::State {
  using Clock = std::chrono::steady_clock;
  double seconds = 0;
  Clock::time_point deadline;
  int max_failures = 0;
  std::mutex mu;
  int consecutive = 0;
  std::string breaker_error;  // the failure that opened the breaker
  bool open = false;          // the breaker: no more requests
  std::string stopped;        // why the first request was refused; "" while none was
  size_t refused = 0;         // requests not sent
};

LlmRunBudget::LlmRunBudget(double seconds, int max_failures) : s_(std::make_unique<State>()) {
  s_->seconds = seconds;
  s_->deadline = State::Clock::now() + std::chrono::duration_cast<State::Clock::duration>(std::chrono::duration<double>(seconds));
  s_->max_failures = std::max(1, max_failures);
}

LlmRunBudget::~LlmRunBudget() = default;

double LlmRunBudget::seconds_left() const {
  if (s_->seconds <= 0) return std::numeric_limits<double>::infinity();
  return std::chrono::duration<double>(s_->deadline - State::Clock::now()).count();
}

bool LlmRunBudget::closed() const {
  std::lock_guard lock(s_->mu);
  return s_->open || seconds_left() <= 0;
}

std::string LlmRunBudget::closed_reason() const {
  std::string why;
  bool first = false;
  {
    std::lock_guard lock(s_->mu);
    if (s_->open)
      why = fmt::format("the LLM endpoint failed {} times in a row ({}), so ttap stopped asking it", s_->max_failures,
                        s_->breaker_error);
    else if (seconds_left() <= 0)
      why = fmt::format("the LLM budget of {:g} s for this run (--llm-budget) is spent", s_->seconds);
    if (why.empty()) return why;
    ++s_->refused;
    first = s_->stopped.empty();
    if (first) s_->stopped = why;
  }
  // Said once for the run, when it first stops a request; not once per window or trace.
  if (first) spdlog::warn("{}; the remaining windows are classified by the rules alone", why);
  return why;
}

void LlmRunBudget::transport_failure(const std::string& error) {
  std::lock_guard lock(s_->mu);
  if (!s_->open && ++s_->consecutive >= s_->max_failures) {
    s_->open = true;
    s_->breaker_error = error;
  }
}

void LlmRunBudget::answered() {
  std::lock_guard lock(s_->mu);
  if (!s_->open) s_->consecutive = 0;
}

std::string LlmRunBudget::warning() const {
  std::lock_guard lock(s_->mu);
  if (s_->stopped.empty()) return "";
  return fmt::format("{}; {} LLM request{} not sent, those windows were classified by the rules alone", s_->stopped,
                     s_->refused, s_->refused == 1 ? "" : "s");
}

}  // namespace ttap
