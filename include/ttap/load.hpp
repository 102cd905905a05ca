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
  // Refuse a trace over any single bad event (a negative duration, an unpaired surrogate
  // escape, an id above 2^63-1, a byte-order mark). By default such events are dropped or
  // repaired, counted in Trace::diagnostics, and one warning line says so.
  bool strict = false;
};

// Reads, decompresses and parses. Throws InputError on any bad input.
Trace load_trace(const std::string& path, const LoadOptions& options = {});

// Parses JSON already in memory. `source` names the input in error messages. The buffer
// is written to while parsing (chunk brackets) and restored before returning. `strict`:
// as LoadOptions::strict.
Trace parse_trace(std::string_view source, InputBuffer& json, bool strict = false);

// The one line that says what the lenient loader repaired or dropped ("" when nothing).
std::string repairs_line(const LoadDiagnostics& d);

}  // namespace ttap
