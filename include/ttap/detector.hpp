// The window detector: the TorchScript model in models/detector.pt, run by libtorch inside
// the ttap_torch module (src/detect/torch_module.cpp), one batched forward per trace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ttap/features.hpp"

namespace ttap {

class Detector {
 public:
  // device: auto|cpu|cuda; threads: libtorch intra-op threads (0 = its default). Throws
  // std::runtime_error when the module or the model cannot be loaded.
  static Detector open(const std::string& model_path, const std::string& device, int threads);
  Detector(Detector&&) noexcept;
  Detector& operator=(Detector&&) noexcept;
  ~Detector();

  // One score in [0, 1] per window. Throws std::runtime_error when the forward fails.
  std::vector<double> score(const FeatureBatch& batch) const;
  std::string device() const;  // "cpu" or "cuda"

 private:
  struct Impl;
  explicit Detector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ttap
