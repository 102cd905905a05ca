#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/diff_report.hpp"

namespace ttap::cli {

int run_diff(const DiffOptions& o) {
  Loaded base = load_and_build(o.base);
  Loaded next = load_and_build(o.next);
  ttap::DiffOptions options;
  options.threshold_pct = o.threshold_pct;
  const TraceDiff diff = diff_traces(base.trace, base.tree, next.trace, next.tree, options);
  const std::vector<Table> tables = diff_tables(diff, o.format == "text" ? o.top : 0);
  const std::string verdict = diff_verdict(diff, o.threshold_pct);
  std::string out;
  if (o.format == "text") {
    out = fmt::format("base: {}\nnew:  {}\n", base.trace.source, next.trace.source);
    for (const std::string& w : diff.warnings) out += fmt::format("warning: {}\n", w);
    out += "\n";
  } else {
    for (const std::string& w : diff.warnings) spdlog::warn("{}", w);
  }
  std::string warnings;
  for (const std::string& w : diff.warnings) warnings += fmt::format("{}\"{}\"", warnings.empty() ? "" : ",", json_escape(w));
  // `verdict` is a value a script can compare; the sentence is beside it.
  out += render_tables(tables, parse_table_format(o.format),
                       fmt::format("\"schema\":\"ttap.diff/1\",\"base\":\"{}\",\"new\":\"{}\",\"threshold_pct\":{},\"regressed\":{},"
                                   "\"verdict\":\"{}\",\"verdict_text\":\"{}\",\"warnings\":[{}]",
                                   json_escape(base.trace.source), json_escape(next.trace.source), o.threshold_pct,
                                   diff.regressed ? "true" : "false", diff.regressed ? "fail" : "pass", json_escape(verdict), warnings));
  if (o.format == "text") out += "\n" + verdict + "\n";
  write_output(o.output, out);
  return diff.regressed ? kFlagged : kOk;
}

}  // namespace ttap::cli
