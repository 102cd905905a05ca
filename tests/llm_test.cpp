// The LLM stage against a real HTTP server on loopback (cpp-httplib, in a thread) that
// speaks the chat-completions protocol and injects faults, on windows of real traces.
#include "chat_endpoint.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "json_support.hpp"
#include "test_util.hpp"
#include "ttap/catalog.hpp"
#include "ttap/llm.hpp"
#include "ttap/load.hpp"

namespace {

using namespace ttap::test;

// A real trace and one step of it as the window.
struct TraceFixture {
  ttap::Trace trace;
  ttap::EventTree tree;
  explicit TraceFixture(const std::string& name) : trace(ttap::load_trace(data(name))), tree(ttap::EventTree::build(trace)) {}
  ttap::LlmWindow step_window(size_t i = 0) const {
    const ttap::Step& s = tree.steps().at(i);
    return {s.ts, s.end, {}};
  }
};

const TraceFixture& vit() {
  static const TraceFixture f("tracelens_vit_nsfw_h100.json.gz");
  return f;
}

ttap::LlmConfig config_for(const FakeEndpoint& server) {
  ttap::LlmConfig c;
  c.url = server.url();
  c.model = "test-model";
  c.api_key = "sk-test-0123456789abcdef";
  c.timeout_s = 2;
  c.connect_timeout_s = 1;
  c.retries = 2;
  c.backoff_s = 0.05;
  c.max_retry_after_s = 5;
  c.max_concurrent = 2;
  c.max_rounds = 1;
  return c;
}

ttap::LlmVerdict classify_one(const ttap::LlmConfig& config, ttap::LlmWindow window = vit().step_window()) {
  ttap::LlmClassifier classifier(config);
  auto verdicts = classifier.classify(vit().trace, vit().tree, ttap::LlmEvidenceFn{}, {window});
  return verdicts.at(0);
}

using ttap::test_json::parse;

std::string user_message(const std::string& body) {
  simdjson::dom::parser parser;
  std::string_view content;
  EXPECT_EQ(parse(parser, body)["messages"].at(1)["content"].get_string().get(content), simdjson::SUCCESS);
  return std::string(content);
}

// ---- Prompt and request ----------------------------------------------------------------

TEST(LlmPrompt, SystemPromptDefinesEveryCatalogId) {
  const std::string s = ttap::llm_system_prompt();
  for (const auto& p : ttap::catalog()) {
    EXPECT_NE(s.find("- " + std::string(p.id) + ": "), std::string::npos) << p.id;
    EXPECT_NE(s.find(std::string(p.signature)), std::string::npos) << p.id;
  }
  EXPECT_NE(s.find("needs_more_context"), std::string::npos);
}

TEST(LlmPrompt, RequestBodyAsksForStrictSchemaAtTemperatureZero) {
  const std::string body = ttap::llm_request_body("m\"odel", "sys", "user \x01 text \xff");
  simdjson::dom::parser parser;
  auto root = parse(parser, body);
  EXPECT_EQ(std::string_view(root["model"]), "m\"odel");
  EXPECT_EQ(int64_t(root["temperature"]), 0);
  EXPECT_EQ(std::string_view(root["messages"].at(0)["role"]), "system");
  EXPECT_EQ(std::string_view(root["messages"].at(1)["role"]), "user");
  // Invalid UTF-8 from a trace name must not make the body invalid JSON.
  EXPECT_EQ(std::string_view(root["messages"].at(1)["content"]), "user \x01 text \xef\xbf\xbd");
  EXPECT_EQ(std::string_view(root["response_format"]["type"]), "json_schema");
  auto schema = root["response_format"]["json_schema"];
  EXPECT_TRUE(bool(schema["strict"]));
  std::vector<std::string> required;
  for (auto r : schema["schema"]["required"].get_array()) required.emplace_back(std::string_view(r));
  EXPECT_EQ(required, (std::vector<std::string>{"ids", "confidence", "explanation", "fix", "needs_more_context"}));
  std::vector<std::string> ids;
  for (auto r : schema["schema"]["properties"]["ids"]["items"]["enum"].get_array()) ids.emplace_back(std::string_view(r));
  EXPECT_EQ(ids.size(), ttap::catalog().size() + 1);
  EXPECT_EQ(ids.front(), "none");
}

TEST(LlmPrompt, EndpointPathAppendedOnce) {
  EXPECT_EQ(ttap::llm_endpoint("http://h:1/v1"), "http://h:1/v1/chat/completions");
  EXPECT_EQ(ttap::llm_endpoint("http://h:1/v1/"), "http://h:1/v1/chat/completions");
  EXPECT_EQ(ttap::llm_endpoint("https://h/v1/chat/completions"), "https://h/v1/chat/completions");
}

TEST(LlmPrompt, WindowContextDescribesARealStep) {
  const auto& f = vit();
  const auto w = f.step_window();
  const int64_t origin = ttap::llm_trace_origin(f.trace);
  const std::string context = ttap::llm_window_context(f.trace, f.tree, w.begin, w.end, origin);
  EXPECT_LE(context.size(), ttap::kLlmContextChars);
  EXPECT_NE(context.find("GPU 0: busy"), std::string::npos) << context;
  EXPECT_NE(context.find("ProfilerStep#"), std::string::npos);
  EXPECT_NE(context.find("launch delay p50"), std::string::npos);
  EXPECT_NE(context.find("Tree excerpt"), std::string::npos);
  // The longest kernel starting in the window, found here from the columns, is listed.
  ttap::EventId longest = ttap::kNoEvent;
  for (ttap::EventId e : f.tree.gpu_events())
    if (f.trace.ts[e] >= w.begin && f.trace.ts[e] < w.end && (longest == ttap::kNoEvent || f.trace.dur[e] > f.trace.dur[longest]))
      longest = e;
  ASSERT_NE(longest, ttap::kNoEvent);
  EXPECT_NE(context.find(std::string(f.trace.name_of(longest).substr(0, 60))), std::string::npos) << context;
}

// The "Host outside every op" line: the share of the step during which no op, runtime call
// or DataLoader span ran on any thread of the process, checked against a brute-force pass
// over the raw event columns (no tree), on a GPU trace with Python frames and on a CPU-only
// run, whose GPU line says so.
double untraced_share_by_brute_force(const ttap::Trace& t, int64_t pid, int64_t b, int64_t e) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t i = 0; i < t.size(); ++i) {
    const ttap::Category c = t.category[i];
    if (c != ttap::Category::CpuOp && c != ttap::Category::CudaRuntime && c != ttap::Category::CudaDriver &&
        c != ttap::Category::DataLoader)
      continue;
    if (t.track_of(i).pid != pid || t.name_of(i).starts_with("ProfilerStep#")) continue;
    if (t.end(i) <= b || t.ts[i] >= e) continue;
    spans.emplace_back(std::max(t.ts[i], b), std::min(t.end(i), e));
  }
  std::sort(spans.begin(), spans.end());
  int64_t covered = 0, cursor = b;
  for (const auto& [s0, s1] : spans) {
    if (s1 <= cursor) continue;
    covered += s1 - std::max(s0, cursor);
    cursor = s1;
  }
  return 100.0 * static_cast<double>(e - b - covered) / static_cast<double>(e - b);
}

