// The trace parser: simdjson On-Demand over one padded buffer, straight into the columnar
// store. Every value is checked for its type; anything unexpected becomes an InputError
// naming the byte offset, never a crash or a silently wrong field.
#include "ttap/load.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

namespace ttap {

namespace od = simdjson::ondemand;

namespace {

// |ts| beyond this (about year 2112 in epoch microseconds) cannot be a real timestamp;
// the bound keeps every difference of two timestamps inside int64 nanoseconds.
constexpr int64_t kMaxAbsTsNs = 4'500'000'000'000'000'000LL;
// An event longer than 30 days is corrupt.
constexpr int64_t kMaxDurNs = 30LL * 24 * 3600 * 1'000'000'000LL;
// Tracks whose pid/tid was text get ids in this range so they never meet numeric ones.
constexpr int64_t kLabelBit = int64_t{1} << 62;

struct ParseFailure {
  std::string message;
  const char* where;
};

[[noreturn]] void fail(const char* where, std::string message) { throw ParseFailure{std::move(message), where}; }

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A token without the white space that follows it (raw tokens run up to the next
// structural character).
std::string_view trim_token(std::string_view t) {
  while (!t.empty() && is_ws(t.back())) t.remove_suffix(1);
  return t;
}

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

struct EventScratch {
  std::string_view ph;
  std::string_view cat;
  std::string_view name;
  StringId name_id = kNoString;
  bool has_name = false, has_cat = false, has_ts = false;
  int64_t pid = 0, tid = 0;
  StringId pid_label = kNoString, tid_label = kNoString;
  int64_t ts = 0, dur = 0;
  int64_t id = 0;
  const char* start = nullptr;

  // args
  int64_t external_id = kNoId, correlation = kNoId, stream = kNoId, device = kNoId;
  OpArgs op;
  KernelArgs kernel;
  PythonArgs python;
  CopyArgs copy;
  SyncArgs sync;
  CollectiveArgs collective;
  bool has_collective = false, has_op = false, has_kernel = false, has_python = false;
  MemoryEvent memory;
  StringId meta_name = kNoString;
  std::vector<std::pair<StringId, double>> counter_values;
};

Category classify(std::string_view cat) {
  switch (cat.size()) {
    case 6:
      if (cat == "cpu_op") return Category::CpuOp;
      if (cat == "kernel" || cat == "Kernel") return Category::Kernel;
      if (cat == "Memcpy") return Category::GpuMemcpy;
      if (cat == "Memset") return Category::GpuMemset;
      break;
    case 8:
      if (cat == "Operator") return Category::CpuOp;
      if (cat == "overhead") return Category::Overhead;
      break;
    case 7:
      if (cat == "Runtime") return Category::CudaRuntime;
      break;
    case 5:
      if (cat == "Trace") return Category::TraceSpan;
      break;
    case 9:
      if (cat == "cuda_sync") return Category::CudaSync;
      break;
    case 10:
      if (cat == "gpu_memcpy") return Category::GpuMemcpy;
      if (cat == "gpu_memset") return Category::GpuMemset;
      if (cat == "DataLoader") return Category::DataLoader;
      break;
    case 11:
      if (cat == "cuda_driver") return Category::CudaDriver;
      break;
    case 12:
      if (cat == "cuda_runtime") return Category::CudaRuntime;
      if (cat == "mtia_runtime") return Category::CudaRuntime;
      break;
    case 15:
      if (cat == "user_annotation") return Category::UserAnnotation;
      if (cat == "python_function") return Category::PythonFunction;
      break;
    case 17:
      if (cat == "cpu_instant_event") return Category::Instant;
      break;
    case 19:
      if (cat == "gpu_user_annotation") return Category::GpuUserAnnotation;
      break;
  }
  if (cat == "Python") return Category::PythonFunction;
  return Category::Other;
}

class Parser {
 public:
  Parser(std::string_view source, InputBuffer& json, bool strict) : source_(source), json_(json), strict_(strict) {}

  Trace run();

 private:
  // Value readers: each checks the JSON type and fails with the field's name otherwise.
  int64_t read_int(od::value v, std::string_view field);
  // An id (correlation, External id, flow id): read_int, plus ids above 2^63-1 when lenient.
  int64_t read_id(od::value v, std::string_view field);
  int64_t read_size(od::value v, std::string_view field, bool may_be_negative);
  double read_double(od::value v, std::string_view field);
  int64_t read_time(od::value v, std::string_view field);
  std::string_view read_string(od::value v, std::string_view field);
  // Interns a string value, without unescaping when it has no escapes (the common case).
  StringId intern_string(od::value v, std::string_view field);
  bool has_backslash(StringId id);
  std::string_view key_of(od::field& field);
  // The raw JSON text of an array or object value, interned (e.g. Input Dims).
  StringId intern_raw(od::value v, std::string_view field);
  void read_id_or_label(od::value v, std::string_view field, int64_t& number, StringId& label);
  void read_int3(od::value v, std::string_view field, int32_t out[3]);
  bool is_null(od::value& v);

  struct ChunkFallback {
    int line;
  };
  void reset();
  void reserve_columns(size_t events);
  void run_chunked();
  void run_whole();
  Trace finish();
  size_t skip_ws(size_t pos) const;
  size_t skip_value(size_t pos) const;
  size_t skip_string(size_t pos) const;
  size_t find_boundary(size_t from) const;
  size_t array_end(size_t pos) const;
  size_t parse_events_chunked(size_t pos);
  void parse_chunks(const std::vector<size_t>& bounds, size_t lo, size_t hi, bool copy_first);
  void start_part(size_t bytes);
  void absorb(Parser& part);
  void with_document(std::string_view text, const std::function<void(od::value)>& fn);
  void parse_top_object(od::object top);
  void parse_events(od::array events);
  void parse_event(od::object obj, const char* start);
  void parse_args(od::object args, EventScratch& e);
  void commit(EventScratch& e);
  void parse_device_properties(od::array arr);
  void parse_distributed_info(od::value v);
  TrackId track_for(const EventScratch& e);
  const char* location();

  std::string_view source_;
  InputBuffer& json_;  // chunk brackets are written in place and restored
  const bool strict_;  // fail on a single bad event instead of repairing or dropping it
  bool byte_order_mark_ = false;
  od::parser parser_;
  od::document doc_;
  std::vector<uint8_t> backslash_;  // per interned string: holds a backslash
  std::string compact_;        // scratch for compacting raw JSON values
  StoreVector<char> scratch_;  // small top-level values as their own documents, padded
  Trace trace_;
  bool saw_events_ = false;
  bool saw_begin_end_ = false;
  uint64_t event_index_ = 0;

  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& p) const {
      return std::hash<uint64_t>()(static_cast<uint64_t>(p.first) * 1000003u ^ static_cast<uint64_t>(p.second));
    }
  };
  std::unordered_map<std::pair<int64_t, int64_t>, TrackId, PairHash> track_index_;
  std::pair<int64_t, int64_t> last_track_key_{INT64_MIN, INT64_MIN};
  TrackId last_track_ = 0;
  std::unordered_map<int64_t, StringId> process_names_;
  std::unordered_map<TrackId, std::vector<EventId>> open_begins_;  // B events awaiting E
};

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
  compact_.clear();
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      compact_ += c;
      if (c == '\\' && i + 1 < text.size()) compact_ += text[++i];
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      compact_ += c;
    } else if (!is_ws(c)) {
      compact_ += c;
    }
  }
  return trace_.strings.intern(compact_);
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

