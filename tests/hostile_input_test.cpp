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

}  // namespace
