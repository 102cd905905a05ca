// What the libFuzzer targets (scripts/fuzz) found, as plain tests of the normal suite: each
// input is parsed the three ways fuzz_chunks compares (the whole document in one pass,
// chunked on one thread, chunked on two with 1 KB chunks) in both loader modes, and the
// three must agree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "ttap/input.hpp"
#include "ttap/load.hpp"

namespace {

struct Outcome {
  bool ok = false;
  size_t events = 0;
  std::string error;
};

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Outcome parse(const std::string& json, bool whole, const char* threads, bool strict) {
  ScopedEnv w("TTAP_PARSE_WHOLE", whole ? "1" : nullptr);
  ScopedEnv t("TTAP_THREADS", threads);
  ScopedEnv c("TTAP_PARSE_CHUNK_BYTES", "1024");
  ttap::InputBuffer buf(json.size());
  std::memcpy(buf.data(), json.data(), json.size());
  buf.resize(json.size());
  Outcome o;
  try {
    o.events = ttap::parse_trace("fuzz", buf, strict).size();
    o.ok = true;
  } catch (const ttap::InputError& e) {
    o.error = e.what();
  }
  return o;
}

// All three ways, both modes: refused with `message` in the error.
void expect_refused_everywhere(const std::string& json, const std::string& message) {
  for (const bool strict : {false, true}) {
    for (const auto& [whole, threads] : {std::pair{true, "1"}, std::pair{false, "1"}, std::pair{false, "2"}}) {
      const Outcome o = parse(json, whole, threads, strict);
      EXPECT_FALSE(o.ok) << "whole=" << whole << " threads=" << threads << " strict=" << strict << ": loaded " << o.events
                         << " events";
      EXPECT_NE(o.error.find(message), std::string::npos) << o.error;
    }
  }
}

// A top-level traceEvents member with one event, for documents built around it.
const std::string events = R"("traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])";

// fuzz_chunks, 2026-11-24 (a seed window of a real trace, one byte of its top-level "INFO"
// log lines mutated to 0x96): the whole-document pass refused the invalid UTF-8 while the
// chunked path, which hands only traceEvents and the top-level values it reads to simdjson,
// loaded the trace. Invalid UTF-8 in a skipped value, in a key, or in an unquoted token.
TEST(FuzzRegressions, InvalidUtf8OutsideTraceEventsIsRefusedByBothPaths) {
  // The error names the offending byte: simdjson only says that there is one.
  expect_refused_everywhere("{\"INFO\": [\"Invalid ext correla\x96ions = 0\"], " + events + "}", "not valid UTF-8 (at byte 30)");
  expect_refused_everywhere("{" + events + ", \"INFO\": [\"Invalid ext correla\x96ions = 0\"]}",
                            "not valid UTF-8 (at byte " + std::to_string(events.size() + 32) + ")");
  expect_refused_everywhere("{\"f\x96oo\": 1, " + events + "}", "not valid UTF-8 (at byte 3)");
  expect_refused_everywhere("{\"foo\": tru\x96" "e, " + events + "}", "not valid UTF-8 (at byte 11)");
  // Overlong forms, surrogates and code points above U+10FFFF are not UTF-8 either.
  for (const std::string bad : {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"})
    expect_refused_everywhere("{\"x\": \"ok " + bad + "\", " + events + "}", "not valid UTF-8 (at byte 10)");
}

// fuzz_chunks, 2026-11-24, the same family (a real trace's INFO log line with one byte
// mutated to 0x0e): a control character left unescaped in a string outside traceEvents.
TEST(FuzzRegressions, UnescapedControlCharactersOutsideTraceEventsAreRefusedByBothPaths) {
  const std::string message = "a string holds a control character that must be escaped (at byte ";
  expect_refused_everywhere("{\"INFO\": [\"I\x0e" "FO:2024-07-15\"], " + events + "}", message + "12)");
  expect_refused_everywhere("{" + events + ", \"INFO\": [\"I\x0e" "FO\"]}", message + std::to_string(events.size() + 14) + ")");
  expect_refused_everywhere("{\"k\tey\": 1, " + events + "}", message + "3)");
  // Escaped, they are fine: "\\" before a quote does not end the string early.
  for (const bool whole : {false, true}) {
    const Outcome o = parse("{\"INFO\": [\"I\\u000e\\\\\", \"\\t\"], " + events + "}", whole, "2", false);
    EXPECT_TRUE(o.ok) << o.error;
  }
}

// The checks added for the two findings above refuse nothing valid: the first finding's
// document with valid UTF-8 in its place loads all three ways.
TEST(FuzzRegressions, ValidTopLevelValuesStillLoad) {
  for (const bool strict : {false, true}) {
    for (const bool whole : {false, true}) {
      const Outcome o = parse("{\"INFO\": [\"Invalid ext correla\xc3\xa9ions = 0\"], " + events + "}", whole, "2", strict);
      EXPECT_TRUE(o.ok) << o.error;
      EXPECT_EQ(o.events, 1u);
    }
  }
}

}  // namespace
