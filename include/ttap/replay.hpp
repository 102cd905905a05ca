// `ttap replay`: a standalone PyTorch script that recreates one recorded op's inputs
// (shapes, dtypes, strides, scalar arguments) and times it, so a slow op can be shared
// and studied without the model.
#pragma once

#include <optional>
#include <string>

#include "ttap/tree.hpp"

namespace ttap {

struct ReplayChoice {
  EventId event = kNoEvent;
  size_t occurrence = 0;     // among the op's instances with recorded shapes
  size_t occurrences = 0;
  int64_t kernel_time = 0;   // ns of GPU work it launched directly
  size_t kernels = 0;
};

// The K-th instance of `op_name` with recorded Input Dims, or, without K, the one that
// launched the most GPU time (the longest on the CPU when none launched any). Throws
// std::invalid_argument naming what is missing.
ReplayChoice choose_replay_op(const Trace& trace, const EventTree& tree, const std::string& op_name,
                              std::optional<size_t> index);

// The Python script (runs with any PyTorch >= 1.13; CUDA when present).
std::string replay_script(const Trace& trace, const EventTree& tree, const ReplayChoice& choice);

}  // namespace ttap
