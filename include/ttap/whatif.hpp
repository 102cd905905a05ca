// What-if estimates: the step time a fix would save, from the trace alone. Where the
// trace has steps, the estimate replays them (a Daydream-style simulation): the CPU
// timeline is edited (spans removed, syncs made non-blocking), launches move with it, GPU
// work starts once launched (plus the idle-queue launch latency) and once its stream is
// free, and syncs last until the GPU work before them is done. Nanoseconds per step.
//
// Every estimate is bounded by what the step could lose: a step cannot get shorter than
// its own GPU work, so no saving exceeds step time minus the GPU busy time of the work the
// step launched (the mean over steps). For the fixes that take GPU work off the critical
// path, that work is left out of the floor: exposed collectives once overlapped, pageable
// copies once pinned and asynchronous. Without steps the frame is the profiled span (first
// to last GPU activity) and the bound is that span minus the same busy time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

struct WhatIf {
  std::string id;          // the anti-pattern id of ANTIPATTERNS.md it answers
  std::string fix;         // what the estimate assumes is done
  int64_t saved_per_step = 0;  // ns per step, or over the profiled span when !per_step
  double step_share = 0;   // saved / mean step time (or / the profiled span), 0..1
  std::string model;       // how it was computed, in one sentence
  bool per_step = true;    // the trace has steps; else the figures are over the profiled span
  int64_t bound = 0;       // ns: the most this fix could save (step, or span, minus the GPU busy time it leaves)
  int64_t frame = 0;       // ns: the mean step, or the profiled span (step_share's denominator)
};

// DataLoader stall: with the batch prefetched by workers, the DataLoader __next__ spans
// vanish from the CPU timeline. Without steps: the GPU idle time inside those spans.
WhatIf whatif_dataloader(const Trace& trace, const EventTree& tree);

// Host syncs: synchronizing calls return at once. Without steps: the GPU idle time from
// each such call to the next GPU work after it.
WhatIf whatif_host_sync(const Trace& trace, const EventTree& tree);

// Pageable copies: pinned memory copies asynchronously; the copy time beyond what the
// same bytes take at the trace's fastest pinned-copy bandwidth (or 20 GB/s, a PCIe 4
// x16 host-to-device figure, when it has none) is saved where it was exposed. Copies the
// job should not make at all (offload round trips: `not_made`) are not counted: pinning is
// not their fix.
WhatIf whatif_pageable_memcpy(const Trace& trace, const EventTree& tree, const std::vector<EventId>& not_made = {});

// Exposed communication: overlapped with compute, collectives would leave the critical
// path; the exposed part is the estimate (an upper bound).
WhatIf whatif_exposed_comm(const Trace& trace, const EventTree& tree);

// Every estimate that saves something in this trace, largest first.
std::vector<WhatIf> whatif_all(const Trace& trace, const EventTree& tree);

}  // namespace ttap
