// Helpers shared by the test suites: temp files, running the ttap binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ttap::test {

inline std::string data(const std::string& name) { return std::string(TTAP_TEST_DATA_DIR) + "/" + name; }

// A fresh temp directory for this test process.
inline const std::string& temp_dir() {
  static const std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ttap-test-XXXXXX").string();
    return std::string(::mkdtemp(tmpl.data()));
  }();
  return dir;
}

// A file in temp_dir() holding `content`.
inline std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `ttap ARGS` through the shell (ARGS is shell text), capturing both streams.
inline RunResult run_ttap(const std::string& args, const std::string& stdin_file = "") {
  const std::string err_path = temp_file("stderr.txt", "");
  std::string cmd = std::string(TTAP_BINARY) + " " + args + " 2>" + err_path;
  if (!stdin_file.empty()) cmd += " <" + stdin_file;
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

}  // namespace ttap::test
