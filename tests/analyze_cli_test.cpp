// `ttap analyze` end to end on real traces: every output format parsed or validated, the
// CI gate's exit codes, folders with a bad file mixed in, and config-file ignores. The
// rule scorer is named explicitly so the results do not depend on a trained model.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <regex>
#include <set>

#include "json_support.hpp"
#include "suite_support.hpp"
#include "ttap/catalog.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_process;
using ttap::suite::run_ttap;
using ttap::suite::scratch;
using ttap::suite::write_file;
namespace fs = std::filesystem;

const std::string kVit = data_path("tracelens_vit_nsfw_h100.json.gz");
const std::string kResnet = data_path("kineto_resnet50_v100_nw0.json.gz");
const std::string kCpuOnly = data_path("hta_cpu_only.json.gz");

using ttap::suite::analyze;

using ttap::test_json::parse;

std::set<std::string> ids_in(simdjson::dom::element trace) {
  std::set<std::string> ids;
  for (auto w : trace["flagged_windows"].get_array())
    for (auto f : w["findings"].get_array()) ids.insert(std::string(std::string_view(f["id"])));
  return ids;
}

TEST(AnalyzeFormats, TextKeepsTheHeadlineAndListsFindings) {
  const ProcResult r = analyze({kResnet, kCpuOnly});
  EXPECT_EQ(r.exit_code, 1) << "nw0 is flagged and --fail-on warning is the default\n" << r.err;
  EXPECT_NE(r.out.find("6 steps, mean 175 ms: GPU busy 56.0%, DataLoader 39.6% of step time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("what-if dataloader_stall"), std::string::npos);
  EXPECT_NE(r.out.find("no GPU activity (CPU-only trace)"), std::string::npos);
  EXPECT_NE(r.out.find("FLAGGED  score"), std::string::npos);
  EXPECT_NE(r.out.find("fix: "), std::string::npos);
  EXPECT_NE(r.out.find("2 traces: "), std::string::npos) << "several traces end with a summary table";
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << "no colors into a pipe";
  // nw0's window scores (the rule scorer's here) spread over more than 0.1: the strip spans
  // their own lowest to highest score (named in the legend), so both ends of the scale show.
  const std::smatch strip = [&] {
    std::smatch m;
    std::regex_search(r.out, m, std::regex(R"(window scores \|([^|]*)\| \((0\.\d\d) to (0\.\d\d|1\.00); 100 windows)"));
    return m;
  }();
  ASSERT_FALSE(strip.empty()) << r.out;
  EXPECT_GE(std::stod(strip[3].str()) - std::stod(strip[2].str()), 0.1);
  EXPECT_NE(strip[1].str().find("\u2588"), std::string::npos) << "the highest window reaches the top";
  EXPECT_NE(strip[1].str().find(' '), std::string::npos) << "the lowest window sits at the bottom";
}

// The eager ViT inference step idles its H100 84% of the time between short kernels: no
// 79 us window shows it, the rules across the whole step do, and the trace fails the gate.
TEST(AnalyzeFormats, ThinPatternsAreFoundAcrossTheSteadyState) {
  // The grouped finding says it was seen across the steady state; --details shows the entry.
  EXPECT_NE(analyze({kVit}).out.find("(across the steady state)"), std::string::npos);
  const ProcResult r = analyze({"--details", kVit});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Times count from the trace's first event, as in the LLM prompt: the step starts 0.233 ms in.
  const size_t at = r.out.find("  steady state [+0.233 ms .. +8.127 ms]  (rules across the whole of it)\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error launch_bound", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA graph", at), std::string::npos) << r.out;
  // An ignore by id drops it and the trace passes again.
  const std::string config =
      write_file("ignore_launch_bound.json", R"({"ignore": [{"id": "launch_bound", "reason": "batch-1 latency service"}]})");
  const ProcResult ignored = analyze({"--config", config, kVit});
  EXPECT_EQ(ignored.exit_code, 0) << ignored.out << ignored.err;
  EXPECT_EQ(ignored.out.find("launch_bound"), std::string::npos) << ignored.out;
}

TEST(AnalyzeFormats, ColorOnlyOnATerminalWithoutNoColor) {
  // script(1) gives ttap a pseudo-terminal as stdout, as a person's shell would.
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "script(1) is not installed: no pseudo-terminal to test colors on";
  const std::string cmd = std::string(TTAP_BINARY) + " analyze --scorer rules " + kCpuOnly;
  const ProcResult tty = run_process({"/usr/bin/script", "-qec", cmd, "/dev/null"}, {"NO_COLOR=", "TERM=xterm"});
  ASSERT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_NE(tty.out.find("\033[32mclean\033[0m"), std::string::npos) << tty.out;
  const ProcResult no_color = run_process({"/usr/bin/script", "-qec", cmd, "/dev/null"}, {"NO_COLOR=1", "TERM=xterm"});
  ASSERT_EQ(no_color.exit_code, 0);
  EXPECT_NE(no_color.out.find("clean"), std::string::npos);
  EXPECT_EQ(no_color.out.find('\033'), std::string::npos) << no_color.out;
}

TEST(AnalyzeFormats, JsonFollowsTheSchema) {
  const ProcResult r = analyze({"--format", "json", "--fail-on", "warning", kVit, kResnet});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  auto doc = parse(p, r.out);
  EXPECT_EQ(std::string_view(doc["schema"]), "ttap.analyze/2");
  EXPECT_EQ(int64_t(doc["settings"]["windows"]), 100);
  EXPECT_EQ(int64_t(doc["settings"]["top_k"]), 5);
  EXPECT_EQ(int64_t(doc["settings"]["flag_spacing"]), 5) << "flagged windows at least 5 apart by default";
  EXPECT_EQ(std::string_view(doc["settings"]["fail_on"]), "warning") << "as given";
  EXPECT_EQ(int64_t(doc["summary"]["traces"]), 2);
  auto traces = doc["traces"].get_array();
  ASSERT_EQ(traces.size(), 2u);
  for (auto t : traces) {
    EXPECT_EQ(std::string_view(t["scorer"]), "rules");
    auto windows = t["windows"].get_array();
    ASSERT_EQ(windows.size(), 100u);
    int64_t prev_end = int64_t(t["steady_state"]["begin_ns"]);
    double mean = 0;
    for (auto w : windows) {
      EXPECT_EQ(int64_t(w["begin_ns"]), prev_end) << "windows tile the steady state";
      prev_end = int64_t(w["end_ns"]);
      mean += double(w["score"]) / 100.0;
      EXPECT_GE(double(w["gpu_busy"]), 0.0);
      EXPECT_LE(double(w["gpu_busy"]), 1.0);
    }
    EXPECT_EQ(prev_end, int64_t(t["steady_state"]["end_ns"]));
    EXPECT_NEAR(double(t["score"]), mean, 1e-9);
    auto flagged = t["flagged_windows"].get_array();
    size_t top = 0;
    for (auto fw : flagged) {
      const std::string_view scope = fw["scope"];
      if (scope == "window") {
        ++top;
        EXPECT_TRUE(bool(windows.at(uint64_t(fw["index"]))["flagged"]));
      } else {  // the rules across the whole steady state: its bounds, no index
        EXPECT_EQ(scope, "steady_state");
        EXPECT_TRUE(fw["index"].is_null());
        EXPECT_EQ(int64_t(fw["begin_ns"]), int64_t(t["steady_state"]["begin_ns"]));
        EXPECT_EQ(int64_t(fw["end_ns"]), int64_t(t["steady_state"]["end_ns"]));
      }
      for (auto f : fw["findings"].get_array()) {
        EXPECT_TRUE(ttap::is_catalog_id(std::string_view(f["id"]))) << std::string_view(f["id"]);
        const std::string_view sev = f["severity"];
        EXPECT_TRUE(sev == "info" || sev == "warning" || sev == "error") << sev;
        EXPECT_GT(f["evidence"].get_array().size(), 0u);
      }
    }
    EXPECT_LE(top, 5u);
  }
  // vit's headline over its one CPU-side step, as `ttap summary --table steps` computes it
  // (15.52% busy): busy 1225310 ns of the step's 7894065 ns, not of the 7559846 ns of the
  // GPU-side annotation, so that it agrees with the steps line.
  auto gpu = traces.at(0)["headline"]["gpus"].at(0);
  EXPECT_EQ(std::string_view(gpu["scope"]), "steps");
  EXPECT_EQ(int64_t(gpu["busy_ns"]), 1225310);
  EXPECT_EQ(int64_t(gpu["total_ns"]), 7894065);
  // resnet nw0's DataLoader what-if (README: 60.1 ms per step).
  auto savings = traces.at(1)["savings"].get_array();
  ASSERT_GT(savings.size(), 0u);
  EXPECT_EQ(std::string_view(savings.at(0)["id"]), "dataloader_stall");
  EXPECT_NEAR(double(int64_t(savings.at(0)["saved_per_step_ns"])) / 1e6, 60.05, 0.1);
}

TEST(AnalyzeFormats, SarifHasOneRulePerCatalogIdAndPointsAtUserCode) {
  const std::string out = scratch() + "/vit.sarif";
  const ProcResult r = analyze({"--format", "sarif", "-o", out, "--top-k", "20", "--fail-on", "none", kVit, kResnet});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "-o writes the file, not stdout";
  simdjson::dom::parser p;
  auto doc = parse(p, read_file(out));
  EXPECT_EQ(std::string_view(doc["version"]), "2.1.0");
  auto run = doc["runs"].at(0);
  EXPECT_EQ(std::string_view(run["tool"]["driver"]["name"]), "ttap");
  auto rules = run["tool"]["driver"]["rules"].get_array();
  ASSERT_EQ(rules.size(), ttap::catalog().size());
  std::vector<std::string> rule_ids;
  for (auto rule : rules) {
    rule_ids.emplace_back(std::string_view(rule["id"]));
    EXPECT_FALSE(std::string_view(rule["shortDescription"]["text"]).empty());
    EXPECT_FALSE(std::string_view(rule["help"]["text"]).empty());
  }
  EXPECT_TRUE(bool(run["invocations"].at(0)["executionSuccessful"]));
  auto results = run["results"].get_array();
  ASSERT_GT(results.size(), 0u);
  bool python_location = false;
  for (auto res : results) {
    const std::string_view id = res["ruleId"];
    EXPECT_EQ(rule_ids.at(uint64_t(res["ruleIndex"])), id);
    const std::string_view level = res["level"];
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note") << level;
    EXPECT_FALSE(std::string_view(res["message"]["text"]).empty());
    auto loc = res["locations"].at(0)["physicalLocation"];
    const std::string_view uri = loc["artifactLocation"]["uri"];
    EXPECT_FALSE(uri.empty());
    if (uri.ends_with(".py")) {
      python_location = true;
      EXPECT_GT(int64_t(loc["region"]["startLine"]), 0);
      EXPECT_EQ(std::string_view(res["properties"]["trace"]), kVit) << "only vit has Python frames";
    }
  }
  EXPECT_TRUE(python_location) << "vit's findings point at its Python frames";
}

TEST(AnalyzeFormats, JunitIsWellFormedWithOneTestcasePerTrace) {
  const std::string bad = write_file("junit_bad.json", "{\"traceEvents\": [");
  const std::string out = scratch() + "/report.xml";
  const ProcResult r = analyze({"--format", "junit", "-o", out, kResnet, kCpuOnly, bad});
  EXPECT_EQ(r.exit_code, 2) << "a bad file outranks a flagged one";
  const std::string xml = read_file(out);
  if (fs::exists("/usr/bin/xmllint")) {
    const ProcResult lint = run_process({"/usr/bin/xmllint", "--noout", out});
    EXPECT_EQ(lint.exit_code, 0) << lint.err;
  } else {
    GTEST_LOG_(INFO) << "xmllint absent: well-formedness not checked by a parser";
  }
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"1\""), std::string::npos) << xml.substr(0, 400);
  size_t cases = 0;
  for (size_t at = 0; (at = xml.find("<testcase ", at)) != std::string::npos; ++at) ++cases;
  EXPECT_EQ(cases, 3u);
  EXPECT_NE(xml.find("<failure type=\"flagged\""), std::string::npos);
  EXPECT_NE(xml.find("<error type=\"input\""), std::string::npos);
}

TEST(AnalyzeFormats, MarkdownHasATableOfGroupedFindings) {
  const ProcResult r = analyze({"--format", "md", "--fail-on", "none", kResnet});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# ttap analyze\n", 0), 0u);
  EXPECT_NE(r.out.find("| # | severity | id | in | occurrences | cost |"), std::string::npos) << r.out;
}

TEST(AnalyzeGate, ExitCodesFollowFailOnAndFailScore) {
  EXPECT_EQ(analyze({kResnet}).exit_code, 1) << "default --fail-on warning";
  EXPECT_EQ(analyze({"--fail-on", "none", kResnet}).exit_code, 0);
  EXPECT_EQ(analyze({"--fail-on", "warning", kResnet}).exit_code, 1);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-score", "0", kResnet}).exit_code, 1);
  // The score is a mean of [0, 1] window scores: 1.0 is only reached when every window is.
  const ProcResult json = analyze({"--format", "json", kResnet});
  simdjson::dom::parser p;
  const double score = double(parse(p, json.out)["traces"].at(0)["score"]);
  ASSERT_LT(score, 1.0);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-score", std::to_string(score + 1e-3), kResnet}).exit_code, 0);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-score", std::to_string(score - 1e-3), kResnet}).exit_code, 1);
  // --fail-on error fails only when some finding is an error.
  bool any_error = false;
  for (auto w : parse(p, json.out)["traces"].at(0)["flagged_windows"].get_array())
    for (auto f : w["findings"].get_array()) any_error |= std::string_view(f["severity"]) == "error";
  EXPECT_EQ(analyze({"--fail-on", "error", kResnet}).exit_code, any_error ? 1 : 0);
  // Usage and input errors: 2.
  EXPECT_EQ(analyze({"--fail-on", "sometimes", kResnet}).exit_code, 2);
  EXPECT_EQ(analyze({"--fail-score", "1.5", kResnet}).exit_code, 2);
  EXPECT_EQ(analyze({"--format", "pdf", kResnet}).exit_code, 2);
  const ProcResult missing = analyze({scratch() + "/no_such_trace.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no such file or folder"), std::string::npos) << missing.err;
}

