// The run's LLM budget and circuit breaker, against a real chat server on loopback
// (tests/chat_endpoint.hpp) and `ttap analyze` on real traces: a hung endpoint must not
// cost every window of every trace its timeout times its retries, a slow one stops at
// --llm-budget, and either says so in one warning for the run.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "chat_endpoint.hpp"
#include "suite_support.hpp"
#include "ttap/llm.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::run_ttap;
using ttap::test::Clock;
using ttap::test::FakeEndpoint;

// Four real traces with GPU work: each has windows for the LLM.
std::vector<std::string> four_traces() {
  return {data_path("kineto_resnet50_v100_nw0.json.gz"), data_path("kineto_resnet50_v100_nw4.json.gz"),
          data_path("tracelens_vit_nsfw_h100.json.gz"), data_path("hta_alexnet_a100_small.json.gz")};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> run_warnings(const std::string& json) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  EXPECT_EQ(p.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 300);
  std::vector<std::string> out;
  for (auto w : doc["warnings"].get_array()) out.emplace_back(std::string_view(w));
  return out;
}

TEST(LlmBudget, BreakerOpensAfterConsecutiveTransportFailuresOnly) {
  ttap::LlmRunBudget b(0, 3);
  EXPECT_FALSE(b.closed());
  b.transport_failure("timeout");
  b.transport_failure("timeout");
  b.answered();  // an answer in between: the count starts again
  b.transport_failure("timeout");
  b.transport_failure("timeout");
  EXPECT_FALSE(b.closed());
  EXPECT_EQ(b.warning(), "");
  b.transport_failure("no answer within the 1.0 s timeout");
  EXPECT_TRUE(b.closed());
  const std::string why = b.closed_reason();
  EXPECT_NE(why.find("failed 3 times in a row (no answer within the 1.0 s timeout)"), std::string::npos) << why;
  EXPECT_NE(b.warning().find("1 LLM request not sent"), std::string::npos) << b.warning();
  b.answered();  // an open breaker stays open for the run
  EXPECT_TRUE(b.closed());
}

TEST(LlmBudget, HungEndpointCostsOneTimeoutNotOnePerWindowAndTrace) {
  FakeEndpoint server([&](const httplib::Request&, httplib::Response& res, int) {
    server.sleep(30);  // never answers within the client's timeout
    res.status = 504;
  });
  std::vector<std::string> args{"analyze", "--scorer", "rules", "--format", "json", "-j", "1", "--llm-url", server.url(),
                                "--llm-model", "m", "--llm-timeout", "1", "--llm-retries", "1"};
  for (const auto& t : four_traces()) args.push_back(t);
  const auto t0 = Clock::now();
  const ProcResult r = run_ttap(args, {"TTAP_LLM_API_KEY=sk-test"});  // a key, so the only warning is the budget's
  const double seconds = ttap::test::seconds_since(t0);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  // Four windows go out at once (--llm-concurrency 4), time out together and open the
  // breaker: no retries, no requests for the other 16 windows. Before the breaker: 40
  // requests and over 20 s.
  EXPECT_LE(server.requests(), 4);
  EXPECT_GE(server.requests(), 3);
  EXPECT_LT(seconds, 15.0);
  // One warning on stderr for the run, and one in the report.
  EXPECT_EQ(count(r.err, "warning:"), 1u) << r.err;
  EXPECT_NE(r.err.find("stopped asking it"), std::string::npos) << r.err;
  const auto w = run_warnings(r.out);
  ASSERT_EQ(w.size(), 1u) << r.out.substr(0, 500);
  EXPECT_NE(w[0].find("LLM requests not sent"), std::string::npos) << w[0];
  // Only the trace whose windows were really sent carries a per-trace note.
  EXPECT_EQ(count(r.out, "LLM unavailable for"), 1u);
}

TEST(LlmBudget, SlowEndpointStopsAtTheRunBudget) {
  FakeEndpoint server([&](const httplib::Request&, httplib::Response& res, int) {
    server.sleep(0.4);
    res.set_content(ttap::test::completion(ttap::test::verdict_json("[\"dataloader_stall\"]", 0.9)), "application/json");
  });
  std::vector<std::string> args{"analyze", "--scorer", "rules", "--format", "json", "-j", "1", "--llm-url", server.url(),
                                "--llm-model", "m", "--llm-concurrency", "1", "--llm-budget", "1"};
  for (const auto& t : four_traces()) args.push_back(t);
  const ProcResult r = run_ttap(args, {"TTAP_LLM_API_KEY=sk-test"});  // a key, so the only warning is the budget's
  ASSERT_EQ(r.exit_code, 1) << r.err;
  // 20 windows at 0.4 s each would take 8 s; the budget (which counts from the start of the
  // run, trace loading included) lets at most three through.
  EXPECT_LE(server.requests(), 3);
  EXPECT_EQ(count(r.err, "warning:"), 1u) << r.err;
  EXPECT_NE(r.err.find("LLM budget of 1 s for this run (--llm-budget) is spent"), std::string::npos) << r.err;
  const auto w = run_warnings(r.out);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("--llm-budget"), std::string::npos);
}

}  // namespace
