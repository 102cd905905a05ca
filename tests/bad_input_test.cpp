// Bad input: every case is an InputError naming the file (and the byte offset where one
// applies), never a crash; through the CLI, exit code 2 and one "ttap: error:" line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::test::data;
using ttap::test::run_ttap;
using ttap::test::temp_file;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct BadCase {
  const char* name;
  std::string content;
  const char* message;  // a substring the error must contain
  bool has_offset;
};

std::vector<BadCase> cases() {
  const std::string gz = read_bytes(data("hta_event_sync_small.json.gz"));
  return {
      {"empty.json", "", "empty input", false},
      {"not_json.json", "hello, world", "", true},
      {"truncated.json", R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,)", "", true},
      {"truncated.json.gz", gz.substr(0, gz.size() / 2), "gzip", true},
      {"corrupt.json.gz", gz.substr(0, 20) + std::string(200, 'x'), "gzip", true},
      {"no_events.json", R"({"schemaVersion":1,"deviceProperties":[]})", "no \"traceEvents\"", false},
      {"events_not_array.json", R"({"traceEvents":{"a":1}})", "traceEvents", true},
      {"ts_string.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"abc","dur":1}]})", "\"ts\"", true},
      {"negative_dur.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-5}]})", "negative duration", true},
      {"absurd_ts.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e300,"dur":1}]})", "absurd", true},
      {"absurd_dur.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":99999999999999}]})", "absurd", true},
      {"name_number.json", R"({"traceEvents":[{"ph":"X","name":5,"pid":1,"tid":1,"ts":1,"dur":1}]})", "\"name\"", true},
      {"args_array.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":[1]}]})", "args", true},
      {"deep.json", std::string(100000, '['), "", true},
      {"trailing.json", R"({"traceEvents":[]} {"x":1})", "", true},
      {"no_ph.json", R"({"traceEvents":[{"name":"a","pid":1,"tid":1,"ts":1}]})", "\"ph\"", true},
      {"top_scalar.json", "42", "", true},
  };
}

TEST(BadInput, LoaderThrowsInputErrorNamingFileAndOffset) {
  for (const BadCase& c : cases()) {
    const std::string path = temp_file(c.name, c.content);
    try {
      ttap::load_trace(path);
      ADD_FAILURE() << c.name << ": loaded without error";
    } catch (const ttap::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << c.name << ": " << what;
      EXPECT_NE(what.find(c.message), std::string::npos) << c.name << ": " << what;
      if (c.has_offset) EXPECT_TRUE(e.offset().has_value()) << c.name << ": " << what;
    }
  }
}

TEST(BadInput, MissingFileAndDirectory) {
  EXPECT_THROW(ttap::load_trace("/nonexistent/trace.json"), ttap::InputError);
  EXPECT_THROW(ttap::load_trace(TTAP_TEST_DATA_DIR), ttap::InputError);
}

TEST(BadInput, DecompressionIsCapped) {
  // 64 MiB of spaces gzip to ~64 KB; with a 1 MiB cap the loader must refuse, not allocate.
  const std::string path = temp_file("bomb.json", std::string(64 << 20, ' '));
  ASSERT_EQ(std::system(("gzip -f -1 " + path).c_str()), 0);
  ::setenv("TTAP_MAX_INPUT_BYTES", "1048576", 1);
  try {
    ttap::load_trace(path + ".gz", ttap::LoadOptions{});
    ADD_FAILURE() << "a 64 MiB stream passed a 1 MiB cap";
  } catch (const ttap::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
  ::unsetenv("TTAP_MAX_INPUT_BYTES");
}

TEST(BadInput, CliExitsTwoWithOneLine) {
  for (const BadCase& c : cases()) {
    const std::string path = temp_file(c.name, c.content);
    const auto r = run_ttap("summary " + path);
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("ttap: error: ", 0), 0u) << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
  EXPECT_EQ(run_ttap("summary /nonexistent.json").exit_code, 2);
  EXPECT_EQ(run_ttap("summary").exit_code, 2);
  EXPECT_EQ(run_ttap("summary --no-such-flag x.json").exit_code, 2);
  EXPECT_EQ(run_ttap("frobnicate").exit_code, 2);
}

}  // namespace

namespace {

// Found by the fuzzer: a 17-digit microsecond timestamp overflowed while being scaled.
TEST(BadInput, TimestampsJustPastTheLimitAreAbsurdNotOverflow) {
  for (const char* ts : {"17121954955221285", "9000000000000001", "99999999999999999999999", "-17121954955221285.5"}) {
    const std::string path = temp_file("big_ts.json", std::string(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":)") +
                                                          ts + R"(,"dur":1}]})");
    try {
      ttap::load_trace(path);
      ADD_FAILURE() << ts << " loaded";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("absurd"), std::string::npos) << e.what();
    }
  }
  // The largest accepted value loads exactly.
  const ttap::Trace t = ttap::load_trace(temp_file("max_ts.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":8999999999999999.999,"dur":1}]})"));
  EXPECT_EQ(t.ts[0], 8999999999999999999LL);
}

}  // namespace