Trace Parser::run() {
  // A UTF-8 byte-order mark (Windows editors write one) is not JSON. Blanked for the
  // parse, so byte offsets stay those of the file, and put back afterwards.
  static constexpr char kBom[] = "\xEF\xBB\xBF";
  if (json_.size() >= 3 && std::memcmp(json_.data(), kBom, 3) == 0) {
    if (strict_) throw InputError(std::string(source_), "the input starts with a UTF-8 byte-order mark, which is not JSON", 0);
    byte_order_mark_ = true;
  }
  struct BlankBom {
    char* d;
    bool on;
    BlankBom(char* data, bool active) : d(data), on(active) {
      if (on) std::memset(d, ' ', 3);
    }
    ~BlankBom() {
      if (on) std::memcpy(d, kBom, 3);
    }
  } blank_bom(json_.data(), byte_order_mark_);

  // The chunked path keeps memory near the input size and touches the JSON once; any
  // surprise sends the whole document through one On-Demand pass, which also produces
  // the precise error message and offset for bad input.
  bool chunked_ok = false;
  if (std::getenv("TTAP_PARSE_WHOLE") == nullptr) {
    try {
      run_chunked();
      chunked_ok = true;
    } catch (const ParseFailure& f) {
      spdlog::debug("{}: chunked parse stopped ({}); parsing the whole document", source_, f.message);
    } catch (const simdjson::simdjson_error& e) {
      spdlog::debug("{}: chunked parse stopped ({}); parsing the whole document", source_, e.what());
    } catch (const ChunkFallback& f) {
      spdlog::debug("{}: chunked parse stopped at the document's structure (load.cpp:{}); parsing the whole document",
                    source_, f.line);
    }
    if (!chunked_ok) reset();
  }
  if (!chunked_ok) run_whole();
  return finish();
}

// Real traces spend 150-400 bytes of JSON per event. Reserving for one event per 100 bytes
// avoids regrowing copies; untouched reserved pages cost no memory.
void Parser::reserve_columns(size_t events) {
  trace_.name.reserve(events);
  trace_.category.reserve(events);
  trace_.phase.reserve(events);
  trace_.track.reserve(events);
  trace_.ts.reserve(events);
  trace_.dur.reserve(events);
  trace_.external_id.reserve(events);
  trace_.correlation.reserve(events);
  trace_.args_row.reserve(events);
  trace_.raw_category.reserve(events);
  // The argument tables too: reserving more than a trace uses costs address space only,
  // while regrowing copies them and touches fresh pages, which is slow on VMs.
  trace_.op_args.reserve(events / 2);
  trace_.kernel_args.reserve(events / 4);
  trace_.python_args.reserve(events / 2);
  trace_.copy_args.reserve(events / 8);
  trace_.flows.reserve(events);
}

void Parser::reset() {
  trace_ = Trace{};
  backslash_.clear();
  saw_events_ = false;
  saw_begin_end_ = false;
  event_index_ = 0;
  track_index_.clear();
  last_track_key_ = {INT64_MIN, INT64_MIN};
  last_track_ = 0;
  process_names_.clear();
  open_begins_.clear();
}

// ---- chunked path -------------------------------------------------------------------


size_t Parser::skip_ws(size_t pos) const {
  const char* d = json_.data();
  while (pos < json_.size() && is_ws(d[pos])) ++pos;
  return pos;
}

// End of the JSON value starting at `pos` (a scalar walk; used only for the small
// top-level values around traceEvents).
size_t Parser::skip_value(size_t pos) const {
  const char* d = json_.data();
  const size_t n = json_.size();
  if (pos >= n) throw ChunkFallback{__LINE__};
  if (d[pos] == '"') return skip_string(pos);
  if (d[pos] != '{' && d[pos] != '[') {
    while (pos < n && d[pos] != ',' && d[pos] != '}' && d[pos] != ']' && !is_ws(d[pos])) ++pos;
    return pos;
  }
  size_t depth = 0;
  while (pos < n) {
    const char c = d[pos];
    if (c == '"') {
      pos = skip_string(pos);
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (depth == 0) throw ChunkFallback{__LINE__};
      if (--depth == 0) return pos + 1;
    }
    ++pos;
  }
  throw ChunkFallback{__LINE__};
}

size_t Parser::skip_string(size_t pos) const {
  const char* d = json_.data();
  const size_t n = json_.size();
  for (++pos; pos < n; ++pos) {
    if (d[pos] == '\\') {
      ++pos;
    } else if (d[pos] == '"') {
      return pos + 1;
    }
  }
  throw ChunkFallback{__LINE__};
}

