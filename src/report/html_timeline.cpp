// The HTML report's timeline and findings panel (see html_timeline.hpp). The page stays one
// self-contained file: the lanes go in as JSON inside the page, drawn by an inline script
// on a canvas, and the data is bounded (build_report_timeline merges sub-pixel events).
#include "html_timeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>


#include "analyze_common.hpp"
#include "ttap/table.hpp"

namespace ttap::analyze_render {

namespace {

// Microseconds from the timeline's start, one decimal: what the script works in.
std::string us(int64_t ns, int64_t from) { return fmt::format("{:.1f}", static_cast<double>(ns - from) / 1e3); }

// JSON text for inside a <script> element: "</" cannot close it early.
std::string script_safe(std::string s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 3)) s.replace(at, 2, "<\\/");
  return s;
}

std::string timeline_json(const TraceReport& t) {
  const ReportTimeline& tl = t.timeline;
  std::string j = fmt::format("{{\"origin_us\":{},\"span_us\":{},\"events\":{},\"names\":[", us(tl.begin, t.origin), us(tl.end, tl.begin),
                              tl.events);
  for (size_t i = 0; i < tl.names.size(); ++i) j += (i ? "," : "") + json_string(tl.names[i]);
  j += "],\"lanes\":[";
  for (size_t i = 0; i < tl.lanes.size(); ++i) {
    const TimelineLane& l = tl.lanes[i];
    j += fmt::format("{}{{\"label\":{},\"gpu\":{},\"s\":[", i ? "," : "", json_string(l.label), l.gpu ? "true" : "false");
    for (size_t k = 0; k < l.spans.size(); ++k) {
      const LaneSpan& s = l.spans[k];
      j += fmt::format("{}{},{},{},{}", k ? "," : "", us(s.begin, tl.begin), us(s.end, tl.begin), s.name, s.events);
    }
    j += "]}";
  }
  j += "],\"windows\":[";
  for (size_t i = 0; i < t.windows.size(); ++i) {
    const WindowScore& w = t.windows[i];
    j += fmt::format("{}[{},{},{:.3f},{}]", i ? "," : "", us(w.begin, tl.begin), us(w.end, tl.begin), w.score, w.flagged ? 1 : 0);
  }
  j += "],\"flags\":[";
  bool first = true;
  for (size_t i = 0; i < t.findings.size(); ++i)
    for (const Occurrence& o : t.findings[i].occurrences) {
      j += fmt::format("{}[{},{},{}]", first ? "" : ",", us(o.begin, tl.begin), us(o.end, tl.begin), i);
      first = false;
    }
  return j + "]}";
}

// Where an occurrence is, for its button: "step 7", else "window 12", else its range alone.
std::string occurrence_label(const Occurrence& o) {
  if (o.step >= 0) return fmt::format("step {}", o.step);
  if (o.window >= 0) return fmt::format("window {}", o.window);
  return "";
}

}  // namespace

