// The lenient loader: one bad event does not cost the whole trace. Each kind of bad event
// (a negative duration, an unpaired surrogate escape in a name, an id above 2^63-1, a
// UTF-8 byte-order mark) is put into the real trace hta_event_sync_small by a one-place
// text edit; by default the trace loads with that one event dropped or repaired and the
// repair counted, and with `strict` (`--strict` on the command line) it is refused as
// before. A document that is not JSON or is cut off stays an error in both modes (the
// bad_inputs() fixtures run in the default mode in load_test and cli_test).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "suite_support.hpp"
#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/summary_report.hpp"
#include "ttap/tree.hpp"

namespace {

using ttap::EventId;
using ttap::suite::data_path;
using ttap::suite::write_file;

// The real trace's JSON text.
const std::string& original() {
  static const std::string text = [] {
    ttap::RawInput raw = ttap::read_input(data_path("hta_event_sync_small.json.gz"), 1 << 30);
    return std::string(raw.json.data(), raw.json.size());
  }();
  return text;
}

// The trace with `from` replaced by `to` (each must occur `times` times), written to the
// scratch folder.
std::string edited(const std::string& name, const std::string& from, const std::string& to, int times = 1) {
  std::string text = original();
  int n = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++n;
  }
  EXPECT_EQ(n, times) << from;
  return write_file(name, text);
}

ttap::Trace load(const std::string& path, bool strict) {
  ttap::LoadOptions o;
  o.strict = strict;
  return ttap::load_trace(path, o);
}

// The strict loader's error on `path`: its message and offset.
ttap::InputError strict_error(const std::string& path) {
  try {
    load(path, true);
  } catch (const ttap::InputError& e) {
    return e;
  }
  ADD_FAILURE() << path << " loaded under strict";
  return ttap::InputError(path, "loaded");
}

size_t count_named(const ttap::Trace& t, std::string_view name) {
  size_t n = 0;
  for (EventId e = 0; e < t.size(); ++e) n += t.name_of(e) == name;
  return n;
}

const std::string kFill = R"("name": "aten::fill_", "pid": 948300, "tid": 948300,
    "ts": 1707417525512099, "dur": 50,)";

TEST(LenientLoad, NegativeDurationDropsThatEventOnly) {
  const ttap::Trace clean = load(data_path("hta_event_sync_small.json.gz"), true);
  std::string bad = kFill;
  bad.replace(bad.find("\"dur\": 50"), 9, "\"dur\": -50");
  const std::string path = edited("negative_dur.json", kFill, bad);
  const ttap::Trace t = load(path, false);
  ASSERT_EQ(t.size(), clean.size() - 1);
  EXPECT_EQ(count_named(clean, "aten::fill_"), 1u);
  EXPECT_EQ(count_named(t, "aten::fill_"), 0u);
  EXPECT_EQ(t.diagnostics.negative_durations_dropped, 1u);
  EXPECT_EQ(t.diagnostics.repaired_or_dropped(), 1u);
  EXPECT_EQ(clean.diagnostics.repaired_or_dropped(), 0u);
  // The other events are the clean trace's, in order.
  EventId c = 0;
  for (EventId e = 0; e < t.size(); ++e, ++c) {
    if (clean.name_of(c) == "aten::fill_") ++c;
    ASSERT_EQ(t.name_of(e), clean.name_of(c));
    ASSERT_EQ(t.ts[e], clean.ts[c]);
  }
  const ttap::InputError err = strict_error(path);
  EXPECT_NE(std::string(err.what()).find("negative duration"), std::string::npos) << err.what();
  ASSERT_TRUE(err.offset().has_value());
  EXPECT_LT(*err.offset(), original().find(kFill));  // the offending event's start
  EXPECT_GT(*err.offset(), original().find(kFill) - 100);
}

