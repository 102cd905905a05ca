// Checks shared by the labeled-corpus suites (dataset_test.cpp: data/ttap-bench,
// dataset_x_test.cpp: data/ttap-bench-x): a manifest line's fields (docs/DATASET.md), and a
// trace against its line (loads, ranges in the steady state and the event span, catalog ids,
// no label spans left, GPU work consistent with its launches).
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "suite_support.hpp"
#include "ttap/catalog.hpp"
#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/windows.hpp"

namespace ttap::dataset_support {

struct Range {
  std::string type;
  double ts_begin = 0, ts_end = 0;
};

struct Line {
  std::string trace, label, task, split, mode, hardware;
  std::vector<Range> ranges;
  std::string surgery_source;  // surgery traces: the public trace they were made from
  int64_t surgery_steps = -1;  // surgery traces: steps cropped (0: the whole source)
  std::string background;      // ttap-bench-x: the public trace the line was made from
};

// Parses one manifest line; records a test failure (and returns false) when a required
// field is missing or mistyped.
inline bool parse_line(simdjson::dom::parser& parser, const std::string& text, Line& out) {
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc)) {
    ADD_FAILURE() << "not JSON: " << text.substr(0, 200);
    return false;
  }
  auto str = [&](const char* key, std::string& dst) {
    std::string_view v;
    if (doc[key].get(v)) {
      ADD_FAILURE() << "missing string field '" << key << "' in " << text.substr(0, 200);
      return false;
    }
    dst = v;
    return true;
  };
  if (!str("trace", out.trace) || !str("label", out.label) || !str("task", out.task) || !str("split", out.split) ||
      !str("mode", out.mode) || !str("hardware", out.hardware))
    return false;
  simdjson::dom::array ranges;
  if (doc["anti_patterns"].get(ranges)) {
    ADD_FAILURE() << out.trace << ": anti_patterns is not an array";
    return false;
  }
  for (simdjson::dom::element r : ranges) {
    Range rg;
    std::string_view type;
    if (r["type"].get(type) || r["ts_begin"].get(rg.ts_begin) || r["ts_end"].get(rg.ts_end)) {
      ADD_FAILURE() << out.trace << ": a range lacks type/ts_begin/ts_end";
      return false;
    }
    rg.type = type;
    out.ranges.push_back(rg);
  }
  std::string_view background;
  if (!doc["background"].get(background)) out.background = background;
  simdjson::dom::object surgery;
  if (!doc["surgery"].get(surgery)) {
    std::string_view source;
    if (!surgery["source"].get(source)) out.surgery_source = source;
    if (surgery["steps"].get(out.surgery_steps)) out.surgery_steps = -1;
  }
  return true;
}

// The lines of DIR/manifest.jsonl; a missing manifest is a test failure.
inline std::vector<Line> read_manifest_lines(const std::filesystem::path& corpus) {
  std::vector<Line> lines;
  const std::filesystem::path manifest = corpus / "manifest.jsonl";
  if (!std::filesystem::exists(manifest)) {
    ADD_FAILURE() << manifest << " is missing (scripts/dataset/README or the corpus README says how to build it)";
    return lines;
  }
  simdjson::dom::parser parser;
  for (const std::string& text : suite::split_lines(suite::read_file(manifest.string()))) {
    if (text.empty()) continue;
    Line line;
    if (parse_line(parser, text, line)) lines.push_back(std::move(line));
  }
  return lines;
}

// [first ts, last end] over the trace's events, in ns.
inline std::pair<int64_t, int64_t> event_span(const Trace& t) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (EventId e = 0; e < t.size(); ++e) {
    lo = std::min(lo, t.ts[e]);
    hi = std::max(hi, t.end(e));
  }
  return {lo, hi};
}

