// The per-event field reader: typed readers of single JSON values. Each checks the JSON
// type and fails with the field's name and byte offset otherwise; integers written as text
// (ROCm) and text pids/tids (the 2021 schema) are read here too.
#include "parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ttap::load_detail {

const char* Parser::location() {
  const char* loc = nullptr;
  if (doc_.current_location().get(loc) != simdjson::SUCCESS) return nullptr;
  return loc;
}

bool Parser::is_null(od::value& v) {
  bool null = false;
  if (v.is_null().get(null) != simdjson::SUCCESS) return false;
  return null;
}

int64_t Parser::read_int(od::value v, std::string_view field) {
  int64_t out = 0;
  if (v.get_int64().get(out) == simdjson::SUCCESS) return out;
  // Some writers emit integral values as floats (e.g. 7.0); accept those exactly.
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18)
    return static_cast<int64_t>(d);
  // ROCm's tracer writes some integers as text: "2560", "0x0".
  std::string_view text;
  if (v.get_string().get(text) == simdjson::SUCCESS) {
    int64_t parsed = 0;
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char* first = text.data() + (hex ? 2 : 0);
    auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), parsed, hex ? 16 : 10);
    if (ec == std::errc() && ptr == text.data() + text.size() && ptr != first) return parsed;
  }
  fail(location(), fmt::format("field \"{}\" must be an integer", field));
}

int64_t Parser::read_id(od::value v, std::string_view field) {
  int64_t out = 0;
  if (v.get_int64().get(out) == simdjson::SUCCESS) return out;
  uint64_t big = 0;
  if (!strict_ && v.get_uint64().get(big) == simdjson::SUCCESS) {
    // Ids are only compared for equality: the same 64 bits keep a launch and the GPU
    // work it queued linked. (2^63 itself would read as kNoId, "no id", which it then is.)
    ++trace_.diagnostics.ids_above_int64;
    return static_cast<int64_t>(big);
  }
  return read_int(v, field);
}

// Byte and element counts: at most 2^50 (a petabyte), so sums of them stay in int64.
int64_t Parser::read_size(od::value v, std::string_view field, bool may_be_negative) {
  constexpr int64_t kMaxSize = int64_t{1} << 50;
  const int64_t x = read_int(v, field);
  if (x > kMaxSize || x < (may_be_negative ? -kMaxSize : -1))
    fail(location(), fmt::format("field \"{}\" has an absurd value {}", field, x));
  return x;
}

double Parser::read_double(od::value v, std::string_view field) {
  double d = 0;
  if (v.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d))
    fail(location(), fmt::format("field \"{}\" must be a finite number", field));
  return d;
}

int64_t Parser::read_time(od::value v, std::string_view field) {
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS || type != od::json_type::number)
    fail(location(), fmt::format("field \"{}\" must be a number", field));
  const std::string_view token = v.raw_json_token();
  int64_t ns = 0;
  if (!parse_us_as_ns(trim_token(token), ns) || ns > kMaxAbsTsNs || ns < -kMaxAbsTsNs)
    fail(token.data(), fmt::format("field \"{}\" has an absurd value {}", field, trim_token(token).substr(0, 40)));
  return ns;
}

std::string_view Parser::read_string(od::value v, std::string_view field) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) return s;
  if (!strict_) {
    // The value's token is still at hand after the failed read.
    std::string repaired;
    if (unescape_repairing_surrogates(trim_token(v.raw_json_token()), repaired)) {
      ++trace_.diagnostics.surrogates_repaired;
      // Interned, so the view stays valid as long as the trace.
      return trace_.strings.view(trace_.strings.intern(repaired));
    }
  }
  fail(location(), fmt::format("field \"{}\" must be a string", field));
}

bool Parser::has_backslash(StringId id) {
  while (backslash_.size() <= id) {
    const auto next = static_cast<StringId>(backslash_.size());
    backslash_.push_back(trace_.strings.view(next).find('\\') != std::string_view::npos);
  }
  return backslash_[id] != 0;
}

// The key of an object field without copying it: keys with escapes (none in real
// traces) take simdjson's unescaping path.
std::string_view Parser::key_of(od::field& field) {
  const char* begin = field.key().raw();
  const char* p = begin;
  while (*p != '"') {
    if (*p == '\\') {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) fail(location(), "malformed key");
      return key;
    }
    ++p;
  }
  return {begin, static_cast<size_t>(p - begin)};
}

