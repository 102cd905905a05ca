// Small text helpers the prompt pieces share: durations and times read the same everywhere.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ttap::llm {

// "1.234 ms" from 1 ms up, else "12.3 us".
inline std::string duration_text(int64_t ns) {
  if (ns >= 1'000'000 || ns <= -1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
}

// A time as "+12.345 ms" after the trace's first event.
inline std::string offset_text(int64_t t, int64_t origin) {
  return fmt::format("+{:.3f} ms", static_cast<double>(t - origin) / 1e6);
}

// `s` cut to `max` characters (kernel names run to kilobytes of template arguments).
// Never cuts inside a UTF-8 sequence.
inline std::string clip(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
}

// Appends `line` and a newline unless that would pass `budget` characters; returns false
// once the budget is spent, so a section stops adding lines.
inline bool append_line(std::string& out, std::string_view line, size_t budget) {
  if (out.size() + line.size() + 1 > budget) return false;
  out.append(line);
  out += '\n';
  return true;
}

}  // namespace ttap::llm
