// The dlopen'ed modules: sentencepiece (trained and used here on real event names) and
// libtorch, in one process, which is what the protobuf clash would break.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/tokenizer.hpp"
#include "ttap/torch_runtime.hpp"

namespace {

class Modules : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("TTAP_SPM_MODULE", TTAP_SPM_MODULE_PATH, 1);
    ::setenv("TTAP_TORCH_MODULE", TTAP_TORCH_MODULE_PATH, 1);
  }
};

TEST_F(Modules, SentencepieceTrainsAndEncodesBesideLibtorch) {
  const ttap::TorchInfo torch = ttap::torch_info();
  ASSERT_TRUE(torch.linked) << torch.error;
  EXPECT_EQ(torch.version.substr(0, 2), "1.");

  const ttap::Trace t = ttap::load_trace(ttap::test::data("tracelens_qwen05b_h100.json.gz"));
  std::set<std::string> names;
  for (ttap::EventId e = 0; e < t.size(); ++e) names.emplace(t.name_of(e));
  ASSERT_GT(names.size(), 200u);
  std::string corpus;
  for (const auto& n : names) corpus += n + "\n";
  const std::string input = ttap::test::temp_file("names.txt", corpus);
  const std::string prefix = input + ".spm";
  ttap::Tokenizer::train(input, prefix, 300);
  const ttap::Tokenizer tok = ttap::Tokenizer::load(prefix + ".model");
  EXPECT_GE(tok.vocab_size(), 100);
  const std::string name = "aten::addmm";
  const std::vector<int> ids = tok.encode(name);
  ASSERT_FALSE(ids.empty());
  EXPECT_LT(ids.size(), name.size());  // learned pieces, not one id per character
  EXPECT_EQ(tok.decode(ids), name);
}

// ctest runs each test in its own process: here sentencepiece is loaded and used first.
TEST_F(Modules, SentencepieceFirstThenLibtorch) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data("hta_alexnet_a100_small.json.gz"));
  std::string corpus;
  for (ttap::EventId e = 0; e < t.size(); ++e) corpus += std::string(t.name_of(e)) + "\n";
  const std::string input = ttap::test::temp_file("names-first.txt", corpus);
  ttap::Tokenizer::train(input, input + ".spm", 100);
  const ttap::Tokenizer tok = ttap::Tokenizer::load(input + ".spm.model");
  EXPECT_EQ(tok.decode(tok.encode("cudaLaunchKernel")), "cudaLaunchKernel");
  const ttap::TorchInfo torch = ttap::torch_info();
  EXPECT_TRUE(torch.linked) << torch.error;
  EXPECT_EQ(tok.decode(tok.encode("aten::conv2d")), "aten::conv2d");
}

TEST_F(Modules, MissingModelIsAClearError) {
  try {
    ttap::Tokenizer::load("/nonexistent/tokenizer.model");
    FAIL() << "loaded a missing model";
  } catch (const ttap::TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tokenizer.model"), std::string::npos) << e.what();
  }
}

}  // namespace
