#include "ttap/table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ttap {

namespace {

std::string cell_text(const Cell& c, int precision) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
  if (std::holds_alternative<int64_t>(c)) return fmt::format("{}", std::get<int64_t>(c));
  if (std::holds_alternative<double>(c)) {
    const double d = std::get<double>(c);
    if (!std::isfinite(d)) return "";
    return fmt::format("{:.{}f}", d, precision);
  }
  return "";
}

bool numeric(const Cell& c) { return std::holds_alternative<int64_t>(c) || std::holds_alternative<double>(c); }

// Display width of UTF-8 text: one column per code point is right for the ASCII and
// Latin text that op and kernel names hold.
size_t width(std::string_view s) {
  size_t w = 0;
  for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
  return w;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return n;
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7F) out += fmt::format("\\u{:04x}", c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string json_string(std::string_view s) { return "\"" + json_escape(s) + "\""; }

std::string render_text(const Table& t) {
  constexpr size_t kMaxCell = 80;  // long kernel names are cut in text form (CSV/JSON keep them)
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths(t.columns.size(), 0);
  for (size_t c = 0; c < t.columns.size(); ++c) widths[c] = width(t.columns[c].name);
  for (const auto& row : t.rows) {
    auto& out = cells.emplace_back();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      std::string s = c < row.size() ? cell_text(row[c], t.columns[c].precision) : "";
      if (width(s) > kMaxCell) {
        size_t cut = 0, seen = 0;
        while (cut < s.size() && seen < kMaxCell - 3) {
          ++cut;
          while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) ++cut;
          ++seen;
        }
        s = s.substr(0, cut) + "...";
      }
      widths[c] = std::max(widths[c], width(s));
      out.push_back(std::move(s));
    }
  }
  std::string out;
  if (!t.title.empty()) out += fmt::format("{}\n", t.title);
  auto pad = [&](const std::string& s, size_t w, bool right) {
    const size_t fill = w > width(s) ? w - width(s) : 0;
    return right ? std::string(fill, ' ') + s : s + std::string(fill, ' ');
  };
  auto right_aligned = [&](size_t c) {
    for (const auto& row : t.rows)
      if (c < row.size() && !std::holds_alternative<std::monostate>(row[c])) return numeric(row[c]);
    return false;
  };
  std::vector<bool> right(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) right[c] = right_aligned(c);
  std::string line;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c) line += "  ";
    line += pad(t.columns[c].name, widths[c], right[c]);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out += line + "\n";
  size_t total = 0;
  for (size_t c = 0; c < widths.size(); ++c) total += widths[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : cells) {
    line.clear();
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      line += pad(row[c], widths[c], right[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (t.total_rows > t.rows.size())
    out += fmt::format("({} of {} rows shown; --top 0 or --format csv for all)\n", t.rows.size(), t.total_rows);
  if (!t.note.empty()) out += t.note + "\n";
  return out;
}

std::string render_csv(const Table& t) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_quote(t.columns[c].name);
  out += "\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out += ",";
      if (c >= row.size()) continue;
      // CSV keeps full precision for doubles so downstream tools lose nothing.
      if (std::holds_alternative<double>(row[c])) {
        const double d = std::get<double>(row[c]);
        if (std::isfinite(d)) out += fmt::format("{}", d);
      } else {
        out += csv_quote(cell_text(row[c], t.columns[c].precision));
      }
    }
    out += "\n";
  }
  return out;
}

void append_json(std::string& out, const Table& t) {
  out += fmt::format("{{\"id\":\"{}\",\"title\":\"{}\",\"columns\":[", json_escape(t.id), json_escape(t.title));
  for (size_t c = 0; c < t.columns.size(); ++c) out += fmt::format("{}\"{}\"", c ? "," : "", json_escape(t.columns[c].name));
  out += "],\"rows\":[";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += r ? ",[" : "[";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out += ",";
      const Cell& cell = c < t.rows[r].size() ? t.rows[r][c] : Cell{};
      if (std::holds_alternative<std::string>(cell)) out += fmt::format("\"{}\"", json_escape(std::get<std::string>(cell)));
      else if (std::holds_alternative<int64_t>(cell)) out += fmt::format("{}", std::get<int64_t>(cell));
      else if (std::holds_alternative<double>(cell) && std::isfinite(std::get<double>(cell))) out += fmt::format("{}", std::get<double>(cell));
      else out += "null";
    }
    out += "]";
  }
  out += fmt::format("],\"total_rows\":{}}}", std::max(t.total_rows, t.rows.size()));
}

std::string render_tables(const std::vector<Table>& tables, TableFormat format, std::string_view json_fields) {
  std::string out;
  switch (format) {
    case TableFormat::Json:
      out = fmt::format("{{{}{}\"tables\":[", json_fields, json_fields.empty() ? "" : ",");
      for (size_t i = 0; i < tables.size(); ++i) {
        if (i) out += ",";
        append_json(out, tables[i]);
      }
      out += "]}\n";
      break;
    case TableFormat::Csv:
      for (size_t i = 0; i < tables.size(); ++i) {
        if (tables.size() > 1) out += fmt::format("{}# {}\n", i ? "\n" : "", tables[i].id);
        out += render_csv(tables[i]);
      }
      break;
    case TableFormat::Text:
      for (size_t i = 0; i < tables.size(); ++i) out += (i ? "\n" : "") + render_text(tables[i]);
      break;
  }
  return out;
}

TableFormat parse_table_format(std::string_view name) {
  if (name == "json") return TableFormat::Json;
  if (name == "csv") return TableFormat::Csv;
  return TableFormat::Text;
}

}  // namespace ttap