TEST(LlmPrompt, WindowContextMeasuresHostTimeOutsideEveryOp) {
  for (const char* name : {"tracelens_vit_nsfw_h100.json.gz", "hta_cpu_only.json.gz"}) {
    const TraceFixture f(name);
    ASSERT_FALSE(f.tree.steps().empty()) << name;
    const ttap::Step& s = f.tree.steps().at(f.tree.steps().size() / 2);
    const int64_t origin = ttap::llm_trace_origin(f.trace);
    const std::string context = ttap::llm_window_context(f.trace, f.tree, s.ts, s.end, origin);
    const double share = untraced_share_by_brute_force(f.trace, f.trace.track_of(s.event).pid, s.ts, s.end);
    const std::string expected = fmt::format("ProfilerStep#{} has ", s.number);
    const size_t at = context.find(expected);
    ASSERT_NE(at, std::string::npos) << name << "\n" << context;
    EXPECT_NE(context.find(fmt::format("({:.1f}%) of such time in all", share), at), std::string::npos)
        << name << " brute force " << share << "%\n" << context;
    // The window is the step, so its share is the step's.
    EXPECT_NE(context.find(fmt::format("({:.1f}%) of the window's step time", share)), std::string::npos) << context;
    const bool cpu_only = f.tree.gpu_events().empty();
    EXPECT_EQ(context.find("a CPU-only run") != std::string::npos, cpu_only) << name;
  }
}

