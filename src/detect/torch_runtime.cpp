#include "ttap/torch_runtime.hpp"

#include <mutex>

#include "torch_api.h"
#include "ttap/module_loader.hpp"

namespace ttap {

TorchInfo torch_info() {
  static TorchInfo info;
  static std::once_flag once;
  std::call_once(once, [] {
    const LoadedModule m = open_module("ttap_torch.so", "TTAP_TORCH_MODULE");
    if (m.handle == nullptr) {
      info.error = m.error;
      return;
    }
    auto fn = reinterpret_cast<decltype(&ttap_torch_info)>(m.symbol("ttap_torch_info"));
    ttap_torch_info_t raw{};
    if (fn == nullptr || fn(&raw) != 0) {
      info.error = m.path + ": ttap_torch_info failed";
      return;
    }
    info.linked = true;
    info.module_path = m.path;
    info.version = raw.version;
    info.cuda_available = raw.cuda_available != 0;
    info.cuda_devices = raw.cuda_devices;
    info.threads = raw.threads;
  });
  return info;
}

}  // namespace ttap
