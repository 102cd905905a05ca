// The job view (`ttap analyze DIR --job`) as text, Markdown and a JSON object.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "analyze_common.hpp"
#include "ttap/job.hpp"
#include "ttap/table.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

std::string num(double d) { return std::isfinite(d) ? fmt::format("{}", d) : "null"; }

std::string straggler_label(const JobRank& r) {
  if (r.step_straggler && r.collective_straggler) return "step time, collectives";
  if (r.step_straggler) return "step time";
  if (r.collective_straggler) return "collectives";
  return "";
}

std::string imbalance_line(const JobSummary& j) {
  std::string s;
  if (j.step_median > 0)
    s += fmt::format("step time: median {} (MAD {}), min {}, max {} (rank {}, {:+.1f}% over the median)", ms(j.step_median), ms(j.step_mad),
                     ms(j.step_min), ms(j.step_max), j.slowest_rank, 100 * j.step_imbalance);
  if (j.collective_calls > 0)
    s += fmt::format("{}collective skew: {:.1f} us per call over {} aligned calls", s.empty() ? "" : "; ", j.mean_skew / 1e3, j.collective_calls);
  if (!s.empty()) s += fmt::format("; GPU busy {:.1f}% to {:.1f}%", 100 * j.gpu_busy_min, 100 * j.gpu_busy_max);
  return s;
}

std::vector<std::string> straggler_names(const JobSummary& j) {
  std::vector<std::string> out;
  for (const JobRank& r : j.ranks)
    if (r.step_straggler || r.collective_straggler) out.push_back(fmt::format("rank {} ({})", r.rank, straggler_label(r)));
  return out;
}

}  // namespace

std::string render_job_text(const JobSummary& j) {
  std::string out = fmt::format("job: {}\n", count_text(j.ranks.size(), "rank"));
  const std::string imbalance = imbalance_line(j);
  if (!imbalance.empty()) out += imbalance + "\n";
  const std::vector<std::string> stragglers = straggler_names(j);
  out += stragglers.empty() ? std::string("stragglers: none\n") : fmt::format("stragglers: {}\n", fmt::join(stragglers, ", "));
  out += "\n";
  Table t{"job_ranks", "Ranks", {{"rank"}, {"verdict"}, {"score", 3}, {"step mean"}, {"GPU busy", 3}, {"last to arrive"}, {"others waited"}, {"waited"}, {"straggler"}, {"path"}}, {}, "", 0};
  for (const JobRank& r : j.ranks)
    t.rows.push_back({static_cast<int64_t>(r.rank), std::string(verdict_name(r.verdict)), r.score, r.steps ? ms(r.step_mean) : std::string("-"), r.gpu_busy,
                      r.last_arrivals, ms(r.others_waited), ms(r.waited), straggler_label(r), r.path});
  t.total_rows = t.rows.size();
  out += render_text(t) + "\n";
  if (!j.partial.empty()) {
    out += "Findings only some ranks show:\n";
    for (const PartialFinding& p : j.partial) out += fmt::format("  {}: ranks {}\n", p.id, fmt::join(p.ranks, ", "));
  } else {
    out += "Every rank shows the same findings.\n";
  }
  for (const std::string& w : j.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

std::string render_job_markdown(const JobSummary& j) {
  std::string out = fmt::format("## Job: {}\n\n", count_text(j.ranks.size(), "rank"));
  const std::string imbalance = imbalance_line(j);
  if (!imbalance.empty()) out += imbalance + ".\n\n";
  const std::vector<std::string> stragglers = straggler_names(j);
  out += stragglers.empty() ? std::string("Stragglers: none.\n\n") : fmt::format("Stragglers: {}.\n\n", fmt::join(stragglers, ", "));
  out += "| rank | verdict | score | step mean | GPU busy | last to arrive | others waited | waited | straggler |\n";
  out += "|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const JobRank& r : j.ranks)
    out += fmt::format("| {} | {} | {:.3f} | {} | {:.1f}% | {} | {} | {} | {} |\n", r.rank, verdict_name(r.verdict), r.score,
                       r.steps ? ms(r.step_mean) : "-", 100 * r.gpu_busy, r.last_arrivals, ms(r.others_waited), ms(r.waited), straggler_label(r));
  out += "\n";
  if (!j.partial.empty()) {
    out += "Findings only some ranks show:\n\n";
    for (const PartialFinding& p : j.partial) out += fmt::format("- `{}`: ranks {}\n", p.id, fmt::join(p.ranks, ", "));
    out += "\n";
  }
  for (const std::string& w : j.warnings) out += fmt::format("> {}\n", w);
  return out;
}

std::string render_job_json(const JobSummary& j) {
  std::string ranks, partial, warnings;
  for (const JobRank& r : j.ranks) {
    std::string ids;
    for (const std::string& id : r.ids) ids += (ids.empty() ? "" : ",") + json_string(id);
    ranks += fmt::format(
        R"({}{{"rank":{},"path":{},"verdict":{},"score":{},"steps":{},"step_mean_ns":{},"gpu_busy":{},"last_arrivals":{},"others_waited_ns":{},"waited_ns":{},"step_straggler":{},"collective_straggler":{},"finding_ids":[{}]}})",
        ranks.empty() ? "" : ",", r.rank, json_string(r.path), json_string(verdict_name(r.verdict)), num(r.score), r.steps, r.step_mean, num(r.gpu_busy),
        r.last_arrivals, r.others_waited, r.waited, r.step_straggler, r.collective_straggler, ids);
  }
  for (const PartialFinding& p : j.partial)
    partial += fmt::format(R"({}{{"id":{},"ranks":[{}]}})", partial.empty() ? "" : ",", json_string(p.id), fmt::join(p.ranks, ","));
  for (const std::string& w : j.warnings) warnings += (warnings.empty() ? "" : ",") + json_string(w);
  return fmt::format(
      R"({{"ranks":[{}],"step_time":{{"median_ns":{},"mad_ns":{},"min_ns":{},"max_ns":{},"imbalance":{},"slowest_rank":{}}},"gpu_busy":{{"min":{},"max":{}}},"collectives":{{"aligned_calls":{},"mean_skew_ns":{}}},"partial_findings":[{}],"warnings":[{}]}})",
      ranks, j.step_median, j.step_mad, j.step_min, j.step_max, num(j.step_imbalance), j.slowest_rank, num(j.gpu_busy_min), num(j.gpu_busy_max), j.collective_calls,
      num(j.mean_skew), partial, warnings);
}

}  // namespace ttap
