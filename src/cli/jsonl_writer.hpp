// `--format jsonl`: one line per trace, written the moment the trace is done.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

namespace ttap::cli {

class JsonlWriter {
 public:
  // "" or "-": stdout. Throws InputError when the file cannot be created.
  explicit JsonlWriter(const std::string& path);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  // One whole line (ending in '\n'), flushed before returning; safe from any thread.
  // Throws InputError when the write fails (disk full).
  void write(const std::string& line);

 private:
  std::mutex mu_;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
};

}  // namespace ttap::cli