TEST(LenientLoad, UnpairedSurrogateIsReplacedByTheReplacementCharacter) {
  // A lone high surrogate, a lone low one, and a proper pair (U+1F600) that is no fault.
  const std::string path = edited("surrogate.json", R"("name": "aten::gt")", R"("name": "aten::gt\ud800 \udc00x \ud83d\ude00")");
  const ttap::Trace t = load(path, false);
  EXPECT_EQ(count_named(t, "aten::gt\xEF\xBF\xBD \xEF\xBF\xBDx \xF0\x9F\x98\x80"), 1u);
  EXPECT_EQ(t.diagnostics.surrogates_repaired, 1u);  // one string repaired
  EXPECT_EQ(t.size(), load(data_path("hta_event_sync_small.json.gz"), true).size());
  const ttap::InputError err = strict_error(path);
  EXPECT_NE(std::string(err.what()).find("\"name\" must be a string"), std::string::npos) << err.what();

  // A proper pair alone loads in both modes with nothing repaired.
  const std::string pair = edited("pair.json", R"("name": "aten::gt")", R"("name": "aten::gt\ud83d\ude00")");
  EXPECT_EQ(load(pair, true).diagnostics.repaired_or_dropped(), 0u);
  EXPECT_EQ(count_named(load(pair, false), "aten::gt\xF0\x9F\x98\x80"), 1u);
}

TEST(LenientLoad, CorrelationIdAboveInt64KeepsTheLaunchLinked) {
  // Correlation 1482 links cudaLaunchKernel to the FillFunctor kernel; both get 2^64-1.
  const std::string path = edited("big_corr.json", R"("correlation": 1482)", R"("correlation": 18446744073709551615)", 2);
  const ttap::Trace t = load(path, false);
  EXPECT_EQ(t.diagnostics.ids_above_int64, 2u);
  const ttap::EventTree tree = ttap::EventTree::build(t);
  size_t linked = 0;
  for (EventId g : tree.gpu_events()) {
    if (t.correlation[g] != -1) continue;  // 2^64-1 as 64 bits
    const EventId l = tree.launcher(g);
    ASSERT_NE(l, ttap::kNoEvent);
    EXPECT_EQ(t.name_of(l), "cudaLaunchKernel");
    EXPECT_EQ(t.correlation[l], -1);
    EXPECT_EQ(t.name_of(tree.owner_op(g)), "aten::fill_");
    ++linked;
  }
  EXPECT_EQ(linked, 1u);
  EXPECT_EQ(tree.diagnostics().gpu_without_launch, ttap::EventTree::build(load(data_path("hta_event_sync_small.json.gz"), true))
                                                       .diagnostics()
                                                       .gpu_without_launch);
  const ttap::InputError err = strict_error(path);
  EXPECT_NE(std::string(err.what()).find("\"correlation\" must be an integer"), std::string::npos) << err.what();
}

TEST(LenientLoad, ByteOrderMarkIsSkippedAndOffsetsStayTheFiles) {
  const std::string path = write_file("bom.json", "\xEF\xBB\xBF" + original());
  const ttap::Trace clean = load(data_path("hta_event_sync_small.json.gz"), true);
  const ttap::Trace t = load(path, false);
  ASSERT_EQ(t.size(), clean.size());
  for (EventId e = 0; e < t.size(); ++e) ASSERT_EQ(t.name_of(e), clean.name_of(e));
  EXPECT_EQ(t.diagnostics.byte_order_marks, 1u);
  const ttap::InputError err = strict_error(path);
  EXPECT_NE(std::string(err.what()).find("byte-order mark"), std::string::npos) << err.what();
  EXPECT_EQ(err.offset(), std::optional<uint64_t>(0));
  // The parser blanks the mark while it works and puts it back.
  ttap::InputBuffer buf(original().size() + 3);
  buf.resize(original().size() + 3);
  std::memcpy(buf.data(), "\xEF\xBB\xBF", 3);
  std::memcpy(buf.data() + 3, original().data(), original().size());
  (void)ttap::parse_trace("bom", buf);
  EXPECT_EQ(std::string(buf.data(), 3), "\xEF\xBB\xBF");
  // After a mark, a cut-off document is still an error at the end of the file.
  const std::string cut = write_file("bom_cut.json", "\xEF\xBB\xBF" + original().substr(0, original().size() / 2));
  try {
    load(cut, false);
    ADD_FAILURE() << "a cut-off document loaded";
  } catch (const ttap::InputError& e) {
    ASSERT_TRUE(e.offset().has_value()) << e.what();
    EXPECT_GE(*e.offset(), 3u);
  }
}

