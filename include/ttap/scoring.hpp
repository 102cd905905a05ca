// Window scoring: the detector's first stage. Every window of a trace gets a score in
// [0, 1] (how likely it holds an anti-pattern) and the trace gets the mean (the paper's
// multiple-instance trace score).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/windows.hpp"

namespace ttap {

enum class Scorer {
  model,    // the TorchScript window detector (models/), run by libtorch
  rules,    // the rule detectors' highest confidence per window (a baseline)
  cluster,  // unsupervised: distance from the trace's typical window statistics (a baseline)
  hybrid,   // the model's score and the rules' evidence, combined by weights fit on val (hybrid.hpp)
};

// "model", "rules", "cluster", "hybrid": the names the command line and the config take.
inline constexpr const char* kScorerNames[] = {"model", "rules", "cluster", "hybrid"};
std::optional<Scorer> parse_scorer(std::string_view name);

struct ScoreOptions {
  Scorer scorer = Scorer::model;
  std::string model;          // model file or folder; "" = search (see find_model_dir)
  std::string device = "auto";  // auto|cpu|cuda
  int threads = 0;            // libtorch intra-op threads; 0 = its default
  int max_events = 128;       // the WindowOptions::max_events the windows were made with
};

struct TraceScores {
  std::vector<double> window;  // one per window, in window order
  double trace = 0;            // mean of window scores
  std::string scorer;          // what produced them ("model", "rules", "cluster", "hybrid")
  std::string device;          // "cpu"/"cuda" for the model; "" otherwise
  double seconds = 0;          // time spent scoring (features + forward for the model)
  std::string warning;         // e.g. why the model could not be used and what was used instead
};

// Starts loading the detector the options name (dlopen of the libtorch module, its static
// initializers, the TorchScript model, the tokenizer) on a background thread, so that
// work overlaps reading the trace: about 0.45 s of CPU that otherwise comes before the
// first forward. score_windows then waits for it, and reports its errors as it would
// have without the prefetch. Does nothing for the scorers that run no model. The
// returned handle joins the thread when destroyed; keep it alive while scoring.
class ModelPrefetch {
 public:
  ModelPrefetch();
  explicit ModelPrefetch(const ScoreOptions& options);
  ModelPrefetch(ModelPrefetch&&) noexcept;
  ModelPrefetch& operator=(ModelPrefetch&&) noexcept;
  ~ModelPrefetch();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws InputError (bad --model path) or std::runtime_error (model failed to run).
TraceScores score_windows(const Trace& trace, const EventTree& tree, const std::vector<Window>& windows,
                          const ScoreOptions& options);

// Flagged windows lie at least this many windows apart by default: a stall or a slow op
// that spans a few windows lifts its neighbours' scores too, and five flags on one place
// show the user one problem five times while a second one goes unflagged. 5 of 100 windows
// was chosen on the val splits (docs/accuracy-log.md, "Flagged windows apart").
inline constexpr int kFlagSpacing = 5;

// The windows the scores flag, best first: greedily the highest score (ties: the earlier
// window) that lies at least `spacing` windows from every window already flagged, until
// `k` are flagged (spacing 0 or 1: the plain top k). With `positive_only`, windows scored
// 0 or less are never flagged (a rules-scored window with no finding).
std::vector<size_t> flag_windows(const std::vector<double>& scores, size_t k, size_t spacing, bool positive_only);

}  // namespace ttap
