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
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "../classify/classify.hpp"
#include "commands.hpp"
#include "ttap/dataset.hpp"
#include "ttap/hybrid.hpp"
#include "ttap/input.hpp"
#include "ttap/llm.hpp"
#include "ttap/metrics.hpp"
#include "ttap/rules.hpp"
#include "ttap/scoring.hpp"
#include "ttap/table.hpp"

namespace ttap::cli {

namespace {

struct Sample {
  const DatasetEntry* entry = nullptr;
  double trace_score = 0;
  double recoverable = 0;  // TraceReport::recoverable_share: the share of step time the findings could give back
  std::vector<double> window_scores;
  std::vector<uint8_t> window_labels;
  std::vector<std::vector<std::string>> window_ids;
  // Per window, for flagged positive windows only (empty otherwise): the id `analyze` names
  // first there, "none" when it reports nothing for the window, and the costliest id.
  std::vector<std::string> predicted, costliest;
  std::vector<std::vector<std::string>> llm_predicted;  // per window: the LLM's ids for flagged positive windows
  std::vector<uint8_t> llm_asked;                       // per window: the LLM was asked (its answer may be empty)
  size_t llm_failed = 0;
  std::vector<uint8_t> range_localized;  // per labeled range: overlaps a flagged window
  std::vector<uint8_t> range_in_top_k;   // per labeled range: overlaps one of the plain top k (no spacing)
};

struct IdStats {
  std::vector<double> positive_scores;  // windows labeled with this id
  size_t ranges = 0, localized = 0, classified = 0, correct = 0;
  std::map<std::string, size_t> predicted;  // confusion row
};

struct Group {
  std::vector<double> trace_scores, trace_recoverable, window_scores;
  std::vector<uint8_t> trace_labels, window_labels;
  // classified: the flagged positive windows (every one counts; silence is a miss);
  // covered: those where analyze reports any finding.
  size_t ranges = 0, localized = 0, in_top_k = 0, classified = 0, correct = 0, covered = 0, costliest_correct = 0;
  // llm_correct: a labeled id among the LLM's ids; llm_first_correct: the id it names
  // first is labeled (the stricter count, comparable with the rules' first-named id).
  size_t llm_classified = 0, llm_correct = 0, llm_first_correct = 0, llm_failed = 0;
  std::map<std::string, IdStats> ids;
};

// A trace as `analyze` reports it (analyze_trace, without the LLM, which eval asks itself
// about the positive windows only), joined with its labels. Classification reads the
// findings a user would read: the id named first in each flagged window.
Sample evaluate_trace(const DatasetEntry& e, const EvalOptions& o, const ScoreOptions& so, LlmClassifier* llm,
                      std::string& warning) {
  Loaded l = load_and_build(e.path);
  AnalyzeSettings settings;
  settings.windows = o.windows;
  settings.top_k = o.top_k;
  settings.flag_spacing = o.flag_spacing;
  settings.score = so;
  settings.fail_on = FailOn::none;
  const TraceReport r = analyze_trace(l.trace, l.tree, settings);
  if (r.windows.empty()) throw InputError(e.path, "no activity to cut into windows");
  for (const std::string& w : r.warnings) warning = w;
  std::vector<Window> windows;
  for (const WindowScore& w : r.windows) windows.push_back({w.index, w.begin, w.end, {}, 0});
  Sample s;
  s.entry = &e;
  s.trace_score = r.score;
  s.recoverable = r.recoverable_share;
  for (const WindowScore& w : r.windows) s.window_scores.push_back(w.score);
  s.window_labels = window_labels(windows, e.ranges);
  s.window_ids = window_label_ids(windows, e.ranges);
  s.predicted.assign(windows.size(), "");
  s.costliest.assign(windows.size(), "");
  // Localization and classification use the flagged windows as analyze picks them, zero
  // scores included (a rules-scored window with no finding is silence, and silence is a miss).
  const auto k = static_cast<size_t>(o.top_k);
  const std::vector<size_t> flagged = flag_windows(s.window_scores, k, static_cast<size_t>(o.flag_spacing), false);
  const std::vector<size_t> top = flag_windows(s.window_scores, k, 0, false);
  for (size_t w : flagged) {
    if (!s.window_labels[w]) continue;
    const auto fw = std::find_if(r.flagged.begin(), r.flagged.end(),
                                 [&](const FlaggedWindow& f) { return !f.steady_state && f.index == windows[w].index; });
    if (fw == r.flagged.end() || fw->findings.empty()) {
      s.predicted[w] = s.costliest[w] = "none";
      continue;
    }
    s.predicted[w] = fw->findings.front().id;
    // The costliest finding, the figure eval reported before it read analyze's order.
    s.costliest[w] = std::max_element(fw->findings.begin(), fw->findings.end(),
                                      [](const Finding& a, const Finding& b) { return a.cost < b.cost; })->id;
  }
  s.llm_predicted.assign(windows.size(), {});
  s.llm_asked.assign(windows.size(), 0);
  if (llm) {
    const RuleEngine rules(l.trace, l.tree);
    std::vector<LlmWindow> asked;
    std::vector<size_t> which;
    for (size_t w : flagged)
      if (s.window_labels[w]) {
        asked.push_back({windows[w].begin, windows[w].end, rules.detect(windows[w].begin, windows[w].end)});
        which.push_back(w);
        s.llm_asked[w] = 1;
      }
    const std::vector<LlmVerdict> verdicts = llm->classify(l.trace, l.tree, rules, asked);
    for (size_t i = 0; i < verdicts.size(); ++i) {
      if (verdicts[i].ok) s.llm_predicted[which[i]] = verdicts[i].ids;
      else ++s.llm_failed, warning = "LLM: " + verdicts[i].error;
    }
  }
  const auto overlaps_any = [&](const std::vector<size_t>& picked, const LabeledRange& range) {
    return std::any_of(picked.begin(), picked.end(),
                       [&](size_t w) { return windows[w].begin <= range.end && range.begin < windows[w].end; });
  };
  for (const LabeledRange& range : e.ranges) {
    s.range_localized.push_back(overlaps_any(flagged, range));
    s.range_in_top_k.push_back(overlaps_any(top, range));
  }
  return s;
}

void add(Group& g, const Sample& s) {
  g.trace_scores.push_back(s.trace_score);
  g.trace_recoverable.push_back(s.recoverable);
  g.trace_labels.push_back(s.entry->label == "bad");
  for (size_t w = 0; w < s.window_scores.size(); ++w) {
    g.window_scores.push_back(s.window_scores[w]);
    g.window_labels.push_back(s.window_labels[w]);
    if (!s.window_labels[w]) continue;
    for (const std::string& id : s.window_ids[w]) g.ids[id].positive_scores.push_back(s.window_scores[w]);
    const auto labeled = [&](const std::string& id) { return std::count(s.window_ids[w].begin(), s.window_ids[w].end(), id) > 0; };
    // Every window the LLM was asked about counts: an empty answer or a failed call is a miss.
    if (s.llm_asked[w]) {
      ++g.llm_classified;
      const std::vector<std::string>& answer = s.llm_predicted[w];
      g.llm_correct += std::any_of(answer.begin(), answer.end(), labeled);
      g.llm_first_correct += !answer.empty() && labeled(answer.front());
    }
    if (s.predicted[w].empty()) continue;
    ++g.classified;
    g.covered += s.predicted[w] != "none";
    const bool ok = labeled(s.predicted[w]);
    g.correct += ok;
    g.costliest_correct += labeled(s.costliest[w]);
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
    g.in_top_k += s.range_in_top_k[i];
  }
}

// `--llm-table` rows of one trace: each window the LLM was asked about, with its labeled
// ids, the id analyze names first there and the LLM's ids.
std::string llm_table_rows(const Sample& s) {
  std::string rows;
  for (size_t w = 0; w < s.llm_asked.size(); ++w) {
    if (!s.llm_asked[w]) continue;
    const std::vector<std::string>& answer = s.llm_predicted[w];
    rows += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", s.entry->split, s.entry->trace, w, fmt::join(s.window_ids[w], ","),
                        s.predicted[w].empty() ? "-" : s.predicted[w], answer.empty() ? "-" : fmt::format("{}", fmt::join(answer, ",")));
  }
  return rows;
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

// `--window-table FILE`: one tab-separated row per window of every trace (split, trace,
// window, label, then the hybrid scorer's inputs from hybrid_features), for
// scripts/train/fit_hybrid.py. The model must run: the table is its scores.
int write_window_table(const EvalOptions& o, const std::vector<DatasetEntry>& entries, const ScoreOptions& model) {
  std::string out = "split\ttrace\twindow\tlabel";
  for (const char* f : kHybridFeatures) out += fmt::format("\t{}", f);
  out += "\n";
  const bool tty = ::isatty(STDERR_FILENO) && spdlog::get_level() <= spdlog::level::info;
  size_t failed = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DatasetEntry& e = entries[i];
    if (tty) fmt::print(stderr, "\r\033[Kttap: window table {}/{} {}", i + 1, entries.size(), e.trace);
    try {
      const Loaded l = load_and_build(e.path);
      const std::vector<Window> windows = make_windows(l.trace, l.tree, {o.windows, o.max_events});
      if (windows.empty()) throw InputError(e.path, "no activity to cut into windows");
      const TraceScores scores = score_windows(l.trace, l.tree, windows, model);
      if (scores.scorer != "model") throw InputError(e.path, "the window table needs the detector model: " + scores.warning);
      const std::vector<RuleEvidence> evidence = rule_evidence(l.trace, l.tree, windows);
      const std::vector<uint8_t> labels = window_labels(windows, e.ranges);
      for (size_t w = 0; w < windows.size(); ++w) {
        out += fmt::format("{}\t{}\t{}\t{}", e.split, e.trace, w, labels[w]);
        for (double x : hybrid_features(scores.window[w], evidence[w])) out += fmt::format("\t{:.6g}", x);
        out += "\n";
      }
    } catch (const InputError& err) {
      if (tty) fmt::print(stderr, "\r\033[K");
      spdlog::error("{}", err.what());
      ++failed;
    }
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  write_output(o.window_table, out);
  return failed ? kBadInput : kOk;
}

double mean_score_of(const Group& g, uint8_t label) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < g.trace_scores.size(); ++i)
    if (g.trace_labels[i] == label) sum += g.trace_scores[i], ++n;
  return n ? sum / static_cast<double>(n) : std::nan("");
}

