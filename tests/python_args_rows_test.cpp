// The headline counts python_function events by the size of the trace's Python-args table
// (tidy: it scanned every event for them): the loader keeps one row per such event. Checked
// on real traces recorded with Python stacks, parsed in chunks on worker threads (their
// parts merged) and as one document, so that a loader change that drops or adds rows shows
// here rather than as a wrong headline.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "../src/classify/classify.hpp"
#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/tree.hpp"

namespace {

using namespace ttap;

int64_t python_function_events(const Trace& t) {
  int64_t n = 0;
  for (EventId e = 0; e < t.size(); ++e) n += t.category[e] == Category::PythonFunction;
  return n;
}

TEST(PythonArgsRows, OneRowPerPythonFunctionEvent) {
  int64_t with_stacks = 0;
  // With stacks: a vLLM capture (110,876 python_function events), a GPU zoo run, a ViT on an
  // H100; without: kineto's ResNet-50.
  for (const char* name : {"tracelens_vllm_piecewise_capture.json.gz", "gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz",
                           "tracelens_vit_nsfw_h100.json.gz", "kineto_resnet50_v100_nw0.json.gz"}) {
    for (const bool whole : {false, true}) {
      if (whole) ::setenv("TTAP_PARSE_WHOLE", "1", 1);
      else ::setenv("TTAP_PARSE_CHUNK_BYTES", "65536", 1), ::setenv("TTAP_THREADS", "3", 1);
      const Trace t = load_trace(test::data(name));
      ::unsetenv("TTAP_PARSE_WHOLE");
      ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
      ::unsetenv("TTAP_THREADS");
      const int64_t events = python_function_events(t);
      EXPECT_EQ(static_cast<int64_t>(t.python_args.size()), events) << name << (whole ? " whole" : " chunked");
      EXPECT_EQ(make_headline(t, EventTree::build(t)).python_functions, events) << name;
      with_stacks += events > 0;
    }
  }
  EXPECT_EQ(with_stacks, 6);  // three traces, each read both ways
}

}  // namespace