// Parses `text` as its own small document (a top-level value other than traceEvents).
void Parser::with_document(std::string_view text, const std::function<void(od::value)>& fn) {
  // Wrapped in an array: On-Demand hands out values of arrays, not of scalar documents.
  scratch_.resize(text.size() + 2 + kInputPadding);
  scratch_[0] = '[';
  std::memcpy(scratch_.data() + 1, text.data(), text.size());
  scratch_[text.size() + 1] = ']';
  auto padded = simdjson::padded_string_view(scratch_.data(), text.size() + 2, text.size() + 2 + kInputPadding);
  if (parser_.iterate(padded).get(doc_) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
  od::array arr;
  if (doc_.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
  for (auto element : arr) {
    od::value v;
    if (element.get(v) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
    fn(v);
  }
}

// After an event object ends at `from` or later: the next "}, {" boundary between two
// events (the position of the comma), or npos. A boundary found inside a string or a
// nested array is caught later: the chunk before it fails to parse and the whole
// document is parsed in one pass instead.
size_t Parser::find_boundary(size_t from) const {
  const char* d = json_.data();
  const size_t n = json_.size();
  while (from < n) {
    const void* hit = std::memchr(d + from, '}', n - from);
    if (hit == nullptr) return std::string_view::npos;
    size_t p = static_cast<size_t>(static_cast<const char*>(hit) - d) + 1;
    from = p;
    p = skip_ws(p);
    if (p >= n || d[p] != ',') continue;
    const size_t comma = p;
    p = skip_ws(p + 1);
    if (p < n && d[p] == '{') return comma;
  }
  return std::string_view::npos;
}

// 8 MB keeps simdjson's buffers small and its setup cost negligible. Tests shrink it
// (TTAP_PARSE_CHUNK_BYTES) to put many chunk boundaries into small traces.
size_t chunk_bytes() {
  if (const char* env = std::getenv("TTAP_PARSE_CHUNK_BYTES")) {
    const long long v = std::atoll(env);
    if (v >= 1024) return static_cast<size_t>(v);
  }
  return size_t{8} << 20;
}

size_t parse_threads() {
  if (const char* env = std::getenv("TTAP_THREADS")) {
    const long v = std::atol(env);
    if (v >= 1) return static_cast<size_t>(std::min(v, 64L));
  }
  return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
}

size_t Parser::parse_events_chunked(size_t open) {
  // `open` is the array's '['. Chunk boundaries are found first (each a short local
  // search), then runs of consecutive chunks go to worker threads, each with its own
  // parser and partial store, merged in file order at the end.
  const size_t kChunkBytes = chunk_bytes();
  const size_t n = json_.size();
  const size_t first = skip_ws(open + 1);
  if (first < n && json_.data()[first] == ']') return first + 1;
  std::vector<size_t> bounds{open};  // '[' , the commas between chunks, then the ']'
  for (;;) {
    const size_t from = bounds.back();
    const size_t b = from + kChunkBytes < n ? find_boundary(from + kChunkBytes) : std::string_view::npos;
    if (b == std::string_view::npos) {
      bounds.push_back(array_end(from + 1));
      break;
    }
    bounds.push_back(b);
  }
  const size_t chunks = bounds.size() - 1;
  const size_t workers = std::min(parse_threads(), chunks);
  if (workers <= 1) {
    parse_chunks(bounds, 0, chunks, false);
    return bounds.back() + 1;
  }
  std::vector<std::unique_ptr<Parser>> parts;
  std::vector<std::exception_ptr> errors(workers);
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) {
    parts.push_back(std::make_unique<Parser>(source_, json_, strict_));
    Parser* part = parts.back().get();
    const size_t lo = w * chunks / workers, hi = (w + 1) * chunks / workers;
    threads.emplace_back([part, &bounds, lo, hi, &errors, w] {
      try {
        part->start_part(bounds[hi] - bounds[lo]);
        part->parse_chunks(bounds, lo, hi, true);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  try {
    parse_chunks(bounds, 0, chunks / workers, false);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (auto& part : parts) absorb(*part);
  return bounds.back() + 1;
}

// Parses chunks [lo, hi) of `bounds`. Each becomes its own document in place: the comma
// after its last event is overwritten with ']' and the one before its first with '['
// (restored afterwards). A worker copies its first chunk instead, since the byte before
// it is the previous worker's ']'.
void Parser::parse_chunks(const std::vector<size_t>& bounds, size_t lo, size_t hi, bool copy_first) {
  char* d = json_.data();
  const size_t n = json_.size();
  struct Restore {
    char* d;
    std::vector<std::pair<size_t, char>> saved;
    void set(size_t pos, char c) {
      saved.emplace_back(pos, d[pos]);
      d[pos] = c;
    }
    ~Restore() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) d[it->first] = it->second;
    }
  } restore{d, {}};
  // Room for the largest chunk up front (a chunk ends past its nominal size), no more.
  const size_t capacity = std::min(json_.size(), 2 * chunk_bytes()) + 64;
  if (parser_.capacity() < capacity && parser_.allocate(capacity) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
  for (size_t i = lo; i < hi; ++i) {
    const size_t start = bounds[i], end = bounds[i + 1];
    const bool last = i + 1 == bounds.size() - 1;  // ends at the array's own ']'
    if (i == lo && copy_first) {
      const size_t len = end - start - 1;
      scratch_.resize(len + 2 + kInputPadding);
      scratch_[0] = '[';
      std::memcpy(scratch_.data() + 1, d + start + 1, len);
      scratch_[len + 1] = ']';
      if (parser_.iterate(simdjson::padded_string_view(scratch_.data(), len + 2, len + 2 + kInputPadding)).get(doc_) !=
          simdjson::SUCCESS)
        throw ChunkFallback{__LINE__};
    } else {
      if (d[start] != '[') restore.set(start, '[');
      if (!last) restore.set(end, ']');
      if (parser_.iterate(simdjson::padded_string_view(d + start, end + 1 - start, n + kInputPadding - start)).get(doc_) !=
          simdjson::SUCCESS)
        throw ChunkFallback{__LINE__};
    }
    od::array arr;
    if (doc_.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
    parse_events(arr);
  }
}

void Parser::start_part(size_t bytes) {
  trace_.source = std::string(source_);
  const size_t events = bytes / 100 + 16;
  reserve_columns(events);
}

// Appends a worker's partial store, translating its string, track and row ids.
void Parser::absorb(Parser& part) {
  // B/E pairs may straddle parts; such traces are rare enough to parse on one thread.
  if (part.saw_begin_end_ || saw_begin_end_) throw ChunkFallback{__LINE__};
  Trace& p = part.trace_;
  std::vector<StringId> sid(p.strings.size());
  for (StringId i = 0; i < sid.size(); ++i) sid[i] = trace_.strings.intern(p.strings.view(i));
  auto str = [&sid](StringId id) { return id == kNoString ? kNoString : sid[id]; };
  // Text pids are kLabelBit | the part's string id (numeric ones stay below 2^62, and
  // negative ones are numbers too).
  auto relabel = [&str](int64_t pid) {
    return pid >= kLabelBit ? (kLabelBit | str(static_cast<StringId>(pid - kLabelBit))) : pid;
  };
  std::vector<TrackId> tid(p.tracks.size());
  for (TrackId i = 0; i < tid.size(); ++i) {
    const Track& pt = p.tracks[i];
    // Text pids/tids ("stream 7") are keyed by their string id, which is the part's own.
    const int64_t pid = pt.pid_label == kNoString ? pt.pid : (kLabelBit | str(pt.pid_label));
    const int64_t tid_key = pt.tid_label == kNoString ? pt.tid : (kLabelBit | str(pt.tid_label));
    auto [it, inserted] = track_index_.try_emplace({pid, tid_key}, static_cast<TrackId>(trace_.tracks.size()));
    if (inserted) {
      Track t = pt;
      t.pid = pid;
      t.tid = tid_key;
      t.pid_label = str(pt.pid_label);
      t.tid_label = str(pt.tid_label);
      t.thread_name = str(pt.thread_name);
      t.process_name = kNoString;
      trace_.tracks.push_back(t);
    } else {
      Track& t = trace_.tracks[it->second];
      t.gpu |= pt.gpu;
      if (t.device < 0) t.device = pt.device;
      if (t.stream < 0) t.stream = pt.stream;
      if (pt.thread_name != kNoString) t.thread_name = str(pt.thread_name);
    }
    tid[i] = it->second;
  }
  last_track_key_ = {INT64_MIN, INT64_MIN};
  for (auto [pid, name] : part.process_names_) {
    // process_name keys are pids; text pids carry the part's string id.
    const int64_t key = relabel(pid);
    process_names_[key] = str(name);
  }

  const auto base = static_cast<EventId>(trace_.size());
  const uint32_t op0 = static_cast<uint32_t>(trace_.op_args.size()), kernel0 = static_cast<uint32_t>(trace_.kernel_args.size()),
                 py0 = static_cast<uint32_t>(trace_.python_args.size()), copy0 = static_cast<uint32_t>(trace_.copy_args.size()),
                 sync0 = static_cast<uint32_t>(trace_.sync_args.size());
  for (EventId e = 0; e < p.size(); ++e) {
    trace_.name.push_back(str(p.name[e]));
    trace_.category.push_back(p.category[e]);
    trace_.phase.push_back(p.phase[e]);
    trace_.track.push_back(tid[p.track[e]]);
    trace_.ts.push_back(p.ts[e]);
    trace_.dur.push_back(p.dur[e]);
    trace_.external_id.push_back(p.external_id[e]);
    trace_.correlation.push_back(p.correlation[e]);
    trace_.raw_category.push_back(str(p.raw_category[e]));
    uint32_t row = p.args_row[e];
    if (row != kNoRow) {
      switch (p.category[e]) {
        case Category::Kernel: row += kernel0; break;
        case Category::PythonFunction: row += py0; break;
        case Category::GpuMemcpy:
        case Category::GpuMemset: row += copy0; break;
        case Category::CudaSync: row += sync0; break;
        default: row += op0; break;
      }
    }
    trace_.args_row.push_back(row);
  }
  for (OpArgs a : p.op_args) {
    a.input_dims = str(a.input_dims);
    a.input_types = str(a.input_types);
    a.input_strides = str(a.input_strides);
    a.concrete_inputs = str(a.concrete_inputs);
    trace_.op_args.push_back(a);
  }
  trace_.kernel_args.insert(trace_.kernel_args.end(), p.kernel_args.begin(), p.kernel_args.end());
  trace_.python_args.insert(trace_.python_args.end(), p.python_args.begin(), p.python_args.end());
  trace_.copy_args.insert(trace_.copy_args.end(), p.copy_args.begin(), p.copy_args.end());
  for (SyncArgs a : p.sync_args) {
    a.kind = str(a.kind);
    trace_.sync_args.push_back(a);
  }
  for (CollectiveArgs c : p.collectives) {
    c.event += base;
    c.collective_name = str(c.collective_name);
    c.dtype = str(c.dtype);
    c.process_group_name = str(c.process_group_name);
    c.process_group_desc = str(c.process_group_desc);
    c.process_group_ranks = str(c.process_group_ranks);
    trace_.collectives.push_back(c);
  }
  for (MemoryEvent m : p.memory_events) {
    m.track = tid[m.track];
    trace_.memory_events.push_back(m);
  }
  for (FlowEvent f : p.flows) {
    f.track = tid[f.track];
    f.category = str(f.category);
    trace_.flows.push_back(f);
  }
  for (CounterSample c : p.counters) {
    c.pid = relabel(c.pid);
    c.name = str(c.name);
    c.series = str(c.series);
    trace_.counters.push_back(c);
  }
  auto& d = trace_.diagnostics;
  const auto& pd = p.diagnostics;
  d.events_seen += pd.events_seen;
  d.metadata_events += pd.metadata_events;
  d.unknown_phase += pd.unknown_phase;
  d.negative_durations_dropped += pd.negative_durations_dropped;
  d.surrogates_repaired += pd.surrogates_repaired;
  d.ids_above_int64 += pd.ids_above_int64;
  event_index_ += part.event_index_;
}

// From the start of an element of an array: the position of the array's ']'.
size_t Parser::array_end(size_t pos) const {
  const char* d = json_.data();
  const size_t n = json_.size();
  for (;;) {
    pos = skip_ws(skip_value(skip_ws(pos)));
    if (pos >= n) throw ChunkFallback{__LINE__};
    if (d[pos] == ']') return pos;
    if (d[pos] != ',') throw ChunkFallback{__LINE__};
    ++pos;
  }
}

void Parser::run_chunked() {
  trace_.source = std::string(source_);
  trace_.json_bytes = json_.size();
  const char* d = json_.data();
  const size_t n = json_.size();
  reserve_columns(json_.size() / 100 + 16);
  size_t pos = skip_ws(0);
  if (pos >= n) throw ChunkFallback{__LINE__};
  if (d[pos] == '[') {
    saw_events_ = true;
    pos = parse_events_chunked(pos);
  } else if (d[pos] == '{') {
    pos = skip_ws(pos + 1);
    if (pos < n && d[pos] == '}') ++pos;
    while (pos < n && d[pos] != '}') {
      if (d[pos] != '"') throw ChunkFallback{__LINE__};
      const size_t key_end = skip_string(pos);
      const std::string_view key(d + pos + 1, key_end - pos - 2);
      // An escaped key ("trace\u0045vents") is still "traceEvents": leave it to the full parse.
      if (key.find('\\') != std::string_view::npos) throw ChunkFallback{__LINE__};
      pos = skip_ws(key_end);
      if (pos >= n || d[pos] != ':') throw ChunkFallback{__LINE__};
      pos = skip_ws(pos + 1);
      if (key == "traceEvents") {
        if (pos >= n || d[pos] != '[') throw ChunkFallback{__LINE__};
        saw_events_ = true;
        pos = parse_events_chunked(pos);
      } else {
        const size_t value_end = skip_value(pos);
        const std::string_view text(d + pos, value_end - pos);
        if (key == "deviceProperties") {
          with_document(text, [this](od::value v) {
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__LINE__};
            parse_device_properties(arr);
          });
        } else if (key == "distributedInfo") {
          with_document(text, [this](od::value v) { parse_distributed_info(v); });
        } else if (key == "schemaVersion" || key == "baseTimeNanoseconds" || key == "traceName") {
          with_document(text, [this, key](od::value v) {
            if (is_null(v)) return;
            if (key == "schemaVersion") trace_.schema_version = read_int(v, key);
            else if (key == "baseTimeNanoseconds") trace_.base_time_ns = read_int(v, key);
            else trace_.trace_name = std::string(read_string(v, key));
          });
        }
        pos = value_end;
      }
      pos = skip_ws(pos);
      if (pos < n && d[pos] == ',') {
        pos = skip_ws(pos + 1);
        if (pos >= n || d[pos] != '"') throw ChunkFallback{__LINE__};
      } else if (pos >= n || d[pos] != '}') {
        throw ChunkFallback{__LINE__};
      }
    }
    if (pos >= n) throw ChunkFallback{__LINE__};
    ++pos;
  } else {
    throw ChunkFallback{__LINE__};
  }
  if (skip_ws(pos) != n) throw ChunkFallback{__LINE__};  // trailing content: let the full parse explain
  if (!saw_events_) throw ChunkFallback{__LINE__};
}

// ---- whole-document path --------------------------------------------------------------

void Parser::run_whole() {
  trace_.source = std::string(source_);
  trace_.json_bytes = json_.size();
  reserve_columns(json_.size() / 100 + 16);
  auto padded = simdjson::padded_string_view(json_.data(), json_.size(), json_.size() + kInputPadding);
  if (auto err = parser_.allocate(std::max<size_t>(json_.size(), 64)); err != simdjson::SUCCESS)
    throw InputError(std::string(source_), fmt::format("cannot allocate the JSON parser: {}", simdjson::error_message(err)));
  if (auto err = parser_.iterate(padded).get(doc_); err != simdjson::SUCCESS) {
    if (err == simdjson::UNCLOSED_STRING)  // the input stops inside a string: point at its end
      throw InputError(std::string(source_), "truncated JSON: the input ends inside a string", json_.size());
    throw InputError(std::string(source_), fmt::format("not JSON: {}", simdjson::error_message(err)));
  }
  // On-Demand checks that the top-level object or array is closed before handing it out;
  // when it is not, the input was cut short, and its end is the place to point at.
  auto truncated = [this](char open) {
    const std::string_view text = trim_token({json_.data(), json_.size()});
    if (text.empty() || text.back() == (open == '{' ? '}' : ']')) return;
    throw InputError(std::string(source_),
                     fmt::format("truncated JSON: the input ends before the top-level {} is closed", open == '{' ? "object" : "array"),
                     json_.size());
  };
  try {
    od::json_type type;
    if (auto err = doc_.type().get(type); err != simdjson::SUCCESS)
      fail(location(), fmt::format("not JSON: {}", simdjson::error_message(err)));
    if (type == od::json_type::array) {
      od::array arr;
      if (doc_.get_array().get(arr) != simdjson::SUCCESS) {
        truncated('[');
        fail(location(), "malformed top-level array");
      }
      saw_events_ = true;
      parse_events(arr);
    } else if (type == od::json_type::object) {
      od::object obj;
      if (doc_.get_object().get(obj) != simdjson::SUCCESS) {
        truncated('{');
        fail(location(), "malformed top-level object");
      }
      parse_top_object(obj);
    } else {
      fail(location(), "the top level must be an object with \"traceEvents\" or an array of events");
    }
    // At the end of the document the iterator has no location left; anything else is trailing content.
    const char* rest = nullptr;
    if (doc_.current_location().get(rest) == simdjson::SUCCESS && rest != nullptr)
      fail(rest, "unexpected content after the end of the JSON document");
  } catch (const ParseFailure& f) {
    std::optional<uint64_t> offset;
    if (f.where >= json_.data() && f.where <= json_.data() + json_.size())
      offset = static_cast<uint64_t>(f.where - json_.data());
    throw InputError(std::string(source_), f.message, offset);
  } catch (const simdjson::simdjson_error& e) {
    const char* where = location();
    std::optional<uint64_t> offset;
    if (where >= json_.data() && where <= json_.data() + json_.size()) offset = static_cast<uint64_t>(where - json_.data());
    throw InputError(std::string(source_), fmt::format("malformed JSON: {}", e.what()), offset);
  }
}

Trace Parser::finish() {
  if (!saw_events_) throw InputError(std::string(source_), "no \"traceEvents\" array: not a Chrome/Kineto trace");
  // Every analysis sums subsets of event durations; bounding the total keeps those sums
  // exact in int64 (2^62 ns is 146 years, far beyond any real trace).
  __int128 total = 0;
  for (int64_t d : trace_.dur) total += d;
  if (total > (__int128{1} << 62))
    throw InputError(std::string(source_), "absurd durations: the events together last more than 146 years");

  // Close B events that never saw their E at the end of their track's last event.
  for (auto& [track, open] : open_begins_) {
    for (EventId e : open) {
      trace_.dur[e] = 0;
      ++trace_.diagnostics.unmatched_begin_end;
    }
  }
  for (Track& t : trace_.tracks) {
    auto it = process_names_.find(t.pid);
    if (it != process_names_.end()) t.process_name = it->second;
  }
  std::sort(trace_.collectives.begin(), trace_.collectives.end(),
            [](const CollectiveArgs& a, const CollectiveArgs& b) { return a.event < b.event; });
  trace_.diagnostics.byte_order_marks = byte_order_mark_ ? 1 : 0;
  return std::move(trace_);
}

void Parser::parse_top_object(od::object top) {
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) fail(location(), "malformed key in the top-level object");
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) fail(location(), fmt::format("malformed value of \"{}\"", key));
    if (key == "traceEvents") {
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) fail(location(), "\"traceEvents\" must be an array");
      saw_events_ = true;
      parse_events(arr);
    } else if (key == "deviceProperties") {
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) fail(location(), "\"deviceProperties\" must be an array");
      parse_device_properties(arr);
    } else if (key == "distributedInfo") {
      parse_distributed_info(v);
    } else if (key == "schemaVersion") {
      if (!is_null(v)) trace_.schema_version = read_int(v, key);
    } else if (key == "baseTimeNanoseconds") {
      if (!is_null(v)) trace_.base_time_ns = read_int(v, key);
    } else if (key == "traceName") {
      if (!is_null(v)) trace_.trace_name = std::string(read_string(v, key));
    }
    // Other top-level keys (metadata, INFO, ...) are skipped by the iterator.
  }
}

void Parser::parse_events(od::array events) {
  for (auto element : events) {
    od::value v;
    const char* start = location();
    if (element.get(v) != simdjson::SUCCESS) fail(location(), "malformed element in \"traceEvents\"");
    od::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS)
      fail(start, fmt::format("event #{} is not an object", event_index_));
    parse_event(obj, start);
    ++event_index_;
  }
}

