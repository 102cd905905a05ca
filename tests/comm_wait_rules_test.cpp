// A host blocked on a collective (issue 12 item 1: for a window's GPU idle, what the host was
// doing then). While the training loop's thread sits in work.wait() (aten::wait) on a
// collective it just issued, it launches nothing, and the GPU, its queue run dry, idles until
// the collective completes: that idle is exposed communication, comm_not_overlapped's. The
// rule had judged only collective kernels with no compute beside them, so windows of the
// wait read gpu_idle "main thread shows no profiled work" (the main thread being the autograd
// engine's, which launches most in DDP). Trace: ttap-bench's val trace surgery_0002, a crop
// of hta_ddp_cnn_v100_nsres with an all-reduce and a 92.9 ms aten::wait inserted on the loop's
// thread (tests/data/rules/README.md; label ranges from ttap-bench's manifest, in
// microseconds).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::rules_support::evidence_has;
using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// aten::wait on the loop's thread: +177906.5 us from the step's start at 1712195495609361.8.
constexpr double kWaitBegin = 1712195495787268.3, kWaitEnd = 1712195495880199.3;

TEST(CommWaitRules, GpuIdleWhileTheLoopWaitsOnACollectiveIsCommNotOverlapped) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("rules/surgery_0002_hta_ddp_cnn_v100_nsres.json.gz"));
  size_t inside = 0, named = 0;
  std::string misses;
  for (const ttap::Window& w : ttap::make_windows(l.trace, l.tree)) {
    if (w.begin < static_cast<int64_t>(kWaitBegin * 1000) || w.end > static_cast<int64_t>(kWaitEnd * 1000)) continue;
    const std::vector<ttap::RuleFinding> found = l.engine->detect(w.begin, w.end);
    const ttap::RuleFinding* comm = find_finding(found, "comm_not_overlapped");
    if (comm == nullptr) continue;  // the GPU still works off the kernels queued before the wait
    ++inside;
    if (found.front().id != "comm_not_overlapped") {
      misses += "window [" + std::to_string(w.begin) + ", " + std::to_string(w.end) + "):\n" + findings_text(found);
      continue;
    }
    ++named;
    EXPECT_LE(comm->cost, w.end - w.begin) << findings_text(found);
    EXPECT_TRUE(evidence_has(*comm, "while the training loop's thread waits in aten::wait (92.9 ms) for the "
                                    "c10d::allreduce_ it issued 42 us before, launching nothing"))
        << findings_text(found);
    EXPECT_EQ(find_finding(found, "gpu_idle"), nullptr) << findings_text(found);
  }
  // The wait covers about a third of the step's 100 windows; the GPU works off the backward
  // queued before it for most of them and idles for about ten (+180 to +210 ms of the step).
  EXPECT_GE(inside, 8u);
  EXPECT_EQ(named, inside) << misses;
}

}  // namespace
