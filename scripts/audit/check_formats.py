#!/usr/bin/python3
"""Check that every format of `ttap analyze` says what its JSON says.

Independent of ttap's code: runs the binary once per format on each trace with the same
options, parses each output with its own parser (json for json and sarif, xml.etree for
junit, html.parser for html, regular expressions for text and markdown) and compares the
facts each format carries with the JSON report's. See scripts/audit/README.md.

    /usr/bin/python3 scripts/audit/check_formats.py [--ttap build/ttap] [--baseline BASE]
        [--args "--scorer rules --top-k 10 --fail-on warning"] TRACE...

One line per mismatch: trace, format, field, the JSON's value, the format's value. Exit 1
when any line was printed, 2 when ttap left no report.
"""
import argparse
import html.parser
import json
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET

from printed import rounding, to_ns, ttap_env

FORMATS = ("json", "text", "md", "html", "sarif", "junit")
DUR = r"([0-9][0-9.]*) (ns|us|ms|s)"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SARIF_STATE = {"new": "new", "unchanged": "unchanged", "worse": "updated", "better": "updated", "fixed": "absent"}
ONE_TIME = "one-time: CUDA graph capture (warm-up), not counted in recoverable, does not fail the gate"

# What a format leaves out on purpose: (format, field) -> why. A fact listed here is not
# looked for in that format; every other fact the JSON has must be there and agree.
OMITTED = {
    ("sarif", "headline"): "SARIF results are findings for code scanning; a run has no place for a trace's figures",
    ("junit", "headline"): "a JUnit testcase is a trace's verdict and its findings; CI readers show no figures",
    ("sarif", "recoverable"): "SARIF results are one per finding; the trace's total belongs to no one result",
    ("junit", "recoverable"): "a JUnit testcase lists the findings; the total is in the text, md, html and json reports",
    ("sarif", "score"): "SARIF results are findings; the score is a trace's",
    ("sarif", "flagged_windows"): "SARIF results are the grouped findings; a window's own findings are json, text --details and html",
    ("junit", "flagged_windows"): "the testcase lists the grouped findings; a window's own are json, text --details and html",
    ("md", "flagged_windows"): "the table lists the grouped findings, a pull-request comment's length; windows are in json, text, html",
    ("md", "group_windows"): "the table's occurrences column gives the steps; windows are in json, text, html and sarif",
    ("junit", "group_windows"): "the testcase gives the steps; windows are in json, text, html and sarif",
    ("html", "group_windows"): "each occurrence is a button onto the timeline, which shades the flagged windows",
    ("junit", "still_present"): "only their count (the baseline line): they fail no gate, and a testcase lists what this run found",
    ("junit", "fixed"): "only their count (the baseline line): a testcase lists what this run found",
    ("sarif", "baseline_counts"): "each result carries its own baselineState; SARIF has no run-level counts",
}


def close_dur(claimed_text, unit, actual):
    """A printed duration against the JSON's nanoseconds, at the precision printed."""
    return abs(to_ns(claimed_text, unit) - actual) <= 0.5 * rounding(claimed_text, unit) + 1e-6 * abs(actual) + 0.5


def close_pct(claimed_text, actual_fraction):
    return abs(float(claimed_text) - 100.0 * actual_fraction) <= 0.5 * rounding(claimed_text) + 1e-9


class Checker:
    def __init__(self, trace):
        self.trace = trace
        self.mismatches = 0

    def say(self, fmt, field, want, got):
        self.mismatches += 1
        print(f"{self.trace}\t{fmt}\t{field}\tjson={want!r}\t{fmt}={got!r}")

    def equal(self, fmt, field, want, got):
        if want != got:
            self.say(fmt, field, want, got)


# ---------------------------------------------------------------- costs as the formats word them

COST_RE = re.compile(r"^(?:~" + DUR + r" per step \(([0-9.]+)% of step time\)|" + DUR + r" \(([0-9.]+)% of the steady state\))")
SEVERITY_NOTE_RE = re.compile(r"; (error|warning|info): (\S+) costs ([0-9.]+)% of (?:step time|the steady state)")
SAVING_RE = re.compile(r"~" + DUR + r" (per step|over the profiled span) \(([0-9.]+)%\)")


def check_cost(c, fmt, field, g, text):
    """group_cost_text's words against the group's cost_ns / cost_per_step_ns / share."""
    m = COST_RE.match(text or "")
    if not m:
        c.say(fmt, field, "a cost", text)
        return
    if m.group(1):
        if g["cost_per_step_ns"] is None or not close_dur(m.group(1), m.group(2), g["cost_per_step_ns"]):
            c.say(fmt, field + ".cost_per_step", g["cost_per_step_ns"], m.group(1) + " " + m.group(2))
        pct = m.group(3)
    else:
        if g["cost_per_step_ns"] is not None or not close_dur(m.group(4), m.group(5), g["cost_ns"]):
            c.say(fmt, field + ".cost", (g["cost_ns"], g["cost_per_step_ns"]), m.group(4) + " " + m.group(5))
        pct = m.group(6)
    if not close_pct(pct, g["share"]):
        c.say(fmt, field + ".share", g["share"], pct)
    c.equal(fmt, field + ".one_time", g["one_time"], ONE_TIME in text)
    n = SEVERITY_NOTE_RE.search(text)
    if (n is None) != (g["severity_share"] is None):
        c.say(fmt, field + ".severity_share", g["severity_share"], n.group(0) if n else None)
    elif n:
        c.equal(fmt, field + ".severity_share.severity", g["severity"], n.group(1))
        c.equal(fmt, field + ".severity_share.id", g["id"], n.group(2))
        if not close_pct(n.group(3), g["severity_share"]):
            c.say(fmt, field + ".severity_share", g["severity_share"], n.group(3))


