// The hybrid scorer's parts (include/ttap/hybrid.hpp).
#include "ttap/hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <simdjson.h>

#include "ttap/input.hpp"
#include "ttap/rules.hpp"

namespace ttap {

std::vector<RuleEvidence> rule_evidence(const Trace& trace, const EventTree& tree, const std::vector<Window>& windows) {
  const RuleEngine rules(trace, tree);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Window& w : windows) ranges.emplace_back(w.begin, w.end);
  const std::vector<double> scores = rules.scores(ranges);
  std::vector<RuleEvidence> out(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    RuleEvidence& e = out[i];
    e.rule_score = scores[i];
    const double span = static_cast<double>(std::max<int64_t>(1, windows[i].end - windows[i].begin));
    for (const RuleFinding& f : rules.detect(windows[i].begin, windows[i].end)) {
      e.cost_share = std::max(e.cost_share, std::min(1.0, static_cast<double>(f.cost) / span));
      e.severity = std::max(e.severity, (static_cast<double>(f.severity) + 1.0) / 3.0);
      e.confidence = std::max(e.confidence, f.confidence);
    }
  }
  return out;
}

std::vector<double> hybrid_features(double model_score, const RuleEvidence& e) {
  const double p = std::clamp(model_score, 1e-6, 1.0 - 1e-6);
  return {std::clamp(std::log(p / (1.0 - p)), -8.0, 8.0), e.rule_score, e.cost_share, e.severity, e.confidence};
}

HybridWeights load_hybrid_weights(const std::string& path) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) throw InputError(path, "cannot read the hybrid scorer's weights");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) throw InputError(path, "hybrid weights: not JSON");
  HybridWeights w;
  w.path = path;
  simdjson::dom::array features, weights;
  if (doc["bias"].get(w.bias) != simdjson::SUCCESS || doc["features"].get(features) != simdjson::SUCCESS ||
      doc["weights"].get(weights) != simdjson::SUCCESS)
    throw InputError(path, "hybrid weights: needs \"bias\", \"features\" and \"weights\"");
  std::vector<std::string> names;
  for (simdjson::dom::element f : features) {
    std::string_view n;
    if (f.get(n) != simdjson::SUCCESS) throw InputError(path, "hybrid weights: \"features\" holds a non-string");
    names.emplace_back(n);
  }
  for (simdjson::dom::element v : weights) {
    double x = 0;
    if (v.get(x) != simdjson::SUCCESS) throw InputError(path, "hybrid weights: \"weights\" holds a non-number");
    w.weights.push_back(x);
  }
  const std::vector<std::string> expected(std::begin(kHybridFeatures), std::end(kHybridFeatures));
  if (names != expected || w.weights.size() != expected.size())
    throw InputError(path, fmt::format("hybrid weights: features must be {} with one weight each (refit with scripts/train/fit_hybrid.sh)",
                                       fmt::join(expected, ", ")));
  return w;
}

std::vector<double> hybrid_scores(const HybridWeights& w, const std::vector<double>& model_scores,
                                  const std::vector<RuleEvidence>& evidence) {
  std::vector<double> out(model_scores.size());
  for (size_t i = 0; i < model_scores.size(); ++i) {
    const std::vector<double> x = hybrid_features(model_scores[i], evidence[i]);
    double z = w.bias;
    for (size_t k = 0; k < x.size(); ++k) z += w.weights[k] * x[k];
    out[i] = 1.0 / (1.0 + std::exp(-z));
  }
  return out;
}

}  // namespace ttap
