// Bad input: every case is an InputError naming the file (and the byte offset where one
// applies), never a crash; through the CLI, exit code 2 and one "ttap: error:" line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "ttap/analyze.hpp"
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
      if (c.has_offset) {
        EXPECT_TRUE(e.offset().has_value()) << c.name << ": " << what;
      }
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

// Found by the fuzzer: a 17-digit microsecond timestamp overflowed while being scaled;
// later the bound was halved so that differences of timestamps fit too.
TEST(BadInput, TimestampsJustPastTheLimitAreAbsurdNotOverflow) {
  for (const char* ts : {"17121954955221285", "4500000000000001", "99999999999999999999999", "-17121954955221285.5"}) {
    const std::string path = temp_file("big_ts.json", std::string(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":)") +
                                                          ts + R"(,"dur":1}]})");
    try {
      ttap::load_trace(path);
      ADD_FAILURE() << ts << " loaded";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("absurd"), std::string::npos) << e.what();
    }
  }
  // The largest accepted value (4.5e15 us, the year 2112 since the epoch) loads exactly.
  const ttap::Trace t = ttap::load_trace(temp_file("max_ts.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":4499999999999999.999,"dur":1}]})"));
  EXPECT_EQ(t.ts[0], 4499999999999999999LL);
}

}  // namespace

namespace {

// Found by the fuzzer (scripts/fuzz/crashes/repro-*): values whose sums or differences
// would overflow int64 are refused as absurd instead of wrapping.
TEST(BadInput, OverflowingSumsAreAbsurd) {
  std::string many = R"({"traceEvents":[)";
  for (int i = 0; i < 4000; ++i)  // 4000 x 30 days > 146 years
    many += std::string(i ? "," : "") + R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":)" + std::to_string(i) +
            R"(,"ts":0,"dur":2592000000000})";
  many += "]}";
  const struct {
    const char* name;
    std::string json;
    const char* message;
  } cases[] = {
      {"sum.json", many, "146 years"},
      {"begin_end.json", R"([{"ph":"B","name":"a","pid":1,"tid":1,"ts":-4499999999999999},{"ph":"E","pid":1,"tid":1,"ts":4499999999999999}])", "absurd duration"},
      {"bytes.json", R"({"traceEvents":[{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":9000000000000000000,"Device Type":1}}]})", "absurd"},
      {"pid.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":4611686018427387909,"tid":1,"ts":1,"dur":1}]})", "absurd"},
  };
  for (const auto& c : cases) {
    try {
      ttap::load_trace(temp_file(c.name, c.json));
      ADD_FAILURE() << c.name << " loaded";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.name << ": " << e.what();
    }
  }
  // A GPU span from -4.5e15 to +4.5e15 us is the widest there can be; its total fits.
  const ttap::Trace wide = ttap::load_trace(temp_file("wide.json",
      R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-4499999999999999,"dur":1},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4499999999999999,"dur":1}])"));
  const ttap::EventTree tree = ttap::EventTree::build(wide);
  const auto tl = ttap::gpu_timeline(wide, tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_EQ(tl[0].total, 8999999999999999000LL);  // (4499999999999999000 + 1000) - (-4499999999999999000)
}

}  // namespace
