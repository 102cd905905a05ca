// `ttap analyze DIR --job`: the traces are the ranks of one distributed job. Each rank is
// analyzed as usual; across ranks: the stragglers (by step time and by collective skew,
// as `ttap collectives` measures it), the imbalance, and the findings only some ranks show.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/collectives.hpp"
#include "ttap/report.hpp"

namespace ttap {

// A rank's number from its file name, for traces without distributedInfo: the last number
// in the name ("rank3.json.gz", "worker_3.json", "trace.3.pt.trace.json"), else nullopt.
std::optional<int32_t> rank_from_file_name(std::string_view path);

struct JobRank {
  int32_t rank = -1;
  std::string path;
  Verdict verdict = Verdict::clean;
  double score = 0;
  int64_t steps = 0;
  int64_t step_mean = 0;        // ns; 0 without ProfilerStep spans
  double gpu_busy = 0;          // share of step time (of the primary GPU's span without steps)
  int64_t last_arrivals = 0;    // collectives where this rank started last
  int64_t others_waited = 0;    // ns the other ranks waited for it in collectives
  int64_t waited = 0;           // ns it waited for the last arrival
  std::vector<std::string> ids; // finding ids, sorted
  bool step_straggler = false;
  bool collective_straggler = false;
};

struct PartialFinding {
  std::string id;
  std::vector<int32_t> ranks;  // the ranks that show it
};

struct JobSummary {
  std::vector<JobRank> ranks;          // by rank
  int64_t step_median = 0, step_max = 0, step_min = 0;  // ns, over ranks with steps
  int64_t step_mad = 0;                // ns, median absolute deviation from the median
  double step_imbalance = 0;           // slowest rank's step time over the median, minus 1
  int32_t slowest_rank = -1;
  double gpu_busy_min = 0, gpu_busy_max = 0;
  int64_t collective_calls = 0;        // aligned calls, all types
  double mean_skew = 0;                // ns per aligned call, last arrival minus first
  std::vector<PartialFinding> partial; // ids some but not all analyzed ranks show
  std::vector<std::string> warnings;
};

// A step straggler's step time is an outlier among the ranks: above the median by more
// than kStepMadMultiple median absolute deviations (the usual robust outlier cut, which
// the spread of a few profiled steps per rank does not cross by chance) and by at least
// kStepStragglerShare (below ~5%, run-to-run variation hides any real difference).
inline constexpr double kStepMadMultiple = 3.0;
inline constexpr double kStepStragglerShare = 0.05;
// A rank that arrives last at more than this multiple of its even share of the collectives
// (calls / ranks) is a collective straggler: the others keep waiting for it.
inline constexpr double kLastArrivalMultiple = 2.0;

struct RankInput {
  int32_t rank = -1;
  const TraceReport* report = nullptr;
  std::vector<CollectiveCall> calls;  // collective_calls() of the rank's trace
};
JobSummary summarize_job(std::vector<RankInput> ranks);

std::string render_job_text(const JobSummary& j);
std::string render_job_markdown(const JobSummary& j);
std::string render_job_json(const JobSummary& j);  // one JSON object

}  // namespace ttap