void Parser::parse_event(od::object obj, const char* start) {
  EventScratch e;
  e.start = start;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) fail(location(), "malformed field");
    const std::string_view key = key_of(field);
    od::value v = field.value();
    if (key.size() == 2) {
      if (key == "ph") {
        e.ph = read_string(v, key);
        continue;
      }
      if (key == "ts") {
        e.ts = read_time(v, key);
        e.has_ts = true;
        continue;
      }
      if (key == "id") {
        od::json_type type;
        if (v.type().get(type) != simdjson::SUCCESS) fail(location(), "field \"id\" is unreadable");
        if (type == od::json_type::string) {
          e.id = static_cast<int64_t>(hash_bytes(read_string(v, key)) >> 1);
        } else {
          e.id = read_id(v, key);
        }
        continue;
      }
    } else if (key.size() == 3) {
      if (key == "cat") {
        e.cat = read_string(v, key);
        e.has_cat = true;
        continue;
      }
      if (key == "pid") {
        read_id_or_label(v, key, e.pid, e.pid_label);
        continue;
      }
      if (key == "tid") {
        read_id_or_label(v, key, e.tid, e.tid_label);
        continue;
      }
      if (key == "dur") {
        e.dur = read_time(v, key);
        continue;
      }
    } else if (key.size() == 4) {
      if (key == "name") {
        // Names are interned right away: they are most of an event's bytes.
        e.name_id = intern_string(v, key);
        e.name = trace_.strings.view(e.name_id);
        e.has_name = true;
        continue;
      }
      if (key == "args") {
        if (is_null(v)) continue;
        od::object args;
        if (v.get_object().get(args) != simdjson::SUCCESS) fail(location(), "field \"args\" must be an object");
        parse_args(args, e);
        continue;
      }
    }
    // Unknown keys ("s", "bp", "id2", ...) are skipped.
  }
  commit(e);
}