// A group's figures, as every output (JSON and text, a split and a --by value) reports them.
struct Figures {
  size_t traces, bad, windows, positive;
  double trace_auc, recoverable_auc, window_auc, localization, localization_top_k, classification, coverage,
      costliest, llm_any, llm_first, score_good, score_bad;
};

Figures figures_of(const Group& g) {
  const auto positives = [](const std::vector<uint8_t>& labels) {
    return static_cast<size_t>(std::count(labels.begin(), labels.end(), 1));
  };
  return {g.trace_scores.size(), positives(g.trace_labels), g.window_scores.size(), positives(g.window_labels),
          auc_roc(g.trace_scores, g.trace_labels), auc_roc(g.trace_recoverable, g.trace_labels),
          auc_roc(g.window_scores, g.window_labels), ratio(g.localized, g.ranges), ratio(g.in_top_k, g.ranges),
          ratio(g.correct, g.classified), ratio(g.covered, g.classified), ratio(g.costliest_correct, g.classified),
          ratio(g.llm_correct, g.llm_classified), ratio(g.llm_first_correct, g.llm_classified), mean_score_of(g, 0),
          mean_score_of(g, 1)};
}

// `--by KEY`: each value's figures within a split, so that a set made of several
// backgrounds (or tasks, models, machines) shows which of them the figures come from.
std::string breakdown_json(const std::string& key, const std::map<std::string, Group>& values) {
  std::string out = fmt::format(", \"by\": {{\"key\": {}, \"values\": {{", json_string(key));
  bool first = true;
  for (const auto& [value, g] : values) {
    const Figures f = figures_of(g);
    out += fmt::format("{}{}: {{\"traces\": {}, \"bad\": {}, \"trace_auc\": {}, \"mean_score_good\": {}, \"mean_score_bad\": {}, "
                       "\"window_auc\": {}, \"localization\": {}, \"classification_accuracy\": {}, \"classified\": {}, "
                       "\"finding_coverage\": {}}}",
                       first ? "" : ", ", json_string(value), f.traces, f.bad, num(f.trace_auc), num(f.score_good),
                       num(f.score_bad), num(f.window_auc), num(f.localization), num(f.classification), g.classified,
                       num(f.coverage));
    first = false;
  }
  return out + "}}";
}

