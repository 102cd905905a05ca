#include "ttap/version.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <fmt/format.h>
#include <spdlog/version.h>

#include "ttap/tokenizer.hpp"
#include "ttap/torch_runtime.hpp"

#ifndef TTAP_VERSION
#define TTAP_VERSION "0.0.0"
#endif

namespace ttap {

std::string curl_version_string();
std::string simdjson_version_string();

std::string_view version() { return TTAP_VERSION; }

std::string version_report() {
  const TorchInfo torch = torch_info();
  std::string out = fmt::format("ttap {}\n", version());
  out += fmt::format("  simdjson {}\n", simdjson_version_string());
  out += fmt::format("  libdeflate {}, zlib {}\n", LIBDEFLATE_VERSION_STRING, zlibVersion());
  out += fmt::format("  fmt {}.{}.{}, spdlog {}.{}.{}\n", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
                     SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH);
  out += fmt::format("  libcurl {}\n", curl_version_string());
  if (torch.linked) {
    out += fmt::format("  libtorch {} ({}, {} threads) via {}\n", torch.version,
                       torch.cuda_available ? fmt::format("CUDA, {} device(s)", torch.cuda_devices) : "CPU only", torch.threads,
                       torch.module_path);
  } else {
    out += fmt::format("  libtorch: unavailable: {}\n", torch.error);
  }
  out += fmt::format("  sentencepiece module: {}\n", Tokenizer::module_status());
  return out;
}

}  // namespace ttap
