#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/summary_report.hpp"

namespace ttap::cli {

int run_summary(const SummaryOptions& o) {
  Loaded l = load_and_build(o.trace);
  ttap::SummaryOptions so;
  so.top = (o.format == "text") ? o.top : 0;  // machine formats always carry every row
  so.roofline = o.roofline || o.table == "roofline";
  std::vector<Table> tables = summary_tables(l.trace, l.tree, so);
  if (!o.table.empty()) {
    std::erase_if(tables, [&](const Table& t) { return t.id != o.table; });
    if (tables.empty()) {
      fmt::print(stderr,
                 "ttap: error: --table: no table \"{}\" (have overview, gpu_timeline, ops_by_category, ops_summary, "
                 "ops_by_shape, kernel_summary, launch_stats, steps, roofline, diagnostics)\n",
                 o.table);
      return kBadInput;
    }
  }
  const std::string out = render_tables(tables, parse_table_format(o.format),
                                        fmt::format("\"schema\":\"ttap.summary/1\",\"trace\":\"{}\"", json_escape(l.trace.source)));
  write_output(o.output, out);
  return kOk;
}

}  // namespace ttap::cli
