// Windows, features, dataset manifests and detection metrics, on real traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/dataset.hpp"
#include "ttap/features.hpp"
#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/metrics.hpp"
#include "ttap/tokenizer.hpp"
#include "ttap/tree.hpp"
#include "ttap/windows.hpp"

namespace ttap {
namespace {

using suite::data_path;

struct Fixture {
  Trace trace;
  EventTree tree;
  explicit Fixture(const std::string& name) : trace(load_trace(data_path(name))), tree(EventTree::build(trace)) {}
};

const Fixture& nw0() {
  static const Fixture f("kineto_resnet50_v100_nw0.json.gz");
  return f;
}

const std::string kTokenizer = std::string(TTAP_SOURCE_DIR) + "/models/ttap_names.model";

const Tokenizer& tokenizer() {
  static const Tokenizer t = [] {
    ::setenv("TTAP_SPM_MODULE", TTAP_SPM_MODULE_PATH, 1);
    return Tokenizer::load(kTokenizer);
  }();
  return t;
}

NameEncoder encoder() {
  return [](std::string_view n) { return tokenizer().encode(n); };
}

TEST(Windows, StepsCutIntoEqualContiguousWindows) {
  const auto& f = nw0();
  const SteadyState s = steady_state(f.trace, f.tree);
  ASSERT_EQ(s.source, "steps");
  EXPECT_EQ(s.begin, f.tree.steps().front().ts);
  EXPECT_EQ(s.end, f.tree.steps().back().end);
  const auto windows = make_windows(f.trace, f.tree, {100, 128});
  ASSERT_EQ(windows.size(), 100u);
  EXPECT_EQ(windows.front().begin, s.begin);
  EXPECT_EQ(windows.back().end, s.end);
  for (size_t i = 0; i < windows.size(); ++i) {
    const Window& w = windows[i];
    if (i > 0) {
      EXPECT_EQ(w.begin, windows[i - 1].end);
    }
    EXPECT_LE(std::llabs((w.end - w.begin) - (s.end - s.begin) / 100), 1);
    EXPECT_LE(w.events.size(), 128u);
    EXPECT_LE(w.events.size(), w.candidates);
    for (size_t k = 0; k < w.events.size(); ++k) {
      const EventId e = w.events[k];
      EXPECT_GE(f.trace.ts[e], w.begin);
      EXPECT_LT(f.trace.ts[e], w.end);
      if (k > 0) {
        EXPECT_LE(f.trace.ts[w.events[k - 1]], f.trace.ts[e]);
      }
    }
  }
}

// Every candidate event of the steady state lands in exactly one window when nothing is cut.
TEST(Windows, WithoutACapEveryCandidateIsKeptOnce) {
  const auto& f = nw0();
  const auto windows = make_windows(f.trace, f.tree, {37, 1 << 30});
  std::set<EventId> seen;
  size_t total = 0;
  for (const Window& w : windows) {
    EXPECT_EQ(w.events.size(), w.candidates);
    total += w.events.size();
    seen.insert(w.events.begin(), w.events.end());
  }
  EXPECT_EQ(seen.size(), total);
  const SteadyState s = steady_state(f.trace, f.tree);
  size_t kernels_inside = 0, kernels_kept = 0;
  for (EventId g : f.tree.gpu_events())
    if (f.trace.ts[g] >= s.begin && f.trace.ts[g] < s.end) ++kernels_inside;
  for (EventId e : seen) kernels_kept += is_gpu_activity(f.trace.category[e]);
  EXPECT_EQ(kernels_kept, kernels_inside);
}

// Over the cap, GPU work goes first, then its launches: a kept CPU op that launched
// nothing means no GPU event or launch of that window was dropped.
TEST(Windows, CapKeepsGpuWorkAndLaunchesFirst) {
  const auto& f = nw0();
  const auto full = make_windows(f.trace, f.tree, {100, 1 << 30});
  const auto capped = make_windows(f.trace, f.tree, {100, 32});
  size_t overflowing = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    if (full[i].events.size() <= 32) {
      EXPECT_EQ(full[i].events, capped[i].events);
      continue;
    }
    ++overflowing;
    ASSERT_EQ(capped[i].events.size(), 32u);
    size_t gpu_all = 0, gpu_kept = 0;
    for (EventId e : full[i].events) gpu_all += is_gpu_activity(f.trace.category[e]);
    for (EventId e : capped[i].events) gpu_kept += is_gpu_activity(f.trace.category[e]);
    EXPECT_EQ(gpu_kept, std::min<size_t>(gpu_all, 32));
  }
  EXPECT_GT(overflowing, 10u);
  EXPECT_EQ(capped[50].events, make_windows(f.trace, f.tree, {100, 32})[50].events);  // deterministic
}

TEST(Windows, SteadyStateFallsBackToGpuThenCpu) {
  const Fixture cpu("hta_cpu_only.json.gz");
  EXPECT_EQ(steady_state(cpu.trace, cpu.tree).source, cpu.tree.steps().empty() ? "cpu" : "steps");
  const Fixture gpu("hta_event_sync_small.json.gz");
  const SteadyState s = steady_state(gpu.trace, gpu.tree);
  if (gpu.tree.steps().empty()) {
    EXPECT_EQ(s.source, "gpu");
    int64_t lo = INT64_MAX;
    for (EventId g : gpu.tree.gpu_events()) lo = std::min(lo, gpu.trace.ts[g]);
    EXPECT_EQ(s.begin, lo);
  }
  EXPECT_LT(s.begin, s.end);
}

TEST(Features, NameNormalization) {
  EXPECT_EQ(normalize_event_name("ProfilerStep#12"), "ProfilerStep#N");
  EXPECT_EQ(normalize_event_name("torch/nn/modules/module.py(1194): _call_impl"), "torch/nn/modules/module.py(N): _call_impl");
  EXPECT_EQ(normalize_event_name("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                                 "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
            "at::native::vectorized_elementwise_kernel<N, at::native::FillFunctor<float>, at::detail::Array<char*, N> >");
  EXPECT_EQ(normalize_event_name("void at::native::(anonymous namespace)::f<float>(float*)"),
            "at::native::(anonymous namespace)::f<float>");
  EXPECT_EQ(normalize_event_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(normalize_event_name("volta_h884gemm_64x128_ldg8_nn"), "volta_h884gemm_64x128_ldg8_nn");
  EXPECT_EQ(normalize_event_name("tensor at 0x7f3a12bc00"), "tensor at 0x");
  EXPECT_EQ(normalize_event_name(std::string(500, 'a')).size(), 160u);
}

TEST(Features, ArraysFollowTheSpecification) {
  const auto& f = nw0();
  const WindowOptions opt{100, 128};
  const auto windows = make_windows(f.trace, f.tree, opt);
  const FeatureBatch b = compute_features(f.trace, f.tree, windows, opt, encoder());
  ASSERT_EQ(b.windows, 100);
  ASSERT_EQ(b.events, 128);
  ASSERT_EQ(b.event_numeric.size(), 100u * 128 * kNumericFeatures);
  ASSERT_EQ(b.name_tokens.size(), static_cast<size_t>(b.names) * kMaxNameTokens);
  for (int k = 0; k < kMaxNameTokens; ++k) EXPECT_EQ(b.name_tokens[k], 0);  // the padding row
  for (int64_t w = 0; w < b.windows; ++w) {
    const Window& win = windows[static_cast<size_t>(w)];
    EXPECT_DOUBLE_EQ(b.window_bounds[2 * w], to_us(win.begin));
    for (int64_t k = 0; k < b.events; ++k) {
      const size_t at = static_cast<size_t>(w * b.events + k);
      const float* num = &b.event_numeric[at * kNumericFeatures];
      if (static_cast<size_t>(k) >= win.events.size()) {
        EXPECT_EQ(b.event_mask[at], 0);
        EXPECT_EQ(b.event_name[at], 0);
        EXPECT_EQ(num[0], 0.0f);
        continue;
      }
      const EventId e = win.events[static_cast<size_t>(k)];
      EXPECT_EQ(b.event_mask[at], 1);
      EXPECT_EQ(b.event_kind[at], static_cast<int32_t>(f.trace.category[e]) + 1);
      EXPECT_GE(b.event_track[at], f.trace.track_of(e).gpu ? 1 : 9);
      EXPECT_LE(b.event_track[at], f.trace.track_of(e).gpu ? 8 : 16);
      EXPECT_FLOAT_EQ(num[0], static_cast<float>(std::log1p(to_us(f.trace.dur[e]))));
      EXPECT_GE(num[2], 0.0f);
      EXPECT_LT(num[2], 1.0f);
      EXPECT_EQ(num[5], is_gpu_activity(f.trace.category[e]) ? 1.0f : 0.0f);
      if (is_gpu_activity(f.trace.category[e]) && f.tree.launcher(e) != kNoEvent) {
        EXPECT_FLOAT_EQ(num[1], static_cast<float>(std::log1p(to_us(f.trace.ts[e] - f.trace.ts[f.tree.launcher(e)]))));
      }
      // The name row decodes back to the normalized name.
      std::vector<int> ids;
      for (int t = 0; t < kMaxNameTokens; ++t)
        if (int v = b.name_tokens[static_cast<size_t>(b.event_name[at]) * kMaxNameTokens + t]; v > 0) ids.push_back(v - 1);
      const std::string norm = normalize_event_name(f.trace.name_of(e));
      if (tokenizer().encode(norm).size() <= static_cast<size_t>(kMaxNameTokens)) {
        EXPECT_EQ(tokenizer().decode(ids), norm);
      }
    }
  }
}

// nw0's steps wait on the DataLoader with the GPU idle: the windows' GPU busy share must
// match the GPU timeline, and some windows must be nearly idle.
TEST(Features, WindowStatisticsAgreeWithTheTimeline) {
  const auto& f = nw0();
  const WindowOptions opt{100, 128};
  const auto windows = make_windows(f.trace, f.tree, opt);
  const FeatureBatch b = compute_features(f.trace, f.tree, windows, opt, encoder());
  double busy_ns = 0;
  size_t idle_windows = 0;
  for (int64_t w = 0; w < b.windows; ++w) {
    const float busy = b.window_stats[static_cast<size_t>(w * kWindowStats)];
    busy_ns += busy * static_cast<double>(windows[static_cast<size_t>(w)].end - windows[static_cast<size_t>(w)].begin);
    idle_windows += busy < 0.05f;
  }
  std::vector<Interval> gpu;
  for (EventId g : f.tree.gpu_events()) gpu.emplace_back(f.trace.ts[g], f.trace.end(g));
  const SteadyState s = steady_state(f.trace, f.tree);
  const double expect = static_cast<double>(clipped_length(merge_intervals(gpu), s.begin, s.end));
  EXPECT_NEAR(busy_ns, expect, expect * 1e-4);
  EXPECT_GE(idle_windows, 10u);
}

// What `ttap features` writes is what numpy reads: shapes, dtypes and values.
TEST(Features, CommandWritesNpyThatNumpyReads) {
  const std::string out = suite::scratch() + "/feat";
  const auto r = suite::run_ttap({"features", data_path("kineto_resnet50_v100_nw4.json.gz"), "-o", out, "--windows", "20",
                                  "--max-events", "64", "--model", std::string(TTAP_SOURCE_DIR) + "/models"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dir = out + "/kineto_resnet50_v100_nw4";
  ASSERT_TRUE(std::filesystem::exists(dir + "/meta.json")) << r.err;
  const auto py = suite::run_process(
      {"/usr/bin/python3", "-c",
       "import numpy as np, json, sys\n"
       "d = sys.argv[1]\n"
       "m = np.load(d + '/event_mask.npy'); x = np.load(d + '/event_numeric.npy'); t = np.load(d + '/name_tokens.npy')\n"
       "n = np.load(d + '/event_name.npy'); b = np.load(d + '/window_bounds.npy')\n"
       "meta = json.load(open(d + '/meta.json'))\n"
       "assert m.dtype == np.uint8 and m.shape == (20, 64), m.shape\n"
       "assert x.dtype == np.float32 and x.shape == (20, 64, 8), x.shape\n"
       "assert t.shape[1] == 16 and (t[0] == 0).all() and n.max() < t.shape[0]\n"
       "assert b.dtype == np.float64 and (b[1:, 0] == b[:-1, 1]).all()\n"
       "assert ((x[..., 2] >= 0) & (x[..., 2] < 1)).all() and (x[m == 0] == 0).all()\n"
       "assert meta['windows'] == 20 and meta['max_events'] == 64 and meta['numeric'][0] == 'log_dur'\n"
       "print(int(m.sum()))\n",
       dir});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_GT(std::stoi(py.out), 20 * 30);
}

TEST(Manifest, ManifestErrorsNameTheLine) {
  const std::string dir = suite::scratch() + "/ds-bad";
  std::filesystem::create_directories(dir);
  auto expect_error = [&](const std::string& manifest, const std::string& needle) {
    std::ofstream(dir + "/manifest.jsonl") << manifest;
    try {
      read_manifest(dir);
      ADD_FAILURE() << "no error for " << manifest;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string good = R"({"trace": "a.json", "label": "good", "split": "train", "anti_patterns": []})";
  expect_error(good + "\n{\"trace\": 1}\n", "manifest.jsonl:2");
  expect_error(R"({"trace": "a.json", "label": "bad", "split": "train", "anti_patterns": [{"type": "slow", "ts_begin": 1, "ts_end": 2}]})",
               "not a catalog id");
  expect_error(R"({"trace": "a.json", "label": "bad", "split": "train", "anti_patterns": [{"type": "host_sync", "ts_begin": 3, "ts_end": 2}]})",
               "ts_end before ts_begin");
  expect_error(R"({"trace": "a.json", "label": "bad", "split": "train", "anti_patterns": []})", "at least one labeled range");
  expect_error(R"({"trace": "a.json", "label": "good", "split": "dev"})", "split");
  expect_error("", "no entries");
  std::ofstream(dir + "/manifest.jsonl") << good << "\n\n"
                                          << R"({"trace": "b.json", "label": "bad", "split": "test", "task": "pose", "anti_patterns": [{"type": "host_sync", "ts_begin": 1.5, "ts_end": 2.25}]})"
                                          << "\n";
  const auto entries = read_manifest(dir);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].line, 3u);
  EXPECT_EQ(entries[1].ranges[0].begin, 1500);
  EXPECT_EQ(entries[1].ranges[0].end, 2250);
  EXPECT_EQ(entries[1].path, dir + "/b.json");
}

TEST(Manifest, WindowRuleIsTwentyPercentOfTheWindow) {
  std::vector<Window> w(3);
  for (int i = 0; i < 3; ++i) w[i].begin = i * 1000, w[i].end = (i + 1) * 1000;
  // 250 ns into window 1 (25%), 150 ns of window 2 (15%).
  const std::vector<LabeledRange> r{{"host_sync", 1750, 2150}};
  EXPECT_EQ(window_labels(w, r), (std::vector<uint8_t>{0, 1, 0}));
  const auto ids = window_label_ids(w, r);
  EXPECT_TRUE(ids[0].empty());
  EXPECT_EQ(ids[2], std::vector<std::string>{"host_sync"});
}

TEST(Metrics, AucRoc) {
  EXPECT_DOUBLE_EQ(auc_roc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(auc_roc({0.9, 0.8, 0.2, 0.1}, {0, 0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(auc_roc({0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}), 0.5);
  // Positives at 0.4 and 0.8 against negatives 0.1, 0.5, 0.8: (1 + 0 + 0 ... ) by hand:
  // 0.4 beats 0.1 (1) loses to 0.5, 0.8 -> 1; 0.8 beats 0.1, 0.5 (2) ties 0.8 (0.5) -> 2.5.
  EXPECT_NEAR(auc_roc({0.4, 0.8, 0.1, 0.5, 0.8}, {1, 1, 0, 0, 0}), 3.5 / 6.0, 1e-12);
  EXPECT_TRUE(std::isnan(auc_roc({0.1, 0.2}, {1, 1})));
}

}  // namespace
}  // namespace ttap