void Parser::parse_args(od::object args, EventScratch& e) {
  for (auto field_result : args) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) fail(location(), "malformed field");
    const std::string_view key = key_of(field);
    od::value v = field.value();
    if (is_null(v)) continue;
    switch (key.size()) {
      case 4:
        if (key == "grid") { read_int3(v, key, e.kernel.grid); e.has_kernel = true; }
        else if (key == "name") e.meta_name = intern_string(v, key);
        break;
      case 5:
        if (key == "block") { read_int3(v, key, e.kernel.block); e.has_kernel = true; }
        else if (key == "bytes" || key == "Bytes") { e.copy.bytes = read_size(v, key, true); e.memory.bytes = e.copy.bytes; }
        else if (key == "dtype") { e.collective.dtype = intern_string(v, key); e.has_collective = true; }
        break;
      case 6:
        if (key == "stream") e.stream = read_int(v, key);
        else if (key == "device" || key == "Device") e.device = read_int(v, key);
        break;
      case 9:
        if (key == "Device Id") e.memory.device_id = static_cast<int32_t>(read_int(v, key));
        else if (key == "Python id") { e.python.python_id = read_int(v, key); e.has_python = true; }
        break;
      case 10:
        if (key == "Input Dims") { e.op.input_dims = intern_raw(v, key); e.has_op = true; }
        else if (key == "Input type") { e.op.input_types = intern_raw(v, key); e.has_op = true; }
        else if (key == "Group size") { e.collective.group_size = static_cast<int32_t>(read_int(v, key)); e.has_collective = true; }
        break;
      case 11:
        if (key == "External id" || key == "external id") e.external_id = read_id(v, key);
        else if (key == "correlation") e.correlation = read_id(v, key);
        else if (key == "Device Type") e.memory.device_type = static_cast<int32_t>(read_int(v, key));
        break;
      case 13:
        if (key == "Input Strides") { e.op.input_strides = intern_raw(v, key); e.has_op = true; }
        else if (key == "Fwd thread id") { e.op.fwd_thread_id = read_int(v, key); e.has_op = true; }
        else if (key == "shared memory") { e.kernel.shared_memory = static_cast<int32_t>(read_int(v, key)); e.has_kernel = true; }
        else if (key == "blocks per SM") { e.kernel.blocks_per_sm = static_cast<float>(read_double(v, key)); e.has_kernel = true; }
        else if (key == "In msg nelems") { e.collective.in_msg_nelems = read_size(v, key, false); e.has_collective = true; }
        break;
      case 12:
        if (key == "warps per SM") { e.kernel.warps_per_sm = static_cast<float>(read_double(v, key)); e.has_kernel = true; }
        break;
      case 14:
        if (key == "Out msg nelems") { e.collective.out_msg_nelems = read_size(v, key, false); e.has_collective = true; }
        else if (key == "Total Reserved") e.memory.total_reserved = read_size(v, key, false);
        else if (key == "wait_on_stream") e.sync.wait_on_stream = read_int(v, key);
        else if (key == "cuda_sync_kind") e.sync.kind = intern_string(v, key);
        break;
      case 15:
        if (key == "Concrete Inputs") { e.op.concrete_inputs = intern_raw(v, key); e.has_op = true; }
        else if (key == "Sequence number") { e.op.sequence_number = read_int(v, key); e.has_op = true; }
        else if (key == "Total Allocated") e.memory.total_allocated = read_size(v, key, false);
        else if (key == "Collective name") { e.collective.collective_name = intern_string(v, key); e.has_collective = true; }
        break;
      case 16:
        if (key == "Python parent id") { e.python.parent_id = read_int(v, key); e.has_python = true; }
        break;
      case 18:
        if (key == "Process Group Name") { e.collective.process_group_name = intern_raw(v, key); e.has_collective = true; }
        break;
      case 19:
        if (key == "Process Group Ranks") { e.collective.process_group_ranks = intern_raw(v, key); e.has_collective = true; }
        break;
      case 20:
        if (key == "registers per thread") { e.kernel.registers_per_thread = static_cast<int32_t>(read_int(v, key)); e.has_kernel = true; }
        break;
      case 25:
        if (key == "Process Group Description") { e.collective.process_group_desc = intern_raw(v, key); e.has_collective = true; }
        else if (key == "est. achieved occupancy %") { e.kernel.est_occupancy_pct = static_cast<float>(read_double(v, key)); e.has_kernel = true; }
        break;
      case 32:
        if (key == "wait_on_cuda_event_record_corr_id") e.sync.wait_on_event_record_correlation = read_int(v, key);
        break;
      default:
        break;
    }
    if (e.ph == "C" || e.ph.empty()) {
      // Counter series: every numeric arg is one series.
      od::json_type type;
      if (v.type().get(type) == simdjson::SUCCESS && type == od::json_type::number)
        e.counter_values.emplace_back(trace_.strings.intern(key), read_double(v, key));
    }
  }
}

