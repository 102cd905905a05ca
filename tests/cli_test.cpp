// The ttap binary end to end, run with posix_spawn: stdout, stderr and the exit status are
// captured separately. Expected figures for tracelens_vit_nsfw_h100 come from
// tests/tools/compute_expected.py (section "cli"); the JSON output is parsed with simdjson.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>

#include "suite_support.hpp"

namespace {

using ttap::suite::count_lines;
using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::split_lines;
using ttap::suite::run_ttap;

const std::string kVit = data_path("tracelens_vit_nsfw_h100.json.gz");

// One "ttap: error: ..." line on stderr, nothing on stdout, exit status 2.
void expect_clean_error(const ProcResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.rfind("ttap: error: ", 0), 0u) << what << "\nstderr: " << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << what << "\nstderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << what << "\nstdout: " << r.out.substr(0, 200);
}

TEST(CliVersion, ListsLibtorchAndTheSentencepieceModule) {
  const ProcResult r = run_ttap({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ttap 0.", 0), 0u) << r.out;
  // "  libtorch <version> (...) via <path>/ttap_torch.so" and
  // "  sentencepiece module: <path>/ttap_spm.so", both paths real files.
  const std::regex torch(R"(\n  libtorch [0-9]+\.[0-9]+[^\n]* via (/[^\n]*ttap_torch\.so)\n)");
  const std::regex spm(R"(\n  sentencepiece module: (/[^\n]*ttap_spm\.so)\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, torch)) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(m[1].str())) << m[1];
  ASSERT_TRUE(std::regex_search(r.out, m, spm)) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(m[1].str())) << m[1];
  for (const char* part : {"simdjson 3.", "libdeflate", "libcurl"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " missing in\n" << r.out;
}

// ---- summary ------------------------------------------------------------------------------

TEST(CliSummary, JsonParsesAndCarriesTheFigures) {
  const ProcResult r = run_ttap({"summary", "--format", "json", kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out.substr(0, 300);
  EXPECT_EQ(std::string_view(doc["schema"]), "ttap.summary/1");
  EXPECT_EQ(std::string_view(doc["trace"]), kVit);
  std::vector<std::string> ids;
  std::map<std::string, simdjson::dom::array> rows;
  for (simdjson::dom::element table : doc["tables"].get_array()) {
    const std::string id{std::string_view(table["id"])};
    ids.push_back(id);
    rows[id] = table["rows"].get_array();
    EXPECT_EQ(int64_t(table["total_rows"]), static_cast<int64_t>(rows[id].size())) << id;  // json carries every row
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"overview", "gpu_timeline", "ops_by_category", "ops_summary", "ops_by_shape",
                                           "kernel_summary", "launch_stats", "steps", "diagnostics"}));
  // overview: compute_expected.py: 3917 X events + 2 instants that are not [memory] = 3919
  // events; 156 GPU events; one step.
  std::map<std::string, int64_t> overview;
  for (simdjson::dom::element row : rows["overview"]) {
    int64_t v = 0;
    if (row.at(1).get(v) == simdjson::SUCCESS) overview[std::string(std::string_view(row.at(0)))] = v;
  }
  EXPECT_EQ(overview, (std::map<std::string, int64_t>{{"events", 3919}, {"gpu events", 156}, {"steps", 1}}));
  // gpu_timeline: scope = the GPU-side ProfilerStep#6, 7559846 ns; busy (the union of GPU
  // work inside it) 1225310 ns, idle 6334536 ns; no communication or memcpy.
  std::map<std::string, double> ms;
  for (simdjson::dom::element row : rows["gpu_timeline"]) {
    EXPECT_EQ(int64_t(row.at(0)), 0);
    ms[std::string(std::string_view(row.at(1)))] = double(row.at(2));
  }
  EXPECT_DOUBLE_EQ(ms["total_time"], 7.559846);
  EXPECT_DOUBLE_EQ(ms["busy_time"], 1.225310);
  EXPECT_DOUBLE_EQ(ms["idle_time"], 6.334536);
  EXPECT_DOUBLE_EQ(ms["computation_time"], 1.225310);
  EXPECT_DOUBLE_EQ(ms["total_comm_time"], 0);
  EXPECT_DOUBLE_EQ(ms["total_memcpy_time"], 0);
  // kernel_summary covers all 156 GPU events.
  int64_t kernels = 0;
  for (simdjson::dom::element row : rows["kernel_summary"]) kernels += int64_t(row.at(3));
  EXPECT_EQ(kernels, 156);
  // steps: ProfilerStep#6, 7894065 ns.
  ASSERT_EQ(rows["steps"].size(), 1u);
  EXPECT_EQ(int64_t(rows["steps"].at(0).at(0)), 6);
  EXPECT_DOUBLE_EQ(double(rows["steps"].at(0).at(1)), 7.894065);
}

TEST(CliSummary, CsvGpuTimelineTable) {
  const ProcResult r = run_ttap({"summary", "--format", "csv", "--table", "gpu_timeline", kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 9u) << r.out;
  EXPECT_EQ(lines[0], "device,type,time ms,percent");
  const std::vector<std::string> types{"computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
                                       "idle_time",        "total_time",        "total_comm_time",     "total_memcpy_time"};
  std::map<std::string, double> ms, pct;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells;
    std::stringstream ss(lines[i]);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    ASSERT_EQ(cells.size(), 4u) << lines[i];
    EXPECT_EQ(cells[0], "0");
    EXPECT_EQ(cells[1], types[i - 1]);
    ms[cells[1]] = std::stod(cells[2]);
    pct[cells[1]] = std::stod(cells[3]);
  }
  // compute_expected.py: total 7559846 ns, busy 1225310 ns, idle 6334536 ns.
  EXPECT_NEAR(ms["total_time"], 7.559846, 1e-9);
  EXPECT_NEAR(ms["busy_time"], 1.225310, 1e-9);
  EXPECT_NEAR(ms["idle_time"], 6.334536, 1e-9);
  EXPECT_NEAR(pct["total_time"], 100.0, 1e-9);
  EXPECT_NEAR(pct["busy_time"], 100.0 * 1225310 / 7559846, 1e-6);
  EXPECT_NEAR(ms["busy_time"], ms["computation_time"] + ms["exposed_comm_time"] + ms["exposed_memcpy_time"], 1e-9);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliSummary, StdinThroughAPipeMatchesTheFile) {
  const std::string bin = TTAP_BINARY;
  const ProcResult from_file = run_ttap({"summary", "--format", "csv", "--table", "steps", kVit});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, "step,duration ms,gpu busy %,dataloader %,memcpy %,gpu events\n"
                           "6,7.894065,15.521914248235857,0,0,156\n");
  // Plain JSON through a pipe, and the .gz bytes through a pipe (gunzipped by ttap).
  const ProcResult plain = ttap::suite::shell("gzip -dc '" + kVit + "' | '" + bin + "' summary --format csv --table steps -");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, from_file.out);
  const ProcResult gz = ttap::suite::shell("cat '" + kVit + "' | '" + bin + "' summary --format csv --table steps -");
  EXPECT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_EQ(gz.out, from_file.out);
  // The trace is named <stdin> in reports and errors.
  const ProcResult json = ttap::suite::shell("cat '" + kVit + "' | '" + bin + "' summary --format json -");
  EXPECT_NE(json.out.find("\"trace\":\"<stdin>\""), std::string::npos) << json.out.substr(0, 200);
  const ProcResult bad = ttap::suite::shell("printf '{\"traceEvents\": 5}' | '" + bin + "' summary -");
  expect_clean_error(bad, "bad stdin");
  EXPECT_EQ(bad.err.rfind("ttap: error: <stdin>: ", 0), 0u) << bad.err;
}

TEST(CliSummary, OutputFileAndAnUnwritableOne) {
  const std::string out = ttap::suite::scratch() + "/summary.json";
  const ProcResult r = run_ttap({"summary", "--format", "json", "-o", out, kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "-o writes the file, not stdout";
  EXPECT_EQ(ttap::suite::read_file(out).rfind("{\"schema\":\"ttap.summary/1\"", 0), 0u);
  const ProcResult bad = run_ttap({"summary", "-o", "/nonexistent/dir/x.json", kVit});
  expect_clean_error(bad, "-o into a missing folder");
}

TEST(CliSummary, UnknownTableIsAnError) {
  const ProcResult r = run_ttap({"summary", "--table", "nope", kVit});
  expect_clean_error(r, "--table nope");
  EXPECT_NE(r.err.find("no table \"nope\""), std::string::npos) << r.err;
}

// ---- tree ---------------------------------------------------------------------------------

TEST(CliTree, StepDepthOneIsTheStepAndItsChildren) {
  // compute_expected.py: the frames whose Python parent is run_torch_profiler (id 15) and
  // that lie inside the CPU ProfilerStep#6 span (7894.065 us) are its children.
  const ProcResult r = run_ttap({"tree", "--step", "6", "--depth", "1", kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "(annotation) ProfilerStep#6  [7894.065 us]\n"
            "  (python) torch/cuda/__init__.py(116): is_available  [26.510 us]\n"
            "  (python) torch/cuda/__init__.py(975): synchronize  [51.111 us]\n"
            "  (python) moca/library/model_hub/entry_point.py(106): run_action  [7750.803 us]\n");
}

TEST(CliTree, StepDepthTwoAndTheWholeStepByLabel) {
  // compute_expected.py: the three children have 9 children of their own (by Python parent
  // ids): depth 2 prints 1 + 3 + 9 lines, indented at most two levels.
  const ProcResult two = run_ttap({"tree", "--step", "6", "--depth", "2", kVit});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto lines = split_lines(two.out);
  EXPECT_EQ(lines.size(), 13u) << two.out;
  for (const auto& l : lines) {
    EXPECT_NE(l.rfind("      ", 0), 0u) << "deeper than 2 levels: " << l;
    EXPECT_TRUE(l.find("(python) ") != std::string::npos || l.find("(annotation) ") != std::string::npos) << l;
  }
  // The whole step, counted by label. compute_expected.py: 1961 Python frames under the
  // step by parent ids; on its thread inside its span 1258 cpu_op, 333 cuda_runtime and 49
  // cuda_driver events; 154 kernels and 2 memsets launched from inside it.
  const ProcResult all = run_ttap({"tree", "--step", "6", kVit});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::map<std::string, size_t> labels;
  for (const auto& l : split_lines(all.out)) {
    const size_t start = l.find_first_not_of(' ');
    ++labels[l.substr(start, l.find(' ', start) - start)];
  }
  EXPECT_EQ(labels, (std::map<std::string, size_t>{{"(annotation)", 1},
                                                   {"(python)", 1961},
                                                   {"(cpu)", 1258},
                                                   {"(cuda_runtime)", 333},
                                                   {"(cuda_driver)", 49},
                                                   {"(kernel)", 154},
                                                   {"(memset)", 2}}));
  // --no-gpu leaves the GPU lines out and nothing else.
  const ProcResult no_gpu = run_ttap({"tree", "--step", "6", "--no-gpu", kVit});
  ASSERT_EQ(no_gpu.exit_code, 0) << no_gpu.err;
  EXPECT_EQ(count_lines(no_gpu.out), count_lines(all.out) - 156);
  EXPECT_EQ(no_gpu.out.find("(kernel)"), std::string::npos);
}

TEST(CliTree, MatchPrintsMatchingSubtreesWithAncestors) {
  // compute_expected.py: 73 aten::addmm ops; the innermost cpu_op around the launch of 73
  // GPU kernels is aten::addmm (49 via cuLaunchKernel, 24 via cudaLaunchKernel).
  const ProcResult r = run_ttap({"tree", "--step", "6", "--match", "^aten::addmm$", "--depth", "2", kVit});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = split_lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "(annotation) ProfilerStep#6  [7894.065 us]");
  size_t addmm = 0, kernels = 0, launches = 0, addmm_indent = std::string::npos;
  for (const auto& l : lines) {
    const size_t indent = l.find_first_not_of(' ');
    if (l.compare(indent, 16, "(cpu) aten::addm") == 0 && l.find("(cpu) aten::addmm  [") != std::string::npos) {
      ++addmm;
      addmm_indent = indent;
    } else if (l.compare(indent, 9, "(kernel) ") == 0) {
      ++kernels;
      EXPECT_EQ(indent, addmm_indent + 4) << "a kernel two levels below its aten::addmm: " << l;
    } else if (l.compare(indent, 15, "(cuda_runtime) ") == 0 || l.compare(indent, 14, "(cuda_driver) ") == 0) {
      launches += l.find("LaunchKernel") != std::string::npos;
    }
  }
  EXPECT_EQ(addmm, 73u);
  EXPECT_EQ(kernels, 73u);
  EXPECT_EQ(launches, 73u);
  // A regex that matches nothing prints nothing and succeeds.
  const ProcResult none = run_ttap({"tree", "--match", "^no such op$", kVit});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(none.out.empty());
}

TEST(CliTree, BadArgumentsExitTwo) {
  const ProcResult regex = run_ttap({"tree", "--match", "(unclosed", kVit});
  expect_clean_error(regex, "invalid regex");
  EXPECT_EQ(regex.err.rfind("ttap: error: --match: invalid regular expression \"(unclosed\"", 0), 0u) << regex.err;

  const ProcResult step = run_ttap({"tree", "--step", "99", kVit});
  expect_clean_error(step, "unknown step");
  EXPECT_EQ(step.err, "ttap: error: " + kVit + ": no step 99: the trace has steps 6\n");

  // hta_alexnet_a100_small has no ProfilerStep#N span at all (grep: none).
  const std::string alexnet = data_path("hta_alexnet_a100_small.json.gz");
  const ProcResult no_steps = run_ttap({"tree", "--step", "1", alexnet});
  expect_clean_error(no_steps, "no steps");
  EXPECT_EQ(no_steps.err, "ttap: error: " + alexnet + ": no step 1: the trace has no ProfilerStep#N spans\n");

  // Options CLI11 rejects: a usage error (plus a hint line), exit 2, nothing on stdout.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"tree", "--no-such-option", kVit},
                                             {"summary", "--format", "xml", kVit},
                                             {"tree", "--depth", "two", kVit},
                                             {"tree"},
                                             {"summary"},
                                             {"frobnicate", kVit}}) {
    const ProcResult r = run_ttap(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << r.err;
    EXPECT_EQ(r.err.rfind("ttap: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
  }
}

// ---- Bad input files ------------------------------------------------------------------------

class CliBadInput : public ::testing::TestWithParam<ttap::suite::BadInput> {};

TEST_P(CliBadInput, ExitTwoWithOneErrorLineNamingTheFile) {
  const auto& c = GetParam();
  const std::string path = ttap::suite::write_file("cli_" + c.name, c.content);
  for (const char* cmd : {"summary", "tree"}) {
    const ProcResult r = run_ttap({cmd, path});
    expect_clean_error(r, std::string(cmd) + " " + c.name);
    EXPECT_EQ(r.err.rfind("ttap: error: " + path + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    if (c.has_offset) {
      EXPECT_NE(r.err.find("(at byte "), std::string::npos) << r.err;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliBadInput, ::testing::ValuesIn(ttap::suite::bad_inputs()),
                         [](const ::testing::TestParamInfo<ttap::suite::BadInput>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(CliBadInputFiles, MissingFileDirectoryAndInputLimit) {
  const std::string missing = ttap::suite::scratch() + "/missing.json";
  const ProcResult r = run_ttap({"summary", missing});
  expect_clean_error(r, "missing file");
  EXPECT_EQ(r.err, "ttap: error: " + missing + ": cannot open: No such file or directory\n");
  expect_clean_error(run_ttap({"tree", ttap::suite::scratch()}), "a directory");
  // A real trace over TTAP_MAX_INPUT_BYTES (vit inflates to 2309646 bytes; limit 1 MiB).
  const ProcResult big = run_ttap({"summary", kVit}, {"TTAP_MAX_INPUT_BYTES=1048576"});
  expect_clean_error(big, "input limit");
  EXPECT_NE(big.err.find("larger than the limit of 1048576 bytes"), std::string::npos) << big.err;
  EXPECT_EQ(run_ttap({"summary", kVit}, {"TTAP_MAX_INPUT_BYTES=100000000"}).exit_code, 0);
}

}  // namespace
