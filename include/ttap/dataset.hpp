// Labeled trace datasets (docs/DATASET.md): DIR/manifest.jsonl plus the traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ttap/windows.hpp"

namespace ttap {

struct LabeledRange {
  std::string type;   // catalog id
  int64_t begin = 0;  // ns, the trace's time base (ts_begin * 1000)
  int64_t end = 0;    // ns, inclusive end as written
};

struct DatasetEntry {
  size_t line = 0;        // 1-based line in manifest.jsonl
  std::string trace;      // as written (relative to DIR)
  std::string path;       // DIR/trace
  std::string label;      // "good" or "bad"
  std::string task, model, mode, hardware, software, split;
  std::vector<LabeledRange> ranges;
  std::string json;       // the line itself
};

// The manifest line's value for `key` as text (a string as it is, a number or a boolean
// as written), "" when the line has no such key. Throws InputError naming the line when the
// value is an object, an array or null: it cannot name a group.
std::string manifest_text(const DatasetEntry& entry, const std::string& key, const std::string& manifest_path);

// Reads DIR/manifest.jsonl. Throws InputError naming the line for malformed lines,
// missing fields, unknown ids or labels, and ranges with ts_end < ts_begin.
std::vector<DatasetEntry> read_manifest(const std::string& dir);

// The window rule of DATASET.md: a window is positive when labeled ranges cover at least
// `min_share` of its duration.
inline constexpr double kPositiveWindowShare = 0.2;
std::vector<uint8_t> window_labels(const std::vector<Window>& windows, const std::vector<LabeledRange>& ranges,
                                   double min_share = kPositiveWindowShare);
// The labeled ids each window overlaps at all (for classification accuracy).
std::vector<std::vector<std::string>> window_label_ids(const std::vector<Window>& windows,
                                                       const std::vector<LabeledRange>& ranges);

}  // namespace ttap
