#include "ttap/detector.hpp"

#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "torch_api.h"
#include "ttap/module_loader.hpp"

namespace ttap {

namespace {

struct DetectorApi {
  std::string error;
  decltype(&ttap_detector_load) load = nullptr;
  decltype(&ttap_detector_free) free = nullptr;
  decltype(&ttap_detector_device) device = nullptr;
  decltype(&ttap_detector_score) score = nullptr;
};

const DetectorApi& api() {
  static DetectorApi a;
  static std::once_flag once;
  std::call_once(once, [] {
    const LoadedModule m = open_module("ttap_torch.so", "TTAP_TORCH_MODULE");
    if (m.handle == nullptr) {
      a.error = m.error;
      return;
    }
    a.load = reinterpret_cast<decltype(a.load)>(m.symbol("ttap_detector_load"));
    a.free = reinterpret_cast<decltype(a.free)>(m.symbol("ttap_detector_free"));
    a.device = reinterpret_cast<decltype(a.device)>(m.symbol("ttap_detector_device"));
    a.score = reinterpret_cast<decltype(a.score)>(m.symbol("ttap_detector_score"));
    if (!a.load || !a.free || !a.device || !a.score) {
      a.error = fmt::format("{}: no detector entry points (a module from another ttap version?)", m.path);
      a.load = nullptr;
    }
  });
  return a;
}

}  // namespace

struct Detector::Impl {
  ttap_detector_t* handle = nullptr;
  ~Impl() {
    if (handle) api().free(handle);
  }
};

Detector::Detector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Detector::Detector(Detector&&) noexcept = default;
Detector& Detector::operator=(Detector&&) noexcept = default;
Detector::~Detector() = default;

Detector Detector::open(const std::string& model_path, const std::string& device, int threads) {
  const DetectorApi& a = api();
  if (a.load == nullptr) throw std::runtime_error(a.error);
  char err[1024] = {0};
  auto impl = std::make_unique<Impl>();
  impl->handle = a.load(model_path.c_str(), device.c_str(), threads, err, sizeof(err));
  if (impl->handle == nullptr) throw std::runtime_error(fmt::format("{}: {}", model_path, err));
  return Detector(std::move(impl));
}

std::vector<double> Detector::score(const FeatureBatch& b) const {
  ttap_features_t f{};
  f.windows = b.windows;
  f.events = b.events;
  f.names = b.names;
  f.name_tokens_per_name = kMaxNameTokens;
  f.numeric = kNumericFeatures;
  f.name_tokens = b.name_tokens.data();
  f.event_name = b.event_name.data();
  f.event_kind = b.event_kind.data();
  f.event_opcat = b.event_opcat.data();
  f.event_track = b.event_track.data();
  f.event_numeric = b.event_numeric.data();
  f.event_mask = b.event_mask.data();
  std::vector<float> out(static_cast<size_t>(b.windows));
  char err[1024] = {0};
  if (api().score(impl_->handle, &f, out.data(), err, sizeof(err)) != 0) throw std::runtime_error(err);
  return {out.begin(), out.end()};
}

std::string Detector::device() const { return api().device(impl_->handle); }

}  // namespace ttap
