// libFuzzer targets for ttap's input pipeline. One source, three targets (scripts/fuzz/
// CMakeLists.txt compiles it with TTAP_FUZZ_MODE set):
//
//   fuzz_load    (1)  bytes -> InputBuffer -> parse_trace -> EventTree::build -> analyses
//   fuzz_gunzip  (2)  bytes -> gunzip (64 MiB limit) -> the same pipeline. Its custom
//                     mutator mutates half the time the decompressed JSON and compresses
//                     it again (random level, one to three members, sometimes trailing
//                     zeros), so that the parser sees more than gzip errors
//   fuzz_chunks  (3)  differential: the whole-document parse against the chunked parse on
//                     one and on two threads; both must accept or both reject, and the
//                     accepted traces must hold the same content
//
// Every target parses each input twice: lenient (the default: single bad events dropped
// or repaired) and strict. Whatever strict accepts, lenient must accept too, with the same
// events and nothing repaired.
//
// The loader must return a Trace or throw ttap::InputError. Anything else (a crash, a
// sanitizer report, another exception, a hang, a mismatch in fuzz_chunks) is a finding.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <zlib.h>

#include <random>

#include "ttap/analyze.hpp"
#include "ttap/diff.hpp"
#include "ttap/load.hpp"
#include "ttap/roofline.hpp"
#include "ttap/tree.hpp"

#ifndef TTAP_FUZZ_MODE
#define TTAP_FUZZ_MODE 1
#endif

namespace {

[[maybe_unused]] constexpr uint64_t kMaxGunzipBytes = 64ull << 20;

[[maybe_unused]] ttap::InputBuffer copy_input(const uint8_t* data, size_t size) {
  ttap::InputBuffer buf(size);
  if (size > 0) std::memcpy(buf.data(), data, size);
  buf.resize(size);
  return buf;
}

// Everything `ttap summary` and `ttap diff` compute from a trace.
[[maybe_unused]] void run_pipeline(const ttap::Trace& trace) {
  const ttap::EventTree tree = ttap::EventTree::build(trace);
  (void)ttap::gpu_scopes(trace, tree);
  (void)ttap::scoped_gpu_events(trace, tree);
  (void)ttap::gpu_timeline(trace, tree);
  (void)ttap::category_breakdown(trace, tree);
  (void)ttap::ops_summary(trace, tree);
  (void)ttap::ops_by_shape(trace, tree);
  (void)ttap::kernel_summary(trace, tree);
  (void)ttap::launch_stats(trace, tree);
  (void)ttap::step_breakdown(trace, tree);
  (void)ttap::roofline(trace, tree);
  (void)ttap::peak_device_memory(trace);
  (void)ttap::diff_traces(trace, tree, trace, tree, ttap::DiffOptions{});
  if (trace.size() > 0) (void)tree.path_to_root(static_cast<ttap::EventId>(trace.size() - 1));
}

#if TTAP_FUZZ_MODE == 2
// All gzip members of `data`, or false when it is not a clean gzip stream.
bool inflate_all(const uint8_t* data, size_t size, size_t limit, std::vector<uint8_t>& out) {
  out.clear();
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return false;
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  uint8_t window[16384];
  bool ok = false;
  for (;;) {
    zs.next_out = window;
    zs.avail_out = sizeof(window);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), window, window + (sizeof(window) - zs.avail_out));
    if (out.size() > limit) break;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) {
        ok = true;
        break;
      }
      inflateReset(&zs);
      continue;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&zs);
  return ok;
}

void deflate_member(const uint8_t* data, size_t size, int level, std::vector<uint8_t>& out) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  std::vector<uint8_t> buf(deflateBound(&zs, size) + 32);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = buf.data();
  zs.avail_out = static_cast<uInt>(buf.size());
  deflate(&zs, Z_FINISH);
  out.insert(out.end(), buf.data(), buf.data() + zs.total_out);
  deflateEnd(&zs);
}
#endif

