// `ttap analyze --job`: what the job view needs from each rank while it is loaded, and the
// job section added to the report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ttap/job.hpp"

namespace ttap::cli {

class JobRanks {
 public:
  explicit JobRanks(size_t traces) : calls_(traces), ranks_(traces, -1) {}
  // For analyze_one: keeps trace i's collective calls and distributedInfo rank.
  std::function<void(const Loaded&)> collector(size_t i);
  // Ranks: distributedInfo, else the number in the file name, else the position; two
  // traces claiming one rank make every rank its position (with a warning).
  JobSummary summarize(const std::vector<std::string>& files, const std::vector<TraceReport>& results);

 private:
  std::vector<std::vector<CollectiveCall>> calls_;
  std::vector<int32_t> ranks_;
};

// The job section after the per-rank report: text, md or json (a "job" member).
std::string with_job_section(std::string report_text, const JobSummary& job, const std::string& format);
// The formats --job renders in.
bool job_format_supported(const std::string& format);

}  // namespace ttap::cli
