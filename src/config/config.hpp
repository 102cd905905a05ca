// The analyze config file (JSON): thresholds, ignores and LLM settings a CI job keeps in
// its repository (`--config FILE`, else ./ttap.json). Every field is optional; flags on
// the command line win. The LLM API key is never read from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../classify/classify.hpp"

namespace ttap {

struct LlmFileSettings {
  std::optional<std::string> url;
  std::optional<std::string> model;
  std::optional<std::string> cache;
  std::optional<bool> redact;
  std::optional<double> timeout;
  std::optional<int> retries;
  std::optional<int> concurrency;
  std::optional<int> rounds;
};

struct AnalyzeConfig {
  std::string path;  // the file read
  std::optional<FailOn> fail_on;
  std::optional<double> fail_score;
  std::optional<int> top_k;
  std::optional<int> flag_spacing;
  std::optional<int> windows;
  std::optional<std::string> scorer;  // model|rules|cluster
  std::optional<std::string> model;
  std::optional<std::string> device;  // auto|cpu|cuda
  std::vector<Ignore> ignores;
  LlmFileSettings llm;
};

// Reads and validates `path`. Throws InputError naming the file and the field for
// anything it cannot use: bad JSON, unknown keys (a typo must not silently do nothing),
// wrong types, out-of-range values, an ignore without any field, a key in the file.
AnalyzeConfig load_analyze_config(const std::string& path);

}  // namespace ttap
