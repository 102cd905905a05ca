// The trace parser: simdjson On-Demand over one padded buffer, straight into the columnar
// store. Every value is checked for its type; anything unexpected becomes an InputError
// naming the byte offset, never a crash or a silently wrong field. The parser's jobs live
// in the files listed in parser.hpp; this one runs them and finishes the Trace.
#include "ttap/load.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "parser.hpp"

namespace ttap {

namespace load_detail {

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
      spdlog::debug("{}: chunked parse stopped at the document's structure ({}:{}); parsing the whole document",
                    source_, f.file, f.line);
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

}  // namespace load_detail

Trace parse_trace(std::string_view source, InputBuffer& json, bool strict) {
  load_detail::Parser parser(source, json, strict);
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

std::string simdjson_version_string() {
  return fmt::format("{}.{}.{} ({})", int(simdjson::SIMDJSON_VERSION_MAJOR), int(simdjson::SIMDJSON_VERSION_MINOR), int(simdjson::SIMDJSON_VERSION_REVISION),
                     SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
}

}  // namespace ttap
