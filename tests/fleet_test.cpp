// Past one process, on real traces: `--shard K/N` covers each trace once and the shards
// merged equal one process; `--format jsonl` writes a whole line per trace as it finishes
// (a killed run keeps them); `ttap merge` reads JSON and JSONL back exactly, counts
// duplicates once and says what it could not read; `--job` on the 8 DLRM ranks names the
// rank the others wait for, as `ttap collectives` measures it. The rule scorer throughout,
// so results do not depend on a trained model.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "suite_support.hpp"
#include "ttap/job.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_ttap;
using ttap::suite::scratch;
using ttap::suite::split_lines;
using ttap::suite::write_file;
namespace fs = std::filesystem;

const std::string kDlrm = data_path("param_dlrm_v100_8ranks");

// Ten traces of tests/data (HTA, Kineto, TraceLens; one CPU-only, DDP, AMD) and the 8 DLRM
// ranks: 18 traces, small enough for the suite's 2 cores. The Slurm test runs them all.
std::vector<std::string> fleet_inputs() {
  std::vector<std::string> in;
  for (const char* name : {"hta_alexnet_a100_small.json.gz", "hta_cpu_only.json.gz", "hta_ddp_a100_nccl.json.gz", "hta_ddp_cnn_v100_nsres.json.gz",
                           "hta_event_sync_small.json.gz", "hta_mi250_toy.json.gz", "kineto_resnet50_v100_nw0.json.gz",
                           "kineto_resnet50_v100_nw4.json.gz", "tracelens_qwen05b_h100.json.gz", "tracelens_vit_nsfw_h100.json.gz"})
    in.push_back(data_path(name));
  in.push_back(kDlrm);
  return in;
}

ProcResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), "--no-progress");
  return ttap::suite::analyze(args);
}

std::string scratch_path(const std::string& name) { return scratch() + "/" + name; }

// The traces of a JSON report by path, each without its wall time (the one field that may
// differ between runs), as canonical JSON text.
std::map<std::string, std::string> traces_by_path(const std::string& json) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  EXPECT_EQ(p.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 300);
  std::map<std::string, std::string> out;
  if (doc.is_null()) return out;
  for (simdjson::dom::object t : doc["traces"].get_array()) {
    std::string text = "{";
    for (auto [key, value] : t)
      if (key != "seconds") text += std::string(key) + ":" + simdjson::minify(value) + ",";
    out[std::string(std::string_view(t["path"]))] = text + "}";
  }
  return out;
}

TEST(Shard, CoversEachTraceOnceAndMergesToTheOneProcessReport) {
  const std::vector<std::string> inputs = fleet_inputs();
  std::vector<std::string> args = inputs;
  args.insert(args.end(), {"--format", "json", "-o", scratch_path("one.json")});
  const ProcResult one = analyze(args);
  ASSERT_EQ(one.exit_code, 1) << "some of these traces are flagged\n" << one.err;
  const auto expected = traces_by_path(read_file(scratch_path("one.json")));
  ASSERT_EQ(expected.size(), 18u);

  std::vector<std::string> merge_args{"merge", "--format", "json"};
  std::multiset<std::string> covered;
  for (int k = 1; k <= 4; ++k) {
    const std::string out = scratch_path("shard-" + std::to_string(k) + ".jsonl");
    args = inputs;
    args.insert(args.end(), {"--shard", std::to_string(k) + "/4", "--format", "jsonl", "-o", out});
    const ProcResult r = analyze(args);
    EXPECT_LE(r.exit_code, 1) << r.err;
    const auto lines = split_lines(read_file(out));
    EXPECT_GE(lines.size(), 4u) << "18 traces over 4 shards, round robin: 4 or 5 each";
    EXPECT_LE(lines.size(), 5u);
    for (const auto& line : lines)
      for (const auto& [path, text] : traces_by_path(line)) covered.insert(path);
    merge_args.push_back(out);
  }
  std::multiset<std::string> want;
  for (const auto& [path, text] : expected) want.insert(path);
  EXPECT_EQ(covered, want) << "every trace in exactly one shard";

  const ProcResult merged = run_ttap(merge_args);
  EXPECT_EQ(merged.exit_code, one.exit_code) << merged.err;
  EXPECT_EQ(traces_by_path(merged.out), expected) << "same verdicts, scores, findings per trace";

  // The split is the sorted list's: another order of the same inputs gives the same shard.
  std::vector<std::string> reversed(inputs.rbegin(), inputs.rend());
  reversed.insert(reversed.end(), {"--shard", "2/4", "--format", "json"});
  const ProcResult again = analyze(reversed);
  std::set<std::string> shard2, again2;
  for (const auto& line : split_lines(read_file(scratch_path("shard-2.jsonl"))))
    for (const auto& [path, text] : traces_by_path(line)) shard2.insert(path);
  for (const auto& [path, text] : traces_by_path(again.out)) again2.insert(path);
  EXPECT_EQ(shard2, again2);
}

