// Where ttap's categories differ from TraceLens's rules, on the real traces the README
// names, so each difference it states is one that shows. Figures from
// tests/tools/compute_expected.py (section "categories"; json.load on the raw events, each
// GPU event's op the innermost cpu_op around its launch):
//
//   /usr/bin/python3 tests/tools/compute_expected.py categories
#include <gtest/gtest.h>

#include <string>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::suite::data_path;

struct Loaded {
  explicit Loaded(const std::string& name)
      : trace(ttap::load_trace(data_path(name))), tree(ttap::EventTree::build(trace)) {}
  ttap::Trace trace;
  ttap::EventTree tree;
};

const ttap::CategoryRow* category_row(const std::vector<ttap::CategoryRow>& rows, ttap::OpCategory c) {
  for (const auto& r : rows)
    if (r.category == c) return &r;
  return nullptr;
}

// TraceLens files a kernel as communication only when "nccl" is in its name; vLLM's
// symmetric-memory all-reduce is not. 73 calls, 2,119,548 ns, none under other kernels.
TEST(GoldenCategories, MultimemAllReduceIsCommunication) {
  const Loaded l("tracelens_vllm_b200_eager.json.gz");
  int64_t calls = 0, time = 0;
  for (ttap::EventId g : l.tree.gpu_events()) {
    if (l.trace.name_of(g).find("multimem_all_reduce_kernel") == std::string_view::npos) continue;
    EXPECT_EQ(l.trace.name_of(g).find("nccl"), std::string_view::npos) << "TraceLens's rule would catch it";
    EXPECT_EQ(ttap::categorize_gpu_event(l.trace, l.tree, g), ttap::OpCategory::communication);
    ++calls;
    time += l.trace.dur[g];
  }
  EXPECT_EQ(calls, 73);
  EXPECT_EQ(time, 2119548);
  const auto tl = ttap::gpu_timeline(l.trace, l.tree);
  ASSERT_EQ(tl.size(), 1u);
  // The all-reduces plus one nccl-named kernel, all of it exposed.
  EXPECT_GE(tl[0].exposed_communication, 2119548);
  EXPECT_EQ(tl[0].exposed_communication, tl[0].communication);
}

// Softmax ops are `reduce` in ttap; TraceLens's reduce list lacks them and their kernels
// miss its kernel-name fallback, so they are `other` there. On tracelens_owlv2_mi300 their
// 180 kernels take 153,993,132 ns of the 331,819,224 ns attributed to ops (46.4%).
TEST(GoldenCategories, SoftmaxIsReduceAndHalfOfOwlv2) {
  const Loaded l("tracelens_owlv2_mi300.json.gz");
  int64_t softmax = 0, softmax_kernels = 0, all = 0;
  for (const auto& row : ttap::ops_summary(l.trace, l.tree)) {
    all += row.direct_kernel_time;
    if (row.name.find("softmax") == std::string::npos) continue;
    EXPECT_EQ(row.category, ttap::OpCategory::reduce) << row.name;
    softmax += row.direct_kernel_time;
    softmax_kernels += row.kernel_count;
  }
  EXPECT_EQ(softmax_kernels, 180);
  EXPECT_EQ(softmax, 153993132);
  EXPECT_EQ(all, 331819224);
  for (const char* op : {"aten::softmax", "aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data"})
    EXPECT_EQ(ttap::categorize_op(op), ttap::OpCategory::reduce) << op;
}

// Copies are filed by the GPU activity's kind, not by the op that launched them: the 55
// DtoH copies aten::copy_ launched on tracelens_owlv2_mi300 (3,336,123 ns) count as
// memcpy, where TraceLens files them under aten::copy_'s `elementwise`. The op row stays
// elementwise, as in TraceLens.
TEST(GoldenCategories, CopiesLaunchedByCopyOpAreMemcpy) {
  const Loaded l("tracelens_owlv2_mi300.json.gz");
  int64_t dtoh = 0, dtoh_time = 0;
  for (ttap::EventId g : l.tree.gpu_events()) {
    const ttap::EventId op = l.tree.owner_op(g);
    if (l.trace.category[g] != ttap::Category::GpuMemcpy || op == ttap::kNoEvent || l.trace.name_of(op) != "aten::copy_")
      continue;
    EXPECT_EQ(ttap::categorize_gpu_event(l.trace, l.tree, g), ttap::OpCategory::memcpy);
    if (l.trace.name_of(g).find("DtoH") == std::string_view::npos) continue;
    ++dtoh;
    dtoh_time += l.trace.dur[g];
  }
  EXPECT_EQ(dtoh, 55);
  EXPECT_EQ(dtoh_time, 3336123);
  EXPECT_EQ(ttap::categorize_op("aten::copy_"), ttap::OpCategory::elementwise);
  // ops_by_category's memcpy is the timeline's: every copy, whoever launched it.
  const auto rows = ttap::category_breakdown(l.trace, l.tree);
  const ttap::CategoryRow* memcpy = category_row(rows, ttap::OpCategory::memcpy);
  ASSERT_NE(memcpy, nullptr);
  const auto tl = ttap::gpu_timeline(l.trace, l.tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_GE(memcpy->kernel_time, tl[0].memcpy);  // the sum of copies >= their union
  int64_t copies = 0;
  for (ttap::EventId g : ttap::scoped_gpu_events(l.trace, l.tree)) copies += l.trace.category[g] == ttap::Category::GpuMemcpy ? l.trace.dur[g] : 0;
  EXPECT_EQ(memcpy->kernel_time, copies);
}

}  // namespace
