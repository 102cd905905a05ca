// The ttap_torch module: the one translation unit that includes libtorch. It runs the
// window detector's TorchScript model (docs/features.md gives its interface) and reports
// what the linked libtorch offers.
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/version.h>

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "torch_api.h"

extern "C" int ttap_torch_info(ttap_torch_info_t* out) {
  try {
    std::memset(out, 0, sizeof(*out));
    std::strncpy(out->version, TORCH_VERSION, sizeof(out->version) - 1);
    out->cuda_available = torch::cuda::is_available() ? 1 : 0;
    out->cuda_devices = out->cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
    out->threads = at::get_num_threads();
    return 0;
  } catch (...) {
    return -1;
  }
}

struct ttap_detector {
  torch::jit::script::Module module;
  torch::Device device{torch::kCPU};
  std::string device_name;
};

namespace {

void set_error(char* err, size_t errlen, const std::string& what) {
  if (err && errlen) std::snprintf(err, errlen, "%s", what.c_str());
}

// Borrowed host memory as a tensor of `dtype` on the detector's device (a copy only for
// CUDA or a dtype change).
torch::Tensor to_device(const void* data, torch::IntArrayRef shape, torch::ScalarType host_type, torch::ScalarType type,
                        const torch::Device& device) {
  torch::Tensor t = torch::from_blob(const_cast<void*>(data), shape, torch::TensorOptions().dtype(host_type));
  return t.to(device, type, /*non_blocking=*/false, /*copy=*/false);
}

}  // namespace

extern "C" ttap_detector_t* ttap_detector_load(const char* path, const char* device, int threads, char* err, size_t errlen) {
  try {
    auto d = std::make_unique<ttap_detector>();
    const std::string want = device ? device : "auto";
    // Asked only for CUDA: the query starts the CUDA driver, which a CPU run need not pay for.
    if (want == "cuda" && !torch::cuda::is_available()) {
      set_error(err, errlen, std::string("--device cuda: this libtorch (") + TORCH_VERSION + ") has no CUDA or sees no GPU");
      return nullptr;
    }
    // "auto" is the CPU even where a GPU is present. The model is small: measured on an H200
    // machine (scripts/bench/cuda_parity.sh), its forward of 100 windows took 20-26 ms on one
    // CPU core and 49-55 ms on CUDA, and a process's CUDA start costs ~0.6 s more, so one
    // `analyze` took 1.2 s on CUDA against 0.58 s (25 traces in one process: 2.4 s, 1.4 s).
    d->device = want == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    d->device_name = d->device.is_cuda() ? "cuda" : "cpu";
    if (threads > 0) at::set_num_threads(threads);
    if (d->device.is_cuda()) {
      // The scores must not depend on the device (CUDA within 1e-4 of the CPU). cuDNN's
      // convolutions default to TF32 on Ampere and later: 1.45e-4 apart on an H200 with it.
      at::globalContext().setAllowTF32CuDNN(false);
      at::globalContext().setAllowTF32CuBLAS(false);
    }
    d->module = torch::jit::load(path, d->device);
    d->module.eval();
    return d.release();
  } catch (const std::exception& e) {
    set_error(err, errlen, std::string("cannot load the detector: ") + e.what());
    return nullptr;
  }
}

extern "C" void ttap_detector_free(ttap_detector_t* d) { delete d; }

extern "C" const char* ttap_detector_device(const ttap_detector_t* d) { return d->device_name.c_str(); }

extern "C" int ttap_detector_score(ttap_detector_t* d, const ttap_features_t* f, float* out, char* err, size_t errlen) {
  // glibc hands blocks above 128 KB to mmap and gives freed memory back to the kernel, so
  // each forward faulted its tens of MB of activations in afresh (page faults are slow on
  // VMs): keep blocks up to 32 MB on the heap and the heap's free top up to 512 MB.
  // Process-wide, which suits a command-line tool; 102 ms -> 73 ms for the same forward.
  // Set at the first forward, not at load: the model now loads while the trace is parsed,
  // and the parse keeps glibc's defaults, as it had when the model loaded after it.
  static std::once_flag heap_tuned;
  std::call_once(heap_tuned, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  });
  try {
    torch::NoGradGuard no_grad;
    // ttap runs one forward per trace, often one per process: the graph executor's profiling
    // and optimization passes cost more on that first call (239 ms against 102 ms for 100
    // windows on one core, scripts/bench/detector_latency.sh) than they could ever win back.
    // The switch is thread-local in libtorch: set by the thread that runs the forward (the
    // model may have been loaded by another: the prefetch, or another -j worker).
    torch::jit::setGraphExecutorOptimize(false);
    const auto& dev = d->device;
    const int64_t W = f->windows, E = f->events;
    std::vector<torch::jit::IValue> inputs{
        to_device(f->name_tokens, {f->names, f->name_tokens_per_name}, torch::kInt32, torch::kInt64, dev),
        to_device(f->event_name, {W, E}, torch::kInt32, torch::kInt64, dev),
        to_device(f->event_kind, {W, E}, torch::kInt32, torch::kInt64, dev),
        to_device(f->event_opcat, {W, E}, torch::kInt32, torch::kInt64, dev),
        to_device(f->event_track, {W, E}, torch::kInt32, torch::kInt64, dev),
        to_device(f->event_numeric, {W, E, f->numeric}, torch::kFloat32, torch::kFloat32, dev),
        to_device(f->event_mask, {W, E}, torch::kUInt8, torch::kBool, dev),
    };
    torch::Tensor scores = d->module.forward(inputs).toTensor().to(torch::kCPU, torch::kFloat32).contiguous();
    if (scores.dim() != 1 || scores.size(0) != W) {
      set_error(err, errlen, "the detector returned " + std::to_string(scores.numel()) + " scores for " + std::to_string(W) +
                                 " windows (a model for another feature version?)");
      return -1;
    }
    std::memcpy(out, scores.data_ptr<float>(), sizeof(float) * static_cast<size_t>(W));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, errlen, std::string("the detector failed: ") + e.what());
    return -1;
  }
}
