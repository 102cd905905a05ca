// What-if estimates: the step time a fix would save, from the trace alone. Where the
// trace has steps, the estimate replays them (a Daydream-style simulation): the CPU
// timeline is edited (spans removed, syncs made non-blocking), launches move with it, GPU
// work starts once launched (plus the idle-queue launch latency) and once its stream is
// free, and syncs last until the GPU work before them is done. Nanoseconds per step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

struct WhatIf {
  std::string id;          // the anti-pattern id of ANTIPATTERNS.md it answers
  std::string fix;         // what the estimate assumes is done
  int64_t saved_per_step = 0;  // ns
  double step_share = 0;   // saved / mean step time
  std::string model;       // how it was computed, in one sentence
};

// DataLoader stall: with the batch prefetched by workers, the DataLoader __next__ spans
// vanish from the CPU timeline. Without steps: the GPU idle time inside those spans.
WhatIf whatif_dataloader(const Trace& trace, const EventTree& tree);

// Host syncs: synchronizing calls return at once. Without steps: the GPU idle time from
// each such call to the next GPU work after it.
WhatIf whatif_host_sync(const Trace& trace, const EventTree& tree);

// Pageable copies: pinned memory copies asynchronously; the copy time beyond what the
// same bytes take at the trace's fastest pinned-copy bandwidth (or 20 GB/s, a PCIe 4
// x16 host-to-device figure, when it has none) is saved where it was exposed.
WhatIf whatif_pageable_memcpy(const Trace& trace, const EventTree& tree);

// Exposed communication: overlapped with compute, collectives would leave the critical
// path; the exposed part is the estimate (an upper bound).
WhatIf whatif_exposed_comm(const Trace& trace, const EventTree& tree);

// Every estimate that saves something in this trace, largest first.
std::vector<WhatIf> whatif_all(const Trace& trace, const EventTree& tree);

}  // namespace ttap