TrackId Parser::track_for(const EventScratch& e) {
  const std::pair<int64_t, int64_t> key{e.pid, e.tid};
  if (key == last_track_key_) return last_track_;
  auto [it, inserted] = track_index_.try_emplace(key, static_cast<TrackId>(trace_.tracks.size()));
  if (inserted) {
    Track t;
    t.pid = e.pid;
    t.tid = e.tid;
    t.pid_label = e.pid_label;
    t.tid_label = e.tid_label;
    trace_.tracks.push_back(t);
  }
  last_track_key_ = key;
  last_track_ = it->second;
  return it->second;
}

void Parser::commit(EventScratch& e) {
  ++trace_.diagnostics.events_seen;
  if (e.ph.size() != 1) {
    if (e.ph.empty()) fail(e.start, fmt::format("event #{} has no \"ph\" field", event_index_));
    ++trace_.diagnostics.unknown_phase;
    return;
  }
  const char ph = e.ph[0];
  if (ph == 'M') {
    ++trace_.diagnostics.metadata_events;
    if (e.meta_name == kNoString) return;
    if (e.name == "process_name") {
      process_names_[e.pid] = e.meta_name;
    } else if (e.name == "thread_name") {
      trace_.tracks[track_for(e)].thread_name = e.meta_name;
    }
    return;
  }
  if (!e.has_ts) fail(e.start, fmt::format("event #{} has no \"ts\" field", event_index_));
  if (e.dur < 0 && !strict_ && (ph == 'X' || ph == 'B' || ((ph == 'i' || ph == 'I') && e.name != "[memory]"))) {
    // Nothing can place an event that ends before it starts: it is left out.
    ++trace_.diagnostics.negative_durations_dropped;
    return;
  }
  const TrackId track = track_for(e);
  if (ph == 's' || ph == 't' || ph == 'f') {
    FlowEvent f;
    f.ts = e.ts;
    f.id = e.id;
    f.track = track;
    f.category = e.has_cat ? trace_.strings.intern(e.cat) : kNoString;
    f.phase = ph;
    trace_.flows.push_back(f);
    return;
  }
  if (ph == 'C') {
    const StringId name = e.name_id;
    for (auto [series, value] : e.counter_values) trace_.counters.push_back({e.ts, e.pid, name, series, value});
    return;
  }
  if ((ph == 'i' || ph == 'I') && e.name == "[memory]") {
    MemoryEvent m = e.memory;
    m.ts = e.ts;
    m.track = track;
    trace_.memory_events.push_back(m);
    return;
  }
  if (ph == 'E') {
    saw_begin_end_ = true;
    auto it = open_begins_.find(track);
    if (it == open_begins_.end() || it->second.empty()) {
      ++trace_.diagnostics.unmatched_begin_end;
      return;
    }
    const EventId b = it->second.back();
    it->second.pop_back();
    const int64_t dur = std::max<int64_t>(0, e.ts - trace_.ts[b]);
    if (dur > kMaxDurNs) fail(e.start, fmt::format("event #{} closes a B event {} us earlier: an absurd duration", event_index_, dur / 1000));
    trace_.dur[b] = dur;
    return;
  }
  Phase phase;
  if (ph == 'X' || ph == 'B') {
    phase = Phase::Complete;
  } else if (ph == 'i' || ph == 'I') {
    phase = Phase::Instant;
  } else {
    ++trace_.diagnostics.unknown_phase;  // async (b/e/n), samples, objects: not used
    return;
  }
  if (!e.has_name) fail(e.start, fmt::format("event #{} has no \"name\" field", event_index_));
  if (e.dur < 0) fail(e.start, fmt::format("event #{} has a negative duration", event_index_));
  if (e.dur > kMaxDurNs) fail(e.start, fmt::format("event #{} has an absurd duration of {} us", event_index_, e.dur / 1000));

  const EventId id = static_cast<EventId>(trace_.name.size());
  if (id == kNoEvent) fail(e.start, "too many events (more than 2^32)");
  const Category cat = e.has_cat ? classify(e.cat) : Category::Other;
  trace_.name.push_back(e.name_id);
  trace_.category.push_back(cat);
  trace_.phase.push_back(phase);
  trace_.track.push_back(track);
  trace_.ts.push_back(e.ts);
  trace_.dur.push_back(phase == Phase::Instant ? 0 : e.dur);
  trace_.external_id.push_back(e.external_id);
  trace_.correlation.push_back(e.correlation);
  trace_.raw_category.push_back(e.has_cat ? trace_.strings.intern(e.cat) : kNoString);

  uint32_t row = kNoRow;
  switch (cat) {
    case Category::CpuOp:
    case Category::UserAnnotation:
    case Category::DataLoader:
      if (e.has_op) {
        row = static_cast<uint32_t>(trace_.op_args.size());
        trace_.op_args.push_back(e.op);
      }
      break;
    case Category::Kernel:
      row = static_cast<uint32_t>(trace_.kernel_args.size());
      trace_.kernel_args.push_back(e.kernel);
      break;
    case Category::PythonFunction:
      row = static_cast<uint32_t>(trace_.python_args.size());
      trace_.python_args.push_back(e.python);
      break;
    case Category::GpuMemcpy:
    case Category::GpuMemset:
      row = static_cast<uint32_t>(trace_.copy_args.size());
      trace_.copy_args.push_back(e.copy);
      break;
    case Category::CudaSync:
      row = static_cast<uint32_t>(trace_.sync_args.size());
      trace_.sync_args.push_back(e.sync);
      break;
    default:
      break;
  }
  trace_.args_row.push_back(row);
  if (e.has_collective) {
    e.collective.event = id;
    trace_.collectives.push_back(e.collective);
  }
  if (is_gpu_activity(cat) || cat == Category::GpuUserAnnotation || cat == Category::CudaSync) {
    Track& t = trace_.tracks[track];
    t.gpu = true;
    if (t.device < 0) t.device = static_cast<int32_t>(e.device != kNoId ? e.device : (e.pid_label == kNoString ? e.pid : -1));
    if (t.stream < 0) t.stream = e.stream != kNoId ? e.stream : (e.tid_label == kNoString ? e.tid : -1);
  }
  if (ph == 'B') {
    trace_.dur.back() = 0;
    saw_begin_end_ = true;
    open_begins_[track].push_back(id);
  }
}

