// `ttap collectives`: the report as tables.
#pragma once

#include <vector>

#include "ttap/collectives.hpp"
#include "ttap/table.hpp"

namespace ttap {

// "collectives" (by type and size) and "ranks" (stragglers first).
std::vector<Table> collectives_tables(const CollectiveReport& report);

}  // namespace ttap
