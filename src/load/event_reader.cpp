// One event into the columnar store: its fields and args read, its phase handled (X, B/E,
// instants, counters, flows, [memory], metadata), and, when lenient, a bad event dropped.
#include "parser.hpp"

#include <algorithm>

namespace ttap::load_detail {

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
      // A value that does not start like any JSON value (NaN, Infinity: Python's json writes
      // them for non-finite floats) is refused here rather than skipped as a non-number.
      od::json_type type;
      if (v.type().get(type) != simdjson::SUCCESS)
        fail(location(), fmt::format("field \"{}\" is not a JSON value (NaN and Infinity are not JSON)", key));
      if (type == od::json_type::number) e.counter_values.emplace_back(trace_.strings.intern(key), read_double(v, key));
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

}  // namespace ttap::load_detail