TEST(LlmPrompt, WindowContextStaysBoundedOverAWholeTrace) {
  const TraceFixture f("tracelens_qwen05b_h100.json.gz");
  const int64_t origin = ttap::llm_trace_origin(f.trace);
  int64_t last = origin;
  for (size_t e = 0; e < f.trace.size(); ++e) last = std::max(last, f.trace.end(e));
  const std::string context = ttap::llm_window_context(f.trace, f.tree, origin, last, origin);
  EXPECT_LE(context.size(), ttap::kLlmContextChars);
  EXPECT_NE(context.find("Longest GPU events"), std::string::npos);
  // A window before the trace holds nothing, and says so.
  const std::string empty = ttap::llm_window_context(f.trace, f.tree, origin - 2'000'000, origin - 1'000'000, origin);
  EXPECT_NE(empty.find("no GPU activity"), std::string::npos) << empty;
}

TEST(LlmPrompt, EvidenceIsBounded) {
  std::vector<ttap::RuleFinding> findings(100);
  for (auto& f : findings) {
    f.id = "host_sync";
    f.confidence = 0.9;
    f.begin = 1'000'000;
    f.end = 4'000'000;
    f.cost = 3'000'000;
    f.evidence.assign(20, std::string(500, 'x'));
    f.fix = "keep the loss on the device";
  }
  const std::string text = ttap::llm_evidence_text(findings, 0);
  EXPECT_LE(text.size(), ttap::kLlmEvidenceChars);
  EXPECT_NE(text.find("host_sync: confidence 0.90"), std::string::npos);
  EXPECT_NE(text.find("more findings left out"), std::string::npos);
  EXPECT_NE(ttap::llm_evidence_text({}, 0).find("none"), std::string::npos);
}

// ---- Answer validation -----------------------------------------------------------------

TEST(LlmAnswer, AcceptsPlainAndFencedJson) {
  auto a = ttap::parse_llm_answer(verdict_json(R"(["host_sync","launch_bound","host_sync"])", 0.8));
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.ids, (std::vector<std::string>{"host_sync", "launch_bound"}));
  EXPECT_DOUBLE_EQ(a.confidence, 0.8);
  auto fenced = ttap::parse_llm_answer("Here it is:\n```json\n" + verdict_json(R"(["none"])", 1) + "\n```\n");
  ASSERT_TRUE(fenced.ok) << fenced.error;
  EXPECT_EQ(fenced.ids, std::vector<std::string>{"none"});
}

TEST(LlmAnswer, RejectsWhatTheSchemaForbids) {
  const std::pair<std::string, std::string> cases[] = {
      {verdict_json(R"(["made_up_id"])", 0.5), "unknown id \"made_up_id\""},
      {verdict_json(R"("host_sync")", 0.5), "\"ids\" is not an array"},
      {verdict_json(R"([])", 0.5), "\"ids\" is empty"},
      {verdict_json(R"(["none","host_sync"])", 0.5), "\"none\" given together"},
      {verdict_json(R"([3])", 0.5), "not a string"},
      {verdict_json(R"(["host_sync"])", 1.5), "outside [0, 1]"},
      {R"({"ids":["host_sync"],"confidence":"high","explanation":"","fix":"","needs_more_context":false})",
       "\"confidence\" is not a number"},
      {R"({"ids":["host_sync"],"confidence":0.5,"fix":"","needs_more_context":false})", "missing field \"explanation\""},
      {R"({"ids":["host_sync"],"confidence":0.5,"explanation":"","fix":"","needs_more_context":"no"})",
       "\"needs_more_context\" is not a boolean"},
      {"[1,2]", "not a JSON object"},
      {"I think it is host_sync.", "not JSON"},
  };
  for (const auto& [content, expected] : cases) {
    const auto a = ttap::parse_llm_answer(content);
    EXPECT_FALSE(a.ok) << content;
    EXPECT_NE(a.error.find("schema error"), std::string::npos) << a.error;
    EXPECT_NE(a.error.find(expected), std::string::npos) << content << " -> " << a.error;
  }
}

