// libFuzzer target for everything `ttap analyze` does after the loader (fuzz_load covers the
// loader and the summaries): bytes -> parse_trace (lenient) -> EventTree -> analyze_trace
// (headline, what-ifs, windows, the rules or cluster scorer, the rule detectors per flagged
// window and across the steady state, grouping, the Python tracer note, presence, the gate)
// -> every report format -> the JSON report read back.
//
// The rules and the report writers are most of ttap's code and take their inputs from the
// trace as it is: a negative duration the lenient loader kept, a step of one event, a kernel
// with no launch. A finding here is a crash, a sanitizer report, an exception other than
// InputError, a hang, or a JSON report that does not read back into the same report: `ttap
// merge` and `--baseline` read it back, so a report that does not round-trip (a NaN written
// as a number, an escape the reader refuses) is a silent wrong answer there.
//
// The model scorer is not run: libtorch is a dlopen'ed module, not instrumented here.
// The input's size picks the settings (the scorer, rules or cluster; top k 5 or 100; flag
// spacing), so that every seed trace is parsed whole and each mutation may flip them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../src/classify/classify.hpp"
#include "ttap/load.hpp"
#include "ttap/report.hpp"
#include "ttap/report_reader.hpp"
#include "ttap/tree.hpp"

namespace {

ttap::InputBuffer copy_input(const uint8_t* data, size_t size) {
  ttap::InputBuffer buf(size);
  if (size > 0) std::memcpy(buf.data(), data, size);
  buf.resize(size);
  return buf;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_analyze: %s\n%.2000s\n", what, detail.c_str());
  std::abort();
}

// The first place two texts differ, with some context on each side.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t from = i > 200 ? i - 200 : 0;
  return "at byte " + std::to_string(i) + "\n  written: " + a.substr(from, 400) + "\n  re-read: " + b.substr(from, 400);
}

void analyze_and_render(const ttap::Trace& trace, uint8_t knob) {
  const ttap::EventTree tree = ttap::EventTree::build(trace);
  ttap::AnalyzeSettings settings;
  settings.score.scorer = knob & 1 ? ttap::Scorer::cluster : ttap::Scorer::rules;
  settings.top_k = knob & 2 ? 100 : 5;
  settings.flag_spacing = knob & 4 ? 0 : ttap::kFlagSpacing;
  settings.timeline = true;  // the HTML report's lanes
  settings.fail_savings = 5.0;

  ttap::Report report;
  report.tool_version = "fuzz";
  report.settings.windows = settings.windows;
  report.settings.top_k = settings.top_k;
  report.settings.flag_spacing = settings.flag_spacing;
  report.settings.scorer = knob & 1 ? "cluster" : "rules";
  report.settings.fail_on = std::string(ttap::fail_on_name(settings.fail_on));
  report.settings.fail_savings = settings.fail_savings;
  report.traces.push_back(ttap::analyze_trace(trace, tree, settings));

  (void)ttap::render_analyze_text(report, {false, true});
  (void)ttap::render_analyze_markdown(report);
  (void)ttap::render_analyze_sarif(report);
  (void)ttap::render_analyze_junit(report);
  (void)ttap::render_analyze_html(report);
  const std::string json = ttap::render_analyze_json(report);
  ttap::ReadReports back;
  try {
    back = ttap::read_analyze_reports(json, "fuzz.json");
  } catch (const ttap::InputError& e) {
    finding("the JSON report does not read back", std::string(e.what()) + "\n" + json.substr(0, 1500));
  }
  if (back.reports.size() != 1 || !back.problems.empty())
    finding("the JSON report reads back as other than one report", json.substr(0, 1500));
  const std::string again = ttap::render_analyze_json(back.reports.front());
  if (again != json) finding("the JSON report read back renders differently", first_difference(json, again));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 0);
  setenv("TTAP_THREADS", "2", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t knob = static_cast<uint8_t>(size % 8);
  ttap::InputBuffer json = copy_input(data, size);
  try {
    const ttap::Trace trace = ttap::parse_trace("fuzz", json, false);
    analyze_and_render(trace, knob);
  } catch (const ttap::InputError&) {
    // A clear refusal is what bad input should get.
  }
  return 0;
}
