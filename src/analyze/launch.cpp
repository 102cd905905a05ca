// HTA-style launch statistics: how long after its launch call a GPU event starts, and how
// many kernels run for less time than it took to launch them.
#include <algorithm>

#include "ttap/analyze.hpp"

namespace ttap {

LaunchStats launch_stats(const Trace& t, const EventTree& tree) {
  LaunchStats s;
  std::vector<int64_t> delays;
  int64_t call_time = 0;
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId l = tree.launcher(g);
    if (l == kNoEvent) continue;
    ++s.launches;
    delays.push_back(t.ts[g] - t.ts[l]);
    call_time += t.dur[l];
    if (t.category[g] != Category::Kernel) continue;
    ++s.kernel_launches;
    if (t.dur[g] < t.dur[l]) {
      ++s.short_kernels;
      s.short_kernel_time += t.dur[g];
    }
  }
  if (delays.empty()) return s;
  double sum = 0;
  for (int64_t d : delays) sum += static_cast<double>(d);
  s.launch_delay_mean = sum / static_cast<double>(delays.size());
  s.launch_call_mean = call_time / static_cast<int64_t>(delays.size());
  auto percentile = [&delays](double p) {
    const size_t k = static_cast<size_t>(p * static_cast<double>(delays.size() - 1) + 0.5);
    std::nth_element(delays.begin(), delays.begin() + static_cast<std::ptrdiff_t>(k), delays.end());
    return delays[k];
  };
  s.launch_delay_p50 = percentile(0.50);
  s.launch_delay_p95 = percentile(0.95);
  s.launch_delay_max = *std::max_element(delays.begin(), delays.end());
  return s;
}

int64_t idle_queue_launch_latency(std::vector<int64_t>& delays) {
  constexpr int64_t kMaxIdleQueueLatency = 100'000;
  if (delays.empty()) return 0;
  const size_t k = delays.size() / 20;
  std::nth_element(delays.begin(), delays.begin() + static_cast<std::ptrdiff_t>(k), delays.end());
  return std::clamp<int64_t>(delays[k], 0, kMaxIdleQueueLatency);
}

}  // namespace ttap