TEST(Shard, BadShardIsAClearError) {
  for (const std::string bad : {"0/4", "5/4", "1/0", "2", "a/4", "1/4x", "-1/4"}) {
    const ProcResult r = analyze({data_path("hta_cpu_only.json.gz"), "--shard", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--shard: expected K/N"), std::string::npos) << r.err;
  }
  // More shards than traces: the empty shards are empty reports, not errors.
  const ProcResult r = analyze({data_path("hta_cpu_only.json.gz"), "--shard", "3/5", "--format", "jsonl"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Jsonl, OneWholeReportPerTraceAndErrorsAsLines) {
  const std::string corrupt = write_file("corrupt.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": ");
  const ProcResult r = analyze({data_path("hta_cpu_only.json.gz"), corrupt, scratch_path("missing.json.gz"),
                                data_path("kineto_resnet50_v100_nw0.json.gz"), "--format", "jsonl", "-j", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  std::map<std::string, std::string> verdicts;
  simdjson::dom::parser p;
  for (const auto& line : lines) {
    simdjson::dom::element doc;
    ASSERT_EQ(p.parse(line).get(doc), simdjson::SUCCESS) << line;
    EXPECT_EQ(std::string_view(doc["schema"]), "ttap.analyze/2");
    simdjson::dom::array traces = doc["traces"];
    ASSERT_EQ(traces.size(), 1u);
    simdjson::dom::element t = traces.at(0);
    verdicts[fs::path(std::string(std::string_view(t["path"]))).filename().string()] = std::string(std::string_view(t["verdict"]));
  }
  EXPECT_EQ(verdicts["hta_cpu_only.json.gz"], "clean");
  EXPECT_EQ(verdicts["kineto_resnet50_v100_nw0.json.gz"], "flagged");
  EXPECT_EQ(verdicts["corrupt.json"], "error");
  EXPECT_EQ(verdicts["missing.json.gz"], "error");
}

// A full disk is an error the exit code shows, not a crash of the worker that wrote.
TEST(Jsonl, FailedWriteIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const ProcResult r = analyze({data_path("hta_cpu_only.json.gz"), data_path("hta_mi250_toy.json.gz"), "-j", "2", "--format", "jsonl", "-o", "/dev/full"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/dev/full: write failed: No space left on device"), std::string::npos) << r.err;
}

// A run killed while a trace is still loading keeps the lines of the traces it finished,
// each whole: the run reads its last input from a pipe this test never closes.
TEST(Jsonl, KilledRunKeepsTheTracesItFinished) {
  const std::string out = scratch_path("killed.jsonl");
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::close(in[1]);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    ::execl(TTAP_BINARY, TTAP_BINARY, "analyze", "--scorer", "rules", "-j", "1", "--no-progress", "--format", "jsonl", "-o", out.c_str(),
            data_path("hta_cpu_only.json.gz").c_str(), data_path("tracelens_vit_nsfw_h100.json.gz").c_str(), "-", nullptr);
    ::_exit(127);
  }
  ::close(in[0]);
  (void)!::write(in[1], "{\"traceEvents\": [", 17);  // a trace that never ends
  // Wait for two whole lines: a line is written in more than one system call when it is
  // longer than stdio's buffer, so a line counted before its newline may still be growing.
  size_t lines = 0;
  for (int i = 0; i < 600 && lines < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string text = read_file(out);
    lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "still running, blocked on the third input";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ::close(in[1]);
  const std::string text = read_file(out);
  ASSERT_EQ(split_lines(text).size(), 2u) << text;
  EXPECT_EQ(text.back(), '\n') << "the last line is whole";
  const ProcResult merged = run_ttap({"merge", out, "--format", "json"});
  EXPECT_EQ(merged.exit_code, 1) << "the ViT trace is flagged\n" << merged.err;
  EXPECT_EQ(traces_by_path(merged.out).size(), 2u);
}

// Merge reads the JSON report back exactly: merged alone it renders byte for byte again
// (the inputs in path order, the order merge gives), analyzed traces and errors alike.
TEST(Merge, JsonReportRoundTripsExactly) {
  std::vector<std::string> inputs = fleet_inputs();
  std::sort(inputs.begin(), inputs.end());
  const std::vector<std::vector<std::string>> runs = {
      inputs, {scratch_path("a_missing.json"), write_file("b_corrupt.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": ")}};
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--format", "json", "-o", scratch_path("roundtrip.json")});
    const ProcResult one = analyze(args);
    ASSERT_GE(one.exit_code, 1) << one.err;
    const std::string original = read_file(scratch_path("roundtrip.json"));
    const ProcResult merged = run_ttap({"merge", "--no-fleet", "--format", "json", scratch_path("roundtrip.json")});
    EXPECT_EQ(merged.exit_code, one.exit_code) << merged.err;
    EXPECT_TRUE(merged.out == original) << "original:\n" << original.substr(0, 1500) << "\nmerged:\n" << merged.out.substr(0, 1500);
  }
}

TEST(Merge, DuplicatesCountOnceAndChangedTracesTwice) {
  const std::string trace = scratch_path("nightly.json.gz");
  fs::copy_file(data_path("kineto_resnet50_v100_nw0.json.gz"), trace, fs::copy_options::overwrite_existing);
  ASSERT_EQ(analyze({trace, data_path("hta_cpu_only.json.gz"), "--format", "jsonl", "-o", scratch_path("day1.jsonl")}).exit_code, 1);
  ASSERT_EQ(analyze({trace, "--format", "json", "-o", scratch_path("day1-again.json")}).exit_code, 1);
  // Same path, other content: the trace changed, so it is another trace.
  fs::copy_file(data_path("kineto_resnet50_v100_nw4.json.gz"), trace, fs::copy_options::overwrite_existing);
  ASSERT_LE(analyze({trace, "--format", "jsonl", "-o", scratch_path("day2.jsonl")}).exit_code, 1);

  const ProcResult r = run_ttap({"merge", scratch_path("day1.jsonl"), scratch_path("day1-again.json"), scratch_path("day2.jsonl"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(r.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["summary"]["traces"]), 3);
  EXPECT_EQ(int64_t(doc["fleet"]["traces"]), 3);
  EXPECT_EQ(int64_t(doc["fleet"]["duplicates"]), 1);
  std::set<std::string> hashes;
  for (auto t : doc["traces"].get_array())
    if (std::string_view(t["path"]) == trace) hashes.insert(std::string(std::string_view(t["content_hash"])));
  EXPECT_EQ(hashes.size(), 2u) << "one path, two contents";
}

TEST(Merge, FleetViewRanksFindingsAndTraces) {
  std::vector<std::string> args = fleet_inputs();
  args.insert(args.end(), {"--format", "jsonl", "-o", scratch_path("fleet.jsonl")});
  ASSERT_EQ(analyze(args).exit_code, 1);
  const ProcResult json = run_ttap({"merge", scratch_path("fleet.jsonl"), "--format", "json"});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS);
  simdjson::dom::element fleet = doc["fleet"];
  EXPECT_EQ(int64_t(fleet["traces"]), 18);
  EXPECT_EQ(int64_t(fleet["clean"]) + int64_t(fleet["flagged"]) + int64_t(fleet["errors"]), 18);

  // Each finding's trace count and summed saving, recomputed from the per-trace reports.
  std::map<std::string, std::pair<int64_t, int64_t>> want;  // id -> traces, saving
  for (simdjson::dom::element t : doc["traces"].get_array()) {
    std::set<std::string> ids;
    for (auto w : t["flagged_windows"].get_array())
      for (auto f : w["findings"].get_array()) ids.insert(std::string(std::string_view(f["id"])));
    for (const auto& id : ids) {
      ++want[id].first;
      for (auto s : t["savings"].get_array())
        if (std::string_view(s["id"]) == id) {
          // Per step times the steps, or over the profiled span as it is.
          simdjson::dom::element steps = t["headline"]["steps"];
          const int64_t n = bool(s["per_step"]) && !steps.is_null() ? std::max<int64_t>(1, int64_t(steps["count"])) : 1;
          want[id].second += int64_t(s["saved_per_step_ns"]) * n;
        }
    }
  }
  int64_t previous = INT64_MAX;
  size_t n = 0;
  for (auto f : fleet["findings"].get_array()) {
    const std::string id{std::string_view(f["id"])};
    EXPECT_EQ(int64_t(f["traces"]), want[id].first) << id;
    EXPECT_EQ(int64_t(f["saved_ns"]), want[id].second) << id;
    EXPECT_LE(int64_t(f["saved_ns"]), previous) << "ranked by total saving";
    previous = int64_t(f["saved_ns"]);
    ++n;
  }
  EXPECT_EQ(n, want.size());
  EXPECT_GT(want["comm_not_overlapped"].first, 8) << "the 8 DLRM ranks and the DDP traces";

  double previous_score = 2;
  size_t worst = 0;
  for (auto t : fleet["worst_traces"].get_array()) {
    EXPECT_LE(double(t["score"]), previous_score);
    previous_score = double(t["score"]);
    ++worst;
  }
  EXPECT_EQ(worst, 10u);
  int64_t in_histogram = 0;
  for (auto c : fleet["scores"]["histogram"].get_array()) in_histogram += int64_t(c);
  EXPECT_EQ(in_histogram, int64_t(fleet["scores"]["count"]));

  const ProcResult text = run_ttap({"merge", scratch_path("fleet.jsonl")});
  EXPECT_NE(text.out.find("fleet: 18 traces: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Findings across the fleet, by profiled time their fixes would have saved"), std::string::npos);
  EXPECT_NE(text.out.find("Worst traces, by score"), std::string::npos);
  const ProcResult md = run_ttap({"merge", scratch_path("fleet.jsonl"), "--format", "md"});
  EXPECT_NE(md.out.find("## Fleet"), std::string::npos);
  for (const std::string format : {"sarif", "junit", "html", "jsonl"}) {
    const ProcResult r = run_ttap({"merge", scratch_path("fleet.jsonl"), "--format", format});
    EXPECT_EQ(r.exit_code, 1) << format << r.err;
    EXPECT_GT(r.out.size(), 1000u) << format;
  }
}

TEST(Merge, UnreadableInputIsNamedAndCounted) {
  ASSERT_EQ(analyze({data_path("kineto_resnet50_v100_nw0.json.gz"), data_path("hta_cpu_only.json.gz"), "--format", "jsonl", "-o",
                     scratch_path("cut.jsonl")})
                .exit_code,
            1);
  std::string text = read_file(scratch_path("cut.jsonl"));
  const size_t second = text.find('\n') + 1;
  write_file("cut.jsonl", text.substr(0, second + (text.size() - second) / 2));  // the second line cut in half
  const std::string not_report = write_file("other.json", "{\"schema\": \"ttap.collectives/1\", \"tables\": []}");
  const ProcResult r = run_ttap({"merge", scratch_path("cut.jsonl"), not_report, scratch_path("absent.jsonl"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cut.jsonl line 2: not a whole JSON line"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"ttap.collectives/1\" is not a ttap analyze report"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("absent.jsonl"), std::string::npos) << r.err;
  EXPECT_EQ(traces_by_path(r.out).size(), 1u) << "the whole line still counts";
  // An empty shard merges to an empty report.
  const ProcResult empty = run_ttap({"merge", write_file("empty.jsonl", ""), "--format", "json"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_TRUE(traces_by_path(empty.out).empty());
}

TEST(Job, DlrmRanksNameTheStragglerTheCollectivesShow) {
  const ProcResult r = analyze({kDlrm, "--job", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(r.out).get(doc), simdjson::SUCCESS) << r.out.substr(0, 500);
  simdjson::dom::element job = doc["job"];
  simdjson::dom::array ranks = job["ranks"];
  ASSERT_EQ(ranks.size(), 8u);

  // `ttap collectives` over the same ranks: rank 7 arrived last 5 times, the others waited
  // 35.552 ms for it in all.
  std::vector<std::string> stragglers;
  std::vector<int64_t> steps;
  int32_t expected_rank = 0;
  std::map<std::string, std::set<int64_t>> shown_by;
  for (simdjson::dom::element rank : ranks) {
    EXPECT_EQ(int64_t(rank["rank"]), expected_rank) << "ranks from distributedInfo, in order";
    EXPECT_NE(std::string_view(rank["path"]).find("rank" + std::to_string(expected_rank)), std::string_view::npos);
    if (bool(rank["collective_straggler"])) stragglers.push_back(std::to_string(int64_t(rank["rank"])));
    steps.push_back(int64_t(rank["step_mean_ns"]));
    for (auto id : rank["finding_ids"].get_array()) shown_by[std::string(std::string_view(id))].insert(expected_rank);
    ++expected_rank;
  }
  EXPECT_EQ(stragglers, std::vector<std::string>{"7"});
  EXPECT_EQ(int64_t(ranks.at(7)["last_arrivals"]), 5);
  EXPECT_EQ(int64_t(ranks.at(7)["others_waited_ns"]), 35552000);
  EXPECT_EQ(int64_t(job["collectives"]["aligned_calls"]), 8) << "5 sendrecv and 3 allreduce on every rank";

  // Step times from the per-rank headlines: median of 8 is the mean of the middle two.
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(int64_t(job["step_time"]["median_ns"]), (steps[3] + steps[4]) / 2);
  EXPECT_EQ(int64_t(job["step_time"]["max_ns"]), steps.back());
  EXPECT_GT(double(job["step_time"]["imbalance"]), 0.2) << "19.9 ms against a 16.1 ms median";

  // The partial findings are exactly the ids some but not all ranks show.
  std::map<std::string, std::set<int64_t>> partial;
  for (auto f : job["partial_findings"].get_array())
    for (auto rank : f["ranks"].get_array()) partial[std::string(std::string_view(f["id"]))].insert(int64_t(rank));
  std::map<std::string, std::set<int64_t>> want;
  for (const auto& [id, shown] : shown_by)
    if (shown.size() < 8) want[id] = shown;
  EXPECT_EQ(partial, want);
  EXPECT_FALSE(partial.empty());

  const ProcResult text = analyze({kDlrm, "--job"});
  EXPECT_NE(text.out.find("job: 8 ranks\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("stragglers: rank 7 (collectives)\n"), std::string::npos) << text.out;
  const ProcResult sarif = analyze({kDlrm, "--job", "--format", "sarif"});
  EXPECT_EQ(sarif.exit_code, 2);
  EXPECT_NE(sarif.err.find("--job renders as text, md or json"), std::string::npos);
}

// Two traces claiming one rank (a rank profiled twice): numbered by position, with a warning.
TEST(Job, TwoTracesClaimingOneRankAreNumberedByPosition) {
  const std::string dir = scratch_path("clash");
  fs::create_directories(dir);
  fs::copy_file(kDlrm + "/rank2.json.gz", dir + "/a.json.gz", fs::copy_options::overwrite_existing);
  fs::copy_file(kDlrm + "/rank2.json.gz", dir + "/b.json.gz", fs::copy_options::overwrite_existing);
  const ProcResult r = analyze({dir, "--job", "--format", "json"});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(r.out).get(doc), simdjson::SUCCESS) << r.err;
  simdjson::dom::array ranks = doc["job"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(int64_t(ranks.at(0)["rank"]), 0);
  EXPECT_EQ(int64_t(ranks.at(1)["rank"]), 1);
  EXPECT_NE(std::string_view(doc["job"]["warnings"].at(0)).find("two traces claim the same rank"), std::string_view::npos);
  EXPECT_EQ(int64_t(ranks.at(0)["others_waited_ns"]) + int64_t(ranks.at(1)["others_waited_ns"]), 0) << "identical ranks never wait";
}

// Without distributedInfo the file name gives the rank.
TEST(Job, RankFromFileName) {
  EXPECT_EQ(ttap::rank_from_file_name("/runs/job7/rank3.json.gz"), 3);
  EXPECT_EQ(ttap::rank_from_file_name("worker_12.json"), 12);
  EXPECT_EQ(ttap::rank_from_file_name("host-a.1733.pt.trace.5.json"), 5);
  EXPECT_EQ(ttap::rank_from_file_name("trace.json"), std::nullopt);
}

}  // namespace
