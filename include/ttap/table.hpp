// A Table is plain data: the analyses fill it, renderers turn it into text, CSV or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ttap {

using Cell = std::variant<std::monostate, std::string, int64_t, double>;

struct Column {
  std::string name;
  int precision = 3;  // digits after the point for doubles in text and CSV
};

struct Table {
  std::string id;     // stable machine name, e.g. "gpu_timeline"
  std::string title;  // for people
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::string note;   // printed under the table in text form
  size_t total_rows = 0;  // rows before truncation (== rows.size() when complete)
};

enum class TableFormat { Text, Csv, Json };

std::string render_text(const Table& t);
std::string render_csv(const Table& t);
// Appends the table as one JSON object: {"id":..., "title":..., "columns":[...], "rows":[[...]]}.
void append_json(std::string& out, const Table& t);
// `s` escaped for the inside of a JSON string literal. Trace names are bytes, not always
// UTF-8, and JSON readers (and LLM endpoints) reject invalid UTF-8: such bytes become U+FFFD.
std::string json_escape(std::string_view s);
// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

// Several tables in one document. Text: one after another, a blank line between. CSV: each
// after a "# id" line (just the table when there is one). JSON: one object,
// {<json_fields>,"tables":[...]}, where json_fields are the caller's leading members.
std::string render_tables(const std::vector<Table>& tables, TableFormat format, std::string_view json_fields);
// "json" and "csv"; anything else is text.
TableFormat parse_table_format(std::string_view name);

}  // namespace ttap