def check_saving(c, fmt, field, saving, text):
    """saving_text's words ("~60.1 ms per step (34.3%)") against a JSON saving (or null)."""
    m = SAVING_RE.search(text or "")
    if saving is None or m is None:
        if (saving is None) != (m is None):
            c.say(fmt, field, saving and saving["saved_per_step_ns"], text)
        return
    if not close_dur(m.group(1), m.group(2), saving["saved_per_step_ns"]):
        c.say(fmt, field + ".saved_per_step", saving["saved_per_step_ns"], m.group(1) + " " + m.group(2))
    c.equal(fmt, field + ".per_step", saving["per_step"], m.group(3) == "per step")
    if not close_pct(m.group(4), saving["step_share"]):
        c.say(fmt, field + ".step_share", saving["step_share"], m.group(4))


OCC_RE = re.compile(r"^(\d+) occurrences?(?: in steps? ([0-9, -]+))?")


def check_occurrences(c, fmt, field, g, text):
    m = OCC_RE.match(text or "")
    if not m:
        c.say(fmt, field, g["occurrence_count"], text)
        return
    c.equal(fmt, field, g["occurrence_count"], int(m.group(1)))
    steps = []
    for part in (m.group(2) or "").split(", "):
        if "-" in part:
            lo, hi = part.split("-")
            steps += range(int(lo), int(hi) + 1)
        elif part:
            steps.append(int(part))
    c.equal(fmt, field + ".steps", g["steps"], steps)


def expected_state(g):
    return g["baseline_state"] or ""


# ---------------------------------------------------------------- headline lines (text, md, html)

def expected_whatifs(t):
    """The what-if lines the headline shows: savings of at least 1% of a step whose id has a
    finding that is not all one-time capture work, or no finding at all."""
    out = []
    for s in t["savings"]:
        if s["step_share"] < 0.01:
            continue
        groups = [g for g in t["findings"] if g["id"] == s["id"]]
        if groups and all(g["one_time"] for g in groups):
            continue
        out.append(s)
    return out


GPU_LINE = re.compile(r"^GPU (\S+): busy ([0-9.]+)% of " + DUR + r" .*?, idle " + DUR + "$")
STEPS_LINE = re.compile(r"^(\d+) steps?, mean " + DUR + r": GPU busy ([0-9.]+)%, DataLoader ([0-9.]+)% of step time$")
LAUNCH_LINE = re.compile(r"^(\d+) launches: ([0-9.]+)% of kernels")
WHATIF_LINE = re.compile(r"^what-if (\S+): (.*) would save (~.*)$")


def check_headline(c, fmt, t, lines):
    h = t["headline"]
    gpus = [GPU_LINE.match(l) for l in lines if l.startswith("GPU ") and not l.startswith("GPU time")]
    c.equal(fmt, "headline.gpus", len(h["gpus"]), len(gpus))
    for g, m in zip(h["gpus"], gpus):
        if not m:
            c.say(fmt, "headline.gpu", g["device"], None)
            continue
        c.equal(fmt, "headline.gpu.device", str(g["device"]), m.group(1))
        if not close_pct(m.group(2), g["busy_ns"] / g["total_ns"] if g["total_ns"] else 0.0):
            c.say(fmt, "headline.gpu.busy", g["busy_ns"] / max(g["total_ns"], 1), m.group(2))
        if not close_dur(m.group(3), m.group(4), g["total_ns"]):
            c.say(fmt, "headline.gpu.total", g["total_ns"], m.group(3) + " " + m.group(4))
        if not close_dur(m.group(5), m.group(6), g["idle_ns"]):
            c.say(fmt, "headline.gpu.idle", g["idle_ns"], m.group(5) + " " + m.group(6))
    steps = [STEPS_LINE.match(l) for l in lines if re.match(r"^\d+ steps?, mean", l)]
    if (h["steps"] is None) != (not steps):
        c.say(fmt, "headline.steps", h["steps"], [m and m.group(0) for m in steps])
    elif steps and steps[0]:
        m, s = steps[0], h["steps"]
        c.equal(fmt, "headline.steps.count", s["count"], int(m.group(1)))
        if not close_dur(m.group(2), m.group(3), s["mean_ns"]):
            c.say(fmt, "headline.steps.mean", s["mean_ns"], m.group(2) + " " + m.group(3))
        if not close_pct(m.group(4), s["gpu_busy_share"]):
            c.say(fmt, "headline.steps.gpu_busy", s["gpu_busy_share"], m.group(4))
        if not close_pct(m.group(5), s["dataloader_share"]):
            c.say(fmt, "headline.steps.dataloader", s["dataloader_share"], m.group(5))
    launches = [LAUNCH_LINE.match(l) for l in lines if LAUNCH_LINE.match(l)]
    if (h["launches"] is None) != (not launches):
        c.say(fmt, "headline.launches", h["launches"], [m.group(0) for m in launches])
    elif launches:
        c.equal(fmt, "headline.launches.count", h["launches"]["count"], int(launches[0].group(1)))
        if not close_pct(launches[0].group(2), h["launches"]["short_kernel_share"]):
            c.say(fmt, "headline.launches.short", h["launches"]["short_kernel_share"], launches[0].group(2))
    whatifs = [WHATIF_LINE.match(l) for l in lines if WHATIF_LINE.match(l)]
    want = expected_whatifs(t)
    c.equal(fmt, "headline.what-if ids", [s["id"] for s in want], [m.group(1) for m in whatifs])
    for s, m in zip(want, whatifs):
        if s["id"] != m.group(1):
            break
        c.equal(fmt, f"headline.what-if {s['id']}.fix", s["fix"], m.group(2))
        check_saving(c, fmt, f"headline.what-if {s['id']}", s, m.group(3))