// The panel lists the grouped findings (one per problem, already ranked by saving); each
// shown occurrence is a button onto the timeline.
std::string html_timeline_section(const TraceReport& t, const std::string& key) {
  // A report read back from JSON (ttap merge) has no lanes: the panel alone.
  const bool lanes = !t.timeline.lanes.empty();
  if (!lanes && t.findings.empty()) return "";
  std::string out = fmt::format("<div class=\"tl-wrap\" id=\"tl-{0}\"{1}>\n", key, lanes ? fmt::format(" data-key=\"{}\"", key) : "");
  if (lanes)
    out += fmt::format(
      "<div class=\"tl-main\">\n<canvas class=\"tl\" id=\"tl-{0}-canvas\" width=\"960\" height=\"200\" aria-label=\"timeline of the steady state\"></canvas>\n"
      "<div class=\"tl-bar\"><span class=\"tl-view\" id=\"tl-{0}-view\"></span> <span class=\"tl-tip\" id=\"tl-{0}-tip\"></span></div>\n"
      "<p class=\"hint\">Wheel or +/- to zoom, drag to pan, double-click to see it all. Lanes: GPU streams, then the busiest CPU "
      "threads (top-level spans, then what runs under them); {1}, tiny ones merged per pixel. Shaded: where the "
      "findings occur. Under the lanes: the detector's window scores (red: flagged).</p>\n</div>\n",
      key, count_text(t.timeline.events, "event"));
  out += "<div class=\"panel\">\n<h3>Findings, by what fixing them saves</h3>\n";
  if (t.findings.empty()) out += "<p>No findings.</p>\n";
  out += "<ol class=\"ranked\">\n";
  for (size_t i = 0; i < t.findings.size(); ++i) {
    const GroupedFinding& g = t.findings[i];
    out += fmt::format("<li class=\"entry\" id=\"f-{}-{}\"><span class=\"sev {}\">{}</span> <b><code>{}</code></b> {}{}<br>", key, i,
                       severity_name(g.severity), severity_name(g.severity), xml_escape(g.id), xml_escape(g.name),
                       g.baseline == BaselineState::none ? "" : fmt::format(" <span class=\"state\">[{}]</span>", baseline_state_name(g.baseline)));
    if (!g.origin.empty()) out += fmt::format("in <code>{}</code><br>", xml_escape(g.origin));
    if (g.saving) out += fmt::format("<span class=\"saving\">fixing it saves {}</span><br>", xml_escape(saving_text(*g.saving)));
    out += fmt::format("costs {}<br>{}: ", xml_escape(group_cost_text(g)), xml_escape(occurrences_text(g)));
    for (size_t k = 0; k < g.occurrences.size(); ++k) {
      const Occurrence& o = g.occurrences[k];
      const std::string label = occurrence_label(o);
      out += fmt::format(
          "<button type=\"button\" class=\"occ\" id=\"occ-{}-{}-{}\" data-tl=\"{}\" data-b=\"{}\" data-e=\"{}\">{}{}{} .. {}</button> ", key,
          i, k, key, us(o.begin, t.timeline.begin), us(o.end, t.timeline.begin), xml_escape(label), label.empty() ? "" : " ",
          offset_ms(t, o.begin), offset_ms(t, o.end));
    }
    if (g.occurrence_count > g.occurrences.size()) out += "...";
    std::vector<std::string> locs;
    for (const auto& l : g.locations) locs.push_back("<code>" + xml_escape(location_text(l)) + "</code>");
    out += "<details><summary>evidence and fix</summary><ul>";
    for (const auto& ev : g.evidence) out += "<li>" + xml_escape(ev) + "</li>";
    if (!g.explanation.empty()) out += "<li>LLM: " + xml_escape(g.explanation) + "</li>";
    out += "</ul>";
    if (!locs.empty()) out += fmt::format("<p>Code: {}</p>", fmt::join(locs, ", "));
    if (!g.fix.empty()) out += "<p class=\"fix\">Fix: " + xml_escape(g.fix) + "</p>";
    out += "</details></li>\n";
  }
  out += "</ol>\n";
  // The total the text and md reports give under their findings.
  if (!t.findings.empty()) out += fmt::format("<p class=\"recoverable\">{}</p>\n", xml_escape(recoverable_text(t)));
  out += "</div>\n";
  if (lanes)
    out += fmt::format("<script type=\"application/json\" class=\"tl-data\" id=\"tl-{}-data\">{}</script>\n", key,
                       script_safe(timeline_json(t)));
  out += "</div>\n";
  return out;
}

