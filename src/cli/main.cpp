// ttap's command line. The only translation unit that includes CLI11.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "commands.hpp"
#include "ttap/input.hpp"
#include "ttap/tokenizer.hpp"
#include "ttap/version.hpp"

namespace {

using namespace ttap::cli;

void setup_logging(int verbose, bool quiet) {
  auto logger = spdlog::stderr_color_mt("ttap");
  logger->set_pattern("ttap: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(quiet ? spdlog::level::err : verbose >= 2 ? spdlog::level::trace
                                               : verbose == 1 ? spdlog::level::debug
                                                              : spdlog::level::info);
}

int dispatch(int argc, char** argv) {
  CLI::App app{"ttap: find performance anti-patterns in PyTorch profiler traces"};
  app.require_subcommand(0, 1);
  int verbose = 0;
  bool quiet = false;
  bool show_version = false;
  app.add_flag("-v,--verbose", verbose, "More log output (repeat for trace level)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  app.add_flag("--version", show_version, "Print the version of ttap and its components");

  TreeOptions tree;
  auto* tree_cmd = app.add_subcommand("tree", "Print the event tree (CPU ops, launches, GPU kernels, Python frames)");
  tree_cmd->add_option("trace", tree.trace, "Trace file (.json, .json.gz, or - for stdin)")->required();
  tree_cmd->add_option("--step", tree.step, "Only the subtree of ProfilerStep#N");
  tree_cmd->add_option("--depth", tree.depth, "Levels printed below each root (-1 = all)")->check(CLI::Range(-1, 100000));
  tree_cmd->add_option("--match", tree.match, "Only subtrees whose root name matches this regex, with their ancestors");
  tree_cmd->add_flag("--no-gpu", tree.no_gpu, "Leave GPU kernels and copies out");
  tree_cmd->add_flag("--modules", tree.modules, "GPU time rolled up by nn.Module hierarchy instead of the event tree");

  SummaryOptions summary;
  auto* summary_cmd = app.add_subcommand("summary", "Breakdowns: GPU timeline, op categories, ops, shapes, kernels, launches, steps");
  summary_cmd->add_option("trace", summary.trace, "Trace file (.json, .json.gz, or - for stdin)")->required();
  summary_cmd->add_option("--format", summary.format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  summary_cmd->add_option("-o,--output", summary.output, "Write to this file instead of stdout");
  summary_cmd->add_option("--table", summary.table, "Only this table (e.g. gpu_timeline, kernel_summary)");
  summary_cmd->add_option("--top", summary.top, "Rows per long table in text form (0 = all)");
  summary_cmd->add_flag("--roofline", summary.roofline, "Add FLOPs, bytes and achieved throughput against the device's peaks");

  DiffOptions diff;
  std::string threshold = "7%";
  auto* diff_cmd = app.add_subcommand("diff", "Compare two traces of one workload; exit 1 on a regression above the threshold");
  diff_cmd->add_option("base", diff.base, "The baseline trace")->required();
  diff_cmd->add_option("new", diff.next, "The trace to judge")->required();
  diff_cmd->add_option("--threshold", threshold, "Regression threshold on step time, GPU busy time and peak memory (default 7%)");
  diff_cmd->add_option("--format", diff.format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  diff_cmd->add_option("-o,--output", diff.output, "Write to this file instead of stdout");
  diff_cmd->add_option("--top", diff.top, "Rows per long table in text form (0 = all)");

  CollectivesOptions collectives;
  auto* coll_cmd = app.add_subcommand("collectives", "Collectives across the per-rank traces of one job: latency, bandwidth, skew, stragglers");
  coll_cmd->add_option("traces", collectives.traces, "One trace per rank, or folders holding them")->required();
  coll_cmd->add_option("--format", collectives.format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  coll_cmd->add_option("-o,--output", collectives.output, "Write to this file instead of stdout");

  ReplayOptions replay;
  auto* replay_cmd = app.add_subcommand("replay", "Write a standalone PyTorch script that recreates one op's inputs and times it");
  replay_cmd->add_option("trace", replay.trace, "Trace file")->required();
  replay_cmd->add_option("--op", replay.op, "Op name, e.g. aten::addmm")->required();
  replay_cmd->add_option("--index", replay.index, "Which instance (0-based, among those with shapes); default: the one with the most GPU time");
  replay_cmd->add_option("-o,--output", replay.output, "Write the script here instead of stdout");

  FeaturesOptions features;
  auto* features_cmd = app.add_subcommand("features", "Write the detector's window features (.npy) for traces or a labeled dataset");
  features_cmd->add_option("inputs", features.inputs, "Trace files, or one dataset folder (with manifest.jsonl)")->required();
  features_cmd->add_option("-o,--output", features.output, "Output folder (one subfolder per trace)")->required();
  features_cmd->add_option("--windows", features.windows, "Windows per trace")->check(CLI::Range(1, 100000));
  features_cmd->add_option("--max-events", features.max_events, "Events kept per window")->check(CLI::Range(1, 100000));
  features_cmd->add_option("--model", features.model, "Model folder holding ttap_names.model (default: searched)");

  TokenizerOptions tokenizer;
  auto* tokenizer_cmd = app.add_subcommand("tokenizer", "Train the event-name tokenizer (sentencepiece) on traces");
  tokenizer_cmd->add_option("inputs", tokenizer.inputs, "Trace files or folders (searched recursively)")->required();
  tokenizer_cmd->add_option("-o,--output", tokenizer.output, "Model prefix (writes PREFIX.model, PREFIX.vocab)")->required();
  tokenizer_cmd->add_option("--vocab", tokenizer.vocab, "Vocabulary size")->check(CLI::Range(64, 100000));

  AnalyzeOptions analyze;
  auto* analyze_cmd = app.add_subcommand("analyze", "Analyze traces for performance problems");
  analyze_cmd->add_option("traces", analyze.traces, "Trace files")->required();
  analyze_cmd->add_option("-o,--output", analyze.output, "Write to this file instead of stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ttap: error: {}\nRun with --help for usage.\n", e.what());
    return kBadInput;
  }
  setup_logging(verbose, quiet);
  if (show_version) {
    fmt::print("{}", ttap::version_report());
    return kOk;
  }
  if (tree_cmd->parsed()) return run_tree(tree);
  if (summary_cmd->parsed()) return run_summary(summary);
  if (coll_cmd->parsed()) return run_collectives(collectives);
  if (replay_cmd->parsed()) return run_replay(replay);
  if (diff_cmd->parsed()) {
    std::string t = threshold;
    if (!t.empty() && t.back() == '%') t.pop_back();
    char* end = nullptr;
    diff.threshold_pct = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(diff.threshold_pct >= 0) || diff.threshold_pct > 1e6) {
      fmt::print(stderr, "ttap: error: --threshold: expected a percentage such as 7% or 2.5, got \"{}\"\n", threshold);
      return kBadInput;
    }
    return run_diff(diff);
  }
  if (analyze_cmd->parsed()) return run_analyze(analyze);
  if (features_cmd->parsed()) return run_features(features);
  if (tokenizer_cmd->parsed()) return run_tokenizer(tokenizer);
  fmt::print(stderr, "{}", app.help());
  return kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(TTAP_REQUIRES_AVX2)
  // The JSON parser was built for AVX2; say so plainly instead of dying on SIGILL.
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi") || !__builtin_cpu_supports("pclmul")) {
    fmt::print(stderr, "ttap: error: this build needs an x86-64 CPU with AVX2 (Haswell or newer); rebuild with -DTTAP_PORTABLE=ON\n");
    return kInternal;
  }
#endif
  try {
    return dispatch(argc, argv);
  } catch (const ttap::InputError& e) {
    fmt::print(stderr, "ttap: error: {}\n", e.what());
    return kBadInput;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "ttap: error: out of memory\n");
    return kInternal;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ttap: internal error: {}\n", e.what());
    return kInternal;
  }
}
