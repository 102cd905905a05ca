#include "ttap/summary_report.hpp"

#include <fmt/format.h>

#include "ttap/roofline.hpp"

namespace ttap {

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }
double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

void truncate(Table& t, size_t top) {
  t.total_rows = t.rows.size();
  if (top > 0 && t.rows.size() > top) t.rows.resize(top);
}

Table overview_table(const Trace& t, const EventTree& tree) {
  Table table{"overview", "Trace", {{"field"}, {"value"}}, {}, {}, 0};
  auto add = [&](std::string k, Cell v) { table.rows.push_back({std::move(k), std::move(v)}); };
  add("file", t.source);
  add("events", static_cast<int64_t>(t.size()));
  add("gpu events", static_cast<int64_t>(tree.gpu_events().size()));
  add("steps", static_cast<int64_t>(tree.steps().size()));
  std::string devices;
  for (const auto& d : t.devices) devices += fmt::format("{}{}: {}", devices.empty() ? "" : "; ", d.id, d.name);
  if (!devices.empty()) add("devices", devices);
  if (t.distributed.present)
    add("distributed", fmt::format("rank {} of {} ({})", t.distributed.rank, t.distributed.world_size,
                                   t.distributed.backend.empty() ? "?" : t.distributed.backend));
  return table;
}

Table timeline_table(const std::vector<GpuTimeline>& timelines) {
  Table table{"gpu_timeline", "GPU timeline", {{"device"}, {"type"}, {"time ms", 4}, {"percent", 2}}, {}, {}, 0};
  for (const auto& g : timelines) {
    const std::pair<const char*, int64_t> rows[] = {
        {"computation_time", g.computation},   {"exposed_comm_time", g.exposed_communication},
        {"exposed_memcpy_time", g.exposed_memcpy}, {"busy_time", g.busy},
        {"idle_time", g.idle},                 {"total_time", g.total},
        {"total_comm_time", g.communication},  {"total_memcpy_time", g.memcpy}};
    for (auto [name, v] : rows) table.rows.push_back({int64_t{g.device}, std::string(name), ms(v), pct(v, g.total)});
  }
  if (timelines.empty()) table.note = "no GPU activity in this trace";
  for (const auto& g : timelines) {
    if (g.by_launch) {
      table.note = "scope: from the first to the last GPU work the CPU-side ProfilerSteps launched (the GPU-side step "
                   "annotations are markers); ops and kernels below use the same scope";
      break;
    }
    if (g.from_steps) table.note = "scope: the GPU-side ProfilerStep annotations; ops and kernels below use the same scope";
  }
  return table;
}

Table category_table(const std::vector<CategoryRow>& rows) {
  Table table{"ops_by_category", "GPU time by op category",
              {{"op category"}, {"ops"}, {"kernels"}, {"kernel time ms", 4}, {"percent", 2}}, {}, {}, 0};
  int64_t total = 0;
  for (const auto& r : rows) total += r.kernel_time;
  for (const auto& r : rows)
    table.rows.push_back({std::string(op_category_name(r.category)), r.op_count, r.kernel_count, ms(r.kernel_time), pct(r.kernel_time, total)});
  return table;
}

Table ops_table(const std::vector<OpRow>& rows, size_t top) {
  Table table{"ops_summary", "Ops by direct kernel time",
              {{"op"}, {"category"}, {"count"}, {"kernels"}, {"kernel time ms", 4}, {"percent", 2}}, {}, {}, 0};
  int64_t total = 0;
  for (const auto& r : rows) total += r.direct_kernel_time;
  for (const auto& r : rows)
    table.rows.push_back({r.name, std::string(op_category_name(r.category)), r.count, r.kernel_count, ms(r.direct_kernel_time),
                          pct(r.direct_kernel_time, total)});
  truncate(table, top);
  return table;
}

Table shapes_table(const std::vector<ShapeRow>& rows, size_t top) {
  Table table{"ops_by_shape", "Ops by unique input shapes",
              {{"op"}, {"input dims"}, {"input types"}, {"count"}, {"kernel time ms", 4}, {"mean kernel us", 2}, {"cpu time ms", 4}}, {}, {}, 0};
  for (const auto& r : rows)
    table.rows.push_back({r.name, r.input_dims, r.input_types, r.count, ms(r.kernel_time),
                          us(r.kernel_time) / static_cast<double>(std::max<int64_t>(1, r.count)), ms(r.cpu_time)});
  truncate(table, top);
  return table;
}

Table kernels_table(const std::vector<KernelRow>& rows, size_t top) {
  Table table{"kernel_summary", "Kernels",
              {{"kernel"}, {"parent op"}, {"category"}, {"count"}, {"total ms", 4}, {"mean us", 2}, {"min us", 2}, {"max us", 2}, {"percent", 2}},
              {}, {}, 0};
  int64_t total = 0;
  for (const auto& r : rows) total += r.total;
  for (const auto& r : rows)
    table.rows.push_back({r.name, r.owner_op, std::string(op_category_name(r.category)), r.count, ms(r.total),
                          us(r.total) / static_cast<double>(std::max<int64_t>(1, r.count)), us(r.min), us(r.max), pct(r.total, total)});
  truncate(table, top);
  return table;
}