void Parser::parse_device_properties(od::array arr) {
  for (auto element : arr) {
    od::object obj;
    if (element.get_object().get(obj) != simdjson::SUCCESS) fail(location(), "\"deviceProperties\" entries must be objects");
    DeviceProperties d;
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) fail(location(), "malformed key in deviceProperties");
      od::value v;
      if (field.value().get(v) != simdjson::SUCCESS) fail(location(), fmt::format("malformed value of \"{}\"", key));
      if (is_null(v)) continue;
      if (key == "id") d.id = static_cast<int32_t>(read_int(v, key));
      else if (key == "name") d.name = std::string(read_string(v, key));
      else if (key == "totalGlobalMem") d.total_global_mem = read_int(v, key);
      else if (key == "computeMajor") d.compute_major = static_cast<int32_t>(read_int(v, key));
      else if (key == "computeMinor") d.compute_minor = static_cast<int32_t>(read_int(v, key));
      else if (key == "numSms") d.num_sms = static_cast<int32_t>(read_int(v, key));
      else if (key == "maxThreadsPerMultiprocessor") d.max_threads_per_sm = static_cast<int32_t>(read_int(v, key));
      else if (key == "warpSize") d.warp_size = static_cast<int32_t>(read_int(v, key));
    }
    trace_.devices.push_back(std::move(d));
  }
}

