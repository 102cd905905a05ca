// Detection metrics (docs/DATASET.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ttap {

// Area under the ROC curve of `scores` against `labels` (1 positive), by the Mann-Whitney
// statistic with ties counted half. NaN when either class is absent.
double auc_roc(const std::vector<double>& scores, const std::vector<uint8_t>& labels);

}  // namespace ttap