TEST(LlmAnswer, ReadsTheEnvelope) {
  EXPECT_TRUE(ttap::parse_llm_response(completion(verdict_json(R"(["none"])", 0.9))).ok);
  EXPECT_EQ(ttap::parse_llm_response(R"({"error":{"message":"model not found"}})").error, "endpoint error: model not found");
  EXPECT_NE(ttap::parse_llm_response(R"({"choices":[{"message":{"content":null,"refusal":"no"}}]})").error.find("refused"),
            std::string::npos);
  EXPECT_NE(ttap::parse_llm_response(R"({"choices":[]})").error.find("malformed response"), std::string::npos);
  EXPECT_NE(ttap::parse_llm_response("{\"choices\":[").error.find("malformed response: not JSON"), std::string::npos);
}

// ---- Redaction -------------------------------------------------------------------------

TEST(LlmRedact, ReplacesUserFilesAndKeepsLibraries) {
  const auto& f = vit();
  const ttap::LlmRedactor r(f.trace, f.tree);
  EXPECT_GT(r.size(), 0u);
  const std::string text =
      "moca/application/profile/profile_model.py(37): _profile_model > torch/nn/modules/linear.py(124): forward > "
      "aten::linear; transformers/models/vit/modeling_vit.py(117): forward; threading.py(1032): _bootstrap";
  const std::string out = r.apply(text);
  EXPECT_EQ(out.find("moca"), std::string::npos) << out;
  EXPECT_EQ(out.find("profile_model"), std::string::npos) << out;
  EXPECT_NE(out.find("user_file_"), std::string::npos) << out;
  EXPECT_NE(out.find("user_fn_"), std::string::npos) << out;
  for (const char* kept : {"torch/nn/modules/linear.py(124): forward", "aten::linear", "modeling_vit.py", "threading.py"})
    EXPECT_NE(out.find(kept), std::string::npos) << kept << " in " << out;
  // The same trace gives the same placeholders (so cached answers still match).
  EXPECT_EQ(ttap::LlmRedactor(f.trace, f.tree).apply(text), out);
}

TEST(LlmRedact, UserModulesFromTheirForwardFile) {
  // A user model (forward in train.py) and a torch module (forward in torch/nn/...).
  const std::string trace = R"json({"traceEvents":[
{"ph":"X","cat":"python_function","name":"train.py(10): <module>","pid":1,"tid":1,"ts":0,"dur":100,"args":{"Python id":1,"Python parent id":0}},
{"ph":"X","cat":"python_function","name":"nn.Module: SecretNet_0","pid":1,"tid":1,"ts":1,"dur":90,"args":{"Python id":2,"Python parent id":1}},
{"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1743): _call_impl","pid":1,"tid":1,"ts":2,"dur":80,"args":{"Python id":3,"Python parent id":2}},
{"ph":"X","cat":"python_function","name":"/home/alice/proj/secret_net.py(40): forward","pid":1,"tid":1,"ts":3,"dur":70,"args":{"Python id":4,"Python parent id":3}},
{"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":4,"dur":20,"args":{"Python id":5,"Python parent id":4}},
{"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1743): _call_impl","pid":1,"tid":1,"ts":5,"dur":18,"args":{"Python id":6,"Python parent id":5}},
{"ph":"X","cat":"python_function","name":"torch/nn/modules/linear.py(124): forward","pid":1,"tid":1,"ts":6,"dur":16,"args":{"Python id":7,"Python parent id":6}},
{"ph":"X","cat":"python_function","name":"/home/alice/proj/secret_net.py(55): mix_features","pid":1,"tid":1,"ts":30,"dur":10,"args":{"Python id":8,"Python parent id":4}}
]})json";
  const auto t = ttap::load_trace(ttap::test::temp_file("llm_modules.json", trace));
  const auto tree = ttap::EventTree::build(t);
  const ttap::LlmRedactor r(t, tree);
  const std::string out = r.apply(
      "nn.Module: SecretNet_0 > /home/alice/proj/secret_net.py(55): mix_features > nn.Module: Linear_0; "
      "code: train.py:10 in mix_features");
  for (const char* gone : {"SecretNet", "alice", "secret_net", "mix_features", "train.py"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone << " in " << out;
  EXPECT_NE(out.find("nn.Module: UserModule_1_0"), std::string::npos) << out;
  EXPECT_NE(out.find("nn.Module: Linear_0"), std::string::npos) << out;
}

// ---- The endpoint, good and faulty -----------------------------------------------------

TEST(LlmEndpoint, GoodAnswerWithTheKeyInTheHeader) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content(completion(verdict_json(R"(["host_sync"])", 0.85)), "application/json");
  });
  const auto config = config_for(server);
  const auto v = classify_one(config);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.ids, std::vector<std::string>{"host_sync"});
  EXPECT_DOUBLE_EQ(v.confidence, 0.85);
  EXPECT_EQ(v.fix, "keep the loss on the device");
  EXPECT_EQ(v.rounds, 1);
  EXPECT_FALSE(v.cached);
  const auto got = server.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].authorization, "Bearer " + config.api_key);
  simdjson::dom::parser parser;
  auto body = parse(parser, got[0].body);
  EXPECT_EQ(std::string_view(body["model"]), "test-model");
  EXPECT_LE(got[0].body.size(), 40'000u);  // catalog + bounded context + bounded evidence
  EXPECT_NE(user_message(got[0].body).find("GPU 0: busy"), std::string::npos);
}

