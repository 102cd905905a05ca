#include "chat_endpoint.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "http_post.hpp"

namespace ttap::llm {

namespace {

constexpr double kMaxBackoffS = 30;  // the exponential part stops growing here

double jittered_backoff(double base_s, int retry) {
  // Full exponential step, jittered to [1/2, 1] of it, so clients that failed together do
  // not come back together.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const double step = std::min(kMaxBackoffS, base_s * std::pow(2.0, retry));
  return step * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
}

// The server's own message from an error body ({"error":{"message":...}}), or its start.
std::string error_detail(const std::string& body) {
  const LlmAnswer parsed = parse_llm_response(body);
  if (parsed.error.starts_with("endpoint error: ")) return parsed.error.substr(16);
  std::string s = body.substr(0, 200);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

}  // namespace

ChatEndpoint::ChatEndpoint(const LlmConfig& config)
    : config_(config),
      budget_(config.run_budget ? config.run_budget : std::make_shared<LlmRunBudget>(config.budget_s, config.breaker_failures)),
      endpoint_(llm_endpoint(config.url)),
      cache_(config.cache_dir) {}

std::string ChatEndpoint::scrub(std::string text) const {
  const std::string& key = config_.api_key;
  if (key.empty()) return text;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) text.replace(at, key.size(), "[key]");
  return text;
}

double ChatEndpoint::worst_case_seconds() const {
  const int retries = std::max(0, config_.retries);
  double total = (retries + 1) * config_.timeout_s;
  for (int r = 0; r < retries; ++r)
    total += std::max(config_.max_retry_after_s, std::min(kMaxBackoffS, config_.backoff_s * std::pow(2.0, r)));
  return total;
}

ChatResult ChatEndpoint::ask(const std::string& body) const {
  ChatResult result;
  if (auto stored = cache_.get(endpoint_, config_.model, body)) {
    result.answer = parse_llm_response(*stored);
    if (result.answer.ok) {
      result.cached = true;
      return result;
    }
    spdlog::debug("llm: cached response rejected ({}); asking again", result.answer.error);
  }
  HttpPost post{endpoint_, body, config_.api_key, config_.timeout_s, config_.connect_timeout_s};
  const int retries = std::max(0, config_.retries);
  std::string last_error;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    if (std::string why = budget_->closed_reason(); !why.empty()) {
      last_error = why;
      break;
    }
    // No request outlives the run's budget.
    post.timeout_s = std::min(config_.timeout_s, std::max(0.1, budget_->seconds_left()));
    post.connect_timeout_s = std::min(config_.connect_timeout_s, post.timeout_s);
    const auto started = std::chrono::steady_clock::now();
    const HttpResponse response = http_post_json(post);
    ++result.attempts;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    bool retryable = false;
    if (!response.transport_error.empty()) {
      last_error = response.timed_out
                       ? fmt::format("no answer within the {:.1f} s timeout ({})", post.timeout_s, response.transport_error)
                       : "transport error: " + response.transport_error;
      retryable = true;
      budget_->transport_failure(last_error);
    } else if (response.status >= 200 && response.status < 300) {
      budget_->answered();
      result.answer = parse_llm_response(response.body);
      spdlog::debug("llm: POST {} -> HTTP {} in {:.3f} s{}", scrub(endpoint_), response.status, seconds,
                    result.answer.ok ? "" : ": " + scrub(result.answer.error));
      if (result.answer.ok) cache_.put(endpoint_, config_.model, body, response.body);
      result.answer.error = scrub(result.answer.error);
      return result;
    } else {
      budget_->answered();
      last_error = fmt::format("HTTP {}: {}", response.status, error_detail(response.body));
      retryable = response.status == 429 || response.status >= 500;
    }
    last_error = scrub(last_error);
    spdlog::debug("llm: POST {} attempt {} of {} failed in {:.3f} s: {}", scrub(endpoint_), attempt + 1, retries + 1,
                  seconds, last_error);
    if (!retryable || attempt == retries) break;
    double wait = jittered_backoff(config_.backoff_s, attempt);
    if (response.retry_after_s >= 0) {
      if (response.retry_after_s > config_.max_retry_after_s) {
        last_error += fmt::format(" (the server asked to retry after {:.0f} s, more than the {:.0f} s allowed)",
                                  response.retry_after_s, config_.max_retry_after_s);
        break;
      }
      wait = std::max(wait, response.retry_after_s);
    }
    if (budget_->closed()) continue;  // the next pass says why, without waiting
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wait, std::max(0.0, budget_->seconds_left()))));
  }
  result.answer = LlmAnswer{};
  result.answer.error = result.attempts > 1 ? fmt::format("{} (after {} attempts)", last_error, result.attempts) : last_error;
  return result;
}

}  // namespace ttap::llm
