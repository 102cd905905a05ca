#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/replay.hpp"

namespace ttap::cli {

int run_replay(const ReplayOptions& o) {
  Loaded l = load_and_build(o.trace);
  ReplayChoice choice;
  try {
    choice = choose_replay_op(l.trace, l.tree, o.op, o.index);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "ttap: error: {}: {}\n", l.trace.source, e.what());
    return kBadInput;
  }
  write_output(o.output, replay_script(l.trace, l.tree, choice));
  return kOk;
}

}  // namespace ttap::cli
