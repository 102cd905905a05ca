// Chunk splitting: traceEvents is cut into chunks at event boundaries ("}, {"), and runs of
// chunks are parsed on worker threads, each into its own part, merged in file order. Any
// structure this path does not handle throws ChunkFallback: the whole document is parsed
// instead (whole_document.cpp).
#include "parser.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

namespace ttap::load_detail {

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
  if (pos >= n) throw ChunkFallback{__FILE__, __LINE__};
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
      if (depth == 0) throw ChunkFallback{__FILE__, __LINE__};
      if (--depth == 0) return pos + 1;
    }
    ++pos;
  }
  throw ChunkFallback{__FILE__, __LINE__};
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
  throw ChunkFallback{__FILE__, __LINE__};
}

// Parses `text` as its own small document (a top-level value other than traceEvents).
void Parser::with_document(std::string_view text, const std::function<void(od::value)>& fn) {
  // Wrapped in an array: On-Demand hands out values of arrays, not of scalar documents.
  scratch_.resize(text.size() + 2 + kInputPadding);
  scratch_[0] = '[';
  std::memcpy(scratch_.data() + 1, text.data(), text.size());
  scratch_[text.size() + 1] = ']';
  auto padded = simdjson::padded_string_view(scratch_.data(), text.size() + 2, text.size() + 2 + kInputPadding);
  if (parser_.iterate(padded).get(doc_) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
  od::array arr;
  if (doc_.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
  for (auto element : arr) {
    od::value v;
    if (element.get(v) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
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
  if (parser_.capacity() < capacity && parser_.allocate(capacity) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
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
        throw ChunkFallback{__FILE__, __LINE__};
    } else {
      if (d[start] != '[') restore.set(start, '[');
      if (!last) restore.set(end, ']');
      if (parser_.iterate(simdjson::padded_string_view(d + start, end + 1 - start, n + kInputPadding - start)).get(doc_) !=
          simdjson::SUCCESS)
        throw ChunkFallback{__FILE__, __LINE__};
    }
    od::array arr;
    if (doc_.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
    parse_events(arr);
  }
}

// From the start of an element of an array: the position of the array's ']'.
size_t Parser::array_end(size_t pos) const {
  const char* d = json_.data();
  const size_t n = json_.size();
  for (;;) {
    pos = skip_ws(skip_value(skip_ws(pos)));
    if (pos >= n) throw ChunkFallback{__FILE__, __LINE__};
    if (d[pos] == ']') return pos;
    if (d[pos] != ',') throw ChunkFallback{__FILE__, __LINE__};
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
  if (pos >= n) throw ChunkFallback{__FILE__, __LINE__};
  if (d[pos] == '[') {
    saw_events_ = true;
    pos = parse_events_chunked(pos);
  } else if (d[pos] == '{') {
    pos = skip_ws(pos + 1);
    if (pos < n && d[pos] == '}') ++pos;
    while (pos < n && d[pos] != '}') {
      if (d[pos] != '"') throw ChunkFallback{__FILE__, __LINE__};
      const size_t key_end = skip_string(pos);
      const std::string_view key(d + pos + 1, key_end - pos - 2);
      // Only the chunks of traceEvents and the values read below go through simdjson, whose
      // first stage checks every string's bytes (UTF-8, no unescaped control characters);
      // the whole-document pass checks every byte. Keys and skipped values get that stage
      // here too (a no-op visit), so that both paths refuse the same documents.
      with_document({d + pos, key_end - pos}, [](od::value) {});
      // An escaped key ("trace\u0045vents") is still "traceEvents": leave it to the full parse.
      if (key.find('\\') != std::string_view::npos) throw ChunkFallback{__FILE__, __LINE__};
      pos = skip_ws(key_end);
      if (pos >= n || d[pos] != ':') throw ChunkFallback{__FILE__, __LINE__};
      pos = skip_ws(pos + 1);
      if (key == "traceEvents") {
        // A second traceEvents is an error; the whole-document pass says so.
        if (saw_events_ || pos >= n || d[pos] != '[') throw ChunkFallback{__FILE__, __LINE__};
        saw_events_ = true;
        pos = parse_events_chunked(pos);
      } else {
        const size_t value_end = skip_value(pos);
        const std::string_view text(d + pos, value_end - pos);
        with_document(text, [](od::value) {});
        if (key == "deviceProperties") {
          with_document(text, [this](od::value v) {
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw ChunkFallback{__FILE__, __LINE__};
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
        if (pos >= n || d[pos] != '"') throw ChunkFallback{__FILE__, __LINE__};
      } else if (pos >= n || d[pos] != '}') {
        throw ChunkFallback{__FILE__, __LINE__};
      }
    }
    if (pos >= n) throw ChunkFallback{__FILE__, __LINE__};
    ++pos;
  } else {
    throw ChunkFallback{__FILE__, __LINE__};
  }
  if (skip_ws(pos) != n) throw ChunkFallback{__FILE__, __LINE__};  // trailing content: let the full parse explain
  if (!saw_events_) throw ChunkFallback{__FILE__, __LINE__};
}

}  // namespace ttap::load_detail
