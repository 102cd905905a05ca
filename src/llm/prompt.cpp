// What goes to the endpoint: the system message (task, catalog, answer shape), the rule
// evidence, and the chat-completions request body with its strict JSON schema.
#include <string>

#include "text_format.hpp"
#include "ttap/catalog.hpp"
#include "ttap/llm.hpp"
#include "ttap/table.hpp"

namespace ttap {

namespace {

using llm::append_line;
using llm::clip;
using llm::duration_text;
using llm::offset_text;

constexpr size_t kFindings = 10;          // findings listed
constexpr size_t kEvidenceLines = 6;      // evidence lines per finding
constexpr size_t kEvidenceLineChars = 300;

}  // namespace

std::string llm_system_prompt() {
  std::string s =
      "You are an expert in PyTorch performance. You get one time window of a PyTorch profiler (Kineto) trace: "
      "a condensed summary of what ran in it (CPU ops, Python frames, CUDA runtime calls, GPU kernels and copies, "
      "GPU idle time, launch delays, a tree excerpt) and the findings of rule-based detectors over the same range. "
      "Decide which of the anti-patterns below the window shows. The rule findings are evidence, not the truth: "
      "confirm, correct or reject them from the figures. Use only ids from this catalog; a window may show several.\n\n"
      "Catalog (id: name. Signature in the trace. Typical fix):\n";
  for (const AntiPattern& p : catalog())
    s += fmt::format("- {}: {}. Signature: {}. Fix: {}.\n", p.id, p.name, p.signature, p.fix);
  s +=
      "\nReading a window: list ids by how much of the window's lost or wasted time each explains, the most first; "
      "a specific id (what the host or the GPU was doing) comes before gpu_idle, which is only for idle time that "
      "nothing more specific explains. On a CPU-only run (the GPU line says so) the ids describe the host: "
      "cpu_bound_step is step time spent outside the model's ops (the \"Host outside every op\" line: Python, "
      "preprocessing, I/O, sleeps), layout_conversion is memory-format copies (aten::contiguous, clone, "
      "to(memory_format=...)) around convolutions, cast_churn is dtype casts, and the ids about kernels, copies "
      "between host and device and communication do not apply.\n"
      "\nAnswer with one JSON object and nothing else:\n"
      "{\"ids\": [catalog ids, or [\"none\"] when the window shows no anti-pattern], "
      "\"confidence\": number from 0 to 1, "
      "\"explanation\": what in the window shows it, citing the figures, "
      "\"fix\": the concrete change to make, "
      "\"needs_more_context\": true when the window cuts the pattern off (it starts or ends inside the suspicious "
      "activity) or you cannot decide without seeing more of the trace around it, else false}\n";
  return s;
}

std::string llm_evidence_text(const std::vector<RuleFinding>& findings, int64_t origin) {
  std::string out;
  if (findings.empty()) return "Rule findings: none in this range.\n";
  out += fmt::format("Rule findings ({}):\n", findings.size());
  size_t listed = 0;
  for (const RuleFinding& f : findings) {
    if (listed == kFindings) break;
    std::string block = fmt::format("- {}: confidence {:.2f}, severity {}, at {} to {}, costs about {}\n", clip(f.id, 40),
                                    f.confidence, severity_name(f.severity), offset_text(f.begin, origin),
                                    offset_text(f.end, origin), duration_text(f.cost));
    for (size_t i = 0; i < std::min(kEvidenceLines, f.evidence.size()); ++i)
      block += "    " + clip(f.evidence[i], kEvidenceLineChars) + "\n";
    if (f.evidence.size() > kEvidenceLines) block += fmt::format("    ({} more lines)\n", f.evidence.size() - kEvidenceLines);
    if (!f.fix.empty()) block += "    suggested fix: " + clip(f.fix, kEvidenceLineChars) + "\n";
    for (size_t i = 0; i < std::min<size_t>(3, f.locations.size()); ++i) {
      const CodeLocation& l = f.locations[i];
      block += fmt::format("    code: {}:{} in {}\n", clip(l.file, 120), l.line, clip(l.function, 80));
    }
    if (out.size() + block.size() > kLlmEvidenceChars - 40) break;
    out += block;
    ++listed;
  }
  if (listed < findings.size()) out += fmt::format("({} more findings left out)\n", findings.size() - listed);
  return out;
}

std::string llm_endpoint(std::string_view url) {
  std::string u(url);
  while (!u.empty() && u.back() == '/') u.pop_back();
  constexpr std::string_view kPath = "/chat/completions";
  if (u.size() < kPath.size() || u.compare(u.size() - kPath.size(), kPath.size(), kPath) != 0) u += kPath;
  return u;
}

std::string llm_request_body(std::string_view model, std::string_view system, std::string_view user) {
  std::string ids = "\"none\"";
  for (const AntiPattern& p : catalog()) ids += "," + json_string(p.id);
  // Strict structured output: every property required, nothing else allowed. Servers that
  // ignore response_format still get the same shape asked for in the system message.
  const std::string schema = fmt::format(
      R"({{"type":"object","additionalProperties":false,)"
      R"("required":["ids","confidence","explanation","fix","needs_more_context"],)"
      R"("properties":{{"ids":{{"type":"array","items":{{"type":"string","enum":[{}]}}}},)"
      R"("confidence":{{"type":"number"}},"explanation":{{"type":"string"}},"fix":{{"type":"string"}},)"
      R"("needs_more_context":{{"type":"boolean"}}}}}})",
      ids);
  return fmt::format(
      R"({{"model":{},"temperature":0,"messages":[{{"role":"system","content":{}}},{{"role":"user","content":{}}}],)"
      R"("response_format":{{"type":"json_schema","json_schema":{{"name":"ttap_window_verdict","strict":true,"schema":{}}}}}}})",
      json_string(model), json_string(system), json_string(user), schema);
}

}  // namespace ttap
