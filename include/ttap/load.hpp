// Loading a trace file (.json / .json.gz, or "-" for stdin) into a Trace.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ttap/input.hpp"
#include "ttap/trace.hpp"

namespace ttap {

struct LoadOptions {
  // Refuse inputs (after decompression) larger than this, so a gzip bomb or a hostile
  // stream fails cleanly instead of exhausting memory. TTAP_MAX_INPUT_BYTES overrides.
  uint64_t max_json_bytes = default_max_input_bytes();
};

// Reads, decompresses and parses. Throws InputError on any bad input.
Trace load_trace(const std::string& path, const LoadOptions& options = {});

// Parses JSON already in memory. `source` names the input in error messages. The buffer
// is written to while parsing (chunk brackets) and restored before returning.
Trace parse_trace(std::string_view source, InputBuffer& json);

}  // namespace ttap
