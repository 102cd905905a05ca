#include "ttap/model_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "ttap/input.hpp"
#include "ttap/module_loader.hpp"

namespace ttap {

namespace {

bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

ModelFiles files_in(const std::string& dir) {
  ModelFiles m;
  m.dir = dir;
  if (is_file(dir + "/" + kDetectorFile)) m.detector = dir + "/" + kDetectorFile;
  if (is_file(dir + "/" + kTokenizerFile)) m.tokenizer = dir + "/" + kTokenizerFile;
  return m;
}

}  // namespace

ModelFiles find_model_files(const std::string& hint) {
  if (!hint.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(hint, ec)) {
      ModelFiles m = files_in(hint);
      if (m.tokenizer.empty()) throw InputError(hint, fmt::format("no {} in this model folder", kTokenizerFile));
      return m;
    }
    if (!is_file(hint)) throw InputError(hint, "no such model file or folder");
    ModelFiles m = files_in(std::filesystem::path(hint).parent_path().string());
    m.detector = hint;
    if (m.tokenizer.empty()) throw InputError(hint, fmt::format("no {} beside the model", kTokenizerFile));
    return m;
  }
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TTAP_MODEL_DIR"); env && *env) dirs.emplace_back(env);
  const std::string exe = executable_dir();
  dirs.push_back(exe + "/models");
  dirs.push_back(exe + "/../models");
  dirs.push_back(exe + "/../share/ttap/models");
  dirs.push_back(std::string(TTAP_DATADIR) + "/models");
  std::string tried;
  for (const std::string& d : dirs) {
    ModelFiles m = files_in(d);
    if (!m.tokenizer.empty()) return m;
    tried += "\n  " + d;
  }
  throw InputError("models", fmt::format("no {} found; looked in:{}\n(set TTAP_MODEL_DIR or pass --model)", kTokenizerFile, tried));
}

}  // namespace ttap