TEST(LlmEndpoint, KeyReachesTheServerButNoLogOrError) {
  // The server echoes the key in its error, as some providers do; three attempts fail.
  std::string key = "sk-secret-key-42-abcdef";
  FakeEndpoint server([&](const httplib::Request&, httplib::Response& res, int) {
    res.status = 500;
    res.set_content(R"({"error":{"message":"upstream failed for key )" + key + R"("}})", "application/json");
  });
  auto config = config_for(server);
  config.api_key = key;
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  auto capture = std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  capture->set_level(spdlog::level::trace);
  spdlog::set_default_logger(capture);
  const auto v = classify_one(config);
  spdlog::set_default_logger(previous);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("HTTP 500"), std::string::npos) << v.error;
  EXPECT_EQ(v.error.find(key), std::string::npos) << v.error;
  EXPECT_NE(log.str().find("HTTP 500"), std::string::npos) << "the attempts were logged";
  EXPECT_EQ(log.str().find(key), std::string::npos) << log.str();
  for (const auto& r : server.received()) {
    EXPECT_EQ(r.authorization, "Bearer " + key);
    EXPECT_EQ(r.body.find(key), std::string::npos) << "the key is a header, not body text";
  }
}

TEST(LlmEndpoint, SlowServerTimesOutWithinTheBound) {
  FakeEndpoint server([&](const httplib::Request&, httplib::Response& res, int) {
    server.sleep(5);
    res.set_content(completion(verdict_json(R"(["none"])", 1)), "application/json");
  });
  auto config = config_for(server);
  config.timeout_s = 0.4;
  config.retries = 1;
  ttap::LlmClassifier classifier(config);
  const auto start = Clock::now();
  const auto v = classifier.classify(vit().trace, vit().tree, ttap::LlmEvidenceFn{}, {vit().step_window()}).at(0);
  const double took = seconds_since(start);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("no answer within the 0.4 s timeout"), std::string::npos) << v.error;
  EXPECT_EQ(server.requests(), 2);
  EXPECT_GE(took, 0.8);
  EXPECT_LE(took, classifier.worst_case_seconds_per_round() + 0.5);
  EXPECT_LE(took, 1.6);  // 2 x 0.4 s + one short backoff: Retry-After's cap is not spent
}

TEST(LlmEndpoint, RetryAfterIsHonored) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    if (n == 1) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      res.set_content(R"({"error":{"message":"rate limited"}})", "application/json");
      return;
    }
    res.set_content(completion(verdict_json(R"(["launch_bound"])", 0.7)), "application/json");
  });
  const auto v = classify_one(config_for(server));
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.ids, std::vector<std::string>{"launch_bound"});
  const auto got = server.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_GE(std::chrono::duration<double>(got[1].at - got[0].at).count(), 0.95);
}

TEST(LlmEndpoint, RetryAfterBeyondTheCapEndsRetries) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 429;
    res.set_header("Retry-After", "120");
    res.set_content(R"({"error":{"message":"quota exhausted"}})", "application/json");
  });
  const auto start = Clock::now();
  const auto v = classify_one(config_for(server));
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("HTTP 429: quota exhausted"), std::string::npos) << v.error;
  EXPECT_NE(v.error.find("retry after 120 s"), std::string::npos) << v.error;
  EXPECT_EQ(server.requests(), 1);
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(LlmEndpoint, ServerErrorThenSuccessIsRetried) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    if (n == 1) {
      res.status = 500;
      res.set_content("internal error", "text/plain");
      return;
    }
    res.set_content(completion(verdict_json(R"(["pageable_memcpy"])", 0.9)), "application/json");
  });
  const auto v = classify_one(config_for(server));
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.ids, std::vector<std::string>{"pageable_memcpy"});
  EXPECT_EQ(server.requests(), 2);
}

