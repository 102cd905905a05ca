// Every format of `ttap analyze` says what its JSON says (scripts/audit/check_formats.py
// compares them over tests/data). Each test here is one place where a format said less than
// the others, on the real trace where the checker found it:
// - the HTML page gave no recoverable share, which text and md give under their findings
//   (every trace with findings; kineto_resnet50_v100_nw0: ~40.4% of step time);
// - the HTML page said nothing of a baseline but each listed finding's state: not the counts,
//   not the fixed findings, not those still here below the listed ones (the controlled pair);
// - JUnit failed a flagged trace whatever the gate said: kineto_resnet50_v100_nw0 with
//   --fail-on none exits 0 and its testcase failed; with --fail-on error its failure named
//   the warning fp32_no_tensor_cores, which does not fail that gate, beside dataloader_stall;
// - SARIF gave a worse or better finding's baseline share as "% of step time there" where the
//   baseline had no steps (tracelens_vllm_b200_eager against tracelens_xdit_flux1_capture).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <fmt/format.h>

#include <string>

#include "suite_support.hpp"

namespace {

using ttap::suite::analyze;
using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::scratch;

const std::string kNw0 = data_path("kineto_resnet50_v100_nw0.json.gz");
const std::string kNw4 = data_path("kineto_resnet50_v100_nw4.json.gz");

// The text report's line "  against the baseline BASE: COUNTS", its COUNTS.
std::string text_baseline_counts(const std::string& text) {
  const std::string key = "  against the baseline ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "";
  const size_t colon = text.find(": ", at + key.size());
  return text.substr(colon + 2, text.find('\n', colon) - colon - 2);
}

TEST(ReportFormatsAgree, HtmlGivesTheRecoverableShareTextAndMarkdownGive) {
  const ProcResult json = analyze({"--format", "json", kNw0});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS) << json.err;
  const double share = doc["traces"].at(0)["recoverable_share"];
  ASSERT_GT(share, 0.3);  // the DataLoader stall and the FP32 convolutions: ~40% of each step
  const std::string sentence = fmt::format("Fixing every finding would recover ~{:.1f}% of step time.", 100.0 * share);
  const ProcResult md = analyze({"--format", "md", kNw0});
  EXPECT_NE(md.out.find(sentence), std::string::npos) << md.out.substr(0, 3000);
  const ProcResult html = analyze({"--format", "html", kNw0});
  EXPECT_NE(html.out.find("<p class=\"recoverable\">" + sentence + "</p>"), std::string::npos) << sentence;
  EXPECT_EQ(html.exit_code, json.exit_code);
}

// Both ways round: nw0 against nw4's report still has three of nw4's findings below its
// listed ones; nw4 against nw0's report has fixed the DataLoader stall.
TEST(ReportFormatsAgree, HtmlGivesTheBaselineComparisonTextGives) {
  struct Case {
    std::string trace, baseline_of;
  };
  for (const Case& c : {Case{kNw0, kNw4}, Case{kNw4, kNw0}}) {
    const std::string base = scratch() + "/formats_agree_base_" + std::to_string(c.trace == kNw0) + ".json";
    ASSERT_EQ(analyze({"--format", "json", "--fail-on", "none", "-o", base, c.baseline_of}).exit_code, 0);
    const ProcResult json = analyze({"--format", "json", "--baseline", base, c.trace});
    simdjson::dom::parser p;
    simdjson::dom::element doc;
    ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS) << json.err;
    const simdjson::dom::element b = doc["traces"].at(0)["baseline"];
    const ProcResult text = analyze({"--baseline", base, c.trace});
    std::string counts = text_baseline_counts(text.out);
    ASSERT_FALSE(counts.empty()) << text.out;
    for (size_t q = counts.find('\''); q != std::string::npos; q = counts.find('\'', q)) counts.replace(q, 1, "&#39;");  // "report's"
    const ProcResult html = analyze({"--format", "html", "--baseline", base, c.trace});
    EXPECT_EQ(html.exit_code, text.exit_code);
    EXPECT_NE(html.out.find(fmt::format("<p class=\"baseline\">Against the baseline <code>{}</code>: {}.</p>", c.baseline_of, counts)),
              std::string::npos)
        << counts;
    size_t listed = 0;
    for (const auto& [list, cls] : {std::pair{"fixed_findings", "fixed"}, std::pair{"still_present_findings", "still-present"}}) {
      const size_t ul = html.out.find(fmt::format("<ul class=\"{}\">", cls));
      const size_t end = ul == std::string::npos ? ul : html.out.find("</ul>", ul);
      for (simdjson::dom::element g : b[list].get_array()) {
        ++listed;
        const std::string id{std::string_view(g["id"])};
        ASSERT_NE(ul, std::string::npos) << cls << ": " << id;
        const size_t li = html.out.find("<code>" + id + "</code>", ul);
        EXPECT_LT(li, end) << cls << ": " << id;
      }
    }
    EXPECT_GE(listed, 1u) << "the pair has a fixed finding one way and findings still here the other";
  }
}

