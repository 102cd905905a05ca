// The hybrid scorer (`--scorer hybrid`): the model's window score and the rule detectors'
// evidence on the same window, combined by a logistic regression fit on the val split
// only (scripts/train/fit_hybrid.py; weights in models/hybrid.json, see MODEL_CARD.md).
#pragma once

#include <string>
#include <vector>

#include "ttap/windows.hpp"

namespace ttap {

inline constexpr const char* kHybridFile = "hybrid.json";

// What the rules show in one window, as the hybrid scorer reads it.
struct RuleEvidence {
  double rule_score = 0;  // the rules scorer's score (RuleEngine::scores)
  double cost_share = 0;  // the costliest finding's cost over the window's length, 0..1
  double severity = 0;    // the most severe finding: 0 none, 1/3 info, 2/3 warning, 1 error
  double confidence = 0;  // the highest confidence of any finding, 0..1
};
std::vector<RuleEvidence> rule_evidence(const Trace& trace, const EventTree& tree, const std::vector<Window>& windows);

// The regression's inputs for one window, in the order of kHybridFeatures: the model
// score's logit (clipped to +-8) and the evidence.
inline constexpr const char* kHybridFeatures[] = {"model_logit", "rule_score", "cost_share", "severity", "confidence"};
std::vector<double> hybrid_features(double model_score, const RuleEvidence& evidence);

struct HybridWeights {
  double bias = 0;
  std::vector<double> weights;  // one per kHybridFeatures entry
  std::string path;
};
// Reads a weights file; throws InputError when it is missing, unreadable or names other
// features than kHybridFeatures (a file from another version of ttap).
HybridWeights load_hybrid_weights(const std::string& path);

// sigmoid(bias + weights . hybrid_features(model_score, evidence)), per window.
std::vector<double> hybrid_scores(const HybridWeights& w, const std::vector<double>& model_scores,
                                  const std::vector<RuleEvidence>& evidence);

}  // namespace ttap
