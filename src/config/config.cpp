// Parsing the analyze config with simdjson's DOM (the file is small; clarity over speed).
#include "config.hpp"

#include <simdjson.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ttap/catalog.hpp"
#include "ttap/input.hpp"

namespace ttap {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path_, fmt::format("config: {}: {}", where, what));
  }

  std::string string(element v, const std::string& where) const {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) fail(where, "must be a string");
    return std::string(s);
  }
  bool boolean(element v, const std::string& where) const {
    bool b = false;
    if (v.get_bool().get(b) != simdjson::SUCCESS) fail(where, "must be true or false");
    return b;
  }
  double number(element v, const std::string& where, double lo, double hi) const {
    double d = 0;
    if (v.get_double().get(d) != simdjson::SUCCESS) fail(where, "must be a number");
    if (!(d >= lo && d <= hi)) fail(where, fmt::format("must be between {} and {}", lo, hi));
    return d;
  }
  int integer(element v, const std::string& where, int64_t lo, int64_t hi) const {
    int64_t i = 0;
    if (v.get_int64().get(i) != simdjson::SUCCESS) fail(where, "must be an integer");
    if (i < lo || i > hi) fail(where, fmt::format("must be between {} and {}", lo, hi));
    return static_cast<int>(i);
  }
  std::string choice(element v, const std::string& where, std::initializer_list<std::string_view> allowed) const {
    const std::string s = string(v, where);
    for (std::string_view a : allowed)
      if (s == a) return s;
    fail(where, fmt::format("must be one of {}, got \"{}\"", fmt::join(allowed, ", "), s));
  }

 private:
  std::string path_;
};

void read_llm(const Reader& rd, object o, LlmFileSettings& llm) {
  for (auto field : o) {
    const std::string key(field.key);
    const std::string where = "llm." + key;
    if (key == "url") llm.url = rd.string(field.value, where);
    else if (key == "model") llm.model = rd.string(field.value, where);
    else if (key == "cache") llm.cache = rd.string(field.value, where);
    else if (key == "redact") llm.redact = rd.boolean(field.value, where);
    else if (key == "timeout") llm.timeout = rd.number(field.value, where, 0.1, 3600);
    else if (key == "retries") llm.retries = rd.integer(field.value, where, 0, 20);
    else if (key == "concurrency") llm.concurrency = rd.integer(field.value, where, 1, 256);
    else if (key == "rounds") llm.rounds = rd.integer(field.value, where, 1, 10);
    else if (key == "api_key" || key == "key")
      rd.fail(where, "API keys are read from TTAP_LLM_API_KEY or OPENAI_API_KEY only; keep them out of files");
    else rd.fail(where, "unknown key (expected url, model, cache, redact, timeout, retries, concurrency, rounds)");
  }
}

Ignore read_ignore(const Reader& rd, element v, size_t index) {
  const std::string where = fmt::format("ignore[{}]", index);
  object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) rd.fail(where, "must be an object such as {\"id\": \"host_sync\"}");
  Ignore ig;
  for (auto field : o) {
    const std::string key(field.key);
    if (key == "id") ig.id = rd.string(field.value, where + ".id");
    else if (key == "file") ig.file = rd.string(field.value, where + ".file");
    else if (key == "trace") ig.trace = rd.string(field.value, where + ".trace");
    else if (key == "reason") ig.reason = rd.string(field.value, where + ".reason");
    else rd.fail(where + "." + key, "unknown key (expected id, file, trace, reason)");
  }
  if (ig.id.empty() && ig.file.empty() && ig.trace.empty()) rd.fail(where, "needs at least one of id, file, trace");
  if (!ig.id.empty() && !is_catalog_id(ig.id)) rd.fail(where + ".id", fmt::format("\"{}\" is not a catalog id (docs/ANTIPATTERNS.md)", ig.id));
  return ig;
}

}  // namespace

AnalyzeConfig load_analyze_config(const std::string& path) {
  Reader rd(path);
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) throw InputError(path, "config: cannot read the file");
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.parse(text).get(doc); err != simdjson::SUCCESS)
    throw InputError(path, fmt::format("config: not valid JSON: {}", simdjson::error_message(err)));
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) rd.fail("(top level)", "must be a JSON object");
  AnalyzeConfig c;
  c.path = path;
  for (auto field : root) {
    const std::string key(field.key);
    if (key == "fail_on") c.fail_on = parse_fail_on(rd.choice(field.value, key, {"none", "warning", "error"}));
    else if (key == "fail_score") c.fail_score = rd.number(field.value, key, 0, 1);
    else if (key == "top_k") c.top_k = rd.integer(field.value, key, 0, 10000);
    else if (key == "flag_spacing") c.flag_spacing = rd.integer(field.value, key, 0, 10000);
    else if (key == "windows") c.windows = rd.integer(field.value, key, 1, 100000);
    else if (key == "scorer") c.scorer = rd.choice(field.value, key, {"model", "rules", "cluster", "hybrid"});
    else if (key == "model") c.model = rd.string(field.value, key);
    else if (key == "device") c.device = rd.choice(field.value, key, {"auto", "cpu", "cuda"});
    else if (key == "ignore") {
      simdjson::dom::array items;
      if (field.value.get_array().get(items) != simdjson::SUCCESS) rd.fail(key, "must be an array of objects");
      size_t i = 0;
      for (element item : items) c.ignores.push_back(read_ignore(rd, item, i++));
    } else if (key == "llm") {
      object o;
      if (field.value.get_object().get(o) != simdjson::SUCCESS) rd.fail(key, "must be an object");
      read_llm(rd, o, c.llm);
    } else if (key == "$schema" || key == "comment") {
      // Allowed so a file can name its schema or carry a note; JSON has no comments.
    } else {
      rd.fail(key, "unknown key (expected fail_on, fail_score, top_k, flag_spacing, windows, scorer, model, device, ignore, llm)");
    }
  }
  return c;
}

}  // namespace ttap