TEST(LlmEndpoint, PersistentServerErrorGivesUpAfterTheRetries) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 503;
    res.set_content("overloaded", "text/plain");
  });
  const auto config = config_for(server);
  const auto v = classify_one(config);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("HTTP 503: overloaded (after 3 attempts)"), std::string::npos) << v.error;
  EXPECT_EQ(server.requests(), config.retries + 1);
}

TEST(LlmEndpoint, ClientErrorIsNotRetried) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 401;
    res.set_content(R"({"error":{"message":"invalid api key"}})", "application/json");
  });
  const auto v = classify_one(config_for(server));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.error, "HTTP 401: invalid api key");
  EXPECT_EQ(server.requests(), 1);
}

TEST(LlmEndpoint, MalformedJsonIsAClearError) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content("{\"choices\": [ {\"message\": ", "application/json");
  });
  const auto v = classify_one(config_for(server));
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("malformed response: not JSON"), std::string::npos) << v.error;
  EXPECT_EQ(server.requests(), 1);
}

TEST(LlmEndpoint, TruncatedBodyIsATransportErrorAndRetried) {
  // Content-Length promises 4096 bytes; 20 come, then the connection closes.
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content_provider(4096, "application/json", [](size_t, size_t, httplib::DataSink& sink) {
      sink.write("{\"choices\":[{\"messa", 19);
      return false;
    });
  });
  const auto config = config_for(server);
  const auto start = Clock::now();
  const auto v = classify_one(config);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("transport error"), std::string::npos) << v.error;
  EXPECT_EQ(server.requests(), config.retries + 1);
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(LlmEndpoint, WrongSchemaAndUnknownIdAreSchemaErrors) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    res.set_content(completion(n == 1 ? R"({"ids":"host_sync","confidence":0.9})" : verdict_json(R"(["slow_gpu"])", 0.9)),
                    "application/json");
  });
  const auto wrong = classify_one(config_for(server));
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.error.find("schema error: \"ids\" is not an array"), std::string::npos) << wrong.error;
  const auto unknown = classify_one(config_for(server));
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.error.find("schema error: unknown id \"slow_gpu\""), std::string::npos) << unknown.error;
  EXPECT_EQ(server.requests(), 2);  // a bad answer is not asked again
}

TEST(LlmEndpoint, NothingListeningIsATransportError) {
  // A loopback port that was just free: bound, read, closed.
  int port = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    ::close(fd);
  }
  ttap::LlmConfig config;
  config.url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  config.model = "m";
  config.retries = 1;
  config.backoff_s = 0.05;
  config.timeout_s = 1;
  const auto start = Clock::now();
  const auto v = classify_one(config);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find("transport error"), std::string::npos) << v.error;
  EXPECT_NE(v.error.find("after 2 attempts"), std::string::npos) << v.error;
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(LlmEndpoint, CacheServesARerunWithoutARequest) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content(completion(verdict_json(R"(["alloc_churn"])", 0.75)), "application/json");
  });
  const std::string dir = temp_dir() + "/llm-cache-rerun";
  std::filesystem::remove_all(dir);
  auto config = config_for(server);
  config.cache_dir = dir;
  const auto first = classify_one(config);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(server.requests(), 1);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().extension(), ".llm") << "no temporary file is left behind";
  }
  EXPECT_EQ(files, 1u);

  config.api_key = "sk-another-key";  // the key is not part of the cache key
  const auto rerun = classify_one(config);
  ASSERT_TRUE(rerun.ok) << rerun.error;
  EXPECT_TRUE(rerun.cached);
  EXPECT_EQ(rerun.ids, first.ids);
  EXPECT_EQ(rerun.explanation, first.explanation);
  EXPECT_EQ(server.requests(), 1);

  config.model = "other-model";  // the model is
  EXPECT_FALSE(classify_one(config).cached);
  EXPECT_EQ(server.requests(), 2);
}

