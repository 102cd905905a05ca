// The merge of worker parts: each part's store appended to the main one in file order,
// its string, track and args-row ids translated.
#include "parser.hpp"

namespace ttap::load_detail {

void Parser::start_part(size_t bytes) {
  trace_.source = std::string(source_);
  const size_t events = bytes / 100 + 16;
  reserve_columns(events);
}

// Appends a worker's partial store, translating its string, track and row ids.
void Parser::absorb(Parser& part) {
  // B/E pairs may straddle parts; such traces are rare enough to parse on one thread.
  if (part.saw_begin_end_ || saw_begin_end_) throw ChunkFallback{__FILE__, __LINE__};
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

}  // namespace ttap::load_detail
