// Schema quirks: the category names of the 2021 schema ("Operator", "Runtime", ...) and
// the current one, and the top-level metadata besides traceEvents.
#include "parser.hpp"

namespace ttap::load_detail {

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

void Parser::parse_top_object(od::object top) {
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) fail(location(), "malformed key in the top-level object");
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) fail(location(), fmt::format("malformed value of \"{}\"", key));
    if (key == "traceEvents") {
      // Two "traceEvents" arrays: which one is the trace is anyone's guess (Python's json
      // keeps the last, a streaming reader the first), so neither is picked.
      if (saw_events_) fail(location(), "\"traceEvents\" appears twice in the top-level object");
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

}  // namespace ttap::load_detail
