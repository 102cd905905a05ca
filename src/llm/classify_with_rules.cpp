// The one place the LLM stage calls the rule engine: widened windows get fresh evidence
// from RuleEngine::detect. Kept apart so the rest of src/llm/ links without src/rules/.
#include "ttap/llm.hpp"

namespace ttap {

std::vector<LlmVerdict> LlmClassifier::classify(const Trace& trace, const EventTree& tree, const RuleEngine& rules,
                                                const std::vector<LlmWindow>& windows) {
  const LlmEvidenceFn evidence = [&rules](int64_t begin, int64_t end) { return rules.detect(begin, end); };
  return classify(trace, tree, evidence, windows);
}

}  // namespace ttap
