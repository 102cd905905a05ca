// Reading `ttap analyze` reports back: the JSON report (docs/analyze-json.md) and the
// JSONL stream (one such report per trace per line) become Reports again, so `ttap merge`
// can render shards and earlier runs in any format. The one place that parses the schema.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ttap/report.hpp"

namespace ttap {

struct ReadReports {
  std::vector<Report> reports;         // in file order; one per JSONL line
  std::vector<std::string> problems;   // "FILE line N: why", for lines that are not reports
};

// `text` is a whole file: one JSON document, or one document per line. A line that does
// not parse (a run killed mid-write) lands in `problems`; the others still count. Throws
// InputError when the file holds no report at all and is not empty.
ReadReports read_analyze_reports(std::string_view text, const std::string& source);

}  // namespace ttap
