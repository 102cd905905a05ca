// JSON string literals for request bodies. Trace names are bytes, not always UTF-8, and
// endpoints reject a body that is not valid UTF-8, so invalid sequences become U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace ttap::llm {

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace ttap::llm
