// unfused_elementwise judges the GPU work that runs in a range (issue 12 item 1), not only
// the kernels that start in it: a range inside a chain of long elementwise kernels shows that
// chain though none of its kernels starts there, and each chain is taken whole, past the
// range's edges, and counted where it runs in the range. Trace: an injector-2 train trace of
// HTA's event-sync example (data/ttap-bench-x, train split), whose step ends with a chain
// of five elementwise kernels (add, div, add, div, mul) of 695 us on stream 7.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

TEST(RunningKernelsRules, ARangeInsideAnElementwiseChainNamesIt) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_hta_event_sync_small_05.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  // The chain: the last five kernels of the trace, back to back on one stream.
  std::vector<ttap::EventId> kernels;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == ttap::Category::Kernel) kernels.push_back(e);
  std::sort(kernels.begin(), kernels.end(), [&](auto a, auto b) { return t.ts[a] < t.ts[b]; });
  ASSERT_GE(kernels.size(), 5u);
  const std::vector<ttap::EventId> chain(kernels.end() - 5, kernels.end());
  for (ttap::EventId k : chain) {
    const std::string_view n = t.name_of(k);
    ASSERT_NE(n.find("elementwise"), std::string_view::npos) << n;
  }
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    int64_t here = 0;
    size_t in = 0;
    for (ttap::EventId k : chain) {
      const int64_t o = std::max<int64_t>(0, std::min(e, t.end(k)) - std::max(b, t.ts[k]));
      here += o;
      in += o > 0;
    }
    // Ranges the chain fills, holding fewer of its kernels than a run needs.
    if (in == 0 || in >= 5 || 2 * here < e - b) continue;
    ++judged;
    const auto found = l.engine->detect(b, e);
    ASSERT_FALSE(found.empty()) << b;
    const auto it = std::find_if(found.begin(), found.end(), [](const auto& f) { return f.id == "unfused_elementwise"; });
    ASSERT_NE(it, found.end()) << findings_text(found);
    EXPECT_LE(it->cost, e - b) << findings_text(found);
    EXPECT_GE(it->begin, b);
    EXPECT_LE(it->end, e);
    EXPECT_NE(it->evidence.front().find("1 run of at least 5 back-to-back elementwise kernels (5 kernels, 695 us, "),
              std::string::npos)
        << findings_text(found);
    EXPECT_NE(it->evidence.front().find(" of it in the range)"), std::string::npos) << findings_text(found);
  }
  EXPECT_GE(judged, 2u);
}

}  // namespace
