// `ttap eval DIR`: scores a labeled dataset (docs/DATASET.md) and reports trace and window
// AUC-ROC, localization and rule classification accuracy per split, with the test split
// also cut into seen and unseen tasks (tasks absent from train).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/dataset.hpp"
#include "ttap/input.hpp"
#include "ttap/llm.hpp"
#include "ttap/metrics.hpp"
#include "ttap/rules.hpp"
#include "ttap/scoring.hpp"

namespace ttap::cli {

namespace {

struct Sample {
  const DatasetEntry* entry = nullptr;
  double trace_score = 0;
  std::vector<double> window_scores;
  std::vector<uint8_t> window_labels;
  std::vector<std::vector<std::string>> window_ids;
  std::vector<std::string> predicted;   // per window: the rule classification of flagged windows ("" otherwise)
  std::vector<std::vector<std::string>> llm_predicted;  // per window: the LLM's ids for flagged positive windows
  size_t llm_failed = 0;
  std::vector<uint8_t> range_localized;  // per labeled range: overlaps a top-k window
};

struct IdStats {
  std::vector<double> positive_scores;  // windows labeled with this id
  size_t ranges = 0, localized = 0, classified = 0, correct = 0;
  std::map<std::string, size_t> predicted;  // confusion row
};

struct Group {
  std::vector<double> trace_scores, window_scores;
  std::vector<uint8_t> trace_labels, window_labels;
  size_t ranges = 0, localized = 0, classified = 0, correct = 0;
  size_t llm_classified = 0, llm_correct = 0, llm_failed = 0;
  std::map<std::string, IdStats> ids;
};

Sample evaluate_trace(const DatasetEntry& e, const EvalOptions& o, const ScoreOptions& so, LlmClassifier* llm,
                      std::string& warning) {
  Loaded l = load_and_build(e.path);
  const std::vector<Window> windows = make_windows(l.trace, l.tree, {o.windows, o.max_events});
  if (windows.empty()) throw InputError(e.path, "no activity to cut into windows");
  const TraceScores scores = score_windows(l.trace, l.tree, windows, so);
  if (!scores.warning.empty()) warning = scores.warning;
  Sample s;
  s.entry = &e;
  s.trace_score = scores.trace;
  s.window_scores = scores.window;
  s.window_labels = window_labels(windows, e.ranges);
  s.window_ids = window_label_ids(windows, e.ranges);
  s.predicted.assign(windows.size(), "");
  const std::vector<size_t> flagged = top_k(scores.window, static_cast<size_t>(o.top_k));
  const RuleEngine rules(l.trace, l.tree);
  for (size_t w : flagged) {
    if (!s.window_labels[w]) continue;
    // The window's class is the finding that costs the most time there: a window can show
    // several patterns (FP32 math under a DataLoader stall), and the costliest is the one
    // that explains why it was flagged.
    const auto findings = rules.detect(windows[w].begin, windows[w].end);
    const auto costliest = std::max_element(findings.begin(), findings.end(),
                                            [](const RuleFinding& a, const RuleFinding& b) { return a.cost < b.cost; });
    s.predicted[w] = costliest == findings.end() ? "none" : costliest->id;
  }
  s.llm_predicted.assign(windows.size(), {});
  if (llm) {
    std::vector<LlmWindow> asked;
    std::vector<size_t> which;
    for (size_t w : flagged)
      if (s.window_labels[w]) {
        asked.push_back({windows[w].begin, windows[w].end, rules.detect(windows[w].begin, windows[w].end)});
        which.push_back(w);
      }
    const std::vector<LlmVerdict> verdicts = llm->classify(l.trace, l.tree, rules, asked);
    for (size_t i = 0; i < verdicts.size(); ++i) {
      if (verdicts[i].ok) s.llm_predicted[which[i]] = verdicts[i].ids;
      else ++s.llm_failed, warning = "LLM: " + verdicts[i].error;
    }
  }
  for (const LabeledRange& r : e.ranges) {
    bool hit = false;
    for (size_t w : flagged) hit = hit || (windows[w].begin <= r.end && r.begin < windows[w].end);
    s.range_localized.push_back(hit);
  }
  return s;
}

void add(Group& g, const Sample& s) {
  g.trace_scores.push_back(s.trace_score);
  g.trace_labels.push_back(s.entry->label == "bad");
  for (size_t w = 0; w < s.window_scores.size(); ++w) {
    g.window_scores.push_back(s.window_scores[w]);
    g.window_labels.push_back(s.window_labels[w]);
    if (!s.window_labels[w]) continue;
    for (const std::string& id : s.window_ids[w]) g.ids[id].positive_scores.push_back(s.window_scores[w]);
    if (!s.llm_predicted[w].empty()) {
      ++g.llm_classified;
      for (const std::string& id : s.llm_predicted[w])
        if (std::count(s.window_ids[w].begin(), s.window_ids[w].end(), id)) {
          ++g.llm_correct;
          break;
        }
    }
    if (s.predicted[w].empty()) continue;
    ++g.classified;
    const bool ok = std::count(s.window_ids[w].begin(), s.window_ids[w].end(), s.predicted[w]) > 0;
    g.correct += ok;
    for (const std::string& id : s.window_ids[w]) {
      IdStats& st = g.ids[id];
      ++st.classified;
      st.correct += ok;
      ++st.predicted[s.predicted[w]];
    }
  }
  g.llm_failed += s.llm_failed;
  for (size_t i = 0; i < s.entry->ranges.size(); ++i) {
    IdStats& st = g.ids[s.entry->ranges[i].type];
    ++st.ranges;
    st.localized += s.range_localized[i];
    ++g.ranges;
    g.localized += s.range_localized[i];
  }
}

// Window AUC of one id: its windows against every negative window of the group.
double id_auc(const Group& g, const IdStats& st) {
  std::vector<double> scores = st.positive_scores;
  std::vector<uint8_t> labels(scores.size(), 1);
  for (size_t i = 0; i < g.window_scores.size(); ++i)
    if (!g.window_labels[i]) {
      scores.push_back(g.window_scores[i]);
      labels.push_back(0);
    }
  return auc_roc(scores, labels);
}

std::string num(double v) { return std::isnan(v) ? "null" : fmt::format("{:.4f}", v); }
std::string pct_text(double v) { return std::isnan(v) ? "  n/a " : fmt::format("{:6.3f}", v); }
double ratio(size_t a, size_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : std::nan(""); }

}  // namespace

int run_eval(const EvalOptions& o) {
  const std::vector<DatasetEntry> entries = read_manifest(o.dataset);
  ScoreOptions so;
  so.scorer = o.scorer == "rules" ? Scorer::rules : o.scorer == "cluster" ? Scorer::cluster : Scorer::model;
  so.model = o.model;
  so.device = o.device;
  so.threads = o.threads;
  so.max_events = o.max_events;

  std::unique_ptr<LlmClassifier> llm;
  if (!o.llm_url.empty()) {
    LlmConfig c;
    c.url = o.llm_url;
    c.model = o.llm_model;
    c.cache_dir = o.llm_cache;
    c.timeout_s = o.llm_timeout;
    for (const char* var : {"TTAP_LLM_API_KEY", "OPENAI_API_KEY"})
      if (const char* k = std::getenv(var); k && *k && c.api_key.empty()) c.api_key = k;
    llm = std::make_unique<LlmClassifier>(std::move(c));
  }

  std::set<std::string> train_tasks;
  for (const auto& e : entries)
    if (e.split == "train") train_tasks.insert(e.task);

  std::vector<std::string> order{"train", "val", "test", "test/seen", "test/unseen"};
  std::map<std::string, Group> groups;
  const bool tty = ::isatty(STDERR_FILENO) && spdlog::get_level() <= spdlog::level::info;
  std::string warning, scorer_used;
  size_t failed = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DatasetEntry& e = entries[i];
    if (tty) fmt::print(stderr, "\r\033[Kttap: eval {}/{} {}", i + 1, entries.size(), e.trace);
    try {
      const Sample s = evaluate_trace(e, o, so, llm.get(), warning);
      add(groups[e.split], s);
      if (e.split == "test") add(groups[train_tasks.count(e.task) ? "test/seen" : "test/unseen"], s);
    } catch (const InputError& err) {
      if (tty) fmt::print(stderr, "\r\033[K");
      spdlog::error("{}", err.what());
      ++failed;
    }
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!warning.empty()) spdlog::warn("{}", warning);