#if TTAP_FUZZ_MODE == 3
// The trace as text, ids resolved to what they stand for, so that two parses can be
// compared whatever order they interned strings or created tracks in.
std::string dump(const ttap::Trace& t) {
  std::string out;
  auto s = [&t](ttap::StringId id) { return id == ttap::kNoString ? std::string("<none>") : fmt::format("{:?}", std::string(t.strings.view(id))); };
  auto track = [&](ttap::TrackId id) {
    const ttap::Track& k = t.tracks[id];
    return fmt::format("({},{},{},{})", k.pid_label == ttap::kNoString ? fmt::format("{}", k.pid) : s(k.pid_label),
                       k.tid_label == ttap::kNoString ? fmt::format("{}", k.tid) : s(k.tid_label), k.pid_label != ttap::kNoString,
                       k.tid_label != ttap::kNoString);
  };
  fmt::format_to(std::back_inserter(out), "schema {} base {} name {:?} json_bytes {}\n", t.schema_version, t.base_time_ns,
                 t.trace_name, t.json_bytes);
  const auto& d = t.diagnostics;
  fmt::format_to(std::back_inserter(out), "diag {} {} {} {} repairs {} {} {} {}\n", d.events_seen, d.metadata_events,
                 d.unmatched_begin_end, d.unknown_phase, d.negative_durations_dropped, d.surrogates_repaired,
                 d.ids_above_int64, d.byte_order_marks);
  for (const auto& dev : t.devices)
    fmt::format_to(std::back_inserter(out), "device {} {:?} {} {} {} {} {} {}\n", dev.id, dev.name, dev.total_global_mem,
                   dev.compute_major, dev.compute_minor, dev.num_sms, dev.max_threads_per_sm, dev.warp_size);
  fmt::format_to(std::back_inserter(out), "dist {} {:?} {} {} {:?}\n", t.distributed.present, t.distributed.backend,
                 t.distributed.rank, t.distributed.world_size, t.distributed.raw);
  std::vector<std::string> tracks;
  for (ttap::TrackId i = 0; i < t.tracks.size(); ++i) {
    const ttap::Track& k = t.tracks[i];
    tracks.push_back(fmt::format("track {} gpu {} dev {} stream {} process {} thread {}\n", track(i), k.gpu, k.device,
                                 k.stream, s(k.process_name), s(k.thread_name)));
  }
  std::sort(tracks.begin(), tracks.end());
  for (const auto& line : tracks) out += line;
  for (ttap::EventId e = 0; e < t.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "ev {} {} {} {} {} {} {} {} {}", s(t.name[e]), static_cast<int>(t.category[e]),
                   static_cast<int>(t.phase[e]), track(t.track[e]), t.ts[e], t.dur[e], t.external_id[e], t.correlation[e],
                   s(t.raw_category[e]));
    if (const auto* a = t.op(e))
      fmt::format_to(std::back_inserter(out), " op {} {} {} {} {} {}", s(a->input_dims), s(a->input_types),
                     s(a->input_strides), s(a->concrete_inputs), a->sequence_number, a->fwd_thread_id);
    if (const auto* k = t.kernel(e))
      fmt::format_to(std::back_inserter(out), " kernel {} {} {} {} {} {} {} {} {} {} {}", k->grid[0], k->grid[1], k->grid[2],
                     k->block[0], k->block[1], k->block[2], k->registers_per_thread, k->shared_memory, k->blocks_per_sm,
                     k->warps_per_sm, k->est_occupancy_pct);
    if (const auto* p = t.python(e)) fmt::format_to(std::back_inserter(out), " python {} {}", p->python_id, p->parent_id);
    if (const auto* c = t.copy(e)) fmt::format_to(std::back_inserter(out), " copy {}", c->bytes);
    if (const auto* y = t.sync(e))
      fmt::format_to(std::back_inserter(out), " sync {} {} {}", s(y->kind), y->wait_on_stream, y->wait_on_event_record_correlation);
    if (const auto* c = t.collective(e))
      fmt::format_to(std::back_inserter(out), " coll {} {} {} {} {} {} {} {}", s(c->collective_name), c->in_msg_nelems,
                     c->out_msg_nelems, s(c->dtype), c->group_size, s(c->process_group_name), s(c->process_group_desc),
                     s(c->process_group_ranks));
    out += '\n';
  }
  for (const auto& c : t.collectives) fmt::format_to(std::back_inserter(out), "collective of event {}\n", c.event);
  for (const auto& m : t.memory_events)
    fmt::format_to(std::back_inserter(out), "mem {} {} {} {} {} {} {}\n", m.ts, track(m.track), m.bytes, m.total_allocated,
                   m.total_reserved, m.device_type, m.device_id);
  for (const auto& f : t.flows)
    fmt::format_to(std::back_inserter(out), "flow {} {} {} {} {}\n", f.ts, f.id, track(f.track), s(f.category), f.phase);
  for (const auto& c : t.counters)
    fmt::format_to(std::back_inserter(out), "counter {} {} {} {} {}\n", c.ts, c.pid, s(c.name), s(c.series), c.value);
  return out;
}

struct Outcome {
  bool ok = false;
  std::string text;  // dump, or the error
};

Outcome parse_with(const uint8_t* data, size_t size, bool whole, const char* threads, bool strict) {
  if (whole) setenv("TTAP_PARSE_WHOLE", "1", 1);
  else unsetenv("TTAP_PARSE_WHOLE");
  setenv("TTAP_THREADS", threads, 1);
  ttap::InputBuffer buf = copy_input(data, size);
  Outcome o;
  try {
    const ttap::Trace trace = ttap::parse_trace("fuzz", buf, strict);
    o.ok = true;
    o.text = dump(trace);
  } catch (const ttap::InputError& e) {
    o.text = e.what();
  }
  // The parser writes chunk brackets in place and must restore them.
  if (buf.size() != size || (size > 0 && std::memcmp(buf.data(), data, size) != 0)) {
    std::fprintf(stderr, "fuzz_chunks: the input buffer was not restored (whole=%d threads=%s strict=%d)\n", whole, threads,
                 strict);
    std::abort();
  }
  return o;
}

