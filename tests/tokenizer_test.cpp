// The sentencepiece tokenizer (the dlopen'ed ttap_spm module) trained on real event names,
// in one process with libtorch (the ttap_torch module): Debian's libsentencepiece bundles a
// protobuf that clashes with libtorch's when both are linked into one process, which is
// why each lives in its own RTLD_LOCAL module. Here libtorch is loaded first, then
// sentencepiece trains, loads and encodes, then libtorch is asked again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "suite_support.hpp"
#include "ttap/load.hpp"
#include "ttap/tokenizer.hpp"
#include "ttap/torch_runtime.hpp"

namespace {

class Tokenizer : public ::testing::Test {
 protected:
  // Before the first use of either module: it is opened once per process.
  static void SetUpTestSuite() {
    ::setenv("TTAP_SPM_MODULE", TTAP_SPM_MODULE_PATH, 1);
    ::setenv("TTAP_TORCH_MODULE", TTAP_TORCH_MODULE_PATH, 1);
  }
};

// The first `n` distinct event names of a trace, in order of appearance. Names with runs of
// whitespace are left out: sentencepiece's default normalization folds them, so they
// cannot round-trip byte for byte (one such name in this trace).
std::vector<std::string> event_names(const std::string& trace_file, size_t n) {
  const ttap::Trace t = ttap::load_trace(ttap::suite::data_path(trace_file));
  std::vector<std::string> names;
  std::set<std::string_view> seen;
  for (ttap::EventId e = 0; e < t.size() && names.size() < n; ++e) {
    const std::string_view name = t.name_of(e);
    if (name.empty() || name.front() == ' ' || name.back() == ' ' || name.find("  ") != std::string_view::npos) continue;
    if (seen.insert(name).second) names.emplace_back(name);
  }
  return names;
}

TEST_F(Tokenizer, TrainsOnEventNamesAndRoundTripsBesideLibtorch) {
  // libtorch first.
  const ttap::TorchInfo torch = ttap::torch_info();
  ASSERT_TRUE(torch.linked) << torch.error;
  EXPECT_EQ(torch.module_path, TTAP_TORCH_MODULE_PATH);
  EXPECT_FALSE(torch.version.empty());
  EXPECT_NE(torch.version.find('.'), std::string::npos) << torch.version;
  EXPECT_GE(torch.threads, 1);

  // 300 real names (python frames, aten ops, CUDA calls, kernels) from the ViT trace.
  const std::vector<std::string> names = event_names("tracelens_vit_nsfw_h100.json.gz", 300);
  ASSERT_EQ(names.size(), 300u);
  std::string corpus;
  size_t chars = 0;
  for (const auto& n : names) {
    corpus += n + "\n";
    chars += n.size();
  }
  const std::string input = ttap::suite::write_file("event_names.txt", corpus);
  const std::string prefix = ttap::suite::scratch() + "/events";
  ttap::Tokenizer::train(input, prefix, 256);
  EXPECT_EQ(ttap::Tokenizer::module_status(), TTAP_SPM_MODULE_PATH);

  const ttap::Tokenizer tok = ttap::Tokenizer::load(prefix + ".model");
  const int vocab = tok.vocab_size();
  EXPECT_GT(vocab, 100);
  EXPECT_LE(vocab, 256);
  size_t tokens = 0;
  for (const auto& n : names) {
    const std::vector<int> ids = tok.encode(n);
    ASSERT_FALSE(ids.empty()) << n;
    for (int id : ids) {
      ASSERT_GE(id, 0) << n;
      ASSERT_LT(id, vocab) << n;
    }
    EXPECT_EQ(tok.decode(ids), n);
    tokens += ids.size();
  }
  // Learned pieces, not one id per character: the 300 names (9399 bytes) take well under
  // one id per byte (about one per two bytes with this vocabulary).
  EXPECT_LT(tokens * 4, chars * 3) << tokens << " ids for " << chars << " bytes";

  // libtorch still answers, and the tokenizer still works, with both loaded.
  EXPECT_TRUE(ttap::torch_info().linked);
  EXPECT_EQ(tok.decode(tok.encode("aten::addmm")), "aten::addmm");
}

TEST_F(Tokenizer, ErrorsNameTheFile) {
  const std::string bogus = ttap::suite::write_file("bogus.model", "this is not a sentencepiece model");
  try {
    ttap::Tokenizer::load(bogus);
    FAIL() << "a bogus model loaded";
  } catch (const ttap::TokenizerError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bogus + ": cannot load tokenizer model: ", 0), 0u) << e.what();
  }
  const std::string missing = ttap::suite::scratch() + "/no-such-input.txt";
  try {
    ttap::Tokenizer::train(missing, ttap::suite::scratch() + "/never", 100);
    FAIL() << "trained on a missing file";
  } catch (const ttap::TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer training failed"), std::string::npos) << e.what();
  }
}

}  // namespace
