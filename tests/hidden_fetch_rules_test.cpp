// A single-process DataLoader fetch that runs wholly while the GPU works off a kernel queued
// before it costs the step no GPU time (issue 12 item 1: a host span is judged with its whole
// length and by what the GPU did while and after it ran). The window is the host's fetch, but
// the GPU never waits on it, so dataloader_stall, whose pattern is a GPU starved by the input
// pipeline, stays silent there: a finding would be forced. Trace: an injector-2 val trace of
// vLLM's graph replay on an MI300X (tests/data/rules_x/README.md), windows cut as `ttap eval`
// cuts them (make_windows).
#include <gtest/gtest.h>

#include <string_view>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// inject2.py wrote a 723 us fetch (seven __getitem__ calls, PIL and to_tensor, then a collate)
// at 6520488340354 us, labeled dataloader_stall to 6520488341077 us; one 3.5 ms matmul kernel
// launched before it runs from 1.6 ms before the fetch to 1.1 ms after it.
TEST(HiddenFetchRules, FetchThatAQueuedKernelOutlastsIsNoStall) {
  const Loaded& l =
      ttap::rules_support::load(ttap::test::data("rules_x/x_tracelens_vllm_piecewise_graph_execution_05.json.gz"));
  const ttap::Trace& t = l.trace;
  const int64_t label_b = 6520488340354000, label_e = 6520488341078000;
  ttap::EventId fetch = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == ttap::Category::UserAnnotation && t.ts[e] >= label_b && t.ts[e] < label_e &&
        t.name_of(e).find("DataLoader") != std::string_view::npos)
      fetch = e;
  ASSERT_NE(fetch, ttap::kNoEvent);
  // The premise: one kernel covers the whole fetch, so the GPU never idles while it runs.
  bool covered = false;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    covered = covered || (t.category[e] == ttap::Category::Kernel && t.ts[e] <= t.ts[fetch] && t.end(e) >= t.end(fetch));
  ASSERT_TRUE(covered);

  // The fetch judged whole, and every window eval cuts across it.
  const auto no_stall = [&](int64_t b, int64_t e) {
    const auto findings = l.engine->detect(b, e);
    for (const ttap::RuleFinding& f : findings)
      EXPECT_NE(f.id, "dataloader_stall") << "[" << b << ", " << e << ")\n" << findings_text(findings);
  };
  no_stall(t.ts[fetch], t.end(fetch));
  size_t windows = 0;
  for (const ttap::Window& w : ttap::make_windows(t, l.tree))
    if (w.end > t.ts[fetch] && w.begin < t.end(fetch)) {
      ++windows;
      no_stall(w.begin, w.end);
    }
  EXPECT_GE(windows, 1u);
}

}  // namespace
