#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/collectives_report.hpp"
#include "ttap/input.hpp"

namespace ttap::cli {

namespace {

}  // namespace

int run_collectives(const CollectivesOptions& o) {
  const std::vector<std::string> files = expand_trace_inputs(o.traces);
  if (files.size() < 2) {
    fmt::print(stderr, "ttap: error: collectives needs the traces of at least 2 ranks (got {})\n", files.size());
    return kBadInput;
  }
  std::vector<Loaded> loaded;
  loaded.reserve(files.size());
  for (const auto& f : files) loaded.push_back(load_and_build(f));
  std::vector<RankTrace> ranks;
  for (size_t i = 0; i < loaded.size(); ++i) {
    const int32_t rank = loaded[i].trace.distributed.rank;
    ranks.push_back({rank >= 0 ? rank : static_cast<int32_t>(i), &loaded[i].trace, &loaded[i].tree});
  }
  std::sort(ranks.begin(), ranks.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].rank == ranks[i - 1].rank) {
      fmt::print(stderr, "ttap: error: two traces claim rank {} ({} and {})\n", ranks[i].rank, ranks[i - 1].trace->source,
                 ranks[i].trace->source);
      return kBadInput;
    }
  const CollectiveReport report = analyze_collectives(ranks);
  const std::vector<Table> tables = collectives_tables(report);
  std::string out = o.format == "text" ? fmt::format("{} ranks\n\n", ranks.size()) : "";
  out += render_tables(tables, parse_table_format(o.format), "\"schema\":\"ttap.collectives/1\"");
  write_output(o.output, out);
  return kOk;
}

}  // namespace ttap::cli
