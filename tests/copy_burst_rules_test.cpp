// small_transfers judged over the burst a range lies in (issue 12 item 1): a short window
// holds a few of a burst's small copies, too few to judge alone, as a short window holds a
// few of an eager stretch's kernels (launch_bound's context). Trace: an injector-2 train
// trace of HTA's MI250 toy (data/ttap-bench-x, train split), where a record_function range
// issues a burst of small pageable uploads (torch.tensor(...) per target) in one step.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::Loaded;

using ttap::rules_support::findings_text;

TEST(CopyBurstRules, AShortRangeInABurstOfSmallCopiesNamesIt) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_hta_mi250_toy_02.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  std::vector<int64_t> starts;  // small host<->device copies on the GPU
  for (ttap::EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] != ttap::Category::GpuMemcpy) continue;
    const ttap::CopyArgs* c = t.copy(e);
    const std::string_view n = t.name_of(e);
    if (c != nullptr && c->bytes > 0 && c->bytes < 64 * 1024 && (n.find("HtoD") != n.npos || n.find("DtoH") != n.npos)) starts.push_back(t.ts[e]);
  }
  std::sort(starts.begin(), starts.end());
  ASSERT_GE(starts.size(), 15u);
  // 100 us ranges, each starting at a copy, holding 1 to 7 copies with at least 8 in the
  // 1 ms around them.
  size_t judged = 0;
  for (int64_t s : starts) {
    const int64_t b = s, e = s + 100'000, mid = b + 50'000;
    const auto count = [&](int64_t lo, int64_t hi) {
      return std::lower_bound(starts.begin(), starts.end(), hi) - std::lower_bound(starts.begin(), starts.end(), lo);
    };
    if (count(b, e) >= 8 || count(mid - 500'000, mid + 500'000) < 8) continue;
    ++judged;
    const auto found = l.engine->detect(b, e);
    const auto it = std::find_if(found.begin(), found.end(), [](const auto& f) { return f.id == "small_transfers"; });
    ASSERT_NE(it, found.end()) << b << " " << e << "\n" << findings_text(found);
    EXPECT_LE(it->cost, e - b) << findings_text(found);
    EXPECT_NE(std::find_if(it->evidence.begin(), it->evidence.end(),
                           [](const std::string& x) { return x.find("counted over the 1.00 ms around the range, ") == 0; }),
              it->evidence.end())
        << findings_text(found);
  }
  EXPECT_GE(judged, 5u);
}

}  // namespace
