// The terminal report: per trace the headline, a strip of window scores, the grouped
// findings ranked by saving (each flagged window's own findings with --details), the
// comparison with a baseline, then (for several traces) a summary table. ANSI colors
// only when the caller says the output is a terminal.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "analyze_common.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

struct Paint {
  bool on = false;
  std::string operator()(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};

constexpr std::string_view kRed = "1;31", kYellow = "33", kGreen = "32", kDim = "2", kBold = "1", kCyan = "36";

std::string_view severity_color(Severity s) { return s == Severity::error ? kRed : s == Severity::warning ? kYellow : kCyan; }

// One character per window (eight levels), so a person sees where the scores peak.
// The score range the strip spans: the trace's lowest to highest window score when they
// differ by at least 0.1, else 0 to 1. A trace the model finds bad can score 0.6-1.0
// everywhere; on an absolute scale its strip is a flat wall and hides where the peaks are.
std::pair<double, double> strip_range(const std::vector<WindowScore>& windows) {
  double lo = 1.0, hi = 0.0;
  for (const WindowScore& w : windows) {
    lo = std::min(lo, w.score);
    hi = std::max(hi, w.score);
  }
  if (hi - lo < 0.1) return {0.0, 1.0};
  return {lo, hi};
}

std::string score_strip(const std::vector<WindowScore>& windows, size_t width, std::pair<double, double> range) {
  static constexpr std::string_view kLevels[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  std::string out;
  const size_t n = windows.size();
  const size_t cols = std::min(n, width);
  const auto [lo, hi] = range;
  for (size_t c = 0; c < cols; ++c) {
    // Several windows per character when there are more windows than columns: the highest.
    double s = 0;
    for (size_t i = c * n / cols; i < (c + 1) * n / cols; ++i) s = std::max(s, windows[i].score);
    out += kLevels[static_cast<size_t>(std::clamp((s - lo) / (hi - lo), 0.0, 1.0) * 8.0 + 0.5)];
  }
  return out;
}

// "new" and "worse" in red, "better" in green, "unchanged" plain.
std::string state_text(const GroupedFinding& g, const Paint& paint) {
  const std::string_view name = baseline_state_name(g.baseline);
  if (is_new_or_worse(g)) return paint(kRed, name);
  return g.baseline == BaselineState::better ? paint(kGreen, name) : std::string(name);
}

// One line per problem, then where it shows, what it costs, the user's code, the
// evidence and the fix.
void render_group(std::string& out, const TraceReport& t, const GroupedFinding& g, size_t rank, const Paint& paint) {
  const std::string state = g.baseline == BaselineState::none ? "" : fmt::format("  [{}]", state_text(g, paint));
  out += fmt::format("  {}. {} {}: {}{} (confidence {:.2f}, {})\n", rank, paint(severity_color(g.severity), severity_name(g.severity)),
                     paint(kBold, g.id), g.name, state, g.confidence, g.source);
  if (!g.origin.empty()) out += fmt::format("      in {}\n", g.origin);
  std::vector<std::string> seen;
  for (uint32_t w : g.windows) seen.push_back(std::to_string(w));
  std::string where = occurrences_text(g);
  if (!seen.empty()) where += fmt::format(" (flagged window{} {})", seen.size() == 1 ? "" : "s", fmt::join(seen, ", "));
  if (g.steady_state) where += " (across the steady state)";
  const auto ranges = occurrence_ranges(t, g);
  out += fmt::format("      {}{}{}{}\n", where, ranges.empty() ? "" : ": ", fmt::join(ranges, ", "),
                     g.occurrence_count > ranges.size() ? ", ..." : "");
  std::string cost = "costs " + group_cost_text(g);
  if (g.baseline_cost_per_step && g.cost_per_step) cost += fmt::format(", baseline ~{}", ms(*g.baseline_cost_per_step));
  else if (g.baseline_share) cost += fmt::format(", baseline {:.1f}%", 100.0 * *g.baseline_share);
  if (g.saving) cost += fmt::format("; what-if: fixing it saves {}", saving_text(*g.saving));
  out += fmt::format("      {}\n", cost);
  for (const CodeLocation& l : g.locations) out += fmt::format("      at {}\n", paint(kCyan, location_text(l)));
  for (const std::string& e : g.evidence) out += fmt::format("      - {}\n", e);
  if (!g.explanation.empty()) out += fmt::format("      llm: {}\n", g.explanation);
  if (!g.fix.empty()) out += fmt::format("      fix: {}\n", g.fix);
}

// --details: every flagged window with its own findings, as the rules saw each one.
void render_window_details(std::string& out, const TraceReport& t, const Paint& paint) {
  for (const FlaggedWindow& w : t.flagged) {
    if (w.steady_state)
      out += fmt::format("  {} [{} .. {}]  (rules across the whole of it)\n", flagged_label(w), offset_ms(t, w.begin), offset_ms(t, w.end));
    else
      out += fmt::format("  {} [{} .. {}]  score {:.2f}\n", flagged_label(w), offset_ms(t, w.begin), offset_ms(t, w.end), w.score);
    for (const Finding& f : w.findings) {
      out += fmt::format("    {} {}: {} (confidence {:.2f}, {})\n", paint(severity_color(f.severity), severity_name(f.severity)),
                         paint(kBold, f.id), f.name, f.confidence, f.source);
      std::string cost = f.cost > 0 ? fmt::format("costs {} here", ms(f.cost)) : "";
      if (f.saving) cost += fmt::format("{}what-if: fixing it saves {}", cost.empty() ? "" : "; ", saving_text(*f.saving));
      if (f.one_time) cost += fmt::format("{}{}", cost.empty() ? "" : "; ", kOneTimeText);
      if (!cost.empty()) out += fmt::format("      {}\n", cost);
      for (const CodeLocation& l : f.locations) out += fmt::format("      at {}\n", paint(kCyan, location_text(l)));
      for (const std::string& e : f.evidence) out += fmt::format("      - {}\n", e);
      if (!f.explanation.empty()) out += fmt::format("      llm: {}\n", f.explanation);
      if (!f.fix.empty()) out += fmt::format("      fix: {}\n", f.fix);
    }
  }
}

void render_trace(std::string& out, const TraceReport& t, const Paint& paint, bool details) {
  if (t.verdict == Verdict::error) {
    out += fmt::format("{}: {} {}\n", t.path, paint(kRed, "ERROR"), t.error);
    return;
  }
  const std::string verdict = t.verdict == Verdict::flagged ? paint(kRed, "FLAGGED") : paint(kGreen, "clean");
  std::string scored = t.scorer.empty() ? "" : fmt::format("  score {:.2f} ({}{})", t.score, t.scorer, t.device.empty() ? "" : " on " + t.device);
  out += fmt::format("{}: {}{}\n", paint(kBold, t.path), verdict, scored);
  for (const std::string& line : headline_lines(t)) out += fmt::format("  {}\n", line);
  if (!t.scorer.empty() && !t.windows.empty()) {
    const auto range = strip_range(t.windows);
    out += fmt::format("  window scores |{}| ({:.2f} to {:.2f}; {} over {} {})\n", score_strip(t.windows, 100, range),
                       range.first, range.second, count_text(t.windows.size(), "window"), ms(t.end - t.begin),
                       steady_state_text(t.steady_state));
  }
  if (!t.findings.empty()) out += "  findings, ranked by what fixing them saves:\n";
  for (size_t i = 0; i < t.findings.size(); ++i) render_group(out, t, t.findings[i], i + 1, paint);
  if (!t.findings.empty())
    out += fmt::format("  recoverable: ~{:.1f}% of {} if every finding is fixed\n", 100.0 * t.recoverable_share,
                       t.headline.steps > 0 ? "step time" : "the steady state");
  if (!t.baseline.empty()) {
    out += fmt::format("  against the baseline {}: {}\n", t.baseline, baseline_counts_text(t));
    for (const GroupedFinding& g : t.fixed)
      out += fmt::format("    {} {}{}: {} (was {})\n", paint(kGreen, "fixed"), paint(kBold, g.id), g.origin.empty() ? "" : " at " + g.origin,
                         g.name, group_cost_text(g));
    for (const GroupedFinding& g : t.still_present)
      out += fmt::format("    {} {}{}: {}, still here below this report's findings: {} (was {})\n",
                         state_text(g, paint), paint(kBold, g.id),
                         g.origin.empty() ? "" : " at " + g.origin, g.name, group_cost_text(g), baseline_cost_text(g));
  }
  if (details && !t.flagged.empty()) out += "  flagged windows (--details):\n";
  if (details) render_window_details(out, t, paint);
  if (t.suppressed > 0) out += paint(kDim, fmt::format("  {} finding(s) suppressed by the config's ignores\n", t.suppressed));
  for (const std::string& w : t.warnings) out += fmt::format("  {} {}\n", paint(kYellow, "warning:"), w);
}

std::string summary_table(const Report& r, const Paint& paint) {
  size_t width = 5;
  for (const auto& t : r.traces) width = std::max(width, t.path.size());
  std::string out = fmt::format("\n{:<{}}  {:<8}  {:>5}  {:>8}  {}\n", "trace", width, "verdict", "score", "findings", "ids");
  for (const auto& t : r.traces) {
    const std::string verdict{verdict_name(t.verdict)};
    const std::string colored = t.verdict == Verdict::error ? paint(kRed, verdict) : t.verdict == Verdict::flagged ? paint(kRed, verdict) : paint(kGreen, verdict);
    const std::string pad(8 - std::min<size_t>(8, verdict.size()), ' ');
    const std::string ids = t.verdict == Verdict::error ? t.error : fmt::format("{}", fmt::join(finding_ids(t), ", "));
    out += fmt::format("{:<{}}  {}{}  {:>5}  {:>8}  {}\n", t.path, width, colored, pad,
                       t.verdict == Verdict::error || t.scorer.empty() ? "-" : fmt::format("{:.2f}", t.score),
                       t.verdict == Verdict::error ? "-" : fmt::format("{}", finding_count(t)), ids);
  }
  const Counts c = count(r);
  out += fmt::format("{} traces: {} flagged, {} clean, {} failed to analyze\n", r.traces.size(), c.flagged, c.clean, c.errors);
  return out;
}

}  // namespace

std::string render_analyze_text(const Report& report, const TextStyle& style) {
  const Paint paint{style.color};
  std::string out;
  for (const TraceReport& t : report.traces) render_trace(out, t, paint, style.details);
  for (const std::string& w : report.warnings) out += fmt::format("{} {}\n", paint(kYellow, "warning:"), w);
  if (report.traces.size() > 1) out += summary_table(report, paint);
  return out;
}

}  // namespace ttap
