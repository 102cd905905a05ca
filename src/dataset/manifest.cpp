// Reading a dataset manifest and labeling windows from it (docs/DATASET.md).
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "ttap/catalog.hpp"
#include "ttap/dataset.hpp"
#include "ttap/input.hpp"

namespace ttap {

namespace {

std::string text_field(simdjson::dom::object& o, const char* key, bool required, const std::string& where) {
  simdjson::dom::element v;
  if (o[key].get(v) != simdjson::SUCCESS) {
    if (required) throw InputError(where, fmt::format("missing \"{}\"", key));
    return {};
  }
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) throw InputError(where, fmt::format("\"{}\" is not a string", key));
  return std::string(s);
}

int64_t us_to_ns(double us, const std::string& where, const char* key) {
  if (!std::isfinite(us) || std::fabs(us) > 4.5e15) throw InputError(where, fmt::format("\"{}\" out of range", key));
  return static_cast<int64_t>(std::llround(us * 1000.0));
}

}  // namespace

std::vector<DatasetEntry> read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest.jsonl";
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the manifest (is this a dataset folder?)");
  std::vector<DatasetEntry> entries;
  simdjson::dom::parser parser;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, n);
    simdjson::dom::object o;
    if (parser.parse(line).get(o) != simdjson::SUCCESS) throw InputError(where, "not a JSON object");
    DatasetEntry e;
    e.line = n;
    e.json = line;
    e.trace = text_field(o, "trace", true, where);
    e.path = e.trace.starts_with("/") ? e.trace : dir + "/" + e.trace;
    e.label = text_field(o, "label", true, where);
    if (e.label != "good" && e.label != "bad") throw InputError(where, fmt::format("label \"{}\" is not good or bad", e.label));
    e.task = text_field(o, "task", false, where);
    e.model = text_field(o, "model", false, where);
    e.mode = text_field(o, "mode", false, where);
    e.hardware = text_field(o, "hardware", false, where);
    e.software = text_field(o, "software", false, where);
    e.split = text_field(o, "split", true, where);
    if (e.split != "train" && e.split != "val" && e.split != "test")
      throw InputError(where, fmt::format("split \"{}\" is not train, val or test", e.split));
    simdjson::dom::array ranges;
    if (o["anti_patterns"].get(ranges) == simdjson::SUCCESS) {
      for (simdjson::dom::element r : ranges) {
        simdjson::dom::object ro;
        if (r.get(ro) != simdjson::SUCCESS) throw InputError(where, "an anti_patterns entry is not an object");
        LabeledRange lr;
        lr.type = text_field(ro, "type", true, where);
        if (!is_catalog_id(lr.type)) throw InputError(where, fmt::format("\"{}\" is not a catalog id", lr.type));
        double b = 0, en = 0;
        if (ro["ts_begin"].get(b) != simdjson::SUCCESS || ro["ts_end"].get(en) != simdjson::SUCCESS)
          throw InputError(where, "a range needs numeric ts_begin and ts_end");
        lr.begin = us_to_ns(b, where, "ts_begin");
        lr.end = us_to_ns(en, where, "ts_end");
        if (lr.end < lr.begin) throw InputError(where, "ts_end before ts_begin");
        e.ranges.push_back(std::move(lr));
      }
    } else if (o["anti_patterns"].error() != simdjson::NO_SUCH_FIELD) {
      throw InputError(where, "\"anti_patterns\" is not an array");
    }
    if (e.label == "bad" && e.ranges.empty()) throw InputError(where, "a bad trace needs at least one labeled range");
    if (e.label == "good" && !e.ranges.empty()) throw InputError(where, "a good trace has no labeled range");
    entries.push_back(std::move(e));
  }
  if (entries.empty()) throw InputError(path, "the manifest has no entries");
  return entries;
}

std::string manifest_text(const DatasetEntry& entry, const std::string& key, const std::string& manifest_path) {
  const std::string where = fmt::format("{}:{}", manifest_path, entry.line);
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(entry.json).get(o) != simdjson::SUCCESS) throw InputError(where, "not a JSON object");
  simdjson::dom::element v;
  if (o[key].get(v) != simdjson::SUCCESS) return {};
  switch (v.type()) {
    case simdjson::dom::element_type::STRING:
      return std::string(v.get_string().value_unsafe());
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
    case simdjson::dom::element_type::BOOL:
      return simdjson::minify(v);
    default:
      throw InputError(where, fmt::format("\"{}\" is not a string, number or boolean, so it cannot name a group", key));
  }
}

namespace {
int64_t overlap(const Window& w, const LabeledRange& r) {
  return std::max<int64_t>(0, std::min(w.end, r.end) - std::max(w.begin, r.begin));
}
}  // namespace

std::vector<uint8_t> window_labels(const std::vector<Window>& windows, const std::vector<LabeledRange>& ranges,
                                   double min_share) {
  std::vector<uint8_t> labels(windows.size(), 0);
  for (size_t i = 0; i < windows.size(); ++i) {
    const double need = min_share * static_cast<double>(windows[i].end - windows[i].begin);
    for (const LabeledRange& r : ranges)
      if (static_cast<double>(overlap(windows[i], r)) >= need && overlap(windows[i], r) > 0) labels[i] = 1;
  }
  return labels;
}

std::vector<std::vector<std::string>> window_label_ids(const std::vector<Window>& windows,
                                                       const std::vector<LabeledRange>& ranges) {
  std::vector<std::vector<std::string>> ids(windows.size());
  for (size_t i = 0; i < windows.size(); ++i)
    for (const LabeledRange& r : ranges)
      if (overlap(windows[i], r) > 0 && std::find(ids[i].begin(), ids[i].end(), r.type) == ids[i].end())
        ids[i].push_back(r.type);
  return ids;
}

}  // namespace ttap
