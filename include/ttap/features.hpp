// Features: per-event tensors for a trace's windows, exactly what the window detector
// consumes. Computed once, here, in C++: `ttap features` writes them for training
// (docs/features.md), and the detector feeds the same arrays to the model, so training
// and inference cannot disagree about a feature.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "ttap/windows.hpp"

namespace ttap {

inline constexpr int kFeatureVersion = 1;
inline constexpr int kMaxNameTokens = 16;  // tokens kept per event name
inline constexpr int kTrackSlots = 16;     // 1-8 GPU streams, 9-16 CPU threads (0 = padding)
inline constexpr int kNumericFeatures = 8;
inline constexpr int kWindowStats = 8;

// The numeric feature columns, in order (docs/features.md defines each).
const std::vector<std::string>& numeric_feature_names();
const std::vector<std::string>& window_stat_names();

// Row-major arrays; W windows x E events per window (E = WindowOptions::max_events), U
// distinct names. Padding slots have mask 0 and zeros elsewhere.
struct FeatureBatch {
  int64_t windows = 0;      // W
  int64_t events = 0;       // E
  int64_t names = 0;        // U (row 0 is the padding name)
  std::vector<int32_t> name_tokens;   // [U, kMaxNameTokens], token id + 1, 0 = padding
  std::vector<int32_t> event_name;    // [W, E] row in name_tokens
  std::vector<int32_t> event_kind;    // [W, E] Category + 1
  std::vector<int32_t> event_opcat;   // [W, E] OpCategory + 1 (CPU ops, GPU activity), else 0
  std::vector<int32_t> event_track;   // [W, E] track slot, 1..kTrackSlots
  std::vector<float> event_numeric;   // [W, E, kNumericFeatures]
  std::vector<uint8_t> event_mask;    // [W, E]
  std::vector<float> window_stats;    // [W, kWindowStats] (for the statistical baselines)
  std::vector<double> window_bounds;  // [W, 2] begin, end in the trace's microseconds
};

// The event name as the tokenizer sees it: "void " and parameter lists dropped, numbers
// replaced by N, hex addresses by 0x, Python line numbers removed, cut to 160 bytes.
std::string normalize_event_name(std::string_view name);

// Token ids of a normalized name (the sentencepiece model in models/, through Tokenizer;
// a function here so the core does not depend on the module loader).
using NameEncoder = std::function<std::vector<int>(std::string_view normalized_name)>;

// Builds the batch; E = options.max_events.
FeatureBatch compute_features(const Trace& trace, const EventTree& tree, const std::vector<Window>& windows,
                              const WindowOptions& options, const NameEncoder& encode);

// Writes each array as DIR/<name>.npy (NumPy format 1.0, little-endian) plus meta.json.
void write_features(const FeatureBatch& batch, const std::string& dir, const std::string& meta_json);
// DIR/window_label.npy (uint8 [W]).
void write_window_labels(const std::string& dir, const std::vector<uint8_t>& labels);
// DIR/window_score.npy (float64 [W]): the detector's scores, to check that Python and C++
// see the same model output on the same arrays.
void write_window_scores(const std::string& dir, const std::vector<double>& scores);

}  // namespace ttap
