// What the libtorch behind the ttap_torch module offers. The window detector (a later
// stage) runs in that module; this header stays free of torch includes.
#pragma once

#include <string>

namespace ttap {

struct TorchInfo {
  bool linked = false;  // the module was found and libtorch answered
  std::string module_path;
  std::string error;    // why not, when !linked
  std::string version;
  bool cuda_available = false;
  int cuda_devices = 0;
  int threads = 0;
};

// Opens the module on first use (about half a second: libtorch's static initializers).
TorchInfo torch_info();

}  // namespace ttap
