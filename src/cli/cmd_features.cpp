// `ttap features`: the detector's window features as .npy files, for training
// (scripts/train) and for checking what the model sees (docs/features.md).
#include <unistd.h>

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "ttap/dataset.hpp"
#include "ttap/features.hpp"
#include "ttap/input.hpp"
#include "ttap/model_files.hpp"
#include "ttap/scoring.hpp"
#include "ttap/tokenizer.hpp"

namespace ttap::cli {

namespace {

// "traces/a/b.json.gz" -> "traces__a__b": one flat, readable folder name per trace.
std::string folder_name(std::string path) {
  for (const char* ext : {".json.gz", ".json"})
    if (path.ends_with(ext)) {
      path.resize(path.size() - std::string_view(ext).size());
      break;
    }
  std::string out;
  for (char c : path) out += (c == '/' || c == '\\') ? std::string("__") : std::string(1, c);
  while (out.starts_with(".") || out.starts_with("_")) out.erase(0, 1);
  return out;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += c;
  }
  return out + "\"";
}

std::string names_json(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + json_string(names[i]);
  return out + "]";
}

NameEncoder name_encoder(const Tokenizer& tokenizer) {
  return [&tokenizer](std::string_view name) { return tokenizer.encode(name); };
}

}  // namespace

int run_features(const FeaturesOptions& o) {
  const ModelFiles files = find_model_files(o.model);
  const Tokenizer tokenizer = Tokenizer::load(files.tokenizer);
  const WindowOptions wopt{o.windows, o.max_events};

  std::vector<DatasetEntry> entries;
  std::error_code ec;
  const bool dataset = o.inputs.size() == 1 && std::filesystem::is_regular_file(o.inputs[0] + "/manifest.jsonl", ec);
  if (dataset) {
    entries = read_manifest(o.inputs[0]);
  } else {
    // Plain traces: folders named by file name (a number added when two share one).
    std::map<std::string, int> seen;
    for (const std::string& path : expand_trace_inputs(o.inputs)) {
      DatasetEntry e;
      e.path = path;
      e.trace = folder_name(std::filesystem::path(path).filename().string());
      if (int n = seen[e.trace]++; n > 0) e.trace += fmt::format("-{}", n + 1);
      entries.push_back(std::move(e));
    }
  }
  std::filesystem::create_directories(o.output, ec);
  if (ec) throw InputError(o.output, fmt::format("cannot create the folder: {}", ec.message()));

  const bool tty = ::isatty(STDERR_FILENO) && spdlog::get_level() <= spdlog::level::info;
  std::string index;
  size_t failed = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DatasetEntry& e = entries[i];
    if (tty) fmt::print(stderr, "\r\033[Kttap: features {}/{} {}", i + 1, entries.size(), e.trace);
    try {
      Loaded l = load_and_build(e.path);
      const std::vector<Window> windows = make_windows(l.trace, l.tree, wopt);
      if (windows.empty()) throw InputError(e.path, "no activity to cut into windows");
      const FeatureBatch batch = compute_features(l.trace, l.tree, windows, wopt, name_encoder(tokenizer));
      const SteadyState s = steady_state(l.trace, l.tree);
      const std::string name = folder_name(e.trace);
      const std::string dir = o.output + "/" + name;
      std::string meta = fmt::format(
          "{{\"trace\": {}, \"feature_version\": {}, \"windows\": {}, \"max_events\": {}, \"steady_state\": {{\"source\": "
          "{}, \"begin_us\": {:.3f}, \"end_us\": {:.3f}}}, \"numeric\": {}, \"window_stats\": {}, \"tokenizer\": {}",
          json_string(e.path), kFeatureVersion, batch.windows, batch.events, json_string(s.source), to_us(s.begin),
          to_us(s.end), names_json(numeric_feature_names()), names_json(window_stat_names()), json_string(files.tokenizer));
      if (dataset) meta += fmt::format(", \"manifest\": {}", e.json);
      meta += "}\n";
      write_features(batch, dir, meta);
      if (o.scores) {
        ScoreOptions so;
        so.model = files.detector.empty() ? files.dir : files.detector;
        so.device = o.device;
        so.max_events = o.max_events;
        write_window_scores(dir, score_windows(l.trace, l.tree, windows, so).window);
      }
      if (dataset) {
        write_window_labels(dir, window_labels(windows, e.ranges));
        std::string ids = "[";
        for (const auto& w : window_label_ids(windows, e.ranges)) ids += (ids.size() > 1 ? ", " : "") + names_json(w);
        write_output(dir + "/window_ids.json", ids + "]\n");
        index += fmt::format("{{\"folder\": {}, \"trace\": {}, \"label\": {}, \"split\": {}, \"task\": {}}}\n",
                             json_string(name), json_string(e.trace), json_string(e.label), json_string(e.split),
                             json_string(e.task));
      }
    } catch (const InputError& err) {
      if (tty) fmt::print(stderr, "\r\033[K");
      spdlog::error("{}", err.what());
      ++failed;
    }
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  if (dataset) write_output(o.output + "/index.jsonl", index);
  spdlog::info("features of {} traces written to {}{}", entries.size() - failed, o.output,
               failed ? fmt::format(" ({} failed)", failed) : "");
  return failed ? kBadInput : kOk;
}

}  // namespace ttap::cli
