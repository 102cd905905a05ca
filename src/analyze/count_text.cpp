// Counts in words, for the rules' evidence lines and the reports ("1 window", "3 windows").
#include <fmt/format.h>

#include "ttap/analyze.hpp"

namespace ttap {

std::string count_text(size_t n, std::string_view noun, std::string_view plural) {
  if (n != 1 && !plural.empty()) return fmt::format("{} {}", n, plural);
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace ttap