void report_mismatch(const char* what, const Outcome& a, const Outcome& b) {
  // The first line that differs on each side, then abort: libFuzzer saves the input.
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    size_t from = 0;
    while (from < text.size()) {
      size_t nl = text.find('\n', from);
      if (nl == std::string::npos) nl = text.size();
      out.push_back(text.substr(from, nl - from));
      from = nl + 1;
    }
    return out;
  };
  const auto la = lines(a.text), lb = lines(b.text);
  size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i]) ++i;
  std::fprintf(stderr, "fuzz_chunks: %s: %s vs %s, first difference at line %zu (of %zu / %zu)\n", what,
               a.ok ? "ok" : "error", b.ok ? "ok" : "error", i + 1, la.size(), lb.size());
  std::fprintf(stderr, "  whole:   %.300s\n  chunked: %.300s\n", i < la.size() ? la[i].c_str() : "<end>",
               i < lb.size() ? lb[i].c_str() : "<end>");
  std::abort();
}
#endif

#if TTAP_FUZZ_MODE != 3
// Parses `json` strict and lenient; runs the pipeline on what lenient gives. Whatever strict
// accepts, lenient must accept with the same events and no repair.
void parse_both_modes(const ttap::InputBuffer& json) {
  std::optional<size_t> strict_events;
  try {
    ttap::InputBuffer copy = copy_input(reinterpret_cast<const uint8_t*>(json.data()), json.size());
    strict_events = ttap::parse_trace("fuzz", copy, true).size();
  } catch (const ttap::InputError&) {
  }
  try {
    ttap::InputBuffer copy = copy_input(reinterpret_cast<const uint8_t*>(json.data()), json.size());
    const ttap::Trace trace = ttap::parse_trace("fuzz", copy, false);
    if (strict_events && (trace.size() != *strict_events || trace.diagnostics.repaired_or_dropped() != 0)) {
      std::fprintf(stderr, "fuzz: strict gave %zu events, lenient %zu with %llu repairs\n", *strict_events, trace.size(),
                   static_cast<unsigned long long>(trace.diagnostics.repaired_or_dropped()));
      std::abort();
    }
    run_pipeline(trace);
  } catch (const ttap::InputError&) {
    if (strict_events) {
      std::fprintf(stderr, "fuzz: strict accepted what lenient refused\n");
      std::abort();
    }
  }
}
#endif

}  // namespace

#if TTAP_FUZZ_MODE == 2
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<uint8_t> plain;
  if (rng() % 2 == 0 && inflate_all(data, size, 1 << 20, plain)) {
    const size_t n = plain.size();
    plain.resize(std::max<size_t>(2 * n, 4096));
    plain.resize(LLVMFuzzerMutate(plain.data(), n, plain.size()));
    std::vector<uint8_t> gz;
    const int members = 1 + static_cast<int>(rng() % 3);
    size_t from = 0;
    for (int m = 0; m < members; ++m) {
      const size_t to = m + 1 == members ? plain.size() : from + (plain.size() - from) * (rng() % 100) / 100;
      deflate_member(plain.data() + from, to - from, static_cast<int>(rng() % 10), gz);
      from = to;
    }
    if (rng() % 8 == 0) gz.resize(gz.size() + 1 + rng() % 16, 0);  // writers that pad
    if (!gz.empty() && gz.size() <= max_size) {
      std::memcpy(data, gz.data(), gz.size());
      return gz.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Small chunks put chunk boundaries (and worker threads) into small inputs. Set here, not
  // only by run_fuzz.sh, so that running the binary on a crash file reproduces it.
  setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 0);
  setenv("TTAP_THREADS", "2", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#if TTAP_FUZZ_MODE == 1
  parse_both_modes(copy_input(data, size));
#elif TTAP_FUZZ_MODE == 2
  try {
    ttap::InputBuffer json = ttap::gunzip("fuzz.gz", reinterpret_cast<const char*>(data), size, kMaxGunzipBytes);
    if (json.size() > kMaxGunzipBytes) {
      std::fprintf(stderr, "fuzz_gunzip: %zu bytes out, over the %llu limit\n", json.size(),
                   static_cast<unsigned long long>(kMaxGunzipBytes));
      std::abort();
    }
    parse_both_modes(json);
  } catch (const ttap::InputError&) {
  }
#elif TTAP_FUZZ_MODE == 3
  for (const bool strict : {false, true}) {
    const Outcome whole = parse_with(data, size, true, "1", strict);
    const Outcome one = parse_with(data, size, false, "1", strict);
    const Outcome two = parse_with(data, size, false, "2", strict);
    if (whole.ok != one.ok || (whole.ok && whole.text != one.text))
      report_mismatch(strict ? "strict: whole vs chunked, 1 thread" : "whole vs chunked, 1 thread", whole, one);
    if (whole.ok != two.ok || (whole.ok && whole.text != two.text))
      report_mismatch(strict ? "strict: whole vs chunked, 2 threads" : "whole vs chunked, 2 threads", whole, two);
  }
#else
#error "TTAP_FUZZ_MODE must be 1, 2 or 3"
#endif
  return 0;
}
