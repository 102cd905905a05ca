// Subcommands, each a plain function over its options. CLI11 stays in main.cpp alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/load.hpp"
#include "ttap/report.hpp"
#include "ttap/scoring.hpp"
#include "ttap/trace.hpp"
#include "ttap/tree.hpp"

namespace ttap::cli {

// Exit codes, documented in the README.
enum ExitCode : int { kOk = 0, kFlagged = 1, kBadInput = 2, kInternal = 3 };

struct TreeOptions {
  std::string trace;
  std::optional<int64_t> step;
  int depth = -1;
  std::string match;
  bool no_gpu = false;
  bool modules = false;
  std::string format = "text";  // text or json
  std::string output;           // "" = stdout
};

struct SummaryOptions {
  std::string trace;
  std::string format = "text";
  std::string output;
  std::string table;  // only this table
  size_t top = 20;
  bool roofline = false;
};

struct FeaturesOptions {
  std::vector<std::string> inputs;  // trace files, or one dataset folder (manifest.jsonl)
  std::string output;               // folder
  int windows = 100;
  int max_events = 128;
  std::string model;                // model folder (for the tokenizer)
  bool scores = false;              // also write the detector's window scores
  std::string device = "auto";
};

struct TokenizerOptions {
  std::vector<std::string> inputs;  // trace files or folders
  std::string output;               // model prefix: writes PREFIX.model and PREFIX.vocab
  int vocab = 2000;
};

struct EvalOptions {
  std::string dataset;
  std::string scorer = "model";
  std::string format = "text";
  std::string output;
  int windows = 100;
  int max_events = 128;
  int top_k = 5;
  int flag_spacing = kFlagSpacing;  // flagged windows at least this many apart (flag_windows)
  std::string model;
  std::string device = "auto";
  int threads = 0;
  std::string llm_url, llm_model, llm_cache;  // LLM classification of flagged positive windows
  double llm_timeout = 60;
  std::string llm_table;     // one row per window the LLM was asked about: labels, the rules' and the LLM's ids
  std::string window_table;  // write the per-window table for fitting the hybrid scorer, not the figures
  std::string by;            // also report each split's figures per value of this manifest key (e.g. background)
};

// `ttap analyze`. Unset optionals fall back to the config file, then to the defaults.
struct AnalyzeOptions {
  std::vector<std::string> traces;  // files or folders (recursive over .json/.json.gz)
  std::string format = "text";      // text|json|jsonl|md|sarif|junit|html
  std::string output;
  std::string config;               // --config FILE; "" = ./ttap.json when present
  std::optional<std::string> shard; // --shard K/N: only the K-th of N shards of the sorted traces
  bool job = false;                 // --job: the traces are the ranks of one job
  int jobs = 0;                     // traces analyzed at once; 0 = one per core
  bool progress = true;             // a progress bar on a terminal (stderr)
  std::optional<std::string> fail_on;
  std::optional<double> fail_score;
  std::optional<double> fail_savings;  // percent of step time
  std::string baseline;             // --baseline: a json report or a trace, "" = none
  double regress = 10;              // --regress PCT
  bool details = false;             // --details (text)
  std::optional<int> top_k;
  std::optional<int> flag_spacing;
  std::optional<int> windows;
  std::optional<std::string> scorer;
  std::optional<std::string> model;
  std::optional<std::string> device;
  int threads = 0;
  std::optional<std::string> llm_url;
  std::optional<std::string> llm_model;
  std::optional<double> llm_timeout;
  std::optional<int> llm_retries;
  std::optional<int> llm_concurrency;
  std::optional<std::string> llm_cache;
  bool llm_redact = false;
  std::optional<int> llm_rounds;
  std::optional<double> llm_budget;     // seconds for the whole run
  std::optional<int> llm_breaker;       // consecutive transport failures that stop asking
};

// `ttap merge`: analyze reports (json or jsonl) rendered as one.
struct MergeOptions {
  std::vector<std::string> reports;  // files, "-" for stdin
  std::string format = "text";       // text|json|jsonl|md|sarif|junit|html
  std::string output;
  bool fleet = true;                 // the fleet view after the per-trace verdicts
};

struct DiffOptions {
  std::string base;
  std::string next;
  double threshold_pct = 7.0;
  std::string format = "text";
  std::string output;
  size_t top = 15;
};

struct CollectivesOptions {
  std::vector<std::string> traces;  // files or folders
  std::string format = "text";
  std::string output;
};

struct ReplayOptions {
  std::string trace;
  std::string op;
  std::optional<size_t> index;
  std::string output;
};

int run_tree(const TreeOptions& o);
int run_replay(const ReplayOptions& o);
int run_collectives(const CollectivesOptions& o);
int run_diff(const DiffOptions& o);
int run_summary(const SummaryOptions& o);
int run_analyze(const AnalyzeOptions& o);
int run_features(const FeaturesOptions& o);
int run_tokenizer(const TokenizerOptions& o);
int run_eval(const EvalOptions& o);
int run_merge(const MergeOptions& o);

// Shared plumbing.
struct Loaded {
  Trace trace;
  EventTree tree;
};
// Loads and builds the tree, logging sizes and timings at debug level. Throws InputError.
Loaded load_and_build(const std::string& path);
// How every command loads its traces (`--strict` sets .strict).
LoadOptions& load_options();
// Files as given; folders searched recursively for .json / .json.gz, in name order.
// Throws InputError for a folder without traces.
std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& inputs);
// Writes `text` to `path` ("" or "-" = stdout). Throws InputError when it cannot.
void write_output(const std::string& path, const std::string& text);
// A CI job must notice a file it could not judge: ttap's own failure (3) outranks bad
// input (2), which outranks a flagged trace (1).
int report_exit_code(const Report& report);
// Colors only for a person at a terminal: output to stdout that is a tty, NO_COLOR unset
// (no-color.org), not a dumb terminal.
bool want_color(const std::string& output);
// The file's bytes hashed (64-bit, 16 hex digits): with the path, what makes two reports of
// "the same trace" for `ttap merge`. Not cryptographic. "" for stdin or an unreadable file.
std::string content_hash(const std::string& path);

// --shard K/N (1-based): which of N shards this process analyzes.
struct Shard {
  size_t index = 1;  // K
  size_t count = 1;  // N
};
// "3/8" -> {3, 8}; nullopt unless 1 <= K <= N.
std::optional<Shard> parse_shard(std::string_view text);
// The traces of shard K: the inputs sorted (byte order, the same on every machine), then
// every N-th from the K-th on, so the N shards cover each trace exactly once and large and
// small traces spread evenly when names group them.
std::vector<std::string> shard_of(std::vector<std::string> traces, const Shard& shard);

// The analyze Report in one of the analyze formats (all but jsonl, which streams).
std::string render_analyze_report(const Report& report, const std::string& format, bool color, bool details = false);
// One JSONL line: the JSON report of one trace under the run's settings and warnings.
std::string render_analyze_jsonl_line(const Report& run, const TraceReport& trace);

}  // namespace ttap::cli