# ---------------------------------------------------------------- text

TEXT_GROUP = re.compile(r"^  (\d+)\. (error|warning|info) (\S+): (.*?)(?:  \[(\w+)\])? \(confidence ([0-9.]+), (\w+)\)$")
TEXT_WINDOW = re.compile(r"^  (window (\d+)|steady state) \[(\S+ ms) \.\. (\S+ ms)\]  (?:score ([0-9.]+)|\(rules across the whole of it\))$")
TEXT_WFINDING = re.compile(r"^    (error|warning|info) (\S+): (.*) \(confidence ([0-9.]+), (\w+)\)$")


def parse_text(out):
    """The terminal report (no color): header, headline, groups, baseline, --details windows."""
    lines = out.splitlines()
    doc = {"head": lines[0] if lines else "", "headline": [], "groups": [], "windows": [], "recoverable": None,
           "baseline": None, "fixed": [], "still": []}
    section = "headline"
    cur = None
    for line in lines[1:]:
        if line.startswith("  window scores |"):
            doc["strip"] = line
            section = "strip"
            continue
        if line == "  findings, ranked by what fixing them saves:":
            section = "groups"
            continue
        if line == "  flagged windows (--details):":
            section = "windows"
            continue
        m = re.match(r"^  recoverable: ~([0-9.]+)% of (step time|the steady state) if every finding is fixed$", line)
        if m:
            doc["recoverable"] = m
            section = "after"
            continue
        m = re.match(r"^  against the baseline (.*?): (\d+ new, .*)$", line)
        if m:
            doc["baseline"] = m.group(2)
            section = "baseline"
            continue
        if section == "headline" and line.startswith("  "):
            doc["headline"].append(line[2:])
        elif section == "groups":
            m = TEXT_GROUP.match(line)
            if m:
                cur = {"rank": int(m.group(1)), "severity": m.group(2), "id": m.group(3), "name": m.group(4),
                       "state": m.group(5) or "", "confidence": m.group(6), "source": m.group(7), "lines": []}
                doc["groups"].append(cur)
            elif cur is not None and line.startswith("      "):
                cur["lines"].append(line[6:])
        elif section == "baseline":
            # an origin may hold ": " ("model.py(10681): call"); a catalog name holds neither ":" nor "("
            m = re.match(r"^    fixed (\S+)(?: at (.*?))?: ([^:(]*) \(was (.*)\)$", line)
            if m:
                doc["fixed"].append({"id": m.group(1), "origin": m.group(2) or "", "cost": m.group(4)})
                continue
            m = re.match(r"^    (worse|better|unchanged) (\S+)(?: at (.*?))?: [^:(]*, still here below this report's findings: (.*) \(was (.*)\)$",
                         line)
            if m:
                doc["still"].append({"state": m.group(1), "id": m.group(2), "origin": m.group(3) or "", "cost": m.group(4)})
        elif section == "windows":
            m = TEXT_WINDOW.match(line)
            if m:
                cur = {"label": m.group(1), "score": m.group(5), "findings": []}
                doc["windows"].append(cur)
                continue
            m = TEXT_WFINDING.match(line)
            if m and doc["windows"]:
                cur = {"severity": m.group(1), "id": m.group(2), "lines": []}
                doc["windows"][-1]["findings"].append(cur)
            elif line.startswith("      ") and doc["windows"] and doc["windows"][-1]["findings"]:
                doc["windows"][-1]["findings"][-1]["lines"].append(line[6:])
    return doc


def group_fields(lines):
    """A text group's lines after its header: origin, occurrences, cost, fix."""
    out = {"origin": "", "occ": None, "cost": None, "fix": None}
    for l in lines:
        if l.startswith("in ") and out["occ"] is None:
            out["origin"] = l[3:]
        elif OCC_RE.match(l) and out["occ"] is None:
            out["occ"] = l
        elif l.startswith("costs ") and out["cost"] is None:
            out["cost"] = l[len("costs "):]
        elif l.startswith("fix: "):
            out["fix"] = l[len("fix: "):]
    return out


def window_label(w):
    return "steady state" if w["scope"] == "steady_state" else f"window {w['index']}"


