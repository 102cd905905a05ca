// libFuzzer target: the whole pipeline on arbitrary bytes. The loader must either
// return a Trace or throw ttap::InputError; anything else (a crash, a sanitizer report,
// another exception, a hang) is a finding. Inputs starting with the gzip magic go
// through the decompressor first, so one target covers both paths.
#include <cstdint>
#include <cstring>

#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ttap::InputBuffer json;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
      json = ttap::gunzip("fuzz.gz", reinterpret_cast<const char*>(data), size, 64u << 20);
    } else {
      json = ttap::InputBuffer(size);
      std::memcpy(json.data(), data, size);
      json.resize(size);
    }
    const ttap::Trace trace = ttap::parse_trace("fuzz", json);
    const ttap::EventTree tree = ttap::EventTree::build(trace);
    (void)ttap::gpu_timeline(trace, tree);
    (void)ttap::category_breakdown(trace, tree);
    (void)ttap::ops_by_shape(trace, tree);
    (void)ttap::kernel_summary(trace, tree);
    (void)ttap::launch_stats(trace, tree);
    (void)ttap::step_breakdown(trace, tree);
  } catch (const ttap::InputError&) {
  }
  return 0;
}
