// Reading ttap's JSON output in a test: a parse failure is a test failure that shows the
// start of the text.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

namespace ttap::test_json {

inline simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text.substr(0, 300);
  return doc;
}

}  // namespace ttap::test_json
