// Durations and sizes as people read them, shared by every stage that writes text for a
// user (classify's finding lines, the report's renderers), so the same figure reads the same.
#pragma once

#include <cstdint>
#include <string>

namespace ttap {

// Three significant digits in the unit that fits: "9.5 ms", "412 us", "1.47 s"; "640 ns".
std::string human_duration(int64_t ns);
std::string human_bytes(int64_t bytes);  // "1.47 GB", "512 KB" (decimal units)

}  // namespace ttap
