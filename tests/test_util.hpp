// The shell-text flavour of the suite helpers: `run_ttap("analyze --format json " + path)`
// for the suites that write their command lines as shell text (quoting, globs, `<` input).
// Paths and scratch files come from suite_support.hpp, so every suite shares one scratch
// folder (removed at exit) and one data folder.
#pragma once

#include <string>

#include "suite_support.hpp"

namespace ttap::test {

inline std::string data(const std::string& name) { return suite::data_path(name); }
inline const std::string& temp_dir() { return suite::scratch(); }
inline std::string temp_file(const std::string& name, const std::string& content) {
  return suite::write_file(name, content);
}

using RunResult = suite::ProcResult;

// Runs `ttap ARGS` through /bin/sh (ARGS is shell text), capturing both streams; stdin from
// `stdin_file` when given.
inline RunResult run_ttap(const std::string& args, const std::string& stdin_file = "") {
  std::string cmd = std::string(TTAP_BINARY) + " " + args;
  if (!stdin_file.empty()) cmd += " <" + stdin_file;
  return suite::shell(cmd);
}

}  // namespace ttap::test
