// Which windows the detector's scores flag (scoring.hpp: flag_windows): the windows that
// analyze explains and eval counts for localization and classification.
#include <algorithm>
#include <numeric>

#include "ttap/scoring.hpp"

namespace ttap {

std::vector<size_t> flag_windows(const std::vector<double>& scores, size_t k, size_t spacing, bool positive_only) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<size_t> flagged;
  for (size_t i : order) {
    if (flagged.size() >= k || (positive_only && !(scores[i] > 0))) break;
    const bool apart = std::all_of(flagged.begin(), flagged.end(), [&](size_t f) {
      return (i > f ? i - f : f - i) >= spacing;
    });
    if (apart) flagged.push_back(i);
  }
  return flagged;
}

}  // namespace ttap
