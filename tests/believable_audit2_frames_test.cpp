// One parser of python_function frame names (rules/locations.cpp's parse_frame), for the
// rules' locations and the classifier's (classify/code_location.cpp), each keeping its own
// filter of which files are the user's. The rules' copy split at the first '(' and needed a
// function name; the classifier's anchored on ".py(".
#include <gtest/gtest.h>

#include "ttap/rules.hpp"

namespace {

TEST(BelievableAudit2Frames, ParsesFrameNames) {
  auto loc = ttap::parse_frame("train.py(42): step");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->file, "train.py");
  EXPECT_EQ(loc->line, 42);
  EXPECT_EQ(loc->function, "step");
  // A directory with parentheses: the file is all of it up to ".py".
  loc = ttap::parse_frame("runs (old)/zoo.py(208): offload_roundtrip");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->file, "runs (old)/zoo.py");
  EXPECT_EQ(loc->line, 208);
  loc = ttap::parse_frame("torch/nn/modules/module.py(1501): _call_impl");
  ASSERT_TRUE(loc.has_value());  // library code parses; filtering is the caller's
  EXPECT_EQ(loc->file, "torch/nn/modules/module.py");
}

TEST(BelievableAudit2Frames, OtherNamesAreNoFrames) {
  EXPECT_FALSE(ttap::parse_frame("nn.Module: ResNet_0"));
  EXPECT_FALSE(ttap::parse_frame("<built-in method to of Tensor object at 0x7f>"));
  EXPECT_FALSE(ttap::parse_frame("aten::addmm"));
  EXPECT_FALSE(ttap::parse_frame("train.py(0): step"));
  EXPECT_FALSE(ttap::parse_frame("train.py(4x): step"));
  EXPECT_FALSE(ttap::parse_frame("train.py(42"));
}

}  // namespace
