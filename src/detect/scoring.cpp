// Window scoring: the model, or one of the paper's two baselines (include/ttap/scoring.hpp).
#include "ttap/scoring.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <iterator>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ttap/detector.hpp"
#include "ttap/features.hpp"
#include "ttap/hybrid.hpp"
#include "ttap/input.hpp"
#include "ttap/model_files.hpp"
#include "ttap/rules.hpp"
#include "ttap/tokenizer.hpp"

namespace ttap {

namespace {

std::vector<double> rule_window_scores(const Trace& t, const EventTree& tree, const std::vector<Window>& windows) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Window& w : windows) ranges.emplace_back(w.begin, w.end);
  return RuleEngine(t, tree).scores(ranges);
}

// The clustering baseline: how far each window's statistics lie from the trace's typical
// window, per statistic in robust z-scores (median, MAD), squashed to [0, 1). Unsupervised:
// it flags the unusual, not the slow.
std::vector<double> cluster_window_scores(const FeatureBatch& b) {
  const size_t W = static_cast<size_t>(b.windows);
  std::vector<double> dist(W, 0.0);
  for (int k = 0; k < kWindowStats; ++k) {
    std::vector<double> col(W);
    for (size_t w = 0; w < W; ++w) col[w] = b.window_stats[w * kWindowStats + static_cast<size_t>(k)];
    std::vector<double> sorted = col;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(W / 2), sorted.end());
    const double median = sorted[W / 2];
    for (double& v : sorted) v = std::fabs(v - median);
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(W / 2), sorted.end());
    const double mad = std::max(sorted[W / 2] * 1.4826, 0.05);  // floor: flat statistics are not news
    for (size_t w = 0; w < W; ++w) dist[w] += std::pow((col[w] - median) / mad, 2);
  }
  for (double& d : dist) d = 1.0 - std::exp(-std::sqrt(d / kWindowStats) / 3.0);
  return dist;
}

// Loaded once per process: libtorch's start and the model's load cost far more than a
// forward, and `analyze DIR` scores many traces.
struct LoadedModel {
  ModelFiles files;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Detector> detector;
  std::mutex run;  // one forward at a time per model
  std::optional<HybridWeights> hybrid;  // DIR/hybrid.json, read on the first hybrid request
  std::string hybrid_error;             // why it could not be read
  bool hybrid_tried = false;
};

// The hybrid weights beside the model; nullptr (with the reason in `why`) when absent.
const HybridWeights* hybrid_weights_for(LoadedModel& lm, std::string& why) {
  static std::mutex m;
  std::lock_guard lock(m);
  if (!lm.hybrid_tried) {
    lm.hybrid_tried = true;
    try {
      lm.hybrid = load_hybrid_weights(lm.files.dir + "/" + kHybridFile);
    } catch (const InputError& e) {
      lm.hybrid_error = e.what();
    }
  }
  why = lm.hybrid_error;
  return lm.hybrid ? &*lm.hybrid : nullptr;
}

// The first forward on CUDA pays for the context, cuBLAS and cuDNN: 450-670 ms on an H200,
// against 25-36 ms for a CPU forward of 100 windows (scripts/bench/cuda_parity.sh). model_for
// runs in the background prefetch while the trace parses, so two tiny forwards here (one per
// route of the routed model: with and without GPU events) move that start off the critical path.
void warm_up(const Detector& d) {
  FeatureBatch b;
  b.windows = 2;
  b.events = 4;
  b.names = 2;
  b.name_tokens.assign(static_cast<size_t>(b.names) * kMaxNameTokens, 0);
  b.name_tokens[kMaxNameTokens] = 1;
  const size_t n = static_cast<size_t>(b.windows * b.events);
  b.event_name.assign(n, 1);
  b.event_kind.assign(n, 1);
  b.event_opcat.assign(n, 1);
  b.event_track.assign(n, 1);
  b.event_mask.assign(n, 1);
  for (const float is_gpu : {0.0f, 1.0f}) {
    b.event_numeric.assign(n * kNumericFeatures, 0.0f);
    for (size_t e = 0; e < n; ++e) b.event_numeric[e * kNumericFeatures + 5] = is_gpu;  // column 5: is_gpu
    d.score(b);
  }
}

