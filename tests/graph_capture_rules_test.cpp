// Fixes a user can believe for cpu_bound_step (issue 12, item 0) when the host work the GPU
// waits on is CUDA graph capture or a torch.compile'd graph's call. Before, on the public
// vLLM piecewise-capture and xDiT FLUX.1 traces, the fix read "move ## Call CompiledFxGraph
// ... ## (vllm/compilation/piecewise_backend.py:334) off the step path (into DataLoader
// workers or a background thread) or onto the GPU" and "move <built-in method capture_end
// ...> off the step path (into DataLoader workers ...)": neither is input-pipeline work.
// While a graph is captured, the kernels launched are recorded, not run, so the GPU idles:
// one-time warm-up work, to be profiled after. A compiled graph's host side (its wrapper,
// guards, launches) is cut by CUDA graphs and fewer graph breaks.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& trace(const std::string& name) { return ttap::rules_support::load(ttap::test::data(name)); }

bool names_compiled_or_capture(const std::string& fix) {
  return fix.find("CompiledFxGraph") != std::string::npos || fix.find("capture_end") != std::string::npos ||
         fix.find("capture_begin") != std::string::npos || fix.find("TorchDynamo Cache Lookup") != std::string::npos ||
         fix.find("Torch-Compiled Region") != std::string::npos;
}

// Every cpu_bound_step of both traces whose culprit is a compiled graph's call or graph
// capture gets advice for that culprit, never the DataLoader's; the capture share of its
// idle is stated and lies within the finding's cost.
void expect_believable_capture_fixes(const Loaded& l, size_t* capture_fixes, size_t* compiled_fixes) {
  const std::regex during(R"(^([0-9.]+) (us|ms) of that idle during CUDA graph capture: kernels launched while a graph is captured are recorded into it, not run$)");
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e)) {
      if (f.id != "cpu_bound_step") continue;
      if (names_compiled_or_capture(f.fix)) {
        EXPECT_EQ(f.fix.find("DataLoader workers"), std::string::npos) << b << "\n" << findings_text({f});
      }
      if (f.fix.find("runs during CUDA graph capture, one-time warm-up work") != std::string::npos) {
        ++*capture_fixes;
        bool stated = false;
        for (const std::string& ev : f.evidence) {
          std::smatch m;
          if (!std::regex_match(ev, m, during)) continue;
          stated = true;
          const double ns = std::stod(m[1].str()) * (m[2].str() == "ms" ? 1e6 : 1e3);
          EXPECT_LE(ns, static_cast<double>(f.cost) * 1.01 + 1e3) << findings_text({f});
          EXPECT_GT(ns, static_cast<double>(f.cost) / 2) << "the capture is what holds the idle\n" << findings_text({f});
        }
        EXPECT_TRUE(stated) << findings_text({f});
      }
      if (f.fix.find("torch.compile(mode=\"reduce-overhead\")") != std::string::npos &&
          f.fix.find("a torch.compile'd graph's host side") != std::string::npos)
        ++*compiled_fixes;
    }
}

// vLLM's piecewise backend capturing its CUDA graphs (the whole profile is capture): the
// compiled graphs' calls and capture_end run inside stream capture.
TEST(GraphCaptureRules, VllmPiecewiseCaptureIsCalledWarmUpNotLoaderWork) {
  const Loaded& l = trace("tracelens_vllm_piecewise_capture.json.gz");
  size_t capture = 0, compiled = 0;
  expect_believable_capture_fixes(l, &capture, &compiled);
  EXPECT_GE(capture, 50u) << "most windows of the capture show it";
  EXPECT_EQ(compiled, 0u) << "every compiled call here is being captured";
}

// xDiT FLUX.1: its compile warm-up captures graphs (capture_end under _run_compile_warmup),
// and the later denoising steps spend GPU idle in Dynamo's guard check.
TEST(GraphCaptureRules, XditFluxCaptureAndCompiledCallsGetTheirOwnFixes) {
  const Loaded& l = trace("tracelens_xdit_flux1_capture.json.gz");
  size_t capture = 0, compiled = 0;
  expect_believable_capture_fixes(l, &capture, &compiled);
  EXPECT_GE(capture, 1u);
}

}  // namespace
