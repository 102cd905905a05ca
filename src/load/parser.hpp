// The trace parser's shared parts, for the files of src/load that each do one of its jobs:
//   load.cpp            load_trace / parse_trace: runs the chunked path, falls back to the
//                       whole document, finishes the Trace
//   chunks.cpp          chunk splitting: cuts traceEvents into chunks at event boundaries and
//                       parses runs of them on worker threads
//   merge_parts.cpp     the merge of worker parts into one store, in file order
//   whole_document.cpp  the whole-document fallback (and the precise error for bad input)
//   event_reader.cpp    one event's fields into the columns (and the lenient repairs)
//   field_reader.cpp    typed readers of single JSON values, each naming its field on error
//   schema.cpp          schema quirks: the 2021 and current category names, top-level
//                       metadata (deviceProperties, distributedInfo, ...)
//   json_text.cpp       number and string text: microseconds to exact nanoseconds, surrogate repair
// Internal to src/load: not installed, not included elsewhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/trace.hpp"

namespace ttap::load_detail {

namespace od = simdjson::ondemand;

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

[[noreturn]] inline void fail(const char* where, std::string message) { throw ParseFailure{std::move(message), where}; }

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A token without the white space that follows it (raw tokens run up to the next
// structural character).
inline std::string_view trim_token(std::string_view t) {
  while (!t.empty() && is_ws(t.back())) t.remove_suffix(1);
  return t;
}


// Microseconds as JSON number text (trimmed) -> integer nanoseconds (json_text.cpp).
bool parse_us_as_ns(std::string_view text, int64_t& out);
// A string token with unpaired surrogate escapes replaced by U+FFFD (json_text.cpp).
bool unescape_repairing_surrogates(std::string_view token, std::string& out);
// Offset of the first byte of `data` that is not well-formed UTF-8, or `size` (json_text.cpp).
size_t first_invalid_utf8(const char* data, size_t size);
// Offset of the first control character left unescaped in a string, or `size` (json_text.cpp).
size_t first_unescaped_control(const char* data, size_t size);
// The normalized category of a "cat" text of either schema (schema.cpp).
Category classify(std::string_view cat);

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

  // Thrown where the chunked path meets a structure it does not handle; run() then parses
  // the whole document in one pass.
  struct ChunkFallback {
    const char* file;
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

}  // namespace ttap::load_detail