StringId Parser::intern_string(od::value v, std::string_view field) {
  {
    const std::string_view token = trim_token(v.raw_json_token());
    if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
      std::string_view content = token.substr(1, token.size() - 2);
      // Most strings repeat. Equal bytes with no backslash mean the same, already
      // validated string; only new strings are scanned for escapes and UTF-8.
      const StringId hit = trace_.strings.find(content);
      if (hit != kNoString && !has_backslash(hit)) return hit;
      if (content.find('\\') == std::string_view::npos) {
        // Validate UTF-8 like get_string() would, so the store only holds valid text.
        if (!simdjson::validate_utf8(content.data(), content.size()))
          fail(token.data(), fmt::format("field \"{}\" is not valid UTF-8", field));
        return trace_.strings.intern(content);
      }
    }
  }
  return trace_.strings.intern(read_string(v, field));
}

StringId Parser::intern_raw(od::value v, std::string_view field) {
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" is unreadable", field));
  if (type == od::json_type::string) return intern_string(v, field);
  const std::string_view token = v.raw_json_token();
  const char* begin = token.data();
  if (type == od::json_type::array) {
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) fail(begin, fmt::format("field \"{}\" must be an array", field));
    // Walking the elements moves the iterator past the closing bracket.
    for (auto el : arr) {
      od::value ev;
      if (el.get(ev) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" is malformed", field));
    }
  } else if (type == od::json_type::object) {
    od::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) fail(begin, fmt::format("field \"{}\" must be an object", field));
    for (auto f : obj) {
      od::value fv;
      if (f.value().get(fv) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" is malformed", field));
    }
  } else {
    return trace_.strings.intern(token);
  }
  const char* end = location();
  if (end == nullptr || end < begin) fail(begin, fmt::format("field \"{}\" is malformed", field));
  std::string_view text(begin, static_cast<size_t>(end - begin));
  // The iterator stands on the token after the value (',' or '}'): drop it and spaces.
  while (!text.empty() && text.back() != ']' && text.back() != '}') text.remove_suffix(1);
  // Pretty-printed traces spread [[1, 2], []] over lines: store one compact spelling,
  // "[[1,2],[]]", so equal shapes intern to one id whatever the writer's layout.
  bool compact = true;
  for (char c : text) compact &= !is_ws(c);
  if (compact) return trace_.strings.intern(text);
  // Written through a pointer into room for the whole text: appending char by char
  // (a capacity check each) cost 4% of loading a trace whose shapes read "[[1, 2]]".
  if (compact_.size() < text.size()) compact_.resize(text.size());
  char* out = compact_.data();
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      *out++ = c;
      if (c == '\\' && i + 1 < text.size()) *out++ = text[++i];
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      *out++ = c;
    } else if (!is_ws(c)) {
      *out++ = c;
    }
  }
  return trace_.strings.intern(std::string_view(compact_.data(), static_cast<size_t>(out - compact_.data())));
}

void Parser::read_id_or_label(od::value v, std::string_view field, int64_t& number, StringId& label) {
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" is unreadable", field));
  if (type == od::json_type::number) {
    number = read_int(v, field);
    label = kNoString;
    // Above 2^62 numbers would meet the ids given to text pids/tids; no real one is.
    if (number >= kLabelBit || number <= -kLabelBit) fail(location(), fmt::format("field \"{}\" has an absurd value", field));
    return;
  }
  if (type != od::json_type::string) fail(location(), fmt::format("field \"{}\" must be a number or a string", field));
  std::string_view s = read_string(v, field);
  // "25738" (2021 schema) is the same thread as 25738.
  int64_t n = 0;
  bool numeric = !s.empty() && s.size() < 19;
  for (size_t i = (s.size() > 1 && s[0] == '-') ? 1 : 0; numeric && i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') numeric = false;
  }
  if (numeric) {
    n = std::strtoll(std::string(s).c_str(), nullptr, 10);
    number = n;
    label = kNoString;
    return;
  }
  label = trace_.strings.intern(s);
  number = kLabelBit | label;
}

void Parser::read_int3(od::value v, std::string_view field, int32_t out[3]) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" must be an array", field));
  int i = 0;
  for (auto el : arr) {
    od::value ev;
    if (el.get(ev) != simdjson::SUCCESS) fail(location(), fmt::format("field \"{}\" is malformed", field));
    const int64_t x = read_int(ev, field);
    if (i < 3) out[i] = static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX));
    ++i;
  }
}

}  // namespace ttap::load_detail
