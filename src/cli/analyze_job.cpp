#include "analyze_job.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ttap/fleet.hpp"

namespace ttap::cli {

std::function<void(const Loaded&)> JobRanks::collector(size_t i) {
  return [this, i](const Loaded& l) {
    calls_[i] = collective_calls(l.trace, l.tree);
    ranks_[i] = l.trace.distributed.rank;
  };
}

JobSummary JobRanks::summarize(const std::vector<std::string>& files, const std::vector<TraceReport>& results) {
  std::vector<RankInput> inputs;
  std::set<int32_t> seen;
  bool clash = false;
  for (size_t i = 0; i < files.size(); ++i) {
    int32_t rank = ranks_[i];
    if (rank < 0) rank = rank_from_file_name(files[i]).value_or(static_cast<int32_t>(i));
    clash |= !seen.insert(rank).second;
    inputs.push_back({rank, &results[i], std::move(calls_[i])});
  }
  std::string warning;
  if (clash) {
    warning = "two traces claim the same rank (distributedInfo or file name): ranks are numbered by position instead";
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i].rank = static_cast<int32_t>(i);
  }
  JobSummary j = summarize_job(std::move(inputs));
  if (!warning.empty()) j.warnings.insert(j.warnings.begin(), warning);
  return j;
}

bool job_format_supported(const std::string& format) { return format == "text" || format == "md" || format == "json"; }

std::string with_job_section(std::string report_text, const JobSummary& job, const std::string& format) {
  if (format == "json") return append_json_member(std::move(report_text), "job", render_job_json(job));
  if (format == "md") return report_text + "\n" + render_job_markdown(job);
  return report_text + "\n" + render_job_text(job);
}

}  // namespace ttap::cli
