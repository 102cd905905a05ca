#include "ttap/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ttap {

double auc_roc(const std::vector<double>& scores, const std::vector<uint8_t>& labels) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Sum of positive ranks, tied scores sharing their mean rank.
  double rank_sum = 0;
  size_t positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j - 1)) / 2.0 + 1.0;
    for (size_t k = i; k < j; ++k)
      if (labels[order[k]]) {
        rank_sum += mean_rank;
        ++positives;
      }
    i = j;
  }
  const size_t negatives = scores.size() - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  const double p = static_cast<double>(positives), n = static_cast<double>(negatives);
  return (rank_sum - p * (p + 1) / 2.0) / (p * n);
}

}  // namespace ttap