TEST(LlmEndpoint, FailuresAreNotCached) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    res.set_content(completion(n == 1 ? R"({"ids":[]})" : verdict_json(R"(["none"])", 0.9)), "application/json");
  });
  auto config = config_for(server);
  config.cache_dir = temp_dir() + "/llm-cache-failures";
  EXPECT_FALSE(classify_one(config).ok);
  const auto second = classify_one(config);
  EXPECT_TRUE(second.ok) << second.error;
  EXPECT_FALSE(second.cached);
  EXPECT_EQ(server.requests(), 2);
}

TEST(LlmEndpoint, RedactionRemovesNamesFromTheBytesSent) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content(completion(verdict_json(R"(["host_sync"])", 0.9)), "application/json");
  });
  // Evidence pointing at the user's code, as the rule engine writes it.
  ttap::LlmWindow window = vit().step_window();
  ttap::RuleFinding finding;
  finding.id = "host_sync";
  finding.confidence = 0.8;
  finding.begin = window.begin;
  finding.end = window.end;
  finding.evidence = {"cudaStreamSynchronize 2.1 ms under moca/library/profiling/profile.py(34): run_torch_profiler"};
  finding.locations = {{"moca/application/profile/profile_model.py", 37, "_profile_model"}};
  window.evidence = {finding};
  auto config = config_for(server);
  const auto plain = classify_one(config, window);
  ASSERT_TRUE(plain.ok) << plain.error;
  config.redact = true;
  const auto redacted = classify_one(config, window);
  ASSERT_TRUE(redacted.ok) << redacted.error;
  const auto got = server.received();
  ASSERT_EQ(got.size(), 2u);
  // Without redaction the names go out (so the check below can fail) ...
  EXPECT_NE(got[0].body.find("moca/application/profile/profile_model.py"), std::string::npos);
  // ... with it, none of them do.
  for (const char* name : {"moca", "profile_model.py", "_profile_model", "run_torch_profiler"})
    EXPECT_EQ(got[1].body.find(name), std::string::npos) << name;
  EXPECT_NE(got[1].body.find("user_file_"), std::string::npos);
  EXPECT_NE(got[1].body.find("aten::"), std::string::npos) << "PyTorch's names stay";
}

TEST(LlmEndpoint, ConcurrencyNeverExceedsTheCap) {
  FakeEndpoint server([&](const httplib::Request&, httplib::Response& res, int) {
    server.sleep(0.15);
    res.set_content(completion(verdict_json(R"(["none"])", 0.9)), "application/json");
  });
  auto config = config_for(server);
  config.max_concurrent = 3;
  const auto& f = vit();
  std::vector<ttap::LlmWindow> windows;
  const auto w = f.step_window();
  for (int i = 0; i < 9; ++i) windows.push_back({w.begin + i * 1000, w.end + i * 1000, {}});  // 9 distinct requests
  ttap::LlmClassifier classifier(config);
  const auto start = Clock::now();
  const auto verdicts = classifier.classify(f.trace, f.tree, ttap::LlmEvidenceFn{}, windows);
  const double took = seconds_since(start);
  for (const auto& v : verdicts) EXPECT_TRUE(v.ok) << v.error;
  EXPECT_EQ(server.requests(), 9);
  EXPECT_EQ(server.max_in_flight(), 3);  // the cap, and reached
  EXPECT_GE(took, 0.44);                 // 9 requests of 0.15 s, 3 at a time
}

// ---- Iterative refinement --------------------------------------------------------------

TEST(LlmRefine, WidensWhenTheWindowCutsThePatternOff) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    res.set_content(completion(verdict_json(R"(["dataloader_stall"])", 0.9, /*needs_more=*/n == 1)), "application/json");
  });
  auto config = config_for(server);
  config.max_rounds = 3;
  const auto& f = vit();
  // The middle half of a step, so doubling stays inside the trace.
  const auto step = f.step_window();
  const int64_t quarter = (step.end - step.begin) / 4;
  const ttap::LlmWindow window{step.begin + quarter, step.end - quarter, {}};
  std::vector<std::pair<int64_t, int64_t>> asked;
  const ttap::LlmEvidenceFn evidence = [&](int64_t b, int64_t e) {
    asked.emplace_back(b, e);
    return std::vector<ttap::RuleFinding>{};
  };
  ttap::LlmClassifier classifier(config);
  const auto v = classifier.classify(f.trace, f.tree, evidence, {window}).at(0);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.rounds, 2);
  EXPECT_FALSE(v.needs_more_context);
  const int64_t width = window.end - window.begin, centre = window.begin + width / 2;
  EXPECT_EQ(v.begin, centre - width);
  EXPECT_EQ(v.end, centre + width);
  ASSERT_EQ(asked.size(), 1u);  // fresh evidence for the wider range
  EXPECT_EQ(asked[0], std::make_pair(v.begin, v.end));
  const auto got = server.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(user_message(got[0].body).find("wider view"), std::string::npos);
  EXPECT_NE(user_message(got[1].body).find("This is a wider view (request 2 of at most 3)"), std::string::npos);
}

