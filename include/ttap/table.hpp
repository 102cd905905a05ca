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
std::string json_escape(std::string_view s);

}  // namespace ttap
