// JSON number and string text the parser reads itself: microsecond timestamps as exact
// integer nanoseconds, and the lenient repair of unpaired surrogate escapes.
#include "parser.hpp"

#include <cmath>
#include <cstdlib>

namespace ttap::load_detail {

// Microseconds as JSON number text (trimmed) -> integer nanoseconds, exactly for up to
// three fractional digits (rounded beyond). Falls back to strtod for exponents.
bool parse_us_as_ns(std::string_view text, int64_t& out) {
  size_t i = 0;
  if (text.empty()) return false;
  bool neg = false;
  if (text[0] == '-') {
    neg = true;
    i = 1;
  }
  int64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > kMaxAbsTsNs / 1000) return false;  // too large: reported as absurd
  }
  if (digits == 0) return false;
  int64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (frac_digits < 3) {
        frac = frac * 10 + (text[i] - '0');
        ++frac_digits;
      } else if (frac_digits == 3) {
        round_up = text[i] >= '5';
        ++frac_digits;
      }
    }
  }
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return false;
    std::string copy(text);
    const double v = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(kMaxAbsTsNs / 1000)) return false;
    out = std::llround(v * 1000.0);
    return true;
  }
  for (int d = frac_digits; d < 3; ++d) frac *= 10;
  int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
  out = neg ? -ns : ns;
  return true;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool read_hex4(std::string_view s, size_t at, uint32_t& out) {
  if (at + 4 > s.size()) return false;
  out = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    out = out * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// A JSON string token ("...", quotes included) unescaped into `out`, with each unpaired
// UTF-16 surrogate escape (\uD800-\uDFFF without its partner; Python's json.dumps writes
// them for broken names) replaced by U+FFFD. True only when such a repair was made and the
// rest is valid JSON text; any other fault stays an error.
bool unescape_repairing_surrogates(std::string_view token, std::string& out) {
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  const std::string_view s = token.substr(1, token.size() - 2);
  out.clear();
  bool repaired = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i >= s.size()) return false;
    switch (s[i]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!read_hex4(s, i + 1, cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (i + 2 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u' && read_hex4(s, i + 3, low) && low >= 0xDC00 &&
              low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;
            repaired = true;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
          repaired = true;
        }
        append_utf8(cp, out);
        break;
      }
      default:
        return false;
    }
  }
  return repaired;
}

// The offset of the first byte that does not begin a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), or `size` when all are. Only
// for the error message: simdjson says that a document is not UTF-8, not where.
size_t first_invalid_utf8(const char* data, size_t size) {
  const auto* d = reinterpret_cast<const unsigned char*>(data);
  size_t i = 0;
  while (i < size) {
    const unsigned char c = d[i];
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return i;
    if (i + len > size) return i;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char b = d[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += len;
  }
  return size;
}

// The offset of the first control character (below 0x20) inside a string, which JSON
// requires escaped, or `size`. For the error message, as first_invalid_utf8.
size_t first_unescaped_control(const char* data, size_t size) {
  bool in_string = false;
  for (size_t i = 0; i < size; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20) {
      return i;
    }
  }
  return size;
}

}  // namespace ttap::load_detail