def check_text(c, t, out):
    d = parse_text(out)
    verdict = {"flagged": "FLAGGED", "clean": "clean"}[t["verdict"]]
    m = re.match(r"^(.*): (FLAGGED|clean)(?:  score ([0-9.]+) \((\w+)(?: on (.*))?\))?$", d["head"])
    if not m:
        c.say("text", "header", t["path"], d["head"])
        return
    c.equal("text", "verdict", verdict, m.group(2))
    if t["scorer"] is not None:
        c.equal("text", "score", f"{t['score']:.2f}", m.group(3))
    check_headline(c, "text", t, d["headline"])
    if t["findings"] and d["recoverable"] is None:
        c.say("text", "recoverable", t["recoverable_share"], None)
    elif d["recoverable"] and not close_pct(d["recoverable"].group(1), t["recoverable_share"]):
        c.say("text", "recoverable", t["recoverable_share"], d["recoverable"].group(1))
    c.equal("text", "findings", [(g["id"], g["origin"]) for g in t["findings"]],
            [(g["id"], group_fields(g["lines"])["origin"]) for g in d["groups"]])
    for i, (g, p) in enumerate(zip(t["findings"], d["groups"])):
        f = f"finding {i + 1} {g['id']}"
        if g["id"] != p["id"]:
            continue
        fields = group_fields(p["lines"])
        c.equal("text", f + ".severity", g["severity"], p["severity"])
        c.equal("text", f + ".state", expected_state(g), p["state"])
        c.equal("text", f + ".fix", g["fix"] or None, fields["fix"])
        c.equal("text", f + ".evidence", g["evidence"], [l[2:] for l in p["lines"] if l.startswith("- ")])
        c.equal("text", f + ".confidence", f"{g['confidence']:.2f}", p["confidence"])
        occ = fields["occ"] or ""
        check_occurrences(c, "text", f + ".occurrences", g, occ)
        wm = re.search(r"\(flagged windows? ([0-9, ]+)\)", occ)
        c.equal("text", f + ".windows", g["windows"], [int(x) for x in wm.group(1).split(", ")] if wm else [])
        c.equal("text", f + ".steady_state", g["steady_state"], "(across the steady state)" in occ)
        cost = fields["cost"] or ""
        check_cost(c, "text", f + ".cost", g, cost)
        sv = cost.split("; what-if: fixing it saves ", 1)
        check_saving(c, "text", f + ".saving", g["saving"], sv[1] if len(sv) > 1 else None)
    check_baseline_lists(c, "text", t, d["fixed"], d["still"])
    if t["baseline"] is not None:
        check_baseline_counts(c, "text", t, d["baseline"])
    check_windows(c, "text", t, [(w["label"], w["score"], [(f["severity"], f["id"], next((l[5:] for l in f["lines"] if l.startswith("fix: ")), None))
                                                        for f in w["findings"]]) for w in d["windows"]])


def check_windows(c, fmt, t, got):
    """Flagged windows in order, each with its score and its findings (severity, id, fix)."""
    want = [(window_label(w), None if w["scope"] == "steady_state" else f"{w['score']:.2f}",
             [(f["severity"], f["id"], f["fix"] or None) for f in w["findings"]]) for w in t["flagged_windows"]]
    c.equal(fmt, "flagged_windows", [w[0] for w in want], [w[0] for w in got])
    for w, g in zip(want, got):
        if w[0] != g[0]:
            break
        if w[1] is not None:
            c.equal(fmt, f"{w[0]}.score", w[1], g[1])
        c.equal(fmt, f"{w[0]}.findings", [f[:2] for f in w[2]], [f[:2] for f in g[2]])
        if w[2] and g[2]:
            c.equal(fmt, f"{w[0]}.first finding fix", w[2][0][2], g[2][0][2])


BASE_COUNTS = re.compile(r"^(\d+) new, (\d+) worse, (\d+) better, (\d+) unchanged, (\d+) fixed"
                         r"(?:; still here below this report's findings: (\d+) worse, (\d+) better, (\d+) unchanged)?")


def check_baseline_counts(c, fmt, t, text):
    b = t["baseline"]
    m = BASE_COUNTS.match(text or "")
    if not m:
        c.say(fmt, "baseline counts", {k: b[k] for k in ("new", "worse", "better", "unchanged", "fixed", "still_present")}, text)
        return
    still = {"worse": 0, "better": 0, "unchanged": 0}
    for g in b["still_present_findings"]:
        still[g["baseline_state"]] += 1
    want = [b["new"], b["worse"], b["better"], b["unchanged"], b["fixed"]]
    want += [still["worse"], still["better"], still["unchanged"]] if b["still_present"] else [None] * 3
    c.equal(fmt, "baseline counts", want, [int(x) if x is not None else None for x in m.groups()])


def check_baseline_lists(c, fmt, t, fixed, still):
    """The fixed findings and those still here below the listed ones: ids, origins, costs."""
    b = t["baseline"]
    if b is None:
        return
    for name, want, got in (("fixed", b["fixed_findings"], fixed), ("still_present", b["still_present_findings"], still)):
        if (fmt, name) in OMITTED:
            continue
        c.equal(fmt, name, [(g["id"], g["origin"]) for g in want], [(g["id"], g["origin"]) for g in got])
        for g, p in zip(want, got):
            if (g["id"], g["origin"]) == (p["id"], p["origin"]):
                check_cost(c, fmt, f"{name} {g['id']}.cost", g, p["cost"])
                if "state" in p:
                    c.equal(fmt, f"{name} {g['id']}.state", g["baseline_state"], p["state"])


