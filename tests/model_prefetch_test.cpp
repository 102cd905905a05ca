// The detector loaded on a background thread while the trace is read (ModelPrefetch, and
// `ttap analyze`, which starts one): scoring waits for it instead of falling back to the
// rules, and the scores are bit for bit those of a model loaded on demand.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "suite_support.hpp"
#include "ttap/load.hpp"
#include "ttap/scoring.hpp"
#include "ttap/tree.hpp"
#include "ttap/windows.hpp"

namespace ttap {
namespace {

using suite::data_path;

const std::string kModels = std::string(TTAP_SOURCE_DIR) + "/models";
constexpr const char* kTrace = "kineto_resnet50_v100_nw4.json.gz";

class ModelPrefetchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("TTAP_SPM_MODULE", TTAP_SPM_MODULE_PATH, 1);
    ::setenv("TTAP_TORCH_MODULE", TTAP_TORCH_MODULE_PATH, 1);
  }
  // The model scored on demand: no prefetch names this model path, so score_windows loads it.
  static std::vector<double> on_demand_scores(const Trace& t, const EventTree& tree, const std::vector<Window>& windows) {
    ScoreOptions o;
    o.model = kModels + "/detector.pt";  // another spelling of the same file: its own cache entry
    o.device = "cpu";
    const TraceScores s = score_windows(t, tree, windows, o);
    EXPECT_EQ(s.scorer, "model");
    return s.window;
  }
};

TEST_F(ModelPrefetchTest, ScoringWaitsForTheBackgroundLoadAndGetsTheSameScores) {
  ScoreOptions o;
  o.model = kModels;
  o.device = "cpu";
  const ModelPrefetch prefetch(o);  // libtorch starts loading now
  const Trace t = load_trace(data_path(kTrace));
  const EventTree tree = EventTree::build(t);
  const std::vector<Window> windows = make_windows(t, tree, {});
  ASSERT_EQ(windows.size(), 100u);
  // Called while the load may still be running: it must wait for the model, not fall back.
  const TraceScores s = score_windows(t, tree, windows, o);
  EXPECT_EQ(s.scorer, "model");
  EXPECT_TRUE(s.warning.empty()) << s.warning;
  EXPECT_EQ(s.window, on_demand_scores(t, tree, windows));
}

TEST_F(ModelPrefetchTest, AScorerWithoutAModelStartsNothing) {
  ScoreOptions o;
  o.scorer = Scorer::rules;
  o.model = "/nonexistent/model/folder";
  const ModelPrefetch prefetch(o);  // would fail if it tried: it must not try
  const Trace t = load_trace(data_path(kTrace));
  const EventTree tree = EventTree::build(t);
  const TraceScores s = score_windows(t, tree, make_windows(t, tree, {}), o);
  EXPECT_EQ(s.scorer, "rules");
  EXPECT_TRUE(s.warning.empty()) << s.warning;
}

// End to end: `ttap analyze` loads the model in the background (it says so at -v), writes
// its whole report before leaving without libtorch's static destructors, and its window
// scores are those of the model loaded on demand.
TEST_F(ModelPrefetchTest, AnalyzeReportsTheOnDemandScores) {
  const std::string out = suite::scratch() + "/prefetch.json";
  const suite::ProcResult r = suite::run_ttap(
      {"-v", "analyze", data_path(kTrace), "--model", kModels, "--device", "cpu", "--format", "json", "--fail-on", "none", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("detector loaded in the background"), std::string::npos) << r.err;

  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.load(out).get(doc), simdjson::SUCCESS) << suite::read_file(out);
  simdjson::dom::element trace = doc["traces"].at(0);
  EXPECT_EQ(std::string_view(trace["scorer"]), "model");
  std::vector<double> reported;
  for (simdjson::dom::element w : trace["windows"].get_array()) reported.push_back(double(w["score"]));

  const Trace t = load_trace(data_path(kTrace));
  const EventTree tree = EventTree::build(t);
  EXPECT_EQ(reported, on_demand_scores(t, tree, make_windows(t, tree, {})));
}

// Every worker scores like the first: the model is loaded by one thread (the prefetch) and
// run by the -j workers, and libtorch's executor settings are per thread.
TEST_F(ModelPrefetchTest, WorkersScoreLikeOneWorker) {
  const std::vector<std::string> traces = {data_path(kTrace), data_path("kineto_resnet50_v100_nw0.json.gz"),
                                           data_path("tracelens_vit_nsfw_h100.json.gz"), data_path("hta_alexnet_a100_small.json.gz")};
  auto window_scores = [&](const std::string& jobs) {
    std::vector<std::string> args = {"analyze", "--model", kModels, "--device", "cpu", "--format", "json", "--fail-on", "none", "-j", jobs};
    args.insert(args.end(), traces.begin(), traces.end());
    const suite::ProcResult r = suite::run_ttap(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser p;
    simdjson::dom::element doc;
    std::vector<std::vector<double>> out;
    if (p.parse(r.out).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << r.out;
      return out;
    }
    for (simdjson::dom::element t : doc["traces"].get_array()) {
      out.emplace_back();
      for (simdjson::dom::element w : t["windows"].get_array()) out.back().push_back(double(w["score"]));
    }
    return out;
  };
  const auto one = window_scores("1");
  ASSERT_EQ(one.size(), traces.size());
  EXPECT_EQ(window_scores("3"), one);
}

}  // namespace
}  // namespace ttap
