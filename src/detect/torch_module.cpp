// The ttap_torch module: the one translation unit that includes libtorch. The window
// detector's TorchScript model runs here (a later stage); for now it reports what the
// linked libtorch offers.
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <cstring>

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