# ---------------------------------------------------------------- markdown

def md_cells(row):
    cells, cur, i = [], "", 1
    while i < len(row):
        ch = row[i]
        if ch == "\\" and i + 1 < len(row) and row[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if ch == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    return cells


def unquote(cell):
    return cell[1:-1] if len(cell) >= 2 and cell[0] == "`" and cell[-1] == "`" else cell


def check_md(c, t, out):
    lines = out.splitlines()
    head = next((l for l in lines if l.startswith("## `")), "")
    m = re.match(r"^## `(.*)`: (\w+)$", head)
    c.equal("md", "verdict", t["verdict"], m and m.group(2))
    m = re.search(r"^Trace score \*\*([0-9.]+)\*\* \((\w+)(?: on [^)]*)?\), (\d+) windows?\.$", out, re.M)
    if t["scorer"] is not None:
        c.equal("md", "score", f"{t['score']:.2f}", m and m.group(1))
        c.equal("md", "windows", len(t["windows"]), m and int(m.group(3)))
    check_headline(c, "md", t, [l[2:] for l in lines if l.startswith("- ") and not l.startswith("- first occurrences")
                                and lines.index(l) < next((i for i, x in enumerate(lines) if x.startswith("| #")), len(lines))])
    m = re.search(r"^Fixing every finding would recover ~([0-9.]+)% of", out, re.M)
    if t["findings"] and not m:
        c.say("md", "recoverable", t["recoverable_share"], None)
    elif m and not close_pct(m.group(1), t["recoverable_share"]):
        c.say("md", "recoverable", t["recoverable_share"], m.group(1))
    rows = [md_cells(l) for l in lines if re.match(r"^\| \d+ \| ", l)]
    c.equal("md", "findings", [(g["id"], g["origin"]) for g in t["findings"]], [(unquote(r[2]), unquote(r[3])) for r in rows])
    for i, (g, r) in enumerate(zip(t["findings"], rows)):
        f = f"finding {i + 1} {g['id']}"
        if unquote(r[2]) != g["id"]:
            continue
        c.equal("md", f + ".rank", str(i + 1), r[0])
        c.equal("md", f + ".severity", g["severity"], r[1])
        check_occurrences(c, "md", f + ".occurrences", g, r[4])
        check_cost(c, "md", f + ".cost", g, r[5])
        check_saving(c, "md", f + ".saving", g["saving"], r[6] or None)
        c.equal("md", f + ".fix", g["fix"].replace("\n", " "), r[8])
        if t["baseline"] is not None:
            c.equal("md", f + ".state", expected_state(g), r[9].strip("*") if len(r) > 9 else None)
    # Each evidence box: "<details><summary>RANK. ID[ in <code>ORIGIN</code>]: evidence</summary>", its lines "- ..."
    boxes, box = {}, None
    for l in lines:
        m = re.match(r"^<details><summary>(\d+)\. (\S+)", l)
        if m:
            box = boxes.setdefault(int(m.group(1)), [])
        elif l == "</details>":
            box = None
        elif box is not None and l.startswith("- ") and not l.startswith("- first occurrences: ") and not l.startswith("- LLM: "):
            box.append(l[2:].replace("\\|", "|"))
    for i, g in enumerate(t["findings"]):
        c.equal("md", f"finding {i + 1} {g['id']}.evidence", [e.replace("\n", " ") for e in g["evidence"]], boxes.get(i + 1, []))
    if t["baseline"] is not None:
        m = re.search(r"^Against the baseline `.*`: \*\*(.*)\*\*\.$", out, re.M)
        check_baseline_counts(c, "md", t, m and m.group(1))
        fixed, still = [], []
        section = None
        for l in lines:
            if l.startswith("Fixed since the baseline"):
                section = fixed
            elif l.startswith("Still here from the baseline"):
                section = still
            elif section is not None and l.startswith("- "):
                if section is still:
                    m = re.match(r"^- (?:\*\*)?(worse|better|unchanged)(?:\*\*)? `(\S+)`(?: in `(.*?)`)?: .*?: (.*) \(was (.*)\)$", l)
                    if m:
                        still.append({"state": m.group(1), "id": m.group(2), "origin": m.group(3) or "", "cost": m.group(4)})
                else:
                    # "- `id` in `origin`: name (was COST)"
                    m = re.match(r"^- `(\S+)`(?: in `(.*?)`)?: .* \(was (.*)\)$", l)
                    if m:
                        fixed.append({"id": m.group(1), "origin": m.group(2) or "", "cost": m.group(3)})
            elif section is not None and l and not l.startswith("- "):
                section = None
        check_baseline_lists(c, "md", t, fixed, still)


# ---------------------------------------------------------------- html

VOID = {"br", "meta", "img", "input", "hr", "link", "col", "area", "base", "wbr", "source"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def cls(self):
        return (self.attrs.get("class") or "").split()

    def text(self):
        return "".join(ch if isinstance(ch, str) else ("\n" if ch.tag == "br" else ch.text()) for ch in self.children)

    def find_all(self, pred):
        for ch in self.children:
            if isinstance(ch, Node):
                if pred(ch):
                    yield ch
                yield from ch.find_all(pred)


class Dom(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def by_class(root, tag, cls):
    return list(root.find_all(lambda n: n.tag == tag and cls in n.cls()))


def check_html(c, t, out):
    dom = Dom(out).root
    sections = list(dom.find_all(lambda n: n.tag == "section" and "trace" in n.cls()))
    if len(sections) != 1:
        c.say("html", "sections", 1, len(sections))
        return
    s = sections[0]
    verdict = by_class(s, "span", "verdict")
    c.equal("html", "verdict", t["verdict"], verdict and verdict[0].text())
    p = next(s.find_all(lambda n: n.tag == "p" and n.text().startswith("Trace score")), None)
    m = p and re.match(r"^Trace score ([0-9.]+) \((\w+)(?: on [^)]*)?\); (\d+) windows? over", p.text())
    if t["scorer"] is not None:
        c.equal("html", "score", f"{t['score']:.2f}", m and m.group(1))
        c.equal("html", "windows", len(t["windows"]), m and int(m.group(3)))
    head = by_class(s, "ul", "headline")
    check_headline(c, "html", t, [li.text() for li in head[0].find_all(lambda n: n.tag == "li")] if head else [])
    rec = by_class(s, "p", "recoverable")
    m = rec and re.search(r"~([0-9.]+)% of", rec[0].text())
    if t["findings"] and not m:
        c.say("html", "recoverable", t["recoverable_share"], None)
    elif m and not close_pct(m.group(1), t["recoverable_share"]):
        c.say("html", "recoverable", t["recoverable_share"], m.group(1))
    entries = by_class(s, "li", "entry")
    got = []
    for li in entries:
        before = Node("li", [], None)
        before.children = [ch for ch in li.children if not (isinstance(ch, Node) and ch.tag == "details")]
        lines = [l.strip() for l in before.text().split("\n")]
        sev = by_class(li, "span", "sev")
        code = next(li.find_all(lambda n: n.tag == "code"), None)
        state = by_class(li, "span", "state")
        origin = next((l[3:] for l in lines[1:] if l.startswith("in ")), "")
        fix = by_class(li, "p", "fix")
        got.append({"severity": sev[0].text() if sev else None, "id": code.text() if code else None, "origin": origin,
                    "state": state[0].text().strip("[]") if state else "",
                    "saving": next((l for l in lines if l.startswith("fixing it saves ")), None),
                    "cost": next((l[len("costs "):] for l in lines if l.startswith("costs ")), None),
                    "occ": next((l for l in lines if OCC_RE.match(l)), ""),
                    "fix": fix[0].text()[len("Fix: "):] if fix else None,
                    "evidence": [n.text() for d in li.find_all(lambda n: n.tag == "details") for n in d.find_all(lambda n: n.tag == "li")
                                 if not n.text().startswith("LLM: ")]})
    c.equal("html", "findings", [(g["id"], g["origin"]) for g in t["findings"]], [(g["id"], g["origin"]) for g in got])
    for i, (g, p) in enumerate(zip(t["findings"], got)):
        f = f"finding {i + 1} {g['id']}"
        if p["id"] != g["id"]:
            continue
        c.equal("html", f + ".severity", g["severity"], p["severity"])
        c.equal("html", f + ".state", expected_state(g), p["state"])
        c.equal("html", f + ".fix", g["fix"] or None, p["fix"])
        c.equal("html", f + ".evidence", g["evidence"], p["evidence"])
        check_occurrences(c, "html", f + ".occurrences", g, p["occ"])
        check_cost(c, "html", f + ".cost", g, p["cost"] or "")
        check_saving(c, "html", f + ".saving", g["saving"], p["saving"])
    rows = []
    for table in by_class(s, "table", "findings"):
        for tr in table.find_all(lambda n: n.tag == "tr"):
            tds = [n for n in tr.children if isinstance(n, Node) and n.tag == "td"]
            if not tds:
                continue
            fix = by_class(tds[8], "p", "fix")
            rows.append((tds[0].text(), tds[2].text(), tds[3].text(), next(tds[4].find_all(lambda n: n.tag == "code")).text(),
                         fix[0].text()[len("Fix: "):] if fix else None))
    windows = []
    for label, score, sev, fid, fix in rows:
        if not windows or windows[-1][0] != label:
            windows.append((label, score, []))
        windows[-1][2].append((sev, fid, fix))
    check_windows(c, "html", t, windows)
    if t["baseline"] is not None:
        b = by_class(s, "p", "baseline")
        m = b and re.search(r": (\d+ new, .*?)\.?$", b[0].text())
        check_baseline_counts(c, "html", t, m and m.group(1))
        lists = []
        for cls in ("fixed", "still-present"):
            items = []
            for ul in by_class(s, "ul", cls):
                for li in ul.find_all(lambda n: n.tag == "li"):
                    codes = [n.text() for n in li.find_all(lambda n: n.tag == "code")]
                    cost = by_class(li, "span", "cost")
                    st = re.match(r"^(worse|better|unchanged) ", li.text())
                    items.append({"id": codes[0] if codes else None, "origin": codes[1] if len(codes) > 1 else "",
                                  "cost": cost[0].text() if cost else None})
                    if cls == "still-present":
                        items[-1]["state"] = st and st.group(1)
            lists.append(items)
        check_baseline_lists(c, "html", t, lists[0], lists[1])


# ---------------------------------------------------------------- sarif

def check_sarif(c, t, out):
    doc = json.loads(out)
    c.equal("sarif", "version", "2.1.0", doc.get("version"))
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = [r for r in run["results"] if r["properties"]["trace"] == t["path"]]
    c.equal("sarif", "executionSuccessful", True, run["invocations"][0]["executionSuccessful"])
    b = t["baseline"]
    want = [(g, "listed") for g in t["findings"]]
    if b is not None:
        want += [(g, "fixed") for g in b["fixed_findings"]] + [(g, "below") for g in b["still_present_findings"]]
    c.equal("sarif", "results", [(g["id"], g["origin"]) for g, _ in want], [(r["ruleId"], r["properties"]["origin"]) for r in results])
    for i, ((g, kind), r) in enumerate(zip(want, results)):
        f = f"result {i + 1} {g['id']}"
        if r["ruleId"] != g["id"]:
            continue
        level = "none" if kind == "fixed" else "note" if kind == "below" else SARIF_LEVEL[g["severity"]]
        c.equal("sarif", f + ".level", level, r["level"])
        if "ruleIndex" in r:
            c.equal("sarif", f + ".ruleIndex", g["id"], rules[r["ruleIndex"]]["id"])
        p = r["properties"]
        c.equal("sarif", f + ".occurrences", g["occurrence_count"], p["occurrences"])
        c.equal("sarif", f + ".windows", g["windows"], p["windows"])
        c.equal("sarif", f + ".costNs", g["cost_ns"], p["costNs"])
        c.equal("sarif", f + ".costPerStepNs", g["cost_per_step_ns"], p["costPerStepNs"])
        c.equal("sarif", f + ".share", g["share"], p["share"])
        c.equal("sarif", f + ".oneTime", g["one_time"], p["oneTime"])
        c.equal("sarif", f + ".baselineState", SARIF_STATE.get(g["baseline_state"]), r.get("baselineState"))
        c.equal("sarif", f + ".baseline", g["baseline_state"], p.get("baseline"))
        text = r["message"]["text"]
        m = re.search(r": (\d+ occurrences?[^.]*)\. Costs (.*?)\.(?: What-if: fixing it saves (.*?)\.)?(?: |$)", text)
        if not m:
            c.say("sarif", f + ".message", g["id"], text)
            continue
        check_occurrences(c, "sarif", f + ".message occurrences", g, m.group(1))
        check_cost(c, "sarif", f + ".message cost", g, m.group(2))
        check_saving(c, "sarif", f + ".message saving", g["saving"], m.group(3))
        for e in g["evidence"]:
            if f" {e}." not in text:
                c.say("sarif", f + ".evidence", e, None)
        fm = text.rsplit(" Fix: ", 1)
        c.equal("sarif", f + ".fix", g["fix"] or None, fm[1] if len(fm) > 1 else None)
        if g["baseline_state"] in ("worse", "better") and g["baseline_share"] is not None:
            bm = re.search(r" (Worse|Better) than the baseline \(([0-9.]+)% of (step time|the steady state) there\)", text)
            c.equal("sarif", f + ".baseline", g["baseline_state"], bm and bm.group(1).lower())
            if bm and not close_pct(bm.group(2), g["baseline_share"]):
                c.say("sarif", f + ".baseline share", g["baseline_share"], bm.group(2))
            if bm:
                c.equal("sarif", f + ".baseline share of", "step time" if g["baseline_cost_per_step_ns"] is not None else "the steady state",
                        bm.group(3))


# ---------------------------------------------------------------- junit

JUNIT_HEAD = re.compile(r"^\[(error|warning|info)\] (\S+): (.*)$")


def check_junit(c, t, out, report):
    root = ET.fromstring(out)
    c.equal("junit", "testsuites.tests", str(len(report["traces"])), root.get("tests"))
    c.equal("junit", "testsuites.failures", str(sum(1 for x in report["traces"] if x["gate_failed"] and x["verdict"] != "error")),
            root.get("failures"))
    case = next((tc for tc in root.iter("testcase") if tc.get("name") == t["path"]), None)
    if case is None:
        c.say("junit", "testcase", t["path"], None)
        return
    failure = case.find("failure")
    c.equal("junit", "gate (failure)", t["gate_failed"], failure is not None)
    body = failure.text if failure is not None else (case.findtext("system-out") or "")
    if failure is not None:
        # "N finding(s), score S[: IDS][; other gates]", against a baseline "COUNTS against the baseline[: IDS]..."
        msg = failure.get("message", "")
        if t["baseline"] is None:
            m = re.match(r"^(\d+) finding\(s\), score ([0-9.]+)", msg)
            c.equal("junit", "failure message", (len(t["findings"]), f"{t['score']:.2f}"), m and (int(m.group(1)), m.group(2)))
        else:
            m = re.match(r"^(.*?) against the baseline", msg)
            check_baseline_counts(c, "junit", t, m and m.group(1))
        least = {"warning": ("warning", "error"), "error": ("error",)}.get(report["settings"]["fail_on"], ())
        ids = []
        for g in t["findings"]:
            gated = t["baseline"] is None or g["baseline_state"] in ("new", "worse")
            if g["severity"] in least and gated and g["source"] != "llm" and not g["one_time"] and g["id"] not in ids:
                ids.append(g["id"])
        m = re.search(r"against the baseline: ([^;]*)|^\d+ finding\(s\), score [0-9.]+: ([^;]*)", msg)
        c.equal("junit", "failure message ids", ids, (m.group(1) or m.group(2)).split(", ") if m else [])
    groups = []
    for line in (body or "").splitlines():
        m = JUNIT_HEAD.match(line)
        if m:
            groups.append({"severity": m.group(1), "id": m.group(2), "rest": m.group(3), "lines": []})
        elif groups and line.startswith("  "):
            groups[-1]["lines"].append(line[2:])
    c.equal("junit", "findings", [g["id"] for g in t["findings"]], [g["id"] for g in groups])
    for i, (g, p) in enumerate(zip(t["findings"], groups)):
        f = f"finding {i + 1} {g['id']}"
        if g["id"] != p["id"]:
            continue
        c.equal("junit", f + ".severity", g["severity"], p["severity"])
        state = expected_state(g)
        c.equal("junit", f + ".name, origin, state", g["name"] + (" in " + g["origin"] if g["origin"] else "") + (f" ({state})" if state else ""),
                p["rest"])
        occ = p["lines"][0] if p["lines"] else ""
        occ_text, _, cost = occ.partition("; costs ")
        check_occurrences(c, "junit", f + ".occurrences", g, occ_text)
        check_cost(c, "junit", f + ".cost", g, cost)
        check_saving(c, "junit", f + ".saving", g["saving"], next((l[len("what-if: "):] for l in p["lines"] if l.startswith("what-if: ")), None))
        c.equal("junit", f + ".fix", g["fix"] or None, next((l[len("fix: "):] for l in p["lines"] if l.startswith("fix: ")), None))
        c.equal("junit", f + ".evidence", g["evidence"], [l[2:] for l in p["lines"] if l.startswith("- ")])
    if t["baseline"] is not None:
        m = re.search(r"^against the baseline .*?: (\d+ new, .*)$", body or "", re.M)
        check_baseline_counts(c, "junit", t, m and m.group(1))


# ---------------------------------------------------------------- driver

def run(ttap, trace, fmt, args):
    cmd = [ttap, "analyze", trace, "--format", fmt, "--no-progress", "--threads", "1"] + args
    if fmt == "text":
        cmd.append("--details")
    env = ttap_env()
    env["NO_COLOR"] = "1"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:  # a binary being relinked: said as a run with no report
        return f"not run ({e.strerror})", ""
    return p.returncode, p.stdout


def check_trace(ttap, trace, args):
    c = Checker(trace)
    outs = {fmt: run(ttap, trace, fmt, args) for fmt in FORMATS}
    try:
        report = json.loads(outs["json"][1])
    except ValueError:
        print(f"{trace}\tjson\treport\tttap exited {outs['json'][0]} with no report", file=sys.stderr)
        return None
    t = report["traces"][0]
    want_code = 2 if t["verdict"] == "error" and not t.get("internal_error") else 3 if t["verdict"] == "error" else 1 if t["gate_failed"] else 0
    for fmt in FORMATS:
        c.equal(fmt, "exit code", want_code, outs[fmt][0])
    if t["verdict"] == "error":
        return c.mismatches
    for fmt, check in (("text", check_text), ("md", check_md), ("html", check_html), ("sarif", check_sarif)):
        try:
            check(c, t, outs[fmt][1])
        except Exception as e:  # a format that cannot be parsed at all is a mismatch, not a crash
            c.say(fmt, "parse", "a report", f"{type(e).__name__}: {e}")
    try:
        check_junit(c, t, outs["junit"][1], report)
    except Exception as e:
        c.say("junit", "parse", "a report", f"{type(e).__name__}: {e}")
    return c.mismatches


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ttap", default="build/ttap")
    ap.add_argument("--args", default="", help="options for every `ttap analyze` run, e.g. \"--scorer rules --fail-on warning\"")
    ap.add_argument("--baseline", help="a baseline (report or trace) for every run")
    ap.add_argument("--omitted", action="store_true", help="print what each format leaves out on purpose, and why")
    ap.add_argument("traces", nargs="*")
    a = ap.parse_args()
    if a.omitted:
        for (fmt, field), why in sorted(OMITTED.items()):
            print(f"{fmt}\t{field}\t{why}")
        return
    if not a.traces:
        ap.error("no trace given")
    args = shlex.split(a.args) + (["--baseline", a.baseline] if a.baseline else [])
    total, broken = 0, 0
    for trace in a.traces:
        n = check_trace(a.ttap, trace, args)
        if n is None:
            broken += 1
            continue
        total += n
        sys.stdout.flush()
        print(f"{trace}: {n} mismatch(es)", file=sys.stderr)
    print(f"{len(a.traces)} trace(s), {total} mismatch(es)", file=sys.stderr)
    sys.exit(2 if broken else 1 if total else 0)


if __name__ == "__main__":
    main()
