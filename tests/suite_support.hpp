// Helpers for load_test, tree_test, analyze_test, cli_test and tokenizer_test: test data
// paths, a per-process scratch folder (removed at exit), running the ttap binary with
// posix_spawn (separate stdout/stderr, exit status, extra environment), and the bad-input
// fixtures shared by the loader and CLI suites.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ttap/trace.hpp"

extern char** environ;

namespace ttap::suite {

inline std::string data_path(const std::string& name) { return std::string(TTAP_TEST_DATA_DIR) + "/" + name; }

// How many times `what` occurs in `text` (a report line that must appear once).
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A scratch folder for this process; removed when the process exits.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ttap-suite-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const std::string& scratch() {
  static ScratchDir dir;
  return dir.path();
}

inline std::string write_file(const std::string& name, const std::string& content) {
  const std::string path = scratch() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ProcResult {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with argv, stdin from `stdin_path` (or /dev/null), extra
// environment entries "K=V" added (replacing existing ones of the same name).
inline ProcResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
                       const std::string& stdin_path = "/dev/null") {
  static int counter = 0;
  const std::string base = scratch() + "/run" + std::to_string(++counter);
  const std::string out_path = base + ".out", err_path = base + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& x : extra_env) replaced |= x.substr(0, x.find('=')) == key;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid = 0;
  ProcResult r;
  const int rc = ::posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = std::string("posix_spawn failed: ") + std::strerror(rc);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

// `ttap ARGS...`
inline ProcResult run_ttap(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {},
                const std::string& stdin_path = "/dev/null") {
  std::vector<std::string> argv{TTAP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, extra_env, stdin_path);
}

// `ttap analyze` with the rule scorer: no model file, so the CLI suites' findings do not
// move with training.
inline ProcResult analyze(std::vector<std::string> args, const std::vector<std::string>& extra_env = {}) {
  args.insert(args.begin(), {"analyze", "--scorer", "rules"});
  return run_ttap(args, extra_env);
}

// A shell pipeline (for stdin through a real pipe).
inline ProcResult shell(const std::string& command) { return run_process({"/bin/sh", "-c", command}); }

inline size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream ss(s);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

inline EventId find_event(const Trace& t, std::string_view name, size_t nth = 0) {
  for (EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e) == name && nth-- == 0) return e;
  return kNoEvent;
}

// ---- Bad input fixtures ------------------------------------------------------------------
// Each is written into the scratch folder at runtime. `message` is a substring the error
// must contain; when `offset_from`/`offset_to` are set, the reported byte offset must lie
// in [offset_from, offset_to] (the offending event or token in the file).
struct BadInput {
  std::string name;
  std::string content;
  std::string message;
  bool has_offset = false;
  uint64_t offset_from = 0;
  uint64_t offset_to = UINT64_MAX;
};

// gtest prints a failing parameter with this: the fixture's name, not its bytes.
inline void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

inline std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> v;
  auto event_case = [&](const std::string& name, const std::string& event, const std::string& message) {
    // A good event first, so the bad one is not at offset 0: its offset range is known.
    const std::string head = R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"ok","pid":1,"tid":1,"ts":1,"dur":1},)";
    const std::string content = head + event + "]}";
    v.push_back({name, content, message, true, head.size(), head.size() + event.size()});
  };
  const std::string gz = read_file(data_path("hta_event_sync_small.json.gz"));
  v.push_back({"empty.json", "", "empty input", false});
  v.push_back({"not_json.json", "this is not JSON\n", "", true, 0, 0});
  {
    // Cut after a comma, and cut inside a string: either way the error points into the file.
    const std::string good = R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2},)";
    const std::string after_comma = good + R"({"ph":"X","name":"b","ts":5,)";
    const std::string in_string = good + R"({"ph":"X","na)";
    v.push_back({"truncated_after_comma.json", after_comma, "", true, good.size(), after_comma.size()});
    v.push_back({"truncated_in_string.json", in_string, "", true, good.size(), in_string.size()});
  }
  // Half of a real .gz: the deflate stream ends early. zlib reports how far it got.
  v.push_back({"truncated.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip", true, 0, gz.size() / 2});
  // A real gzip header followed by bytes that are not deflate data.
  v.push_back({"corrupt.json.gz", gz.substr(0, 20) + std::string(200, 'x'), "gzip", true, 0, 220});
  v.push_back({"no_trace_events.json", R"({"schemaVersion":1,"deviceProperties":[],"traceName":"x"})", "no \"traceEvents\"", false});
  // Byte 33 is the '{' that stands where the array should be.
  v.push_back({"events_not_array.json", R"({"schemaVersion":1,"traceEvents":{"ph":"X"}})", "\"traceEvents\" must be an array", true,
               33, 33});
  event_case("ts_string.json", R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"abc","dur":1})", "\"ts\" must be a number");
  event_case("absurd_ts.json", R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1e300,"dur":1})", "absurd value");
  event_case("absurd_dur.json", R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":99999999999999})", "absurd duration");
  event_case("args_array.json", R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":[1]})", "\"args\"");
  event_case("no_ph.json", R"({"cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1})", "\"ph\"");
  // A second JSON value after the document, and a document that is a bare number.
  v.push_back({"trailing.json", R"({"traceEvents":[]} {"x":1})", "", true, 0, 25});
  v.push_back({"top_scalar.json", "42", "", true, 0, 2});
  event_case("name_number.json", R"({"ph":"X","cat":"cpu_op","name":5,"pid":1,"tid":1,"ts":1,"dur":1})", "\"name\" must be a string");
  v.push_back({"deep.json", std::string(100000, '['), "", true, 0, 100000});
  return v;
}

}  // namespace ttap::suite
