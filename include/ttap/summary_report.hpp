// `ttap summary`: the breakdown tables of one trace, as plain data.
#pragma once

#include <vector>

#include "ttap/analyze.hpp"
#include "ttap/table.hpp"

namespace ttap {

struct SummaryOptions {
  size_t top = 20;  // rows per long table in text form; 0 = all
  bool roofline = false;  // add the roofline table
};

std::vector<Table> summary_tables(const Trace& trace, const EventTree& tree, const SummaryOptions& options);

// One line per loader/tree diagnostic that is not zero, for `-v` and the summary note.
std::vector<std::string> diagnostic_lines(const Trace& trace, const EventTree& tree);

}  // namespace ttap
