// Helpers the analyze renderers share: units, labels, escaping. Internal to src/report/.
#pragma once

#include <string>
#include <string_view>

#include "ttap/report.hpp"

namespace ttap::analyze_render {

std::string ms(int64_t ns);                 // "12.345 ms"
std::string_view severity_label(Severity s);  // "info", "warning", "error"
// "+1.234 ms" from the start of the trace's steady state.
std::string offset_ms(const TraceReport& t, int64_t ns);
std::string location_text(const CodeLocation& l);  // "train.py:42 (step)"
std::string xml_escape(std::string_view s);        // also drops characters XML 1.0 forbids
std::string saving_text(const Saving& s);          // "~48.601 ms per step (27.8%)"

struct Counts {
  size_t clean = 0, flagged = 0, errors = 0, gate_failed = 0, findings = 0;
};
Counts count(const Report& r);
size_t finding_count(const TraceReport& t);
// Distinct finding ids of a trace, most frequent first.
std::vector<std::string> finding_ids(const TraceReport& t);

}  // namespace ttap::analyze_render
