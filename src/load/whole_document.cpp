// The whole-document fallback: one On-Demand pass over the whole input, which also gives
// bad input its precise message and byte offset.
#include "parser.hpp"

#include <algorithm>
#include <optional>

namespace ttap::load_detail {

void Parser::run_whole() {
  trace_.source = std::string(source_);
  trace_.json_bytes = json_.size();
  reserve_columns(json_.size() / 100 + 16);
  auto padded = simdjson::padded_string_view(json_.data(), json_.size(), json_.size() + kInputPadding);
  if (auto err = parser_.allocate(std::max<size_t>(json_.size(), 64)); err != simdjson::SUCCESS)
    throw InputError(std::string(source_), fmt::format("cannot allocate the JSON parser: {}", simdjson::error_message(err)));
  if (auto err = parser_.iterate(padded).get(doc_); err != simdjson::SUCCESS) {
    if (err == simdjson::UNCLOSED_STRING)  // the input stops inside a string: point at its end
      throw InputError(std::string(source_), "truncated JSON: the input ends inside a string", json_.size());
    if (err == simdjson::UNESCAPED_CHARS)
      throw InputError(std::string(source_), "not JSON: a string holds a control character that must be escaped",
                       first_unescaped_control(json_.data(), json_.size()));
    if (err == simdjson::UTF8_ERROR)
      throw InputError(std::string(source_), "not JSON: the input is not valid UTF-8", first_invalid_utf8(json_.data(), json_.size()));
    throw InputError(std::string(source_), fmt::format("not JSON: {}", simdjson::error_message(err)));
  }
  // On-Demand checks that the top-level object or array is closed before handing it out;
  // when it is not, the input was cut short, and its end is the place to point at.
  auto truncated = [this](char open) {
    const std::string_view text = trim_token({json_.data(), json_.size()});
    if (text.empty() || text.back() == (open == '{' ? '}' : ']')) return;
    throw InputError(std::string(source_),
                     fmt::format("truncated JSON: the input ends before the top-level {} is closed", open == '{' ? "object" : "array"),
                     json_.size());
  };
  try {
    od::json_type type;
    if (auto err = doc_.type().get(type); err != simdjson::SUCCESS)
      fail(location(), fmt::format("not JSON: {}", simdjson::error_message(err)));
    if (type == od::json_type::array) {
      od::array arr;
      if (doc_.get_array().get(arr) != simdjson::SUCCESS) {
        truncated('[');
        fail(location(), "malformed top-level array");
      }
      saw_events_ = true;
      parse_events(arr);
    } else if (type == od::json_type::object) {
      od::object obj;
      if (doc_.get_object().get(obj) != simdjson::SUCCESS) {
        truncated('{');
        fail(location(), "malformed top-level object");
      }
      parse_top_object(obj);
    } else {
      fail(location(), "the top level must be an object with \"traceEvents\" or an array of events");
    }
    // At the end of the document the iterator has no location left; anything else is trailing content.
    const char* rest = nullptr;
    if (doc_.current_location().get(rest) == simdjson::SUCCESS && rest != nullptr)
      fail(rest, "unexpected content after the end of the JSON document");
  } catch (const ParseFailure& f) {
    std::optional<uint64_t> offset;
    if (f.where >= json_.data() && f.where <= json_.data() + json_.size())
      offset = static_cast<uint64_t>(f.where - json_.data());
    throw InputError(std::string(source_), f.message, offset);
  } catch (const simdjson::simdjson_error& e) {
    const char* where = location();
    std::optional<uint64_t> offset;
    if (where >= json_.data() && where <= json_.data() + json_.size()) offset = static_cast<uint64_t>(where - json_.data());
    throw InputError(std::string(source_), fmt::format("malformed JSON: {}", e.what()), offset);
  }
}

}  // namespace ttap::load_detail
