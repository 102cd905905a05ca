// ttap's command line. The only translation unit that includes CLI11.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "commands.hpp"
#include "ttap/input.hpp"
#include "ttap/module_loader.hpp"
#include "ttap/tokenizer.hpp"
#include "ttap/version.hpp"

namespace {

using namespace ttap::cli;

constexpr const char* kExitCodesHelp = "Exit codes: 0 done, 2 bad input (unreadable trace, bad option), 3 internal error.";
constexpr const char* kAnalyzeExitCodesHelp =
    "Exit codes: 0 nothing flagged, 1 flagged (a finding, score or saving at the --fail-on/--fail-score/--fail-savings gate), "
    "2 bad input (a trace or folder that could not be read), 3 internal error.";
constexpr const char* kDiffExitCodesHelp =
    "Exit codes: 0 no regression, 1 a regression above --threshold, 2 bad input, 3 internal error.";

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
  app.add_flag("--strict", load_options().strict,
               "Refuse a trace over one bad event (negative duration, unpaired surrogate, id above 2^63-1, byte-order mark) "
               "instead of dropping or repairing it");
  // Global flags may also follow the command (`ttap summary --strict t.json`, `ttap analyze X -v`):
  // options a subcommand does not know fall through. Set before the subcommands are added so they inherit it.
  app.fallthrough();
  app.footer(
      "Exit codes: 0 clean, 1 flagged (analyze) or regressed (diff), 2 bad input (unreadable trace, bad option), "
      "3 internal error.");