// Surgery must leave a trace consistent: each GPU kernel/copy/memset starts no earlier than
// the runtime call that launched it (same correlation id), and GPU activity on one stream
// does not overlap (by more than overlap_slack_ns). Returns the number of violations, each
// reported.
inline int gpu_consistency_violations(const Trace& t, int64_t overlap_slack_ns = 1000) {
  std::map<int64_t, int64_t> launch_ts;
  for (EventId e = 0; e < t.size(); ++e) {
    if (is_launch(t.category[e]) && t.correlation[e] != kNoId) launch_ts[t.correlation[e]] = t.ts[e];
  }
  int bad = 0;
  std::map<TrackId, std::vector<std::pair<int64_t, int64_t>>> by_track;
  for (EventId e = 0; e < t.size(); ++e) {
    if (!is_gpu_activity(t.category[e])) continue;
    by_track[t.track[e]].push_back({t.ts[e], t.end(e)});
    const auto it = t.correlation[e] == kNoId ? launch_ts.end() : launch_ts.find(t.correlation[e]);
    if (it != launch_ts.end() && it->second > t.ts[e]) {
      ADD_FAILURE() << t.name_of(e) << " starts at " << t.ts[e] << " ns, before its launch at " << it->second;
      ++bad;
    }
  }
  for (auto& [track, spans] : by_track) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      // 1 us of slack by default: the public sources round to the microsecond in places.
      if (spans[i].first < spans[i - 1].second - overlap_slack_ns) {
        ADD_FAILURE() << "GPU events overlap on one stream at " << spans[i].first << " ns";
        ++bad;
      }
    }
  }
  return bad;
}

// Checks one trace against its manifest line; used by the corpus suite and the end-to-end test.
inline void check_trace_against_line(const std::filesystem::path& trace_path, const Line& line,
                                     int64_t overlap_slack_ns = 1000) {
  SCOPED_TRACE(trace_path.string());
  ASSERT_TRUE(std::filesystem::exists(trace_path)) << "trace file missing";
  Trace trace;
  ASSERT_NO_THROW(trace = load_trace(trace_path.string()));
  ASSERT_GT(trace.size(), 0u);
  const auto [lo, hi] = event_span(trace);
  // Every range overlaps the steady state that ttap cuts into windows: a range outside it
  // labels something no window, and so no detector, ever looks at.
  const SteadyState steady = steady_state(trace, EventTree::build(trace));
  for (const Range& r : line.ranges) {
    EXPECT_TRUE(std::llround(r.ts_end * 1000.0) > steady.begin && std::llround(r.ts_begin * 1000.0) < steady.end)
        << r.type << " [" << r.ts_begin << ", " << r.ts_end << "] us lies outside the steady state (" << steady.source
        << ") [" << steady.begin / 1000.0 << ", " << steady.end / 1000.0 << "] us";
    EXPECT_TRUE(is_catalog_id(r.type)) << "not a catalog id: " << r.type;
    EXPECT_LE(r.ts_begin, r.ts_end) << r.type;
    // Manifest times are the trace's microseconds; the store keeps round(ts * 1000) ns.
    EXPECT_GE(std::llround(r.ts_begin * 1000.0), lo) << r.type << " begins before the trace's first event";
    EXPECT_LE(std::llround(r.ts_end * 1000.0), hi) << r.type << " ends after the trace's last event";
  }
  const std::string json = [&] {
    RawInput raw = read_input(trace_path.string(), default_max_input_bytes());
    return std::string(raw.json.data(), raw.json.size());
  }();
  EXPECT_EQ(json.find("ttap_label::"), std::string::npos) << "a label span was left in the trace";
  EXPECT_EQ(gpu_consistency_violations(trace, overlap_slack_ns), 0);
}

// Runs an injector script (scripts/dataset/surgery.py or inject2.py) on `source` with one
// pattern, checks the manifest line it prints holds exactly that one range, and checks the
// written trace against it (check_trace_against_line). Returns the range.
inline Range inject_one(const std::filesystem::path& script, const std::string& source, const std::string& out,
                        const std::string& id, const std::string& seed) {
  const suite::ProcResult r = suite::run_process({"/usr/bin/python3", script.string(), source, out, "--inject", id, "--seed", seed});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Range rg;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array ranges;
  if (parser.parse(r.out).get(doc) || doc["anti_patterns"].get(ranges) || ranges.size() != 1) {
    ADD_FAILURE() << "expected one labeled range in: " << r.out;
    return rg;
  }
  rg.type = std::string(std::string_view(ranges.at(0)["type"]));
  rg.ts_begin = double(ranges.at(0)["ts_begin"]);
  rg.ts_end = double(ranges.at(0)["ts_end"]);
  EXPECT_EQ(rg.type, id);
  Line line;
  line.label = "bad";
  line.ranges.push_back(rg);
  check_trace_against_line(out, line);
  return rg;
}

}  // namespace ttap::dataset_support
