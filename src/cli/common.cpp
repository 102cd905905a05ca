#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/load.hpp"

namespace ttap::cli {

Loaded load_and_build(const std::string& path) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  Trace trace = load_trace(path);
  const auto t1 = clock::now();
  EventTree tree = EventTree::build(trace);
  const auto t2 = clock::now();
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  spdlog::debug("{}: {} events, {:.1f} MB JSON loaded in {:.3f} s ({:.0f} MB/s); store {:.1f} MB; tree in {:.3f} s",
                trace.source, trace.size(), static_cast<double>(trace.json_bytes) / 1e6, load_s,
                static_cast<double>(trace.json_bytes) / 1e6 / std::max(load_s, 1e-9),
                static_cast<double>(trace.memory_bytes()) / 1e6, std::chrono::duration<double>(t2 - t1).count());
  return {std::move(trace), std::move(tree)};
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, fmt::format("cannot write: {}", std::strerror(errno)));
  const size_t written = std::fwrite(text.data(), 1, text.size(), f);
  const bool ok = written == text.size() && std::fclose(f) == 0;
  if (!ok) throw InputError(path, fmt::format("write failed: {}", std::strerror(errno)));
}

}  // namespace ttap::cli
