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
  // One whole line (ending in '\n'), flushed before returning; safe from any thread (the
  // workers of -j call it). Never throws: a failed write (disk full) is kept for error().
  void write(const std::string& line);
  // "FILE: write failed: why" after a failed write, else "".
  std::string error();

 private:
  std::mutex mu_;
  std::string path_;
  std::string error_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
};

}  // namespace ttap::cli
