// Every public trace in ../shared/traces/public (when that folder is beside the checkout):
// loads, builds its tree, and summarizes; the PARAM DLRM job's 8 ranks from the tarball.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/summary_report.hpp"

namespace fs = std::filesystem;

namespace {

void load_and_summarize(const std::string& path) {
  SCOPED_TRACE(path);
  const ttap::Trace t = ttap::load_trace(path);
  EXPECT_GT(t.size(), 0u);
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto tables = ttap::summary_tables(t, tree, {0});
  EXPECT_EQ(tables.size(), 9u);
  const auto timelines = ttap::gpu_timeline(t, tree);
  for (const auto& g : timelines) {
    EXPECT_GE(g.idle, 0);
    EXPECT_LE(g.busy, g.total);
    EXPECT_LE(g.exposed_communication, g.communication);
  }
}

TEST(AllPublicTraces, LoadTreeSummarize) {
  const fs::path dir = TTAP_SHARED_TRACES;
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is not here (a clone without ../shared): skipped";
  size_t traces = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 8 && name.substr(name.size() - 8) == ".json.gz") {
      load_and_summarize(entry.path().string());
      ++traces;
    }
  }
  EXPECT_GE(traces, 16u);
  const fs::path tarball = dir / "param_dlrm_v100_8ranks.tar.gz";
  if (!fs::exists(tarball)) return;
  const std::string out = fs::path(ttap::test::temp_file("dlrm.marker", "")).parent_path().string() + "/dlrm";
  fs::create_directories(out);
  ASSERT_EQ(std::system(("tar -xzf " + tarball.string() + " -C " + out).c_str()), 0);
  size_t ranks = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (entry.path().extension() == ".json") {
      load_and_summarize(entry.path().string());
      ++ranks;
    }
  }
  EXPECT_EQ(ranks, 8u);
}

}  // namespace
