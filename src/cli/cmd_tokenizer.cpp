// `ttap tokenizer`: trains the sentencepiece model for event names (models/ttap_names.model)
// on the distinct normalized names of a set of traces.
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/features.hpp"
#include "ttap/input.hpp"
#include "ttap/tokenizer.hpp"

namespace ttap::cli {

int run_tokenizer(const TokenizerOptions& o) {
  // Distinct names, not occurrences: a trace repeats a few hundred names millions of
  // times, and the vocabulary should cover the variety, not the repetition.
  std::set<std::string> names;
  const std::vector<std::string> files = expand_trace_inputs(o.inputs);
  for (const std::string& path : files) {
    Loaded l = load_and_build(path);
    for (EventId e = 0; e < l.trace.size(); ++e) names.insert(normalize_event_name(l.trace.name_of(e)));
  }
  const std::string corpus = o.output + ".names.txt";
  std::string text;
  for (const std::string& n : names)
    if (!n.empty()) text += n + "\n";
  write_output(corpus, text);
  spdlog::info("{} distinct names from {} traces", names.size(), files.size());
  try {
    Tokenizer::train(corpus, o.output, o.vocab);
  } catch (const TokenizerError& e) {
    throw InputError(o.output, fmt::format("tokenizer training failed: {}", e.what()));
  }
  std::remove(corpus.c_str());
  fmt::print("wrote {}.model and {}.vocab\n", o.output, o.output);
  return kOk;
}

}  // namespace ttap::cli