  std::string out;
  const std::string rule = fmt::format("a window is positive when a labeled range covers >= {:.0f}% of it; top-k = {}",
                                       kPositiveWindowShare * 100, o.top_k);
  if (o.format == "json") {
    out = fmt::format("{{\"schema\": \"ttap.eval/1\", \"dataset\": \"{}\", \"scorer\": \"{}\", \"windows\": {}, \"top_k\": {}, "
                      "\"window_rule\": \"{}\", \"failed\": {}, \"groups\": {{",
                      o.dataset, o.scorer, o.windows, o.top_k, rule, failed);
    bool first = true;
    for (const std::string& name : order) {
      if (!groups.count(name)) continue;
      const Group& g = groups[name];
      out += fmt::format("{}\"{}\": {{\"traces\": {}, \"bad\": {}, \"trace_auc\": {}, \"windows\": {}, \"positive_windows\": {}, "
                         "\"window_auc\": {}, \"localization\": {}, \"classification_accuracy\": {}, \"classified\": {}, "
                         "\"llm_classification_accuracy\": {}, \"llm_classified\": {}, \"llm_failed\": {}, \"ids\": {{",
                         first ? "" : ", ", name, g.trace_scores.size(),
                         std::count(g.trace_labels.begin(), g.trace_labels.end(), 1), num(auc_roc(g.trace_scores, g.trace_labels)),
                         g.window_scores.size(), std::count(g.window_labels.begin(), g.window_labels.end(), 1),
                         num(auc_roc(g.window_scores, g.window_labels)), num(ratio(g.localized, g.ranges)),
                         num(ratio(g.correct, g.classified)), g.classified, num(ratio(g.llm_correct, g.llm_classified)),
                         g.llm_classified, g.llm_failed);
      first = false;
      bool first_id = true;
      for (const auto& [id, st] : g.ids) {
        std::string confusion;
        for (const auto& [p, n] : st.predicted) confusion += fmt::format("{}\"{}\": {}", confusion.empty() ? "" : ", ", p, n);
        out += fmt::format("{}\"{}\": {{\"ranges\": {}, \"localization\": {}, \"window_auc\": {}, \"classification_accuracy\": {}, "
                           "\"predicted\": {{{}}}}}",
                           first_id ? "" : ", ", id, st.ranges, num(ratio(st.localized, st.ranges)), num(id_auc(g, st)),
                           num(ratio(st.correct, st.classified)), confusion);
        first_id = false;
      }
      out += "}}";
    }
    out += "}}\n";
  } else {
    out = fmt::format("ttap eval {} (scorer {}, {} windows per trace; {})\n", o.dataset, o.scorer, o.windows, rule);
    if (failed) out += fmt::format("{} traces failed to load (see the errors above)\n", failed);
    out += fmt::format("\n{:<12} {:>6} {:>5} {:>9} {:>8} {:>8} {:>10} {:>12} {:>14}{}\n", "split", "traces", "bad", "trace AUC",
                       "windows", "positive", "window AUC", "localization", "classification", llm ? "  LLM classification" : "");
    for (const std::string& name : order) {
      if (!groups.count(name)) continue;
      const Group& g = groups[name];
      out += fmt::format("{:<12} {:>6} {:>5} {:>9} {:>8} {:>8} {:>10} {:>12} {:>14}{}\n", name, g.trace_scores.size(),
                         std::count(g.trace_labels.begin(), g.trace_labels.end(), 1), pct_text(auc_roc(g.trace_scores, g.trace_labels)),
                         g.window_scores.size(), std::count(g.window_labels.begin(), g.window_labels.end(), 1),
                         pct_text(auc_roc(g.window_scores, g.window_labels)), pct_text(ratio(g.localized, g.ranges)),
                         pct_text(ratio(g.correct, g.classified)),
                         llm ? fmt::format("  {} ({} failed)", pct_text(ratio(g.llm_correct, g.llm_classified)), g.llm_failed) : "");
    }
    if (groups.count("test")) {
      out += fmt::format("\nper id (test split): ranges, localization, window AUC (id windows vs negatives), rule classification\n");
      out += fmt::format("{:<24} {:>6} {:>12} {:>10} {:>14}  most predicted\n", "id", "ranges", "localization", "window AUC", "classification");
      for (const auto& [id, st] : groups["test"].ids) {
        std::string top;
        size_t best = 0;
        for (const auto& [p, n] : st.predicted)
          if (n > best) best = n, top = fmt::format("{} ({})", p, n);
        out += fmt::format("{:<24} {:>6} {:>12} {:>10} {:>14}  {}\n", id, st.ranges, pct_text(ratio(st.localized, st.ranges)),
                           pct_text(id_auc(groups["test"], st)), pct_text(ratio(st.correct, st.classified)), top);
      }
    }
  }
  write_output(o.output, out);
  return failed ? kBadInput : kOk;
}

}  // namespace ttap::cli
