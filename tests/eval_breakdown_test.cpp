// `ttap eval DIR --by KEY`: each split's figures per value of a manifest key. A labeled set
// made of several backgrounds pools their traces into one trace AUC; the breakdown shows
// which background the figures come from (on ttap-bench-x val, the good crops of one
// background score above its bad ones while the others rank right).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "suite_support.hpp"

namespace ttap {
namespace {

using suite::data_path;

struct Line {
  const char* trace;
  const char* label;
  const char* background;  // nullptr: the line has no background key
};

// The rules scorer: no model needed, and its figures are the same run to run.
std::string write_dataset(const std::string& dir, const std::vector<Line>& lines) {
  std::filesystem::create_directories(dir);
  std::ofstream m(dir + "/manifest.jsonl");
  for (const Line& l : lines) {
    const std::string bad_range =
        std::string(l.label) == "bad" ? R"(, "anti_patterns": [{"type": "dataloader_stall", "ts_begin": 0, "ts_end": 4e15}])" : "";
    const std::string background = l.background ? fmt::format(R"(, "background": "{}")", l.background) : "";
    m << fmt::format(R"({{"trace": "{}", "label": "{}", "task": "t", "split": "test"{}{}, "inject2": {{"seed": 1}}}})", data_path(l.trace),
                     l.label, background, bad_range)
      << "\n";
  }
  return dir;
}

double number(simdjson::dom::element e) {
  double v = std::nan("");
  if (e.get_double().get(v) != simdjson::SUCCESS) return std::nan("");
  return v;
}

const std::vector<Line> kResnet = {{"kineto_resnet50_v100_nw0.json.gz", "bad", "resnet"},
                                   {"kineto_resnet50_v100_nw4.json.gz", "good", "resnet"}};

TEST(EvalBreakdown, EachValueHasTheFiguresOfItsOwnLines) {
  std::vector<Line> all = kResnet;
  all.push_back({"tracelens_qwen05b_h100.json.gz", "good", "qwen"});
  all.push_back({"hta_event_sync_small.json.gz", "bad", nullptr});
  const std::string dir = write_dataset(suite::scratch() + "/by-all", all);
  const auto by = suite::run_ttap({"eval", dir, "--scorer", "rules", "--format", "json", "--by", "background"});
  ASSERT_EQ(by.exit_code, 0) << by.err;
  const auto plain = suite::run_ttap({"eval", dir, "--scorer", "rules", "--format", "json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto resnet_only = suite::run_ttap(
      {"eval", write_dataset(suite::scratch() + "/by-resnet", kResnet), "--scorer", "rules", "--format", "json"});
  ASSERT_EQ(resnet_only.exit_code, 0) << resnet_only.err;

  simdjson::dom::parser p1, p2, p3;
  simdjson::dom::element test = p1.parse(by.out)["groups"]["test"];
  simdjson::dom::element test_plain = p2.parse(plain.out)["groups"]["test"];
  simdjson::dom::element resnet_alone = p3.parse(resnet_only.out)["groups"]["test"];
  // The split's own figures do not move with --by.
  for (const char* f : {"trace_auc", "window_auc", "localization", "classification_accuracy"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(number(test[f]), number(test_plain[f]));
  }
  EXPECT_EQ(std::string_view(test["by"]["key"]), "background");
  simdjson::dom::object values = test["by"]["values"];
  EXPECT_EQ(values.size(), 3u) << "resnet, qwen and (none)";
  simdjson::dom::element resnet = values["resnet"];
  EXPECT_EQ(int64_t(resnet["traces"]), 2);
  EXPECT_EQ(int64_t(resnet["bad"]), 1);
  // A value's figures are those of a dataset holding only its lines.
  for (const char* f : {"trace_auc", "window_auc", "localization", "classification_accuracy", "finding_coverage"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(number(resnet[f]), number(resnet_alone[f]));
  }
  EXPECT_GT(number(resnet["mean_score_bad"]), number(resnet["mean_score_good"])) << "nw0 above nw4";
  simdjson::dom::element qwen = values["qwen"];
  EXPECT_EQ(int64_t(qwen["traces"]), 1);
  EXPECT_TRUE(qwen["trace_auc"].is_null()) << "one good trace: no AUC";
  EXPECT_TRUE(qwen["mean_score_bad"].is_null());
  EXPECT_EQ(int64_t(values["(none)"]["bad"]), 1) << "a line without the key";

  const auto text = suite::run_ttap({"eval", dir, "--scorer", "rules", "--by", "background"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("test split by background"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("resnet"), std::string::npos) << text.out;
}

TEST(EvalBreakdown, AKeyNoLineHasOrThatNamesNoGroupIsBadInput) {
  const std::string dir = write_dataset(suite::scratch() + "/by-bad", kResnet);
  const auto missing = suite::run_ttap({"eval", dir, "--scorer", "rules", "--by", "hardware"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no line of the manifest has \"hardware\""), std::string::npos) << missing.err;
  EXPECT_TRUE(missing.out.empty()) << "an error before any trace is scored";
  const auto object = suite::run_ttap({"eval", dir, "--scorer", "rules", "--by", "inject2"});
  EXPECT_EQ(object.exit_code, 2);
  EXPECT_NE(object.err.find("manifest.jsonl:1: \"inject2\" is not a string, number or boolean"), std::string::npos) << object.err;
}

}  // namespace
}  // namespace ttap