// The JUnit failure is the gate's (the exit code's) verdict, naming the ids that fail it.
TEST(ReportFormatsAgree, JunitFailsATraceExactlyWhenTheGateDoes) {
  const std::string none = analyze({"--format", "junit", "--fail-on", "none", kNw0}).out;
  EXPECT_EQ(analyze({"--fail-on", "none", kNw0}).exit_code, 0);
  EXPECT_NE(none.find("failures=\"0\""), std::string::npos) << none.substr(0, 600);
  EXPECT_EQ(none.find("<failure"), std::string::npos) << none.substr(0, 600);
  EXPECT_NE(none.find("[error] dataloader_stall"), std::string::npos) << "the findings are listed all the same";

  const ProcResult error = analyze({"--format", "junit", "--fail-on", "error", kNw0});
  EXPECT_EQ(error.exit_code, 1);
  const size_t message = error.out.find("<failure type=\"flagged\" message=\"");
  ASSERT_NE(message, std::string::npos) << error.out.substr(0, 600);
  const std::string ids = error.out.substr(message, error.out.find("\">", message) - message);
  EXPECT_TRUE(ids.ends_with(": dataloader_stall")) << ids << ": fp32_no_tensor_cores (a warning) does not fail --fail-on error";

  // A warning alone does not fail --fail-on error; the recoverable share reaches --fail-savings 5.
  EXPECT_EQ(analyze({"--fail-on", "error", kNw4}).exit_code, 0);
  EXPECT_EQ(analyze({"--format", "junit", "--fail-on", "error", kNw4}).out.find("<failure"), std::string::npos);
  const ProcResult savings = analyze({"--format", "junit", "--fail-on", "none", "--fail-savings", "5", kNw4});
  EXPECT_EQ(savings.exit_code, 1);
  EXPECT_NE(savings.out.find("<failure type=\"savings\" message=\""), std::string::npos) << savings.out.substr(0, 600);
  EXPECT_NE(savings.out.find("at or above --fail-savings 5\">"), std::string::npos) << savings.out.substr(0, 600);
}

// Neither vLLM's eager run nor xDiT's capture has steps: each share is of the steady state,
// as the JSON's null baseline_cost_per_step_ns and the text's "baseline 2.8%" say.
TEST(ReportFormatsAgree, SarifGivesTheBaselineShareOfWhatTheBaselineHad) {
  const std::string base = scratch() + "/formats_agree_xdit.json";
  ASSERT_EQ(analyze({"--format", "json", "--fail-on", "none", "-o", base, data_path("tracelens_xdit_flux1_capture.json.gz")}).exit_code, 0);
  const ProcResult sarif = analyze({"--format", "sarif", "--baseline", base, data_path("tracelens_vllm_b200_eager.json.gz")});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(sarif.out).get(doc), simdjson::SUCCESS) << sarif.err;
  size_t compared = 0;
  for (simdjson::dom::element r : doc["runs"].at(0)["results"].get_array()) {
    const std::string text{std::string_view(r["message"]["text"])};
    if (text.find(" than the baseline (") == std::string::npos) continue;
    ++compared;
    EXPECT_EQ(text.find("% of step time there)"), std::string::npos) << text;
    EXPECT_NE(text.find("% of the steady state there)"), std::string::npos) << text;
  }
  EXPECT_GE(compared, 1u) << "launch_bound and cpu_bound_step are better than xDiT's";
}

}  // namespace