TEST(AnalyzeGate, NamedModelThatDoesNotExistIsBadInput) {
  const ProcResult r = run_ttap({"analyze", "--scorer", "model", "--model", scratch() + "/no_model_here", kCpuOnly});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no_model_here"), std::string::npos) << r.err;
}

TEST(AnalyzeGate, UnreachableLlmWarnsAndFallsBackToRules) {
  // Port 9 (discard) on localhost is closed here: the connection is refused at once.
  const ProcResult r = analyze({"--format", "json", "--fail-on", "warning", "--llm-url", "http://127.0.0.1:9/v1", "--llm-retries", "0", "--llm-timeout", "5", kResnet},
                               {"TTAP_LLM_API_KEY=sk-test-never-printed"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.find("sk-test-never-printed"), std::string::npos);
  EXPECT_EQ(r.err.find("sk-test-never-printed"), std::string::npos);
  simdjson::dom::parser p;
  simdjson::dom::element t = parse(p, r.out)["traces"].at(0);
  bool warned = false;
  for (auto w : t["warnings"].get_array()) warned |= std::string_view(w).find("LLM unavailable") != std::string_view::npos;
  EXPECT_TRUE(warned) << r.out.substr(0, 2000);
  EXPECT_FALSE(ids_in(t).empty()) << "the rules still classify the windows";
  EXPECT_TRUE(bool(parse(p, r.out)["settings"]["llm"]));
}

TEST(AnalyzeFolders, RecursiveWithABadFileMixedIn) {
  const std::string dir = scratch() + "/batch";
  fs::create_directories(dir + "/nested/deeper");
  fs::copy_file(kResnet, dir + "/resnet.json.gz", fs::copy_options::overwrite_existing);
  fs::copy_file(kCpuOnly, dir + "/nested/deeper/cpu.json.gz", fs::copy_options::overwrite_existing);
  const std::string gz = read_file(kVit);
  std::ofstream(dir + "/nested/truncated.json.gz", std::ios::binary) << gz.substr(0, gz.size() / 2);
  std::ofstream(dir + "/nested/notes.txt") << "not a trace, not picked up";
  const ProcResult r = analyze({"--format", "json", "-j", "2", dir});
  EXPECT_EQ(r.exit_code, 2) << "a CI job must notice the bad file";
  simdjson::dom::parser p;
  auto doc = parse(p, r.out);
  EXPECT_EQ(int64_t(doc["summary"]["traces"]), 3);
  EXPECT_EQ(int64_t(doc["summary"]["errors"]), 1);
  std::map<std::string, std::string> verdicts;
  for (auto t : doc["traces"].get_array()) verdicts[std::string(std::string_view(t["path"]))] = std::string(std::string_view(t["verdict"]));
  EXPECT_EQ(verdicts[dir + "/resnet.json.gz"], "flagged");
  EXPECT_EQ(verdicts[dir + "/nested/truncated.json.gz"], "error");
  EXPECT_EQ(verdicts.count(dir + "/nested/deeper/cpu.json.gz"), 1u);
  EXPECT_NE(r.err.find("truncated.json.gz"), std::string::npos) << "the failure is logged: " << r.err;
  // The same batch as text ends with the summary table, one row per file.
  const ProcResult text = analyze({"-j", "1", dir});
  EXPECT_NE(text.out.find("3 traces: 1 flagged, 1 clean, 1 failed to analyze"), std::string::npos) << text.out;
  // An empty folder is an error too, not a silent pass.
  fs::create_directories(scratch() + "/empty_batch");
  EXPECT_EQ(analyze({scratch() + "/empty_batch"}).exit_code, 2);
}

TEST(AnalyzeConfig, IgnoresSuppressAFindingAndFlagsWin) {
  const ProcResult base = analyze({"--format", "json", kResnet});
  simdjson::dom::parser p;
  const std::set<std::string> ids = ids_in(parse(p, base.out)["traces"].at(0));
  ASSERT_FALSE(ids.empty());
  std::string ignore = "[";
  for (const auto& id : ids) ignore += (ignore.size() > 1 ? "," : "") + std::string("{\"id\":\"") + id + "\",\"reason\":\"known\"}";
  ignore += "]";
  const std::string all =
      write_file("ignore_all.json", "{\"fail_on\":\"warning\",\"top_k\":3,\"flag_spacing\":2,\"ignore\":" + ignore + "}");
  const ProcResult r = analyze({"--format", "json", "--config", all, kResnet});
  EXPECT_EQ(r.exit_code, 0) << "every finding suppressed: the gate passes\n" << r.err;
  auto doc = parse(p, r.out);
  simdjson::dom::element t = doc["traces"].at(0);
  EXPECT_TRUE(ids_in(t).empty());
  EXPECT_GT(int64_t(t["suppressed"]), 0);
  EXPECT_EQ(std::string_view(t["verdict"]), "clean");
  EXPECT_EQ(int64_t(doc["settings"]["top_k"]), 3) << "the config's top_k";
  EXPECT_EQ(int64_t(doc["settings"]["flag_spacing"]), 2) << "the config's flag_spacing";
  EXPECT_EQ(std::string_view(doc["settings"]["config"]), all);
  // A flag wins over the file.
  simdjson::dom::parser p2;
  EXPECT_EQ(int64_t(parse(p2, analyze({"--format", "json", "--config", all, "--top-k", "4", kResnet}).out)["settings"]["top_k"]), 4);
  // Suppressing by trace glob: only the matching trace.
  const std::string by_trace = write_file("ignore_trace.json", R"({"fail_on":"warning","ignore":[{"trace":"*resnet50*"}]})");
  EXPECT_EQ(analyze({"--config", by_trace, kResnet}).exit_code, 0);
  EXPECT_EQ(analyze({"--config", by_trace, "--top-k", "5", data_path("hta_ddp_a100_nccl.json.gz")}).exit_code, 1)
      << "the glob does not match the DDP trace, whose exposed communication is flagged";
}

TEST(AnalyzeConfig, BadConfigIsAClearError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"fail_on\": \"sometimes\"}", "fail_on"},
      {"{\"top_k\": -1}", "top_k"},
      {"{\"flag_spacing\": \"wide\"}", "flag_spacing"},
      {"{\"ignores\": []}", "unknown key"},
      {"{\"ignore\": [{}]}", "needs at least one"},
      {"{\"ignore\": [{\"id\": \"slow_code\"}]}", "not a catalog id"},
      {"{\"llm\": {\"api_key\": \"sk-x\"}}", "TTAP_LLM_API_KEY"},
      {"{\"windows\": ", "not valid JSON"},
      {"[1, 2]", "JSON object"},
  };
  int n = 0;
  for (const auto& [content, message] : cases) {
    const std::string path = write_file("bad_config" + std::to_string(n++) + ".json", content);
    const ProcResult r = analyze({"--config", path, kCpuOnly});
    EXPECT_EQ(r.exit_code, 2) << content;
    EXPECT_NE(r.err.find(message), std::string::npos) << content << "\n" << r.err;
    EXPECT_EQ(r.err.find("sk-x"), std::string::npos);
    EXPECT_TRUE(r.out.empty()) << content;
  }
  EXPECT_EQ(analyze({"--config", scratch() + "/missing_config.json", kCpuOnly}).exit_code, 2);
}

}  // namespace