Table launch_table(const LaunchStats& s) {
  Table table{"launch_stats", "Kernel launches", {{"figure"}, {"value", 2}}, {}, {}, 0};
  table.rows = {{std::string("launched GPU events"), s.launches},
                {std::string("launch delay mean us"), s.launch_delay_mean / 1e3},
                {std::string("launch delay p50 us"), us(s.launch_delay_p50)},
                {std::string("launch delay p95 us"), us(s.launch_delay_p95)},
                {std::string("launch delay max us"), us(s.launch_delay_max)},
                {std::string("launch call mean us"), us(s.launch_call_mean)},
                {std::string("short kernels (shorter than their launch)"), s.short_kernels},
                {std::string("short kernels percent"), pct(s.short_kernels, s.kernel_launches)},
                {std::string("short kernel time ms"), ms(s.short_kernel_time)}};
  return table;
}

Table steps_table(const std::vector<StepRow>& rows) {
  Table table{"steps", "Steps",
              {{"step"}, {"duration ms", 3}, {"gpu busy %", 1}, {"dataloader %", 1}, {"memcpy %", 1}, {"gpu events"}}, {}, {}, 0};
  for (const auto& r : rows)
    table.rows.push_back({r.number, ms(r.duration), pct(r.gpu_busy, r.duration), pct(r.dataloader, r.duration), pct(r.memcpy, r.duration), r.kernels});
  if (rows.empty()) table.note = "no ProfilerStep#N spans in this trace";
  return table;
}

Table roofline_table(const Roofline& r, size_t top) {
  Table table{"roofline", "Roofline (per unique op shape)",
              {{"op"}, {"input dims"}, {"dtype"}, {"peak"}, {"count"}, {"kernel time ms", 4}, {"GFLOP", 3}, {"MB", 3},
               {"TFLOP/s", 2}, {"TB/s", 3}, {"FLOP/B", 1}, {"bound"}, {"% of roof", 1}},
              {}, {}, 0};
  for (const auto& row : r.rows)
    table.rows.push_back({row.name, row.input_dims, row.dtype, row.peak_kind, row.count, ms(row.kernel_time), row.flops / 1e9,
                          row.bytes / 1e6, row.achieved_tflops, row.achieved_tbs, row.intensity,
                          r.device ? Cell{std::string(row.compute_bound ? "compute" : "memory")} : Cell{},
                          r.device ? Cell{row.roof_pct} : Cell{}});
  truncate(table, top);
  if (r.device) {
    const DeviceSpec& s = *r.device;
    table.note = fmt::format("device: {} (as {}): peaks fp32 {:g}, tf32 {:g}, bf16 {:g}, fp16 {:g}, fp8 {:g} TFLOP/s dense, {:g} TB/s",
                             r.device_name, s.name, s.fp32, s.tf32, s.bf16, s.fp16, s.fp8, s.bandwidth);
  } else {
    table.note = fmt::format("device \"{}\" is not in ttap's table: achieved figures only", r.device_name);
  }
  if (r.unknown_kernel_time > 0)
    table.note += fmt::format("\n{:.3f} ms of GEMM/conv/attention kernel time has no cost: shapes or strides not recorded",
                              ms(r.unknown_kernel_time));
  return table;
}

}  // namespace

std::vector<std::string> diagnostic_lines(const Trace& t, const EventTree& tree) {
  std::vector<std::string> lines;
  const auto& ld = t.diagnostics;
  const auto& td = tree.diagnostics();
  auto add = [&](uint64_t n, const char* what) {
    if (n) lines.push_back(fmt::format("{} {}", n, what));
  };
  add(td.partial_overlaps, "CPU events partially overlap their enclosing event (kept under it within 1 us, else moved up)");
  add(td.gpu_without_launch, "GPU events have no launch call in the trace");
  add(td.launches_without_gpu, "launch calls have no GPU event in the trace");
  add(td.python_without_parent, "python_function events name a parent that is not in the trace");
  add(ld.unmatched_begin_end, "B/E events were unmatched");
  add(ld.unknown_phase, "events of unused phases were skipped");
  add(ld.negative_durations_dropped, "events with a negative duration were dropped (--strict refuses the trace)");
  add(ld.surrogates_repaired, "strings had an unpaired surrogate escape, replaced by U+FFFD (--strict refuses the trace)");
  add(ld.ids_above_int64, "ids above 2^63-1 were kept as their 64 bits (--strict refuses the trace)");
  add(ld.byte_order_marks, "UTF-8 byte-order mark before the JSON was skipped (--strict refuses the trace)");
  return lines;
}

std::vector<Table> summary_tables(const Trace& t, const EventTree& tree, const SummaryOptions& o) {
  std::vector<Table> tables;
  tables.push_back(overview_table(t, tree));
  tables.push_back(timeline_table(gpu_timeline(t, tree)));
  tables.push_back(category_table(category_breakdown(t, tree)));
  tables.push_back(ops_table(ops_summary(t, tree), o.top));
  tables.push_back(shapes_table(ops_by_shape(t, tree), o.top));
  tables.push_back(kernels_table(kernel_summary(t, tree), o.top));
  tables.push_back(launch_table(launch_stats(t, tree)));
  tables.push_back(steps_table(step_breakdown(t, tree)));
  if (o.roofline) tables.push_back(roofline_table(roofline(t, tree), o.top));
  Table diag{"diagnostics", "Diagnostics", {{"diagnostic"}}, {}, {}, 0};
  for (auto& line : diagnostic_lines(t, tree)) diag.rows.push_back({line});
  if (diag.rows.empty()) diag.note = "none";
  tables.push_back(std::move(diag));
  return tables;
}

}  // namespace ttap