std::string breakdown_text(const std::string& key, const std::string& split, const std::map<std::string, Group>& values) {
  size_t width = key.size();
  for (const auto& [value, g] : values) width = std::max(width, value.size());
  std::string out = fmt::format("\n{} split by {}: score = mean trace score of the good / bad traces\n", split, key);
  const auto score = [](double v) { return std::isnan(v) ? std::string("n/a") : fmt::format("{:.3f}", v); };
  out += fmt::format("{:<{}} {:>6} {:>5} {:>9} {:>14} {:>10} {:>12} {:>14}\n", key, width, "traces", "bad", "trace AUC",
                     "score good/bad", "window AUC", "localization", "classification");
  for (const auto& [value, g] : values) {
    const Figures f = figures_of(g);
    out += fmt::format("{:<{}} {:>6} {:>5} {:>9} {:>14} {:>10} {:>12} {:>14}\n", value, width, f.traces, f.bad,
                       pct_text(f.trace_auc), score(f.score_good) + "/" + score(f.score_bad), pct_text(f.window_auc),
                       pct_text(f.localization), pct_text(f.classification));
  }
  return out;
}

}  // namespace

int run_eval(const EvalOptions& o) {
  const std::vector<DatasetEntry> entries = read_manifest(o.dataset);
  ScoreOptions so;
  so.scorer = parse_scorer(o.scorer).value_or(Scorer::model);  // the CLI checked the name
  so.model = o.model;
  so.device = o.device;
  so.threads = o.threads;
  so.max_events = o.max_events;

  if (!o.window_table.empty()) {
    ScoreOptions model = so;
    model.scorer = Scorer::model;
    return write_window_table(o, entries, model);
  }

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

  // --by KEY: read every line's value first, so that a key no line has is an error before
  // any trace is scored, not an empty table after all of them.
  std::vector<std::string> by_value(entries.size());
  if (!o.by.empty()) {
    const std::string manifest = o.dataset + "/manifest.jsonl";
    bool any = false;
    for (size_t i = 0; i < entries.size(); ++i) {
      by_value[i] = manifest_text(entries[i], o.by, manifest);
      any |= !by_value[i].empty();
      if (by_value[i].empty()) by_value[i] = "(none)";
    }
    if (!any) throw InputError(manifest, fmt::format("--by {}: no line of the manifest has \"{}\"", o.by, o.by));
  }
  std::map<std::string, std::map<std::string, Group>> by_groups;  // split -> value -> figures

  std::vector<std::string> order{"train", "val", "test", "test/seen", "test/unseen"};
  std::map<std::string, Group> groups;
  const bool tty = ::isatty(STDERR_FILENO) && spdlog::get_level() <= spdlog::level::info;
  std::string warning, scorer_used, llm_table;
  size_t failed = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DatasetEntry& e = entries[i];
    if (tty) fmt::print(stderr, "\r\033[Kttap: eval {}/{} {}", i + 1, entries.size(), e.trace);
    try {
      const Sample s = evaluate_trace(e, o, so, llm.get(), warning);
      add(groups[e.split], s);
      if (!o.by.empty()) add(by_groups[e.split][by_value[i]], s);
      llm_table += llm_table_rows(s);
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
  const std::string rule =
      fmt::format("a window is positive when a labeled range covers >= {:.0f}% of it; top-k = {}, flagged windows >= {} apart",
                  kPositiveWindowShare * 100, o.top_k, o.flag_spacing);
  if (o.format == "json") {
    out = fmt::format("{{\"schema\": \"ttap.eval/1\", \"dataset\": \"{}\", \"scorer\": \"{}\", \"windows\": {}, \"top_k\": {}, "
                      "\"flag_spacing\": {}, \"window_rule\": \"{}\", \"failed\": {}, \"groups\": {{",
                      o.dataset, o.scorer, o.windows, o.top_k, o.flag_spacing, rule, failed);
    bool first = true;
    for (const std::string& name : order) {
      if (!groups.count(name)) continue;
      const Group& g = groups[name];
      const Figures f = figures_of(g);
      out += fmt::format("{}\"{}\": {{\"traces\": {}, \"bad\": {}, \"trace_auc\": {}, \"windows\": {}, \"positive_windows\": {}, "
                         "\"window_auc\": {}, \"localization\": {}, \"localization_top_k\": {}, \"classification_accuracy\": {}, \"classified\": {}, "
                         "\"finding_coverage\": {}, \"costliest_accuracy\": {}, \"trace_auc_recoverable\": {}, "
                         "\"llm_classification_accuracy\": {}, \"llm_first_accuracy\": {}, \"llm_classified\": {}, \"llm_failed\": {}, "
                         "\"ids\": {{",
                         first ? "" : ", ", name, f.traces, f.bad, num(f.trace_auc), f.windows, f.positive, num(f.window_auc),
                         num(f.localization), num(f.localization_top_k), num(f.classification), g.classified, num(f.coverage),
                         num(f.costliest), num(f.recoverable_auc), num(f.llm_any), num(f.llm_first), g.llm_classified,
                         g.llm_failed);
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
      out += "}";
      if (by_groups.count(name)) out += breakdown_json(o.by, by_groups[name]);
      out += "}";
    }
    out += "}}\n";
  } else {
    out = fmt::format("ttap eval {} (scorer {}, {} windows per trace; {})\n", o.dataset, o.scorer, o.windows, rule);
    if (failed) out += fmt::format("{} traces failed to load (see the errors above)\n", failed);
    out += fmt::format("\n{:<12} {:>6} {:>5} {:>9} {:>11} {:>8} {:>8} {:>10} {:>12} {:>14} {:>8}{}\n", "split", "traces", "bad",
                       "trace AUC", "recoverable", "windows", "positive", "window AUC", "localization", "classification",
                       "coverage", llm ? "  LLM first-named / among its ids" : "");
    for (const std::string& name : order) {
      if (!groups.count(name)) continue;
      const Group& g = groups[name];
      const Figures f = figures_of(g);
      out += fmt::format("{:<12} {:>6} {:>5} {:>9} {:>11} {:>8} {:>8} {:>10} {:>12} {:>14} {:>8}{}\n", name, f.traces, f.bad,
                         pct_text(f.trace_auc), pct_text(f.recoverable_auc), f.windows, f.positive, pct_text(f.window_auc),
                         pct_text(f.localization), pct_text(f.classification), pct_text(f.coverage),
                         llm ? fmt::format("  {} / {} ({} failed)", pct_text(f.llm_first), pct_text(f.llm_any), g.llm_failed)
                             : "");
    }
    for (const std::string& name : order)
      if (by_groups.count(name)) out += breakdown_text(o.by, name, by_groups[name]);
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
  if (!o.llm_table.empty()) write_output(o.llm_table, "split\ttrace\twindow\tlabels\trules_first\tllm_ids\n" + llm_table);
  return failed ? kBadInput : kOk;
}

}  // namespace ttap::cli