std::string_view html_timeline_css() {
  return R"CSS(
.tl-wrap { display: flex; gap: 16px; align-items: flex-start; margin: 8px 0 16px; }
.tl-main { flex: 1 1 auto; min-width: 0; }
canvas.tl { display: block; width: 100%; border: 1px solid #ccc; cursor: grab; background: #fff; }
.tl-bar { font-size: 12px; color: #333; min-height: 16px; } .tl-tip { color: #555; margin-left: 12px; }
.hint { font-size: 11px; color: #666; margin: 2px 0; }
.panel { flex: 0 0 380px; max-height: 640px; overflow: auto; font-size: 13px; }
.panel h3 { font-size: 14px; margin: 0 0 4px; } ol.ranked { padding-left: 20px; margin: 0; } .panel code { word-break: break-all; }
li.entry { margin-bottom: 10px; } li.entry.selected { background: #fdecea; }
.saving { color: #2d6a2d; } button.occ { font: 11px system-ui, sans-serif; margin: 2px 2px 0 0; padding: 1px 4px; cursor: pointer;
  border: 1px solid #d62728; background: #fff; border-radius: 3px; }
button.occ.selected { background: #d62728; color: #fff; }
details { margin-top: 3px; } details ul { margin: 2px 0; padding-left: 16px; }
)CSS";
}

std::string_view html_timeline_script() {
  return R"JS(
(function () {
  'use strict';
  // 9.5 ms, 412 us, 1.47 s: three significant digits, the unit that fits.
  function human(u) {
    var a = Math.abs(u), v, unit;
    if (a >= 1e6) { v = u / 1e6; unit = ' s'; } else if (a >= 1e3) { v = u / 1e3; unit = ' ms'; } else { v = u; unit = ' us'; }
    return String(parseFloat(v.toPrecision(3))) + unit;
  }
  var LABEL = 150, LANE = 16, STRIP = 36, AXIS = 18;
  var GPU = '#4c78a8', CPU = '#72b7b2', MERGED_GPU = '#2f4b6e', MERGED_CPU = '#3f7f7a';
  var timelines = {};

  function Timeline(wrap) {
    var key = wrap.getAttribute('data-key');
    this.key = key;
    this.data = JSON.parse(document.getElementById('tl-' + key + '-data').textContent);
    this.canvas = document.getElementById('tl-' + key + '-canvas');
    this.viewText = document.getElementById('tl-' + key + '-view');
    this.tip = document.getElementById('tl-' + key + '-tip');
    this.v0 = 0; this.v1 = this.data.span_us; this.selected = null;
    var lanes = this.data.lanes.length;
    this.top = 4; this.stripTop = this.top + lanes * LANE + 6;
    this.height = this.stripTop + STRIP + AXIS;
    this.canvas.style.height = this.height + 'px';
    this.attach();
    this.draw();
  }
  Timeline.prototype.plotWidth = function () { return this.width - LABEL - 4; };
  Timeline.prototype.x = function (u) { return LABEL + (u - this.v0) / (this.v1 - this.v0) * this.plotWidth(); };
  Timeline.prototype.at = function (px) { return this.v0 + (px - LABEL) / this.plotWidth() * (this.v1 - this.v0); };
  Timeline.prototype.setView = function (a, b) {
    var span = this.data.span_us, w = Math.max(b - a, 1);
    if (w > span) { a = 0; b = span; } else { a = Math.max(0, Math.min(a, span - w)); b = a + w; }
    this.v0 = a; this.v1 = b;
    this.canvas.setAttribute('data-v0', a.toFixed(1));
    this.canvas.setAttribute('data-v1', b.toFixed(1));
    this.draw();
  };
  Timeline.prototype.draw = function () {
    var c = this.canvas, dpr = window.devicePixelRatio || 1;
    this.width = c.clientWidth || 960;
    c.width = Math.round(this.width * dpr); c.height = Math.round(this.height * dpr);
    var g = c.getContext('2d'), d = this.data, self = this;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff'; g.fillRect(0, 0, this.width, this.height);
    g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    var right = this.width - 4;
    function clipX(x) { return Math.max(LABEL, Math.min(right, x)); }
    // Flagged ranges behind the lanes.
    d.flags.forEach(function (f) {
      var x0 = clipX(self.x(f[0])), x1 = clipX(self.x(f[1]));
      if (x1 <= LABEL || x0 >= right) return;
      g.fillStyle = 'rgba(214,39,40,0.13)';
      g.fillRect(x0, self.top, Math.max(2, x1 - x0), self.stripTop - self.top);
    });
    d.lanes.forEach(function (lane, i) {
      var y = self.top + i * LANE, s = lane.s;
      g.fillStyle = i % 2 ? '#fafafa' : '#f2f2f2'; g.fillRect(LABEL, y, right - LABEL, LANE);
      g.fillStyle = '#333'; g.fillText(lane.label.length > 24 ? lane.label.slice(0, 23) + '\u2026' : lane.label, 4, y + LANE / 2);
      for (var k = 0; k < s.length; k += 4) {
        if (s[k + 1] < self.v0 || s[k] > self.v1) continue;
        var x0 = clipX(self.x(s[k])), x1 = clipX(self.x(s[k + 1]));
        g.fillStyle = s[k + 3] > 1 ? (lane.gpu ? MERGED_GPU : MERGED_CPU) : (lane.gpu ? GPU : CPU);
        g.fillRect(x0, y + 2, Math.max(1, x1 - x0), LANE - 4);
        if (x1 - x0 > 60) {
          g.save(); g.beginPath(); g.rect(x0, y, x1 - x0, LANE); g.clip();
          g.fillStyle = '#fff'; g.fillText(d.names[s[k + 2]], x0 + 3, y + LANE / 2); g.restore();
        }
      }
    });
    // The selected occurrence, outlined over the lanes.
    if (this.selected) {
      var sx0 = clipX(this.x(this.selected[0])), sx1 = clipX(this.x(this.selected[1]));
      g.strokeStyle = '#d62728'; g.lineWidth = 2;
      g.strokeRect(sx0, this.top, Math.max(2, sx1 - sx0), this.stripTop - this.top);
    }
    // The window-score strip, on the same time axis.
    g.fillStyle = '#efece0'; g.fillRect(LABEL, this.stripTop, right - LABEL, STRIP);
    g.fillStyle = '#333'; g.fillText('window score', 4, this.stripTop + STRIP / 2);
    d.windows.forEach(function (w) {
      if (w[1] < self.v0 || w[0] > self.v1) return;
      var x0 = clipX(self.x(w[0])), x1 = clipX(self.x(w[1])), h = Math.max(0, Math.min(1, w[2])) * STRIP;
      if (h <= 0) return;
      g.fillStyle = w[3] ? '#d62728' : '#4c78a8';
      g.fillRect(x0, self.stripTop + STRIP - h, Math.max(1, x1 - x0 - (x1 - x0 > 4 ? 1 : 0)), h);
    });
    // Time axis: from the trace's first event, as every "+x ms" in the report.
    // Ticks at round times from that origin.
    var ay = this.stripTop + STRIP, span = this.v1 - this.v0, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    g.strokeStyle = '#999'; g.lineWidth = 1; g.fillStyle = '#444';
    for (var t = Math.ceil((this.v0 + d.origin_us) / step) * step; t <= this.v1 + d.origin_us; t += step) {
      var tx = Math.round(this.x(t - d.origin_us)) + 0.5;
      g.beginPath(); g.moveTo(tx, ay); g.lineTo(tx, ay + 4); g.stroke();
      g.fillText('+' + human(t), tx + 2, ay + 11);
    }
    this.viewText.textContent = 'showing +' + human(this.v0 + d.origin_us) + ' .. +' + human(this.v1 + d.origin_us) +
        ' (' + human(span) + ' of ' + human(d.span_us) + ')';
  };
  Timeline.prototype.zoom = function (factor, px) {
    var u = this.at(px), a = u - (u - this.v0) * factor, b = u + (this.v1 - u) * factor;
    this.setView(a, b);
  };
  Timeline.prototype.hit = function (px, py) {
    var i = Math.floor((py - this.top) / LANE), lane = this.data.lanes[i];
    if (!lane || px < LABEL) return null;
    var u = this.at(px), tol = (this.v1 - this.v0) / this.plotWidth() * 2, s = lane.s;
    for (var k = 0; k < s.length; k += 4)
      if (s[k] - tol <= u && u <= s[k + 1] + tol) return { lane: lane, k: k };
    return null;
  };
  Timeline.prototype.attach = function () {
    var self = this, c = this.canvas, drag = null;
    c.addEventListener('wheel', function (e) {
      e.preventDefault();
      self.zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX);
    }, { passive: false });
    c.addEventListener('mousedown', function (e) { drag = { x: e.clientX, v0: self.v0, v1: self.v1 }; c.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', function () { drag = null; c.style.cursor = 'grab'; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var du = (e.clientX - drag.x) / self.plotWidth() * (drag.v1 - drag.v0);
      self.setView(drag.v0 - du, drag.v1 - du);
    });
    c.addEventListener('mousemove', function (e) {
      if (drag) return;
      var h = self.hit(e.offsetX, e.offsetY);
      if (!h) { self.tip.textContent = ''; return; }
      var s = h.lane.s, k = h.k, n = s[k + 3];
      self.tip.textContent = h.lane.label.trim() + ': ' + self.data.names[s[k + 2]] + ', ' + human(s[k + 1] - s[k]) +
          (n > 1 ? ' (' + n + ' events merged)' : '') + ' at +' + human(s[k] + self.data.origin_us);
    });
    c.addEventListener('dblclick', function () { self.selected = null; self.setView(0, self.data.span_us); });
    c.tabIndex = 0;
    c.addEventListener('keydown', function (e) {
      if (e.key === '+' || e.key === '=') self.zoom(0.8, LABEL + self.plotWidth() / 2);
      else if (e.key === '-') self.zoom(1.25, LABEL + self.plotWidth() / 2);
    });
    this.setView(0, this.data.span_us);
  };
  // A finding's occurrence: show it with a quarter of its width either side, outlined.
  Timeline.prototype.show = function (b, e) {
    var pad = Math.max((e - b) * 0.25, 1);
    this.selected = [b, e];
    this.setView(b - pad, e + pad);
  };

  document.querySelectorAll('.tl-wrap[data-key]').forEach(function (w) { timelines[w.getAttribute('data-key')] = new Timeline(w); });
  document.querySelectorAll('button.occ').forEach(function (btn) {
    btn.addEventListener('click', function () {
      var tl = timelines[btn.getAttribute('data-tl')];
      if (!tl) return;
      document.querySelectorAll('button.occ.selected, li.entry.selected').forEach(function (x) { x.classList.remove('selected'); });
      btn.classList.add('selected');
      btn.closest('li.entry').classList.add('selected');
      tl.show(parseFloat(btn.getAttribute('data-b')), parseFloat(btn.getAttribute('data-e')));
      tl.canvas.scrollIntoView({ block: 'nearest' });
    });
  });
  window.addEventListener('resize', function () { Object.keys(timelines).forEach(function (k) { timelines[k].draw(); }); });
  // report.html#occ-0-0-1 opens with that occurrence shown, as if clicked: links to share.
  if (location.hash.length > 1) {
    var target = document.getElementById(location.hash.slice(1));
    if (target && target.classList.contains('occ')) target.click();
  }
})();
)JS";
}

}  // namespace ttap::analyze_render
