#include <fmt/format.h>

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
  if (o.format == "text") out = fmt::format("base: {}\nnew:  {}\n\n", base.trace.source, next.trace.source);
  out += render_tables(tables, parse_table_format(o.format),
                       fmt::format("\"schema\":\"ttap.diff/1\",\"base\":\"{}\",\"new\":\"{}\",\"threshold_pct\":{},\"regressed\":{},\"verdict\":\"{}\"",
                                   json_escape(base.trace.source), json_escape(next.trace.source), o.threshold_pct,
                                   diff.regressed ? "true" : "false", json_escape(verdict)));
  if (o.format == "text") out += "\n" + verdict + "\n";
  write_output(o.output, out);
  return diff.regressed ? kFlagged : kOk;
}

}  // namespace ttap::cli
