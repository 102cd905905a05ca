// Config-file ignores: a CI job suppresses a known finding by id, by id and user-code file,
// or every finding of the traces whose path matches a glob.
#include <fnmatch.h>

#include <algorithm>

#include "classify.hpp"

namespace ttap {

namespace {

// No FNM_PATHNAME: `*` crosses '/', so "*/metrics.py" matches at any depth.
bool glob(const std::string& pattern, const std::string& text) { return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0; }

}  // namespace

bool ignore_matches(const Ignore& ignore, const std::string& trace_path, const Finding& f) {
  if (ignore.id.empty() && ignore.file.empty() && ignore.trace.empty()) return false;  // matches nothing, not everything
  if (!ignore.id.empty() && ignore.id != f.id) return false;
  if (!ignore.trace.empty() && !glob(ignore.trace, trace_path)) return false;
  if (!ignore.file.empty()) {
    const bool any = std::any_of(f.locations.begin(), f.locations.end(),
                                 [&](const CodeLocation& l) { return glob(ignore.file, l.file); });
    if (!any) return false;
  }
  return true;
}

bool ignored(const std::vector<Ignore>& ignores, const std::string& trace_path, const Finding& f) {
  return std::any_of(ignores.begin(), ignores.end(), [&](const Ignore& i) { return ignore_matches(i, trace_path, f); });
}

void apply_ignores(TraceReport& trace, const std::vector<Ignore>& ignores) {
  if (ignores.empty()) return;
  for (FlaggedWindow& w : trace.flagged) {
    auto& fs = w.findings;
    const size_t before = fs.size();
    fs.erase(std::remove_if(fs.begin(), fs.end(), [&](const Finding& f) { return ignored(ignores, trace.path, f); }), fs.end());
    trace.suppressed += static_cast<uint32_t>(before - fs.size());
  }
  // A window whose every finding was suppressed is no longer flagged.
  for (WindowScore& ws : trace.windows)
    if (ws.flagged)
      ws.flagged = std::any_of(trace.flagged.begin(), trace.flagged.end(),
                               [&](const FlaggedWindow& w) { return !w.steady_state && w.index == ws.index && !w.findings.empty(); });
  std::erase_if(trace.flagged, [](const FlaggedWindow& w) { return w.findings.empty(); });
}

}  // namespace ttap
