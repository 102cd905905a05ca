#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/load.hpp"

namespace ttap::cli {

namespace {

// A status line on a terminal while a large trace loads (seconds for a gigabyte); nothing
// when stderr is a file or a pipe, or with -q.
class LoadStatus {
 public:
  explicit LoadStatus(const std::string& path) {
    struct stat st {};
    active_ = ::isatty(STDERR_FILENO) && spdlog::get_level() <= spdlog::level::info && path != "-" &&
              ::stat(path.c_str(), &st) == 0 && st.st_size >= (64 << 20);
    if (active_) show(fmt::format("loading {} ({:.0f} MB)...", path, static_cast<double>(st.st_size) / 1e6));
  }
  ~LoadStatus() {
    if (active_) std::fputs("\r\033[K", stderr);
  }
  void show(const std::string& text) {
    if (!active_) return;
    std::fputs(("\r\033[Kttap: " + text).c_str(), stderr);
    std::fflush(stderr);
  }

 private:
  bool active_ = false;
};

}  // namespace

LoadOptions& load_options() {
  static LoadOptions options;
  return options;
}

Loaded load_and_build(const std::string& path) {
  using clock = std::chrono::steady_clock;
  LoadStatus status(path);
  const auto t0 = clock::now();
  Trace trace = load_trace(path, load_options());
  const auto t1 = clock::now();
  status.show(fmt::format("{}: {} events parsed, building the tree...", path, trace.size()));
  EventTree tree = EventTree::build(trace);
  const auto t2 = clock::now();
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  spdlog::debug("{}: {} events, {:.1f} MB JSON loaded in {:.3f} s ({:.0f} MB/s); store {:.1f} MB; tree in {:.3f} s",
                trace.source, trace.size(), static_cast<double>(trace.json_bytes) / 1e6, load_s,
                static_cast<double>(trace.json_bytes) / 1e6 / std::max(load_s, 1e-9),
                static_cast<double>(trace.memory_bytes()) / 1e6, std::chrono::duration<double>(t2 - t1).count());
  return {std::move(trace), std::move(tree)};
}

namespace {
bool is_trace_file(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.ends_with(".json") || name.ends_with(".json.gz");
}
}  // namespace

std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(in, ec))
        if (e.is_regular_file() && is_trace_file(e.path())) found.push_back(e.path().string());
      if (ec) throw InputError(in, fmt::format("cannot list the folder: {}", ec.message()));
      std::sort(found.begin(), found.end());
      if (found.empty()) throw InputError(in, "no .json or .json.gz traces in this folder");
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(in);
    }
  }
  return files;
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

int report_exit_code(const Report& report) {
  int code = kOk;
  for (const TraceReport& t : report.traces) {
    if (t.verdict == Verdict::error) code = std::max<int>(code, t.internal_error ? kInternal : kBadInput);
    else if (t.gate_failed) code = std::max<int>(code, kFlagged);
  }
  return code;
}

bool want_color(const std::string& output) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool to_stdout = output.empty() || output == "-";
  return to_stdout && ::isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
}

}  // namespace ttap::cli
