#include "ttap/trace.hpp"

#include <algorithm>

namespace ttap {

std::string_view category_name(Category c) {
  switch (c) {
    case Category::CpuOp: return "cpu_op";
    case Category::UserAnnotation: return "user_annotation";
    case Category::PythonFunction: return "python_function";
    case Category::CudaRuntime: return "cuda_runtime";
    case Category::CudaDriver: return "cuda_driver";
    case Category::Kernel: return "kernel";
    case Category::GpuMemcpy: return "gpu_memcpy";
    case Category::GpuMemset: return "gpu_memset";
    case Category::GpuUserAnnotation: return "gpu_user_annotation";
    case Category::CudaSync: return "cuda_sync";
    case Category::DataLoader: return "dataloader";
    case Category::Instant: return "instant";
    case Category::TraceSpan: return "trace";
    case Category::Overhead: return "overhead";
    case Category::Other:
    case Category::kCount: break;
  }
  return "other";
}

namespace {
template <typename T>
const T* row_of(const StoreVector<T>& table, uint32_t row) {
  return row == kNoRow || row >= table.size() ? nullptr : &table[row];
}
}  // namespace

const OpArgs* Trace::op(EventId e) const {
  const Category c = category[e];
  if (c != Category::CpuOp && c != Category::UserAnnotation && c != Category::DataLoader) return nullptr;
  return row_of(op_args, args_row[e]);
}
const KernelArgs* Trace::kernel(EventId e) const {
  return category[e] == Category::Kernel ? row_of(kernel_args, args_row[e]) : nullptr;
}
const PythonArgs* Trace::python(EventId e) const {
  return category[e] == Category::PythonFunction ? row_of(python_args, args_row[e]) : nullptr;
}
const CopyArgs* Trace::copy(EventId e) const {
  const Category c = category[e];
  return c == Category::GpuMemcpy || c == Category::GpuMemset ? row_of(copy_args, args_row[e]) : nullptr;
}
const SyncArgs* Trace::sync(EventId e) const {
  return category[e] == Category::CudaSync ? row_of(sync_args, args_row[e]) : nullptr;
}
const CollectiveArgs* Trace::collective(EventId e) const {
  auto it = std::lower_bound(collectives.begin(), collectives.end(), e,
                             [](const CollectiveArgs& c, EventId id) { return c.event < id; });
  return it != collectives.end() && it->event == e ? &*it : nullptr;
}
const DeviceProperties* Trace::device(int32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

size_t Trace::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
  return strings.bytes() + bytes(name) + bytes(category) + bytes(phase) + bytes(track) + bytes(ts) + bytes(dur) +
         bytes(external_id) + bytes(correlation) + bytes(args_row) + bytes(raw_category) + bytes(tracks) +
         bytes(op_args) + bytes(kernel_args) + bytes(python_args) + bytes(copy_args) + bytes(sync_args) +
         bytes(collectives) + bytes(memory_events) + bytes(flows) + bytes(counters);
}

}  // namespace ttap
