#include "jsonl_writer.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/input.hpp"

namespace ttap::cli {

JsonlWriter::JsonlWriter(const std::string& path) : path_(path) {
  if (path.empty() || path == "-") {
    file_ = stdout;
    return;
  }
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw InputError(path, fmt::format("cannot write: {}", std::strerror(errno)));
  owned_ = true;
}

JsonlWriter::~JsonlWriter() {
  if (owned_) std::fclose(file_);
}

void JsonlWriter::write(const std::string& line) {
  std::lock_guard lock(mu_);
  // One buffered write per line, then a flush: the line reaches the file whole before the
  // next trace starts, and a reader (or `ttap merge`) never sees half of one unless the
  // process dies inside this call.
  const bool ok = std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (!ok && error_.empty()) error_ = fmt::format("{}: write failed: {}", path_.empty() ? "-" : path_, std::strerror(errno));
}

std::string JsonlWriter::error() {
  std::lock_guard lock(mu_);
  return error_;
}

std::string render_analyze_jsonl_line(const Report& run, const TraceReport& trace) {
  Report one;
  one.tool_version = run.tool_version;
  one.settings = run.settings;
  one.warnings = run.warnings;
  one.traces.push_back(trace);
  return render_analyze_json(one);  // one line: the renderer escapes every newline
}

}  // namespace ttap::cli