// Repairs made by worker threads on chunks are the same as in one whole-document pass.
TEST(LenientLoad, ChunkedAndWholeParsesRepairAlike) {
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 300; ++i) {
    if (i) json += ",";
    const std::string dur = i % 50 == 7 ? "-3" : "5";
    const std::string name = i % 40 == 3 ? R"(op\udfff)" : "op";
    const std::string corr = i % 60 == 11 ? "9223372036854775809" : std::to_string(i);
    json += R"({"ph":"X","cat":"cpu_op","name":")" + name + R"(","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) +
            R"(,"dur":)" + dur + R"(,"args":{"correlation":)" + corr + "}}";
  }
  json += "]}";
  const std::string path = write_file("repairs_chunked.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  ::setenv("TTAP_THREADS", "3", 1);
  const ttap::Trace chunked = load(path, false);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ::unsetenv("TTAP_THREADS");
  ::setenv("TTAP_PARSE_WHOLE", "1", 1);
  const ttap::Trace whole = load(path, false);
  ::unsetenv("TTAP_PARSE_WHOLE");
  // i % 50 == 7: 6 events dropped (7, 57, ..., 257); i % 40 == 3: 8 names repaired (3, 43,
  // ..., 283); i % 60 == 11: 5 ids above 2^63-1 (11, 71, ..., 251); no event has two faults.
  for (const ttap::Trace* t : {&chunked, &whole}) {
    EXPECT_EQ(t->size(), 294u);
    EXPECT_EQ(t->diagnostics.negative_durations_dropped, 6u);
    EXPECT_EQ(t->diagnostics.surrogates_repaired, 8u);
    EXPECT_EQ(t->diagnostics.ids_above_int64, 5u);
  }
  for (EventId e = 0; e < whole.size(); ++e) {
    ASSERT_EQ(chunked.name_of(e), whole.name_of(e));
    ASSERT_EQ(chunked.correlation[e], whole.correlation[e]);
  }
}

TEST(LenientLoadCli, OneWarningLineDiagnosticsRowAndStrictExitsTwo) {
  std::string bad = kFill;
  bad.replace(bad.find("\"dur\": 50"), 9, "\"dur\": -50");
  const std::string path = edited("cli_negative_dur.json", kFill, bad);
  const auto r = ttap::suite::run_ttap({"summary", "--table", "diagnostics", "--format", "csv", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "ttap: warning: " + path + ": 1 events with a negative duration dropped (--strict refuses such a trace)\n");
  EXPECT_NE(r.out.find("1 events with a negative duration were dropped"), std::string::npos) << r.out;
  // --strict before or after the command: today's refusal, exit 2, one error line.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--strict", "summary", path},
                                              std::vector<std::string>{"summary", "--strict", path}}) {
    const auto s = ttap::suite::run_ttap(args);
    EXPECT_EQ(s.exit_code, 2) << s.err;
    EXPECT_EQ(s.err.rfind("ttap: error: " + path + ": event #", 0), 0u) << s.err;
    EXPECT_NE(s.err.find("negative duration (at byte "), std::string::npos) << s.err;
    EXPECT_TRUE(s.out.empty());
  }
  // -q keeps the warning off stderr; the diagnostics row still says it.
  const auto q = ttap::suite::run_ttap({"-q", "summary", path});
  EXPECT_EQ(q.exit_code, 0);
  EXPECT_TRUE(q.err.empty()) << q.err;
}

}  // namespace
