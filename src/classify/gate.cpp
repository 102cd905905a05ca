// The verdict a person reads and the gate a CI job acts on.
#include "classify.hpp"

namespace ttap {

std::optional<FailOn> parse_fail_on(std::string_view s) {
  if (s == "none") return FailOn::none;
  if (s == "warning") return FailOn::warning;
  if (s == "error") return FailOn::error;
  return std::nullopt;
}

std::string_view fail_on_name(FailOn f) {
  switch (f) {
    case FailOn::none: return "none";
    case FailOn::warning: return "warning";
    case FailOn::error: return "error";
  }
  return "none";
}

void apply_gate(TraceReport& trace, FailOn fail_on, std::optional<double> fail_score) {
  if (trace.verdict == Verdict::error) {
    trace.gate_failed = true;  // a file that could not be judged never passes a gate
    return;
  }
  Severity worst = Severity::info;
  bool any = false;
  for (const FlaggedWindow& w : trace.flagged)
    for (const Finding& f : w.findings) {
      // An id only the LLM names has no rule evidence and no measured cost: shown, not gated on.
      if (f.source == "llm") continue;
      any = true;
      worst = std::max(worst, f.severity);
    }
  const bool score_high = fail_score && trace.score >= *fail_score;
  trace.verdict = (any && worst >= Severity::warning) || score_high ? Verdict::flagged : Verdict::clean;
  const bool severity_fails = any && fail_on != FailOn::none &&
                              worst >= (fail_on == FailOn::error ? Severity::error : Severity::warning);
  trace.gate_failed = severity_fails || score_high;
}

}  // namespace ttap
