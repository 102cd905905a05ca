// Findings a user can believe (issue 12, item 0), audit of the tenth round: a group is named
// by a kernel a person can read. On tracelens_qwen05b_mi300 (kernels without a recorded
// launch) an unfused_elementwise group read "in void at::native::elementwise_kernel_manual_unroll<
// 128, 4, at::native::gpu_kernel_impl_nocast<...>(at::TensorIteratorBase&, ...)::{lambda(int,
// bool)#1}>(int, ...)", a C++ signature of over 600 characters, in text, Markdown, JSON and
// HTML alike. The group is now named by the kernel's function, as the rules' evidence lines
// name its kernels ("at::native::elementwise_kernel_manual_unroll"), and that one form
// (readable_kernel_name) also reads the signatures the evidence's old shortening cut inside
// their template arguments ("std::enable_if<", "nchwToNhwcKernel<float, float, float, true, false, ").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/report.hpp"

namespace {

using namespace ttap;

// The full recorded name of the first kernel in the trace whose name holds `part`.
std::string kernel_named(const Trace& t, const std::string& part) {
  for (EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == Category::Kernel && std::string(t.name_of(e)).find(part) != std::string::npos) return std::string(t.name_of(e));
  return "";
}

// What no name a person reads may hold: a return type, a parameter list, a lambda's
// signature, more than 80 characters.
void expect_readable(const std::string& name, const std::string& what) {
  EXPECT_LE(name.size(), 80u) << what << ": " << name;
  EXPECT_FALSE(name.starts_with("void ")) << what << ": " << name;
  EXPECT_EQ(name.find("{lambda"), std::string::npos) << what << ": " << name;
  EXPECT_EQ(name.find("TensorIteratorBase&"), std::string::npos) << what << ": " << name;
  EXPECT_EQ(name.find(">("), std::string::npos) << what << ": " << name;
}

TEST(BelievableAudit4KernelNames, AGroupOfKernelsWithoutALaunchIsNamedByTheKernelsFunction) {
  const auto& l = rules_support::load(suite::data_path("tracelens_qwen05b_mi300.json.gz"));
  Report report;
  report.traces.push_back(rules_support::analyze_all_windows(l));
  const TraceReport& r = report.traces.front();
  bool by_function = false;
  for (const GroupedFinding& g : r.findings) {
    expect_readable(g.origin, g.id);
    by_function |= g.id == "unfused_elementwise" && g.origin == "at::native::elementwise_kernel_manual_unroll";
  }
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) expect_readable(f.origin, f.id);
  EXPECT_TRUE(by_function);
  // No report a person reads shows the signature. (The HTML page's timeline keeps every
  // event's full name: that is the event list, data.)
  for (const std::string& text : {render_analyze_text(report), render_analyze_markdown(report), render_analyze_json(report)})
    EXPECT_EQ(text.find("TensorIteratorBase&)::{lambda"), std::string::npos);
  EXPECT_NE(render_analyze_html(report).find("in <code>at::native::elementwise_kernel_manual_unroll</code>"), std::string::npos);
}

TEST(BelievableAudit4KernelNames, EverySignatureReadsAsItsFunction) {
  // The recorded names, from the traces: the return type is not always void, and template
  // arguments hold parentheses of their own.
  struct Case {
    const char* trace;
    const char* part;
    const char* readable;
  };
  const Case cases[] = {
      {"tracelens_qwen05b_mi300.json.gz", "elementwise_kernel_manual_unroll<128, 4", "at::native::elementwise_kernel_manual_unroll"},
      {"tracelens_vllm_b200_eager.json.gz", "fused_add_rms_norm_kernel", "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>"},
      {"tracelens_vllm_b200_eager.json.gz", "quantize_with_block_size<", "tensorrt_llm::kernels::quantize_with_block_size"},
      {"hta_sampled_rank0.json.gz", "std::enable_if<!(false)", "internal::gemvx::kernel"},
      {"hta_sampled_rank0.json.gz", "DeviceScanKernel<cub", "cub::DeviceScanKernel"},
      {"kineto_resnet50_v100_nw0.json.gz", "nchwToNhwcKernel<", "nchwToNhwcKernel"},
      // Recorded mangled (MI300X): demangled first.
      {"tracelens_vllm_piecewise_graph_execution.json.gz", "_ZN7ck_tile6kentry", "ck_tile::kentry"},
      {"tracelens_resnet_ckpt_mi300.json.gz", "_ZN2ck16tensor_operation",
       "ck::tensor_operation::device::kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle"},
      {"tracelens_sglang_qwen3_8b_prefilldecode.json.gz", "_ZN5aiter24add_rmsnorm_quant_kernel", "aiter::add_rmsnorm_quant_kernel"},
      // Short template arguments stay, as the evidence has always printed them.
      {"kineto_resnet50_v100_nw0.json.gz", "bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>",
       "cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>"},
  };
  for (const Case& c : cases) {
    const std::string full = kernel_named(rules_support::load(suite::data_path(c.trace)).trace, c.part);
    ASSERT_FALSE(full.empty()) << c.trace << " has no kernel " << c.part;
    EXPECT_EQ(readable_kernel_name(full), c.readable) << full;
  }
  // Names that are no signature keep their words.
  EXPECT_EQ(readable_kernel_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(readable_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            "ncclKernel_AllReduce_RING_LL_Sum_float");
}

TEST(BelievableAudit4KernelNames, EveryKernelOfTheNewestTracesReads) {
  for (const char* trace : {"tracelens_qwen05b_mi300.json.gz", "tracelens_owlv2_mi300.json.gz", "tracelens_sglang_qwen3_8b_prefilldecode.json.gz",
                            "tracelens_vllm_b200_eager.json.gz", "hta_sampled_rank0.json.gz"}) {
    const Trace& t = rules_support::load(suite::data_path(trace)).trace;
    std::set<std::string> seen;
    for (EventId e = 0; e < t.size(); ++e)
      if (t.category[e] == Category::Kernel && seen.insert(std::string(t.name_of(e))).second)
        expect_readable(readable_kernel_name(t.name_of(e)), trace);
    EXPECT_GT(seen.size(), 20u) << trace;
  }
}

}  // namespace
