// The command line's conventions and the sentences the rules print, on real traces:
// -v/-q after the subcommand, stdin given twice, `tree -o/--format`, exit codes in every
// --help, no CLI11 "{false}" markers; findings' evidence free of the broken sentences, and
// one origin for window times in the report and the LLM prompt.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <regex>

#include "chat_endpoint.hpp"
#include "json_support.hpp"
#include "suite_support.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_ttap;
using ttap::suite::scratch;

const std::string kResnet = data_path("kineto_resnet50_v100_nw0.json.gz");
const std::string kVit = data_path("tracelens_vit_nsfw_h100.json.gz");

using ttap::test_json::parse;

TEST(CliConventions, VerboseAndQuietWorkAfterTheSubcommand) {
  const ProcResult v = run_ttap({"analyze", "--scorer", "rules", kVit, "-v"});
  EXPECT_LE(v.exit_code, 1) << v.err;
  EXPECT_NE(v.err.find("ttap: debug: "), std::string::npos) << v.err.substr(0, 500);
  const ProcResult q = run_ttap({"summary", kVit, "-q", "--table", "overview"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  const ProcResult before = run_ttap({"-v", "summary", kVit, "--table", "overview"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.err.find("ttap: debug: "), std::string::npos);
  // An option nobody knows is still refused.
  EXPECT_EQ(run_ttap({"analyze", kVit, "--no-such-flag"}).exit_code, 2);
}

TEST(CliConventions, StdinGivenTwiceIsReadOnce) {
  const ProcResult r = run_ttap({"analyze", "--scorer", "rules", "--format", "json", "-", "-"}, {}, kVit);
  ASSERT_LE(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  ASSERT_EQ(doc["traces"].get_array().size(), 1u) << "one trace, not a second empty one";
  EXPECT_EQ(std::string_view(doc["traces"].at(0)["verdict"]) == "error", false);
  bool warned = false;
  for (auto w : doc["warnings"].get_array()) warned |= std::string_view(w).find("stdin") != std::string_view::npos;
  EXPECT_TRUE(warned) << r.out.substr(0, 400);
}

TEST(CliConventions, TreeWritesJsonToAFile) {
  const std::string out = scratch() + "/tree.json";
  const ProcResult r = run_ttap({"tree", "--format", "json", "-o", out, "--depth", "1", kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the tree goes to the file";
  simdjson::dom::parser p;
  const auto doc = parse(p, read_file(out));
  EXPECT_EQ(std::string_view(doc["schema"]), "ttap.tree/1");
  auto nodes = doc["nodes"].get_array();
  // One node per line of the text form, less its "# thread" headers.
  size_t text_lines = 0;
  for (const std::string& line : ttap::suite::split_lines(run_ttap({"tree", "--depth", "1", kVit}).out))
    text_lines += !line.empty() && line[0] != '#';
  ASSERT_GT(nodes.size(), 0u);
  EXPECT_EQ(nodes.size(), text_lines);
  size_t roots = 0, children = 0;
  for (auto n : nodes) {
    const int64_t depth = int64_t(n["depth"]);
    EXPECT_LE(depth, 1);
    (depth == 0 ? roots : children)++;
    EXPECT_GE(double(n["dur_us"]), 0.0);
  }
  EXPECT_GT(roots, 0u);
  EXPECT_GT(children, 0u);
  // The text form, to a file, matches what stdout gets.
  const std::string txt = scratch() + "/tree.txt";
  ASSERT_EQ(run_ttap({"tree", "-o", txt, "--depth", "1", kVit}).exit_code, 0);
  EXPECT_EQ(read_file(txt), run_ttap({"tree", "--depth", "1", kVit}).out);
  // A bad --step is bad input and leaves no file behind.
  const std::string none = scratch() + "/tree_none.json";
  EXPECT_EQ(run_ttap({"tree", "--format", "json", "-o", none, "--step", "999999", kResnet}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(CliConventions, EveryHelpNamesTheExitCodesAndNoFlagMarkers) {
  for (const char* cmd : {"", "tree", "summary", "diff", "collectives", "replay", "features", "tokenizer", "eval", "analyze", "merge"}) {
    std::vector<std::string> args;
    if (*cmd) args.push_back(cmd);
    args.push_back("--help");
    const ProcResult r = run_ttap(args);
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Exit codes: 0 "), std::string::npos) << cmd << "\n" << r.out;
    EXPECT_EQ(r.out.find("{false}"), std::string::npos) << cmd;
    EXPECT_EQ(r.out.find("{true}"), std::string::npos) << cmd;
  }
  EXPECT_NE(run_ttap({"analyze", "--help"}).out.find("1 flagged"), std::string::npos);
  EXPECT_NE(run_ttap({"diff", "--help"}).out.find("1 a regression"), std::string::npos);
}

// Every finding's evidence and fix over the real traces in tests/data, checked for the
// sentences that used to come out broken.
TEST(CliConventions, RuleSentencesReadAsSentences) {
  const ProcResult r = run_ttap({"analyze", "--scorer", "rules", "--format", "json", "--top-k", "10", data_path("")});
  ASSERT_LE(r.exit_code, 2) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  const std::regex share(R"((\d+)% of kernel time \(([\d.]+) (ms|us) of ([\d.]+) (ms|us)\))");
  // A printed duration and half its last digit, in ns: "27 us" is 26.5 to 27.5 us.
  auto ns = [](const std::string& v, const std::string& unit) {
    const double scale = unit == "ms" ? 1e6 : 1e3;
    const size_t dot = v.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(v.size() - dot - 1);
    return std::pair(std::stod(v) * scale, 0.5 * std::pow(10.0, -decimals) * scale);
  };
  size_t sentences = 0, shares = 0;
  for (auto t : doc["traces"].get_array()) {
    if (std::string_view(t["verdict"]) == "error") continue;
    for (auto w : t["flagged_windows"].get_array())
      for (auto f : w["findings"].get_array()) {
        std::vector<std::string> lines;
        for (auto e : f["evidence"].get_array()) lines.emplace_back(std::string_view(e));
        if (f["fix"].is_string()) lines.emplace_back(std::string_view(f["fix"]));
        const std::string id{std::string_view(f["id"])};
        for (const std::string& s : lines) {
          ++sentences;
          EXPECT_EQ(s.find("resumes with after"), std::string::npos) << s;
          EXPECT_FALSE(std::regex_search(s, std::regex(R"(\b1 gaps\b)"))) << s;
          EXPECT_EQ(s.find("under no op"), std::string::npos) << s;
          EXPECT_EQ(s.find("(no op)"), std::string::npos) << s;
          if (id == "gpu_idle") {
            EXPECT_EQ(s.find("<frozen"), std::string::npos) << s;
          }
          if (s.starts_with("ops: ")) {
            EXPECT_EQ(s.find("_kernel"), std::string::npos) << "kernels listed as ops: " << s;
          }
          std::smatch m;
          if (std::regex_search(s, m, share)) {
            ++shares;
            const auto [a, da] = ns(m[2], m[3]);
            const auto [b, db] = ns(m[4], m[5]);
            // The printed share, rounded to a whole percent, is a/b for some a and b the
            // printed (rounded) durations stand for.
            const double shown = std::stod(m[1]);
            EXPECT_GE(shown + 0.5, 100.0 * (a - da) / (b + db)) << s;
            EXPECT_LE(shown - 0.5, 100.0 * (a + da) / (b - db)) << s;
          }
        }
      }
  }
  EXPECT_GT(sentences, 50u);
  (void)shares;  // not every trace has FP32 GEMMs; checked where they appear
}

// The LLM prompt and the report name a window by the same "+x ms" (from the trace's first
// event): each flagged window the report prints was asked about under that same time.
TEST(CliConventions, WindowTimesShareOneOriginInReportAndPrompt) {
  std::mutex mu;
  std::vector<std::string> prompts;
  ttap::test::FakeEndpoint server([&](const httplib::Request& req, httplib::Response& res, int) {
    {
      std::lock_guard lock(mu);
      prompts.push_back(req.body);
    }
    res.set_content(ttap::test::completion(ttap::test::verdict_json("[\"dataloader_stall\"]", 0.9)), "application/json");
  });
  const ProcResult r = run_ttap({"analyze", "--scorer", "rules", "--details", "--llm-url", server.url(), "--llm-model", "m", "-vv", kResnet},
                                {"TTAP_LLM_API_KEY=sk-test", "NO_COLOR=1"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::regex report_window(R"(window (\d+) \[(\+[\d.]+ ms) \.\. (\+[\d.]+ ms)\]  score)");
  size_t checked = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), report_window), end; it != end; ++it) {
    const std::string begin = (*it)[2], finish = (*it)[3];
    const std::string in_prompt = "Window: " + begin + " to " + finish + " after the trace start";
    bool asked = false;
    for (const auto& body : prompts) asked |= body.find(in_prompt) != std::string::npos;
    EXPECT_TRUE(asked) << in_prompt;
    // And the -vv log names it the same way.
    EXPECT_NE(r.err.find("[" + begin + " .. " + finish + "]"), std::string::npos) << begin;
    ++checked;
  }
  EXPECT_GT(checked, 0u) << r.out.substr(0, 1500);
}

}  // namespace