TEST(LlmRefine, UnsureAnswersStopAtMaxRounds) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content(completion(verdict_json(R"(["gpu_idle"])", 0.3)), "application/json");
  });
  auto config = config_for(server);
  config.max_rounds = 3;
  // The middle eighth of the step: two doublings still fit in the trace.
  const auto step = vit().step_window();
  const int64_t eighth = (step.end - step.begin) / 8, centre = step.begin + (step.end - step.begin) / 2;
  const auto v = classify_one(config, {centre - eighth / 2, centre + eighth / 2, {}});
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.rounds, 3);
  EXPECT_EQ(server.requests(), 3);
  EXPECT_DOUBLE_EQ(v.confidence, 0.3);
  EXPECT_NEAR(static_cast<double>(v.end - v.begin), 4.0 * eighth, 4);
}

TEST(LlmRefine, AWindowCoveringTheTraceIsNotWidened) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int) {
    res.set_content(completion(verdict_json(R"(["gpu_idle"])", 0.3, true)), "application/json");
  });
  auto config = config_for(server);
  config.max_rounds = 3;
  const auto& t = vit().trace;
  const int64_t origin = ttap::llm_trace_origin(t);
  int64_t last = origin;
  for (size_t e = 0; e < t.size(); ++e) last = std::max(last, t.end(e));
  const auto v = classify_one(config, {origin, last, {}});
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.rounds, 1);
  EXPECT_TRUE(v.needs_more_context);
  EXPECT_EQ(server.requests(), 1);
}

TEST(LlmRefine, AFailedRefinementKeepsTheFirstAnswer) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    if (n == 1) return res.set_content(completion(verdict_json(R"(["launch_bound"])", 0.2)), "application/json");
    res.status = 400;
    res.set_content(R"({"error":{"message":"context length exceeded"}})", "application/json");
  });
  auto config = config_for(server);
  config.max_rounds = 3;
  const auto window = vit().step_window();
  const auto v = classify_one(config, window);
  ASSERT_TRUE(v.ok);
  EXPECT_EQ(v.ids, std::vector<std::string>{"launch_bound"});
  EXPECT_EQ(v.begin, window.begin);
  EXPECT_EQ(v.end, window.end);
  EXPECT_NE(v.error.find("refinement request 2 failed: HTTP 400: context length exceeded"), std::string::npos) << v.error;
}

TEST(LlmRefine, WiderWindowsGetTheRuleEnginesEvidence) {
  FakeEndpoint server([](const httplib::Request&, httplib::Response& res, int n) {
    res.set_content(completion(verdict_json(R"(["launch_bound"])", n == 1 ? 0.1 : 0.9)), "application/json");
  });
  auto config = config_for(server);
  config.max_rounds = 2;
  const auto& f = vit();
  const ttap::RuleEngine rules(f.trace, f.tree);
  auto window = f.step_window();
  window.evidence = rules.detect(window.begin, window.end);
  ttap::LlmClassifier classifier(config);
  const auto v = classifier.classify(f.trace, f.tree, rules, {window}).at(0);
  ASSERT_TRUE(v.ok) << v.error;
  ASSERT_EQ(v.rounds, 2);
  const int64_t origin = ttap::llm_trace_origin(f.trace);
  const auto got = server.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(user_message(got[0].body).find(ttap::llm_evidence_text(window.evidence, origin)), std::string::npos);
  EXPECT_NE(user_message(got[1].body).find(ttap::llm_evidence_text(rules.detect(v.begin, v.end), origin)),
            std::string::npos);
}

}  // namespace
