// Hostile inputs the fuzz targets do not reach (they feed bytes to the parser, not files,
// devices or a million-deep event tree to the CLI), run through the real ttap binary in
// both loader modes: each is refused with one `ttap: error: FILE: ...` line and exit 2, or
// loads, and never crashes or hangs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "suite_support.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::read_file;
using ttap::suite::run_ttap;
using ttap::suite::scratch;
using ttap::suite::shell;
using ttap::suite::write_file;

const std::vector<std::vector<std::string>> kModes = {{}, {"--strict"}};

std::string mode_name(const std::vector<std::string>& mode) { return mode.empty() ? "lenient" : "strict"; }

// One event in a trace document.
std::string trace_of(const std::string& events) { return R"({"traceEvents":[)" + events + "]}"; }
const std::string kEvent = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2})";

struct Refused {
  std::string name;     // what the case is
  std::string path;     // the file given to ttap
  std::string message;  // a part of the error line
};

// `ttap summary PATH` in both modes: exit 2 with one error line naming the file.
void expect_refused(const Refused& c, const std::vector<std::string>& env = {}) {
  for (const auto& mode : kModes) {
    std::vector<std::string> args = mode;
    args.insert(args.end(), {"summary", c.path});
    const auto r = run_ttap(args, env);
    SCOPED_TRACE(c.name + ", " + mode_name(mode));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("ttap: error: " + c.path + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(ttap::suite::count_lines(r.err), 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(HostileInput, FilesThatAreNoTraceAreRefusedInBothModes) {
  const std::string gz = read_file(data_path("hta_event_sync_small.json.gz"));
  const std::string dir = scratch() + "/a_folder.json";
  ::mkdir(dir.c_str(), 0755);
  const std::vector<Refused> cases = {
      {"empty file", write_file("empty.json", ""), "empty input"},
      {"a directory", dir, "not a regular file"},
      {"/dev/null", "/dev/null", "empty input"},
      {"0-byte .gz", write_file("zero.json.gz", ""), "empty input"},
      {"truncated .gz", write_file("cut.json.gz", gz.substr(0, gz.size() / 3)), "truncated gzip stream"},
      {"traceEvents an object", write_file("events_object.json", R"({"traceEvents":{"a":)" + kEvent + "}}"),
       "\"traceEvents\" must be an array"},
      {"traceEvents a string", write_file("events_string.json", R"({"traceEvents":"x"})"), "\"traceEvents\" must be an array"},
      {"10^6 unclosed brackets", write_file("deep_open.json", std::string(1000000, '[')), "truncated JSON"},
  };
  for (const auto& c : cases) expect_refused(c);
}

// An endless device that holds no trace fails on its first byte, instead of after reading
// up to the input limit (half the machine's memory: 12 GB and over a minute here). The
// limit is lowered so that a regression fails fast, on the limit's message.
TEST(HostileInput, EndlessDevicesFailOnTheirFirstByte) {
  const std::vector<std::string> limit{"TTAP_MAX_INPUT_BYTES=67108864"};
  expect_refused({"/dev/zero", "/dev/zero", "not JSON or gzip: the input starts with byte 0x00 (at byte 0)"}, limit);
  const auto r = shell("TTAP_MAX_INPUT_BYTES=67108864 " + std::string(TTAP_BINARY) + " summary - < /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ttap: error: <stdin>: not JSON or gzip"), std::string::npos) << r.err;
  // White space before the document is still JSON: a stream that starts with it loads.
  const auto ok = shell("(printf '  \\n\\t'; gzip -cd " + data_path("hta_event_sync_small.json.gz") + ") | " + TTAP_BINARY +
                        " summary -");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(HostileInput, NumbersThatAreNoJsonOrTooLargeAreRefusedInBothModes) {
  auto event = [](const std::string& name, const std::string& fields) {
    return write_file(name, trace_of(kEvent + R"(,{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,)" + fields + "}"));
  };
  const std::vector<Refused> cases = {
      {"NaN ts", event("nan_ts.json", R"("ts":NaN,"dur":1)"), "field \"ts\" must be a number"},
      {"Infinity dur", event("inf_dur.json", R"("ts":1,"dur":Infinity)"), "field \"dur\" must be a number"},
      {"-Infinity ts", event("neginf_ts.json", R"("ts":-Infinity,"dur":1)"), "field \"ts\" has an absurd value"},
      {"NaN in an arg", event("nan_arg.json", R"("ts":1,"dur":1,"args":{"blocks per SM":NaN})"), "must be a finite number"},
      {"ts 1e400", event("ts_1e400.json", R"("ts":1e400,"dur":1)"), "field \"ts\" has an absurd value 1e400"},
      {"ts of 100000 digits", event("ts_digits.json", "\"ts\":" + std::string(100000, '7') + R"(,"dur":1)"),
       "field \"ts\" has an absurd value"},
      {"pid 10^30", event("pid_huge.json", R"("ts":1,"dur":1,"pid":1000000000000000000000000000000)"),
       "field \"pid\" must be an integer"},
      {"correlation 10^23", event("corr_huge.json", R"("ts":1,"dur":1,"args":{"correlation":100000000000000000000000})"),
       "field \"correlation\" must be an integer"},
      // A counter's args are read as series of numbers; NaN was skipped as "not a number",
      // loading a document that is not JSON without a word.
      {"NaN counter value", write_file("nan_counter.json", trace_of(kEvent + R"(,{"ph":"C","name":"c","pid":1,"ts":1,"args":{"v":NaN}})")),
       "field \"v\" is not a JSON value"},
  };
  for (const auto& c : cases) expect_refused(c);
}

// Keys inside an event repeat as in Python's json: the last one counts. A second
// "traceEvents" array is refused: which one is the trace cannot be told (both used to be
// loaded, one after the other).
TEST(HostileInput, DuplicateKeys) {
  const std::string dur = write_file("dup_dur.json", trace_of(kEvent + R"(,{"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":1,"dur":-5})"));
  auto lenient = run_ttap({"summary", "--format", "json", dur});
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_NE(lenient.err.find("1 events with a negative duration dropped"), std::string::npos) << lenient.err;
  auto strict = run_ttap({"--strict", "summary", dur});
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_NE(strict.err.find("has a negative duration"), std::string::npos) << strict.err;

  const std::string twice = write_file("events_twice.json", R"({"traceEvents":[)" + kEvent + R"(],"traceEvents":[)" + kEvent + "]}");
  expect_refused({"traceEvents twice", twice, "\"traceEvents\" appears twice in the top-level object"});
  // The same through the whole-document pass (the chunked path hands the case to it).
  const auto whole = run_ttap({"summary", twice}, {"TTAP_PARSE_WHOLE=1"});
  EXPECT_EQ(whole.exit_code, 2);
  EXPECT_NE(whole.err.find("appears twice"), std::string::npos) << whole.err;
}

// 10^6 levels of JSON nesting inside values ttap does not interpret (an unknown arg) or
// keeps as text (Input Dims) are valid JSON: the trace loads, its one op intact.
TEST(HostileInput, MillionDeepJsonNestingInsideValuesLoads) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  for (const std::string key : {"unknown", "Input Dims"}) {
    const std::string path = write_file("deep_value.json", trace_of(R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2,"args":{")" +
                                                                       key + "\":" + deep + "}}"));
    for (const auto& mode : kModes) {
      std::vector<std::string> args = mode;
      args.insert(args.end(), {"tree", path});
      const auto r = run_ttap(args);
      EXPECT_EQ(r.exit_code, 0) << key << ", " << mode_name(mode) << ": " << r.err;
      EXPECT_EQ(r.out, "# thread 1/1\n(cpu) aten::mm  [2.000 us]\n");
    }
  }
}

// The event tree of a trace whose events nest 300,000 deep (each inside the one before):
// `ttap tree` walked it by recursion and died of a stack overflow (SIGSEGV) in every form;
// and its text indented 2 spaces per level, which for 10^6 levels is a terabyte.
TEST(HostileInput, TreeOfEventsNested300000Deep) {
  constexpr int kDepth = 300000;
  std::string events;
  events.reserve(size_t{kDepth} * 80);
  for (int i = 0; i < kDepth; ++i) {
    if (i) events += ',';
    events += R"({"ph":"X","cat":"python_function","name":"nn.Module: M)" + std::to_string(i % 3) + R"(","pid":1,"tid":1,"ts":)" +
              std::to_string(i) + R"(,"dur":)" + std::to_string(4 * kDepth - 2 * i) + "}";
  }
  // One kernel launched from the innermost frame, so that the module view has GPU work.
  events += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":300001,"dur":5,"args":{"correlation":1}})";
  events += R"(,{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":300003,"dur":5,"args":{"correlation":1,"device":0,"stream":7}})";
  const std::string path = write_file("deep_tree.json", trace_of(events));
  for (const std::vector<std::string>& form :
       {std::vector<std::string>{}, {"--format", "json"}, {"--match", "^nothing$"}, {"--modules"}, {"--modules", "--match", "^nothing$"}}) {
    std::vector<std::string> args{"tree", path, "-o", "/dev/null"};
    args.insert(args.end(), form.begin(), form.end());
    const auto r = run_ttap(args);
    std::string what;
    for (const auto& a : form) what += a + " ";
    EXPECT_EQ(r.exit_code, 0) << "tree " << what << ": " << r.err;
  }
  // Text lines stop indenting at 256 levels and say their depth instead: the output stays
  // linear in the number of events.
  const auto r = run_ttap({"tree", "--depth", "300", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ttap::suite::split_lines(r.out);
  ASSERT_EQ(lines.size(), 302u);  // the thread's header, then depths 0 to 300
  EXPECT_EQ(lines[1], "(python) nn.Module: M0  [1200000.000 us]");
  EXPECT_EQ(lines[257], std::string(512, ' ') + "(python) nn.Module: M1  [1199488.000 us]");
  EXPECT_EQ(lines[258], std::string(512, ' ') + "[depth 257] (python) nn.Module: M2  [1199486.000 us]");
  for (const auto& line : lines) EXPECT_LE(line.size(), 600u);
}

// A FIFO is read to its end like stdin: a trace written into it loads, a truncated gzip
// stream is refused.
TEST(HostileInput, Fifo) {
  const std::string fifo = scratch() + "/trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string gz = data_path("hta_event_sync_small.json.gz");
  auto ok = shell("gzip -cd " + gz + " > " + fifo + " & " + TTAP_BINARY + " summary " + fifo + "; rc=$?; wait; exit $rc");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("events"), std::string::npos);
  auto cut = shell("head -c 1000 " + gz + " > " + fifo + " & " + TTAP_BINARY + " --strict summary " + fifo + "; rc=$?; wait; exit $rc");
  EXPECT_EQ(cut.exit_code, 2) << cut.err;
  EXPECT_NE(cut.err.find("ttap: error: " + fifo + ": truncated gzip stream"), std::string::npos) << cut.err;
}

}  // namespace
