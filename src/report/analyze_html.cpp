// HTML: one self-contained page (inline CSS, SVG and one inline script, no network) to
// attach to a CI run or open from disk. Per trace: the headline, a zoomable timeline of the
// steady state beside the findings ranked by saving (html_timeline.cpp), an overview of the
// windows (score bars on top, red where a window was flagged; GPU busy share below) and the
// per-window detail.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "analyze_common.hpp"
#include "html_timeline.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

std::string esc(std::string_view s) { return xml_escape(s); }

// The plot's colors are part of the page's contract (the HTML test looks for them in a
// screenshot): score bars, flagged score bars, GPU busy bars, plot background.
constexpr std::string_view kScoreColor = "#4c78a8", kFlaggedColor = "#d62728", kBusyColor = "#2ca02c",
                           kPlotBackground = "#f4f1e4";

std::string timeline_svg(const TraceReport& t) {
  constexpr int kWidth = 960, kPanel = 120, kGap = 24, kLeft = 0;
  const size_t n = t.windows.size();
  const double w = n ? static_cast<double>(kWidth) / static_cast<double>(n) : kWidth;
  std::string svg = fmt::format(
      "<svg class=\"timeline\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "shape-rendering=\"crispEdges\" role=\"img\" aria-label=\"window scores and GPU busy per window\">\n",
      kWidth, 2 * kPanel + kGap);
  svg += fmt::format("<rect class=\"plot-bg\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", kWidth, kPanel, kPlotBackground);
  svg += fmt::format("<rect class=\"plot-bg\" x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", kPanel + kGap, kWidth, kPanel,
                     kPlotBackground);
  for (size_t i = 0; i < n; ++i) {
    const WindowScore& ws = t.windows[i];
    const double x = kLeft + w * static_cast<double>(i);
    const double bw = std::max(1.0, w - (w >= 4 ? 1.0 : 0.0));  // a hairline between wide bars
    const double sh = std::clamp(ws.score, 0.0, 1.0) * kPanel;
    const std::string tip = fmt::format("window {} [{} .. {}]: score {:.2f}, GPU busy {:.0f}%{}", ws.index, offset_ms(t, ws.begin),
                                        offset_ms(t, ws.end), ws.score, 100.0 * ws.gpu_busy, ws.flagged ? ", flagged" : "");
    if (sh > 0)
      svg += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}</title></rect>\n", x,
                         kPanel - sh, bw, sh, ws.flagged ? kFlaggedColor : kScoreColor, esc(tip));
    const double bh = std::clamp(ws.gpu_busy, 0.0, 1.0) * kPanel;
    if (bh > 0)
      svg += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}</title></rect>\n", x,
                         2 * kPanel + kGap - bh, bw, bh, kBusyColor, esc(tip));
  }
  svg += fmt::format("<text x=\"4\" y=\"{}\" class=\"label\">GPU busy per window</text>\n", kPanel + kGap - 6);
  svg += "</svg>\n";
  return svg;
}

// The comparison with a baseline as text and md give it: the counts, what was fixed and
// what is still here below the listed findings (the panel marks each listed one's state).
void render_baseline(std::string& out, const TraceReport& t) {
  if (t.baseline.empty()) return;
  out += fmt::format("<p class=\"baseline\">Against the baseline <code>{}</code>: {}.</p>\n", esc(t.baseline),
                     esc(baseline_counts_text(t)));
  const auto origin = [](const GroupedFinding& g) { return g.origin.empty() ? "" : " in <code>" + esc(g.origin) + "</code>"; };
  if (!t.fixed.empty()) {
    out += "<p>Fixed since the baseline:</p>\n<ul class=\"fixed\">\n";
    for (const GroupedFinding& g : t.fixed)
      out += fmt::format("<li><code>{}</code>{}: {} (was <span class=\"cost\">{}</span>)</li>\n", esc(g.id), origin(g), esc(g.name),
                         esc(group_cost_text(g)));
    out += "</ul>\n";
  }
  if (!t.still_present.empty()) {
    out += "<p>Still here from the baseline, below this report's findings:</p>\n<ul class=\"still-present\">\n";
    for (const GroupedFinding& g : t.still_present)
      out += fmt::format("<li>{} <code>{}</code>{}: {}: <span class=\"cost\">{}</span> (was {})</li>\n", baseline_state_name(g.baseline),
                         esc(g.id), origin(g), esc(g.name), esc(group_cost_text(g)), esc(baseline_cost_text(g)));
    out += "</ul>\n";
  }
}

