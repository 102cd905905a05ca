// `ttap collectives`: collective communication across the per-rank traces of one job:
// latency, bandwidth, and how long ranks waited for each other (skew) apart from the
// transfer itself, as TraceLens's collective report separates them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

struct RankTrace {
  int32_t rank = -1;  // distributedInfo.rank, else the position in the input list
  const Trace* trace = nullptr;
  const EventTree* tree = nullptr;
};

// One collective call as seen on one rank.
struct CollectiveCall {
  std::string type;        // allreduce, allgather, reduce_scatter, alltoall, sendrecv, broadcast, reduce, ...
  std::string algorithm;   // from the kernel name: "RING LL", "TREE SIMPLE", ... ("" when not shown)
  int64_t bytes = -1;      // message size on this rank (In msg nelems x dtype size), -1 unknown
  int32_t group_size = -1;
  int64_t start = 0, end = 0;  // ns, the kernel
};

std::vector<CollectiveCall> collective_calls(const Trace& trace, const EventTree& tree);

// The collective type a name says (an op, a record_param_comms "Collective name", a kernel
// name's type part): allreduce, allgather, reduce_scatter, alltoall, sendrecv, broadcast,
// barrier, reduce; else the name lowercased without underscores (gather, scatter, ...).
std::string collective_type(std::string_view name);

// The collective a communication kernel runs: the "Collective name" of the
// record_param_comms op above its launch, else its kernel name's type
// (ncclKernel_SendRecv_... is sendrecv).
std::string collective_type_of(const Trace& trace, const EventTree& tree, EventId kernel);

// Bus bandwidth correction (NCCL's tests): allreduce 2(n-1)/n; allgather, reduce_scatter
// and alltoall (n-1)/n; the rest 1.
double bus_bandwidth_factor(const std::string& type, int n);

struct CollectiveGroup {  // one (type, size) across its aligned calls
  std::string type;
  std::string algorithm;
  int64_t bytes = -1;
  int32_t ranks = 0;
  int64_t calls = 0;          // aligned instances
  double mean_duration = 0;   // ns, kernel time averaged over ranks and calls
  double mean_skew = 0;       // ns, last arrival minus first arrival
  double mean_transfer = 0;   // ns, first completion minus last arrival (the time all ranks were in it)
  double algbw_gbs = 0;       // bytes / transfer
  double busbw_gbs = 0;
};

struct RankWait {
  int32_t rank = -1;
  int64_t last_arrivals = 0;   // calls where this rank started last
  int64_t others_waited = 0;   // ns other ranks spent waiting for this one, summed
  int64_t waited = 0;          // ns this rank spent waiting for the last arrival
};

struct CollectiveReport {
  std::vector<CollectiveGroup> groups;
  std::vector<RankWait> ranks;  // by others_waited, descending: stragglers first
  std::vector<std::string> warnings;
};

CollectiveReport analyze_collectives(const std::vector<RankTrace>& ranks);

// The same from each rank's calls alone (collective_calls()), for callers that analyze the
// ranks one at a time and cannot hold every trace in memory at once (`ttap analyze --job`).
struct RankCalls {
  int32_t rank = -1;
  std::vector<CollectiveCall> calls;
};
CollectiveReport analyze_collective_calls(std::vector<RankCalls> ranks);

}  // namespace ttap
