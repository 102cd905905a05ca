// One job's ranks side by side: step time, collective waits, and findings by rank.
#include "ttap/job.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ttap {

std::optional<int32_t> rank_from_file_name(std::string_view path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::optional<int32_t> last;
  for (size_t i = 0; i < name.size();) {
    if (name[i] < '0' || name[i] > '9') {
      ++i;
      continue;
    }
    int64_t v = 0;
    size_t j = i;
    for (; j < name.size() && name[j] >= '0' && name[j] <= '9' && v < (1 << 30); ++j) v = v * 10 + (name[j] - '0');
    if (j - i <= 9) last = static_cast<int32_t>(v);
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    i = j;
  }
  return last;
}

namespace {

double step_gpu_busy(const TraceReport& t) {
  if (t.headline.steps > 0) return t.headline.step_gpu_busy;
  const GpuHeadline* primary = nullptr;
  for (const GpuHeadline& g : t.headline.gpus)
    if (!primary || g.busy > primary->busy) primary = &g;
  return primary && primary->total > 0 ? static_cast<double>(primary->busy) / static_cast<double>(primary->total) : 0;
}

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<std::string> ids_of(const TraceReport& t) {
  std::set<std::string> ids;
  for (const FlaggedWindow& w : t.flagged)
    for (const Finding& f : w.findings) ids.insert(f.id);
  return {ids.begin(), ids.end()};
}

}  // namespace

JobSummary summarize_job(std::vector<RankInput> inputs) {
  JobSummary j;
  std::sort(inputs.begin(), inputs.end(), [](const RankInput& a, const RankInput& b) { return a.rank < b.rank; });
  std::vector<RankCalls> calls;
  for (RankInput& in : inputs) {
    const TraceReport& t = *in.report;
    JobRank r;
    r.rank = in.rank;
    r.path = t.path;
    r.verdict = t.verdict;
    if (t.verdict != Verdict::error) {
      r.score = t.score;
      r.steps = t.headline.steps;
      r.step_mean = t.headline.step_mean;
      r.gpu_busy = step_gpu_busy(t);
      r.ids = ids_of(t);
      calls.push_back({in.rank, std::move(in.calls)});
    }
    j.ranks.push_back(std::move(r));
  }
  auto rank_entry = [&](int32_t rank) -> JobRank& {
    return *std::find_if(j.ranks.begin(), j.ranks.end(), [&](const JobRank& r) { return r.rank == rank; });
  };

  // Step time across ranks.
  std::vector<int64_t> steps;
  for (const JobRank& r : j.ranks)
    if (r.verdict != Verdict::error && r.steps > 0) steps.push_back(r.step_mean);
  if (!steps.empty()) {
    j.step_median = median(steps);
    j.step_min = *std::min_element(steps.begin(), steps.end());
    j.step_max = *std::max_element(steps.begin(), steps.end());
    std::vector<int64_t> deviations;
    for (int64_t s : steps) deviations.push_back(std::abs(s - j.step_median));
    j.step_mad = median(deviations);
    j.step_imbalance = j.step_median > 0 ? static_cast<double>(j.step_max) / static_cast<double>(j.step_median) - 1 : 0;
    const double cut = std::max(static_cast<double>(j.step_median) + kStepMadMultiple * static_cast<double>(j.step_mad),
                                (1 + kStepStragglerShare) * static_cast<double>(j.step_median));
    for (JobRank& r : j.ranks) {
      if (r.verdict == Verdict::error || r.steps == 0) continue;
      if (r.step_mean == j.step_max && j.slowest_rank < 0) j.slowest_rank = r.rank;
      r.step_straggler = j.step_median > 0 && static_cast<double>(r.step_mean) > cut;
    }
  } else {
    j.warnings.push_back("no rank has ProfilerStep spans: step times cannot be compared");
  }
  bool first_busy = true;
  for (const JobRank& r : j.ranks) {
    if (r.verdict == Verdict::error) continue;
    j.gpu_busy_min = first_busy ? r.gpu_busy : std::min(j.gpu_busy_min, r.gpu_busy);
    j.gpu_busy_max = first_busy ? r.gpu_busy : std::max(j.gpu_busy_max, r.gpu_busy);
    first_busy = false;
  }

  // Collective waits, as `ttap collectives` measures them.
  if (calls.size() >= 2) {
    const CollectiveReport c = analyze_collective_calls(std::move(calls));
    double skew = 0;
    for (const CollectiveGroup& g : c.groups) {
      j.collective_calls += g.calls;
      skew += g.mean_skew * static_cast<double>(g.calls);
    }
    j.mean_skew = j.collective_calls ? skew / static_cast<double>(j.collective_calls) : 0;
    const double even_share = static_cast<double>(j.collective_calls) / static_cast<double>(c.ranks.size());
    for (const RankWait& w : c.ranks) {
      JobRank& r = rank_entry(w.rank);
      r.last_arrivals = w.last_arrivals;
      r.others_waited = w.others_waited;
      r.waited = w.waited;
      r.collective_straggler = j.collective_calls > 0 && static_cast<double>(w.last_arrivals) > kLastArrivalMultiple * even_share;
    }
    for (const std::string& w : c.warnings) j.warnings.push_back("collectives: " + w);
  } else {
    j.warnings.push_back("fewer than 2 ranks were analyzed: no collective comparison");
  }

  // Findings only some ranks show: what differs between ranks is where to look first.
  std::map<std::string, std::vector<int32_t>> by_id;
  size_t analyzed = 0;
  for (const JobRank& r : j.ranks) {
    if (r.verdict == Verdict::error) continue;
    ++analyzed;
    for (const std::string& id : r.ids) by_id[id].push_back(r.rank);
  }
  for (auto& [id, ranks] : by_id)
    if (ranks.size() < analyzed) j.partial.push_back({id, std::move(ranks)});
  std::stable_sort(j.partial.begin(), j.partial.end(), [](const PartialFinding& a, const PartialFinding& b) { return a.ranks.size() < b.ranks.size(); });
  return j;
}

}  // namespace ttap
