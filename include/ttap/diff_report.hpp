// `ttap diff`: the comparison as tables.
#pragma once

#include <vector>

#include "ttap/diff.hpp"
#include "ttap/table.hpp"

namespace ttap {

// gates, steps, gpu_timeline, ops_by_category, ops, kernels, tree_changes; long tables cut
// to `top` rows (0 = all).
std::vector<Table> diff_tables(const TraceDiff& diff, size_t top);

// One line: "REGRESSION: step time (mean) +25.1% > 7% (top: ...)" or "no regression ...".
std::string diff_verdict(const TraceDiff& diff, double threshold_pct);

}  // namespace ttap