void render_trace(std::string& out, const TraceReport& t, size_t index) {
  out += fmt::format("<section class=\"trace {}\">\n<h2>{} <span class=\"verdict\">{}</span></h2>\n", verdict_name(t.verdict), esc(t.path),
                     verdict_name(t.verdict));
  if (t.verdict == Verdict::error) {
    out += fmt::format("<p class=\"error\">Could not analyze: {}</p>\n</section>\n", esc(t.error));
    return;
  }
  if (!t.scorer.empty())
    out += fmt::format("<p>Trace score <b>{:.2f}</b> ({}{}); {} over {} {}.</p>\n", t.score, esc(t.scorer),
                       t.device.empty() ? "" : " on " + esc(t.device), count_text(t.windows.size(), "window"),
                       ms(t.end - t.begin), esc(steady_state_text(t.steady_state)));
  out += "<ul class=\"headline\">\n";
  for (const auto& line : headline_lines(t)) out += fmt::format("<li>{}</li>\n", esc(line));
  out += "</ul>\n";
  const std::string panel = html_timeline_section(t, std::to_string(index));
  out += panel;
  render_baseline(out, t);
  if (!t.windows.empty()) {
    out += "<p class=\"legend\">Window score <span class=\"sw score\"></span> (flagged <span class=\"sw flagged\"></span>), "
           "GPU busy <span class=\"sw busy\"></span></p>\n";
    out += timeline_svg(t);
  }
  if (!t.flagged.empty()) {
    // Per window, as the classifier saw them; the ranked panel above is the summary.
    out += "<details class=\"per-window\"><summary>Per-window detail</summary>\n<table class=\"findings\">\n<tr><th>where</th><th>time</th><th>score</th><th>severity</th><th>id</th><th>cost</th>"
           "<th>what-if saving</th><th>code</th><th>evidence and fix</th></tr>\n";
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& f : w.findings) {
        std::vector<std::string> locs;
        for (const auto& l : f.locations) locs.push_back("<code>" + esc(location_text(l)) + "</code>");
        std::string detail = "<ul>";
        for (const auto& e : f.evidence) detail += "<li>" + esc(e) + "</li>";
        if (!f.explanation.empty()) detail += "<li>LLM: " + esc(f.explanation) + "</li>";
        detail += "</ul>";
        if (!f.fix.empty()) detail += "<p class=\"fix\">Fix: " + esc(f.fix) + "</p>";
        out += fmt::format(
            "<tr><td>{}</td><td>{} .. {}</td><td>{:.2f}</td><td class=\"sev {}\">{}</td><td><code>{}</code><br>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
            flagged_label(w), offset_ms(t, w.begin), offset_ms(t, w.end), w.score, severity_name(f.severity), severity_name(f.severity), esc(f.id),
            esc(f.name), (f.cost > 0 ? ms(f.cost) : "") + (f.one_time ? fmt::format(" ({})", kOneTimeText) : ""), f.saving ? esc(saving_text(*f.saving)) : "", fmt::join(locs, "<br>"), detail);
      }
    out += "</table>\n</details>\n";
  } else if (panel.empty()) {
    // Said once: the findings panel already says it where there is one (it read twice on
    // tracelens_vllm_piecewise_graph_execution and hta_cpu_only).
    out += "<p>No findings.</p>\n";
  }
  if (t.suppressed > 0) out += fmt::format("<p class=\"note\">{} finding(s) suppressed by the config's ignores.</p>\n", t.suppressed);
  for (const auto& w : t.warnings) out += fmt::format("<p class=\"warning\">Warning: {}</p>\n", esc(w));
  out += "</section>\n";
}

}  // namespace

std::string render_analyze_html(const Report& report) {
  std::string out = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ttap analyze</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }}
h1 {{ font-size: 20px; margin: 0 0 8px; }} h2 {{ font-size: 16px; margin: 24px 0 6px; word-break: break-all; }}
.verdict {{ font-size: 12px; padding: 2px 6px; border-radius: 3px; background: #ddd; }}
.flagged .verdict, .error .verdict {{ background: {1}; color: #fff; }} .clean .verdict {{ background: {2}; color: #fff; }}
svg.timeline {{ display: block; margin: 6px 0 12px; }} svg .label {{ font-size: 11px; fill: #555; }}
.sw {{ display: inline-block; width: 10px; height: 10px; vertical-align: middle; }}
.sw.score {{ background: {0}; }} .sw.flagged {{ background: {1}; }} .sw.busy {{ background: {2}; }}
table {{ border-collapse: collapse; margin: 8px 0; }} td, th {{ border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }}
td ul {{ margin: 0; padding-left: 16px; }} .sev.error {{ color: {1}; font-weight: bold; }} .sev.warning {{ color: #b8860b; }}
.warning, .error {{ color: #8a4b00; }} code {{ font-size: 12px; }} .fix {{ margin: 4px 0 0; }}
{7}</style></head><body>
<h1>ttap analyze</h1>
<p>ttap {3}: {4} per trace, top {5} classified, scorer {6}.</p>
)",
                                kScoreColor, kFlaggedColor, kBusyColor, esc(report.tool_version),
                                count_text(report.settings.windows, "window"), count_text(report.settings.top_k, "window"), esc(report.settings.scorer), html_timeline_css());
  if (report.traces.size() > 1) {
    out += "<table class=\"summary\"><tr><th>trace</th><th>verdict</th><th>score</th><th>findings</th><th>ids</th></tr>\n";
    for (const auto& t : report.traces)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(t.path), verdict_name(t.verdict),
                         t.verdict == Verdict::error || t.scorer.empty() ? "" : fmt::format("{:.2f}", t.score),
                         t.verdict == Verdict::error ? "" : fmt::format("{}", finding_count(t)),
                         t.verdict == Verdict::error ? esc(t.error) : esc(fmt::format("{}", fmt::join(finding_ids(t), ", "))));
    out += "</table>\n";
  }
  for (const auto& w : report.warnings) out += fmt::format("<p class=\"warning\">Warning: {}</p>\n", esc(w));
  for (size_t i = 0; i < report.traces.size(); ++i) render_trace(out, report.traces[i], i);
  out += fmt::format("<script>{}</script>\n</body></html>\n", html_timeline_script());
  return out;
}

}  // namespace ttap