void Parser::parse_distributed_info(od::value v) {
  if (is_null(v)) return;
  const char* begin = location();
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) fail(location(), "\"distributedInfo\" must be an object");
  trace_.distributed.present = true;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) fail(location(), "malformed key in distributedInfo");
    od::value fv;
    if (field.value().get(fv) != simdjson::SUCCESS) fail(location(), fmt::format("malformed value of \"{}\"", key));
    if (is_null(fv)) continue;
    if (key == "backend") trace_.distributed.backend = std::string(read_string(fv, key));
    else if (key == "rank") trace_.distributed.rank = static_cast<int32_t>(read_int(fv, key));
    else if (key == "world_size") trace_.distributed.world_size = static_cast<int32_t>(read_int(fv, key));
  }
  const char* end = location();
  if (begin && end && end > begin) {
    std::string_view text(begin, static_cast<size_t>(end - begin));
    while (!text.empty() && text.back() != '}') text.remove_suffix(1);
    const size_t brace = text.find('{');
    if (brace != std::string_view::npos) trace_.distributed.raw = std::string(text.substr(brace));
  }
}

}  // namespace

Trace parse_trace(std::string_view source, InputBuffer& json, bool strict) {
  Parser parser(source, json, strict);
  return parser.run();
}

std::string repairs_line(const LoadDiagnostics& d) {
  std::vector<std::string> parts;
  auto add = [&parts](uint64_t n, const char* what) {
    if (n) parts.push_back(fmt::format("{} {}", n, what));
  };
  add(d.negative_durations_dropped, "events with a negative duration dropped");
  add(d.surrogates_repaired, "strings with an unpaired surrogate escape repaired (U+FFFD)");
  add(d.ids_above_int64, "ids above 2^63-1 kept as 64-bit patterns");
  add(d.byte_order_marks, "byte-order mark skipped");
  return fmt::format("{}", fmt::join(parts, ", "));
}

Trace load_trace(const std::string& path, const LoadOptions& options) {
  RawInput raw = read_input(path, options.max_json_bytes);
  const std::string source = path == "-" ? "<stdin>" : path;
  Trace trace = parse_trace(source, raw.json, options.strict);
  trace.input_bytes = raw.input_bytes;
  if (trace.diagnostics.repaired_or_dropped() > 0)
    spdlog::warn("{}: {} (--strict refuses such a trace)", source, repairs_line(trace.diagnostics));
  return trace;
}

}  // namespace ttap

namespace ttap {
std::string simdjson_version_string() {
  return fmt::format("{}.{}.{} ({})", int(simdjson::SIMDJSON_VERSION_MAJOR), int(simdjson::SIMDJSON_VERSION_MINOR), int(simdjson::SIMDJSON_VERSION_REVISION),
                     SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
}
}  // namespace ttap
