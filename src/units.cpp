#include "ttap/units.hpp"

#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include <fmt/format.h>

namespace ttap {

namespace {
// `v` in the first unit (each 1000x the one before) where it is below 1000, three
// significant digits, trailing zeros dropped ("9.5", "412", "1.47").
std::string three_digits(double v, std::initializer_list<const char*> units) {
  const char* unit = *units.begin();
  for (const char* u : units) {
    unit = u;
    if (std::abs(v) < 999.5 || u == *(units.end() - 1)) break;
    v /= 1000.0;
  }
  return fmt::format("{:.3g} {}", v, unit);
}
}  // namespace

std::string human_duration(int64_t ns) {
  if (std::llabs(ns) < 1000) return fmt::format("{} ns", ns);
  return three_digits(static_cast<double>(ns) / 1e3, {"us", "ms", "s"});
}

std::string human_bytes(int64_t bytes) {
  if (std::llabs(bytes) < 1000) return fmt::format("{} B", bytes);
  return three_digits(static_cast<double>(bytes) / 1e3, {"KB", "MB", "GB", "TB"});
}

}  // namespace ttap