LoadedModel& model_for(const ScoreOptions& o) {
  static std::mutex m;
  // Never destroyed: exit's static destructors would free a CUDA detector after libtorch's
  // own teardown, which aborts (seen on an H200). The OS takes the memory back.
  static auto* cache = new std::map<std::string, std::unique_ptr<LoadedModel>>();
  std::lock_guard lock(m);
  const std::string key = fmt::format("{}|{}|{}", o.model, o.device, o.threads);
  auto& slot = (*cache)[key];
  if (!slot) {
    auto lm = std::make_unique<LoadedModel>();
    lm->files = find_model_files(o.model);
    if (lm->files.detector.empty()) throw std::runtime_error(fmt::format("no {} in {}", kDetectorFile, lm->files.dir));
    lm->tokenizer = std::make_unique<Tokenizer>(Tokenizer::load(lm->files.tokenizer));
    lm->detector = std::make_unique<Detector>(Detector::open(lm->files.detector, o.device, o.threads));
    if (lm->detector->device() == "cuda") warm_up(*lm->detector);
    slot = std::move(lm);
  }
  return *slot;
}

bool runs_model(Scorer s) { return s == Scorer::model || s == Scorer::hybrid; }

double mean(const std::vector<double>& v) { return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

}  // namespace

struct ModelPrefetch::Impl {
  std::thread loader;
  ~Impl() {
    if (loader.joinable()) loader.join();
  }
};

ModelPrefetch::ModelPrefetch(const ScoreOptions& o) {
  if (!runs_model(o.scorer)) return;
  impl_ = std::make_unique<Impl>();
  impl_->loader = std::thread([o] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      model_for(o);
      spdlog::debug("detector loaded in the background in {:.3f} s (libtorch module, model, tokenizer)",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    } catch (...) {
      // Left for score_windows: its own model_for call meets the same error and decides,
      // as without the prefetch, whether it is the user's error or a fallback to the rules.
    }
  });
}
ModelPrefetch::ModelPrefetch() = default;
ModelPrefetch::ModelPrefetch(ModelPrefetch&&) noexcept = default;
ModelPrefetch& ModelPrefetch::operator=(ModelPrefetch&&) noexcept = default;
ModelPrefetch::~ModelPrefetch() = default;

std::optional<Scorer> parse_scorer(std::string_view name) {
  for (size_t i = 0; i < std::size(kScorerNames); ++i)
    if (name == kScorerNames[i]) return static_cast<Scorer>(i);
  return std::nullopt;
}

TraceScores score_windows(const Trace& t, const EventTree& tree, const std::vector<Window>& windows, const ScoreOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  TraceScores s;
  if (windows.empty()) {
    s.scorer = "none";
    return s;
  }
  const WindowOptions wopt{static_cast<int>(windows.size()), o.max_events};
  switch (o.scorer) {
    case Scorer::hybrid:
    case Scorer::model: {
      LoadedModel* lm = nullptr;
      try {
        lm = &model_for(o);
      } catch (const InputError&) {
        if (!o.model.empty()) throw;  // the user named a model: a bad path is their error to see
        s.warning = "no detector model found (set TTAP_MODEL_DIR or --model); windows scored by the rule detectors";
      } catch (const std::runtime_error& e) {
        if (!o.model.empty() || o.device == "cuda") throw;
        s.warning = fmt::format("the detector model is unavailable ({}); windows scored by the rule detectors", e.what());
      }
      if (lm == nullptr) {
        s.window = rule_window_scores(t, tree, windows);
        s.scorer = "rules";
        break;
      }
      const Tokenizer& tok = *lm->tokenizer;
      const auto f0 = std::chrono::steady_clock::now();
      const FeatureBatch b = compute_features(t, tree, windows, wopt, [&](std::string_view n) { return tok.encode(n); });
      std::lock_guard lock(lm->run);
      const auto f1 = std::chrono::steady_clock::now();
      s.window = lm->detector->score(b);
      spdlog::debug("detector: {} windows x {} events, features {:.1f} ms, forward {:.1f} ms on {}", b.windows, b.events,
                    std::chrono::duration<double, std::milli>(f1 - f0).count(),
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f1).count(),
                    lm->detector->device());
      s.scorer = "model";
      s.device = lm->detector->device();
      if (o.scorer == Scorer::hybrid) {
        std::string why;
        if (const HybridWeights* hw = hybrid_weights_for(*lm, why)) {
          s.window = hybrid_scores(*hw, s.window, rule_evidence(t, tree, windows));
          s.scorer = "hybrid";
        } else {
          s.warning = fmt::format("no hybrid weights ({}); windows scored by the model alone", why);
        }
      }
      break;
    }
    case Scorer::rules:
      s.window = rule_window_scores(t, tree, windows);
      s.scorer = "rules";
      break;
    case Scorer::cluster: {
      const FeatureBatch b = compute_features(t, tree, windows, wopt, [](std::string_view) { return std::vector<int>{}; });
      s.window = cluster_window_scores(b);
      s.scorer = "cluster";
      break;
    }
  }
  s.trace = mean(s.window);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace ttap
