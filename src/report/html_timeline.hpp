// The HTML report's interactive part: per trace, a canvas timeline of the steady state
// (lanes, flagged ranges, the window-score strip under it; zoom and pan) beside the
// findings ranked by what fixing them saves, each linking to its occurrences on the
// timeline. Internal to src/report/.
#pragma once

#include <string>
#include <string_view>

#include "ttap/report.hpp"

namespace ttap::analyze_render {

// The timeline and findings panel of one trace; `key` makes its element ids unique in the
// page ("0", "1", ...). Empty when the trace has no timeline data.
std::string html_timeline_section(const TraceReport& t, const std::string& key);

// The page's one inline script (no network): draws every timeline section and wires the
// panel's links. Goes once at the end of the body.
std::string_view html_timeline_script();
// Its styles, for the page's <style>.
std::string_view html_timeline_css();

}  // namespace ttap::analyze_render
