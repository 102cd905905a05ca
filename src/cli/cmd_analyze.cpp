// `ttap analyze TRACE|DIR...`: the main command. Expands folders, merges the config file
// with the flags, runs the classify pipeline on each trace (several at once with -j),
// renders one report and turns it into an exit code a CI job can act on.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "../classify/classify.hpp"
#include "../config/config.hpp"
#include "commands.hpp"
#include "analyze_job.hpp"
#include "jsonl_writer.hpp"
#include "ttap/input.hpp"
#include "ttap/report.hpp"
#include "ttap/scoring.hpp"
#include "ttap/version.hpp"

namespace ttap::cli {

namespace {

namespace fs = std::filesystem;

bool is_trace_name(const std::string& name) { return name.ends_with(".json") || name.ends_with(".json.gz"); }

// A file, "-", or a folder searched recursively (sorted, so reports are stable). A path
// that does not exist, or a folder without traces, becomes an error entry of its own: the
// batch goes on and the exit code says something was wrong.
struct Inputs {
  std::vector<std::string> files;
  std::vector<TraceReport> errors;
  std::vector<std::string> warnings;
};

Inputs collect_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  auto error = [&](const std::string& path, const std::string& what) {
    TraceReport r;
    r.path = path;
    r.verdict = Verdict::error;
    r.gate_failed = true;
    r.error = what;
    in.errors.push_back(std::move(r));
  };
  bool stdin_taken = false;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (p == "-") {
      // stdin can be read once: a second "-" would be judged as an empty trace.
      if (stdin_taken) {
        if (in.warnings.empty()) in.warnings.push_back("\"-\" (stdin) given more than once: it is read once");
        continue;
      }
      stdin_taken = true;
    }
    if (p == "-" || fs::is_regular_file(p, ec)) {
      in.files.push_back(p);
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      error(p, fs::exists(p, ec) ? "not a file or folder" : "no such file or folder");
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (it->is_regular_file(ec2) && is_trace_name(it->path().filename().string())) found.push_back(it->path().string());
    }
    if (ec) error(p, fmt::format("cannot read the folder: {}", ec.message()));
    if (found.empty() && !ec) error(p, "no .json or .json.gz traces in this folder");
    std::sort(found.begin(), found.end());
    in.files.insert(in.files.end(), found.begin(), found.end());
  }
  return in;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Flags win over the config file, which wins over the defaults.
AnalyzeSettings merge_settings(const AnalyzeOptions& o, const std::optional<AnalyzeConfig>& c, std::string& scorer_name) {
  AnalyzeSettings s;
  auto pick = [](const auto& flag, const auto& file, auto fallback) {
    if (flag) return static_cast<decltype(fallback)>(*flag);
    if (file) return static_cast<decltype(fallback)>(*file);
    return fallback;
  };
  const std::optional<AnalyzeConfig> none;
  const AnalyzeConfig empty;
  const AnalyzeConfig& cfg = c ? *c : empty;
  s.windows = pick(o.windows, cfg.windows, 100);
  s.top_k = pick(o.top_k, cfg.top_k, 5);
  s.flag_spacing = pick(o.flag_spacing, cfg.flag_spacing, kFlagSpacing);
  scorer_name = pick(o.scorer, cfg.scorer, std::string("model"));
  s.score.scorer = parse_scorer(scorer_name).value_or(Scorer::model);  // the CLI and the config checked the name
  s.score.model = pick(o.model, cfg.model, std::string());
  s.score.device = pick(o.device, cfg.device, std::string("auto"));
  s.score.threads = o.threads;
  s.fail_on = o.fail_on ? *parse_fail_on(*o.fail_on) : cfg.fail_on.value_or(FailOn::warning);
  s.fail_score = o.fail_score ? o.fail_score : cfg.fail_score;
  s.fail_savings = o.fail_savings;
  s.ignores = cfg.ignores;
  LlmConfig& l = s.llm;
  l.url = pick(o.llm_url, cfg.llm.url, std::string());
  l.model = pick(o.llm_model, cfg.llm.model, std::string());
  l.timeout_s = pick(o.llm_timeout, cfg.llm.timeout, 60.0);
  l.retries = pick(o.llm_retries, cfg.llm.retries, 3);
  l.max_concurrent = pick(o.llm_concurrency, cfg.llm.concurrency, 4);
  l.cache_dir = pick(o.llm_cache, cfg.llm.cache, std::string());
  l.redact = o.llm_redact || cfg.llm.redact.value_or(false);
  l.max_rounds = pick(o.llm_rounds, cfg.llm.rounds, 3);
  l.budget_s = o.llm_budget.value_or(600.0);
  l.breaker_failures = o.llm_breaker.value_or(3);
  // One budget and breaker for the run: every trace's classifier shares it.
  if (l.enabled()) l.run_budget = std::make_shared<LlmRunBudget>(l.budget_s, l.breaker_failures);
  // The key comes from the environment only, so it never lands in a file or a report.
  l.api_key = env("TTAP_LLM_API_KEY");
  if (l.api_key.empty()) l.api_key = env("OPENAI_API_KEY");
  return s;
}

std::optional<AnalyzeConfig> read_config(const std::string& explicit_path) {
  if (!explicit_path.empty()) return load_analyze_config(explicit_path);
  std::error_code ec;
  if (fs::is_regular_file("ttap.json", ec)) return load_analyze_config("ttap.json");
  return std::nullopt;
}

// `also` sees the loaded trace before it is dropped (the job view takes its collectives).
TraceReport analyze_one(const std::string& path, const AnalyzeSettings& settings, const std::function<void(const Loaded&)>& also) {
  const auto t0 = std::chrono::steady_clock::now();
  // The file's hash (for ttap merge) reads it once more: on its own thread, it overlaps the
  // single-threaded analysis instead of adding to it.
  std::future<std::string> hash = std::async(std::launch::async, content_hash, path);
  TraceReport r;
  try {
    Loaded l = load_and_build(path);
    const auto t1 = std::chrono::steady_clock::now();
    r = analyze_trace(l.trace, l.tree, settings);
    spdlog::debug("{}: analyzed in {:.3f} s after the tree (windows, scores, rules, findings)", path,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    if (also) also(l);
  } catch (const InputError& e) {
    r = {};
    r.verdict = Verdict::error;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r = {};
    r.verdict = Verdict::error;
    r.internal_error = true;
    r.error = "out of memory";
  } catch (const std::exception& e) {
    r = {};
    r.verdict = Verdict::error;
    r.internal_error = true;
    r.error = fmt::format("internal error: {}", e.what());
  }
  r.path = path;
  r.content_hash = hash.get();
  if (r.verdict == Verdict::error) {
    r.gate_failed = true;
    // The loader's message starts with the path; the report names the path already.
    if (r.error.starts_with(path + ": ")) r.error.erase(0, path.size() + 2);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// "[=======>      ] 12/40 traces, 1 failed" on stderr, redrawn in place.
class ProgressBar {
 public:
  ProgressBar(size_t total, bool active) : total_(total), active_(active) {}
  ~ProgressBar() {
    if (active_ && drawn_) std::fputs("\r\033[K", stderr);
  }
  void done(bool failed) {
    std::lock_guard lock(mu_);
    ++done_;
    failed_ += failed;
    if (!active_) return;
    constexpr size_t kWidth = 30;
    const size_t filled = total_ ? kWidth * done_ / total_ : kWidth;
    const std::string bar = std::string(filled, '=') + (filled < kWidth ? ">" : "") + std::string(kWidth - std::min(kWidth, filled + 1), ' ');
    std::fputs(fmt::format("\r\033[Kttap: [{}] {}/{} traces{}", bar, done_, total_, failed_ ? fmt::format(", {} failed", failed_) : "")
                   .c_str(),
               stderr);
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::mutex mu_;
  size_t total_ = 0, done_ = 0, failed_ = 0;
  bool active_ = false, drawn_ = false;
};

// --baseline BASE: an earlier `--format json` (or jsonl) report, read back, or a trace,
// analyzed with the same settings. A baseline that cannot be read is bad input (exit 2)
// before any trace is analyzed: a gate must not silently run without the baseline it was
// given.
// A report made with other window settings flagged other windows, so findings may come and
// go between it and this run for that reason alone (a report from before flag_spacing has
// 0 there: the plain top k): said once, in the run's warnings.
std::vector<TraceReport> load_baseline(const std::string& path, const AnalyzeSettings& settings, const std::string& scorer,
                                       std::vector<std::string>& warnings) {
  const RawInput raw = read_input(path, default_max_input_bytes());
  const std::string_view bytes(raw.json.data(), raw.json.size());
  if (looks_like_analyze_report(bytes)) {
    std::vector<ReportSettings> made_with;
    std::vector<TraceReport> base = read_baseline_report(path, bytes, &made_with);
    for (const ReportSettings& m : made_with)
      if (m.windows != settings.windows || m.top_k != settings.top_k || m.flag_spacing != settings.flag_spacing ||
          m.scorer != scorer) {
        warnings.push_back(fmt::format(
            "baseline {} was made with {} windows, top-k {}, flag spacing {}, scorer {}; this run uses {}, {}, {}, {}: "
            "other windows are flagged, so findings may differ for that reason alone",
            path, m.windows, m.top_k, m.flag_spacing, m.scorer, settings.windows, settings.top_k, settings.flag_spacing,
            scorer));
        break;
      }
    return base;
  }
  TraceReport base = analyze_one(path, settings, {});
  if (base.verdict == Verdict::error) throw InputError(path, "baseline: " + base.error);
  return {std::move(base)};
}

// Compares a finished trace with its baseline trace and gates it again on what is new or
// worse; a trace the baseline has no match for is gated as without one, and says so.
void gate_against_baseline(TraceReport& t, const std::vector<TraceReport>& baseline, const AnalyzeOptions& o,
                           const AnalyzeSettings& settings) {
  if (o.baseline.empty() || t.verdict == Verdict::error) return;
  const TraceReport* base = baseline_for(baseline, t.path);
  if (!base) {
    t.warnings.push_back(
        fmt::format("no trace in the baseline {} matches this one (by path or file name): gated without a baseline", o.baseline));
    return;
  }
  compare_with_baseline(t, *base, o.regress);
  apply_gate(t, settings.fail_on, settings.fail_score, settings.fail_savings);
}

}  // namespace

std::string render_analyze_report(const Report& report, const std::string& format, bool color, bool details) {
  if (format == "json") return render_analyze_json(report);
  if (format == "md") return render_analyze_markdown(report);
  if (format == "sarif") return render_analyze_sarif(report);
  if (format == "junit") return render_analyze_junit(report);
  if (format == "html") return render_analyze_html(report);
  return render_analyze_text(report, TextStyle{color, details});
}

int run_analyze(const AnalyzeOptions& o) {
  if (o.job && !job_format_supported(o.format)) {
    spdlog::error("--job renders as text, md or json, not {}", o.format);
    return kBadInput;
  }
  const std::optional<AnalyzeConfig> config = read_config(o.config);
  std::string scorer_name;
  AnalyzeSettings settings = merge_settings(o, config, scorer_name);
  settings.timeline = o.format == "html";

  Inputs inputs = collect_inputs(o.traces);
  if (o.shard) {
    const Shard shard = *parse_shard(*o.shard);  // main.cpp checked it
    inputs.files = shard_of(std::move(inputs.files), shard);
    // A path that is not there is reported once, by the first shard, not by all N.
    if (shard.index != 1) inputs.errors.clear();
  }
  // libtorch and the model load while the first trace is read (joined on return).
  const ModelPrefetch prefetch = inputs.files.empty() && o.baseline.empty() ? ModelPrefetch() : ModelPrefetch(settings.score);
  Report report;
  report.warnings = inputs.warnings;
  report.tool_version = std::string(version());
  report.settings = {settings.windows, settings.top_k, settings.flag_spacing, scorer_name, std::string(fail_on_name(settings.fail_on)), settings.fail_score,
                     settings.fail_savings, o.baseline, o.regress, settings.llm.enabled(), config ? config->path : std::string()};
  const std::vector<TraceReport> baseline = o.baseline.empty() ? std::vector<TraceReport>{} : load_baseline(o.baseline, settings, scorer_name, report.warnings);
  if (settings.llm.enabled() && settings.llm.api_key.empty())
    report.warnings.push_back("no API key in TTAP_LLM_API_KEY or OPENAI_API_KEY: LLM requests are sent without one");

  // jsonl: each trace's line goes out as soon as it is done, whole and flushed, so a run
  // killed halfway keeps every trace it finished.
  const bool streaming = o.format == "jsonl";
  std::unique_ptr<JsonlWriter> lines;
  if (streaming) {
    lines = std::make_unique<JsonlWriter>(o.output);
    for (const TraceReport& e : inputs.errors) lines->write(render_analyze_jsonl_line(report, e));
  }
  JobRanks job(o.job ? inputs.files.size() : 0);

  std::vector<TraceReport> results(inputs.files.size());
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = std::clamp<size_t>(o.jobs > 0 ? static_cast<size_t>(o.jobs) : cores, 1, std::max<size_t>(1, inputs.files.size()));
  ProgressBar progress(inputs.files.size(), o.progress && inputs.files.size() > 1 && ::isatty(STDERR_FILENO) &&
                                                spdlog::get_level() <= spdlog::level::info);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < inputs.files.size();) {
      results[i] = analyze_one(inputs.files[i], settings, o.job ? job.collector(i) : std::function<void(const Loaded&)>());
      gate_against_baseline(results[i], baseline, o, settings);
      if (lines) lines->write(render_analyze_jsonl_line(report, results[i]));
      progress.done(results[i].verdict == Verdict::error);
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  std::optional<JobSummary> job_summary;
  if (o.job) job_summary = job.summarize(inputs.files, results);
  if (settings.llm.run_budget)
    if (std::string w = settings.llm.run_budget->warning(); !w.empty()) report.warnings.push_back(std::move(w));
  report.traces = std::move(inputs.errors);
  report.traces.insert(report.traces.end(), std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
  if (!streaming) {
    std::string out = render_analyze_report(report, o.format, want_color(o.output), o.details);
    if (job_summary) out = with_job_section(std::move(out), *job_summary, o.format);
    write_output(o.output, out);
  }

  int code = report_exit_code(report);
  for (const TraceReport& t : report.traces)
    if (t.verdict == Verdict::error) spdlog::error("{}: {}", t.path, t.error);
  if (lines && !lines->error().empty()) {
    spdlog::error("{}", lines->error());
    code = std::max<int>(code, kBadInput);
  }
  return code;
}

}  // namespace ttap::cli