  TreeOptions tree;
  auto* tree_cmd = app.add_subcommand("tree", "Print the event tree (CPU ops, launches, GPU kernels, Python frames)");
  tree_cmd->add_option("trace", tree.trace, "Trace file (.json, .json.gz, or - for stdin)")->required();
  tree_cmd->add_option("--step", tree.step, "Only the subtree of ProfilerStep#N");
  tree_cmd->add_option("--depth", tree.depth, "Levels printed below each root (-1 = all)")->check(CLI::Range(-1, 100000));
  tree_cmd->add_option("--match", tree.match, "Only subtrees whose root name matches this regex, with their ancestors");
  tree_cmd->add_flag("--no-gpu", tree.no_gpu, "Leave GPU kernels and copies out");
  tree_cmd->add_flag("--modules", tree.modules, "GPU time rolled up by nn.Module hierarchy instead of the event tree");
  tree_cmd->add_option("--format", tree.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  tree_cmd->add_option("-o,--output", tree.output, "Write to this file instead of stdout");

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
  features_cmd->add_flag("--scores", features.scores, "Also write the detector's window scores (window_score.npy)");
  features_cmd->add_option("--device", features.device, "With --scores: auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));

  TokenizerOptions tokenizer;
  auto* tokenizer_cmd = app.add_subcommand("tokenizer", "Train the event-name tokenizer (sentencepiece) on traces");
  tokenizer_cmd->add_option("inputs", tokenizer.inputs, "Trace files or folders (searched recursively)")->required();
  tokenizer_cmd->add_option("-o,--output", tokenizer.output, "Model prefix (writes PREFIX.model, PREFIX.vocab)")->required();
  tokenizer_cmd->add_option("--vocab", tokenizer.vocab, "Vocabulary size")->check(CLI::Range(64, 100000));

  EvalOptions eval;
  auto* eval_cmd = app.add_subcommand("eval", "Score a labeled dataset (docs/DATASET.md) and report the detector's metrics");
  eval_cmd->add_option("dataset", eval.dataset, "Dataset folder (manifest.jsonl + traces)")->required();
  eval_cmd->add_option("--scorer", eval.scorer, "model, rules, cluster or hybrid")->check(CLI::IsMember({"model", "rules", "cluster", "hybrid"}));
  eval_cmd->add_option("--format", eval.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  eval_cmd->add_option("-o,--output", eval.output, "Write to this file instead of stdout");
  eval_cmd->add_option("--windows", eval.windows, "Windows per trace")->check(CLI::Range(1, 100000));
  eval_cmd->add_option("--max-events", eval.max_events, "Events kept per window")->check(CLI::Range(1, 100000));
  eval_cmd->add_option("--top-k", eval.top_k, "Windows per trace that count as flagged (localization)")->check(CLI::Range(1, 100000));
  eval_cmd->add_option("--flag-spacing", eval.flag_spacing, "Flagged windows lie at least this many windows apart (0 or 1: the plain top k)")
      ->check(CLI::Range(0, 100000));
  eval_cmd->add_option("--model", eval.model, "Model file or folder (default: searched)");
  eval_cmd->add_option("--device", eval.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  eval_cmd->add_option("--threads", eval.threads, "libtorch threads (0 = its default)")->check(CLI::Range(0, 1024));
  eval_cmd->add_option("--llm-url", eval.llm_url, "Also classify flagged windows with this OpenAI-compatible endpoint");
  eval_cmd->add_option("--llm-model", eval.llm_model, "Model name for --llm-url");
  eval_cmd->add_option("--llm-cache", eval.llm_cache, "Response cache folder (reruns cost no requests)");
  eval_cmd->add_option("--llm-timeout", eval.llm_timeout, "Seconds per request")->check(CLI::Range(0.1, 3600.0));
  eval_cmd->add_option("--llm-table", eval.llm_table,
                       "With --llm-url: write one tab-separated row per window the LLM was asked about (labels, the rules' first id, the LLM's ids)");
  eval_cmd->add_option("--by", eval.by,
                       "Also report each split's figures per value of this manifest key (background, task, model, hardware, ...)");
  eval_cmd->add_option("--window-table", eval.window_table,
                       "Instead of the figures, write each window's label, model score and rule evidence (TSV) for scripts/train/fit_hybrid.py");

  AnalyzeOptions analyze;
  auto* analyze_cmd = app.add_subcommand("analyze", "Find performance anti-patterns in traces (exit 1 when flagged, for CI)");
  analyze_cmd->add_option("traces", analyze.traces, "Trace files or folders (searched recursively for .json and .json.gz)")->required();
  analyze_cmd->add_option("--format", analyze.format, "text, json, jsonl (one line per trace as each finishes), md, sarif, junit or html")
      ->check(CLI::IsMember({"text", "json", "jsonl", "md", "sarif", "junit", "html"}));
  analyze_cmd->add_option("--shard", analyze.shard, "K/N: only the K-th of N shards of the sorted traces (1-based; docs/fleet.md)");
  analyze_cmd->add_flag("--job", analyze.job, "The traces are the ranks of one job: add stragglers, imbalance and per-rank findings");
  analyze_cmd->add_option("-o,--output", analyze.output, "Write to this file instead of stdout");
  analyze_cmd->add_option("--config", analyze.config, "Config file (JSON); default ./ttap.json when present");
  analyze_cmd->add_option("-j,--jobs", analyze.jobs, "Traces analyzed at once (0 = one per core)")->check(CLI::Range(0, 1024));
  analyze_cmd->add_flag_callback("--no-progress", [&analyze] { analyze.progress = false; }, "No progress bar on the terminal");
  analyze_cmd->add_option("--fail-on", analyze.fail_on, "Exit 1 when a finding is at least this severe: none, warning (default) or error")
      ->check(CLI::IsMember({"none", "warning", "error"}));
  analyze_cmd->add_option("--fail-score", analyze.fail_score, "Exit 1 when a trace score is at least S (0..1)")->check(CLI::Range(0.0, 1.0));
  analyze_cmd->add_option("--fail-savings", analyze.fail_savings,
                          "Exit 1 when fixing a trace's findings would recover at least PCT percent of step time")
      ->check(CLI::Range(0.0, 100.0));
  analyze_cmd->add_option("--baseline", analyze.baseline,
                          "An earlier --format json report or a trace: fail only on findings that are new or worse than there");
  analyze_cmd->add_option("--regress", analyze.regress, "With --baseline: worse (better) means cost per step up (down) more than PCT percent (default 10)")
      ->check(CLI::Range(0.0, 1e6));
  analyze_cmd->add_flag("--details", analyze.details, "Text: also every flagged window's findings");
  analyze_cmd->add_option("--top-k", analyze.top_k, "Windows classified per trace (default 5)")->check(CLI::Range(0, 10000));
  analyze_cmd->add_option("--flag-spacing", analyze.flag_spacing,
                          fmt::format("Flagged windows lie at least this many windows apart (default {}; 0 or 1: the plain top k)", ttap::kFlagSpacing))
      ->check(CLI::Range(0, 10000));
  analyze_cmd->add_option("--windows", analyze.windows, "Windows per trace (default 100)")->check(CLI::Range(1, 100000));
  analyze_cmd->add_option("--scorer", analyze.scorer, "model (default), rules, cluster or hybrid")->check(CLI::IsMember({"model", "rules", "cluster", "hybrid"}));
  analyze_cmd->add_option("--model", analyze.model, "Detector model file or folder (default: search models/)");
  analyze_cmd->add_option("--device", analyze.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  analyze_cmd->add_option("--threads", analyze.threads, "libtorch intra-op threads (0 = its default)")->check(CLI::Range(0, 1024));
  analyze_cmd->add_option("--llm-url", analyze.llm_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (key: TTAP_LLM_API_KEY or OPENAI_API_KEY)");
  analyze_cmd->add_option("--llm-model", analyze.llm_model, "Model name sent to the endpoint");
  analyze_cmd->add_option("--llm-timeout", analyze.llm_timeout, "Seconds per request (default 60)")->check(CLI::Range(0.1, 3600.0));
  analyze_cmd->add_option("--llm-retries", analyze.llm_retries, "Retries on 429/5xx/transport errors (default 3)")->check(CLI::Range(0, 20));
  analyze_cmd->add_option("--llm-concurrency", analyze.llm_concurrency, "Requests in flight at once (default 4)")->check(CLI::Range(1, 256));
  analyze_cmd->add_option("--llm-cache", analyze.llm_cache, "Folder for cached responses");
  analyze_cmd->add_flag("--llm-redact", analyze.llm_redact, "Replace user module and file names before sending");
  analyze_cmd->add_option("--llm-rounds", analyze.llm_rounds, "Refinement rounds per window (default 3)")->check(CLI::Range(1, 10));
  analyze_cmd->add_option("--llm-budget", analyze.llm_budget, "Seconds of LLM time for the whole run, then the rules alone (default 600)")
      ->check(CLI::Range(0.1, 86400.0));
  analyze_cmd->add_option("--llm-breaker", analyze.llm_breaker, "Stop asking after this many consecutive transport failures (default 3)")
      ->check(CLI::Range(1, 1000));

  // Exit codes in every --help: the ones a script most needs to know.
  for (CLI::App* sub : app.get_subcommands({})) sub->footer(kExitCodesHelp);
  diff_cmd->footer(kDiffExitCodesHelp);
  analyze_cmd->footer(kAnalyzeExitCodesHelp);

  MergeOptions merge;
  auto* merge_cmd = app.add_subcommand("merge", "Merge analyze reports (json, jsonl shards) into one, with the view across the fleet");
  merge_cmd->add_option("reports", merge.reports, "Report files from ttap analyze --format json or jsonl (- for stdin)")->required();
  merge_cmd->add_option("--format", merge.format, "text, json, jsonl, md, sarif, junit or html")
      ->check(CLI::IsMember({"text", "json", "jsonl", "md", "sarif", "junit", "html"}));
  merge_cmd->add_option("-o,--output", merge.output, "Write to this file instead of stdout");
  merge_cmd->add_flag_callback("--no-fleet", [&merge] { merge.fleet = false; }, "Only the per-trace report, without the fleet view");

  // The first word that is not a flag names the command (the main flags take no values).
  // CLI11 reads --help before it looks at that word, so `ttap explain --help` printed the main
  // help and exited 0: an unknown command is bad input, with or without --help.
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.starts_with('-')) continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      fmt::print(stderr, "ttap: error: unknown command \"{}\" (commands: {})\n", word, fmt::join(names, ", "));
      return kBadInput;
    }
    break;
  }
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
  if (analyze_cmd->parsed()) {
    if (analyze.shard && !parse_shard(*analyze.shard)) {
      fmt::print(stderr, "ttap: error: --shard: expected K/N with 1 <= K <= N, such as 2/8, got \"{}\"\n", *analyze.shard);
      return kBadInput;
    }
    return run_analyze(analyze);
  }
  if (merge_cmd->parsed()) return run_merge(merge);
  if (features_cmd->parsed()) return run_features(features);
  if (tokenizer_cmd->parsed()) return run_tokenizer(tokenizer);
  if (eval_cmd->parsed()) return run_eval(eval);
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
    const int code = dispatch(argc, argv);
    if (ttap::any_module_opened()) {
      // libtorch's static destructors deregister each of its thousands of operators, about
      // 40 ms of CPU at every exit that loaded it (scripts/bench/module_load_bench.sh). The command is done (its reports written
      // and closed, its threads joined): flush what is buffered and leave without them.
      spdlog::default_logger()->flush();
      std::fflush(nullptr);
      std::_Exit(code);
    }
    return code;
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
