// Validating what the model answered: the chat-completions envelope, then the verdict
// against the schema and the catalog. Anything off is an error that says what, never a
// guess.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "ttap/catalog.hpp"
#include "ttap/llm.hpp"

namespace ttap {

namespace {

// A short, printable excerpt of what came back, for error messages.
std::string excerpt(std::string_view s, size_t max = 120) {
  std::string out;
  for (char c : s.substr(0, max)) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  if (s.size() > max) out += "...";
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Models often wrap JSON in a ```json fence or add a sentence around it: take the fenced
// block when there is one, else the outermost {...}.
std::string_view unwrap_json(std::string_view content) {
  content = trim(content);
  const size_t fence = content.find("```");
  if (fence != std::string_view::npos) {
    const size_t line_end = content.find('\n', fence);
    if (line_end != std::string_view::npos) {
      std::string_view inner = content.substr(line_end + 1);
      const size_t close = inner.find("```");
      if (close != std::string_view::npos) inner = inner.substr(0, close);
      return trim(inner);
    }
  }
  if (!content.empty() && content.front() != '{') {
    const size_t open = content.find('{');
    const size_t close = content.rfind('}');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
      return content.substr(open, close - open + 1);
  }
  return content;
}

LlmAnswer fail(std::string error) {
  LlmAnswer a;
  a.error = std::move(error);
  return a;
}

}  // namespace

LlmAnswer parse_llm_answer(std::string_view content) {
  const std::string_view json = unwrap_json(content);
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root))
    return fail(fmt::format("schema error: the answer is not JSON ({}): {}", simdjson::error_message(error),
                            excerpt(content)));
  simdjson::dom::object object;
  if (root.get_object().get(object)) return fail("schema error: the answer is not a JSON object");

  LlmAnswer answer;
  simdjson::dom::array ids;
  if (auto error = object["ids"].get_array().get(ids))
    return fail(error == simdjson::NO_SUCH_FIELD ? "schema error: missing field \"ids\""
                                                 : "schema error: \"ids\" is not an array");
  for (simdjson::dom::element e : ids) {
    std::string_view id;
    if (e.get_string().get(id)) return fail("schema error: \"ids\" holds a value that is not a string");
    if (id != "none" && !is_catalog_id(id))
      return fail(fmt::format("schema error: unknown id \"{}\" (not in the catalog)", excerpt(id, 60)));
    if (std::find(answer.ids.begin(), answer.ids.end(), id) == answer.ids.end()) answer.ids.emplace_back(id);
  }
  if (answer.ids.empty()) return fail("schema error: \"ids\" is empty (use [\"none\"] for a clean window)");
  if (answer.ids.size() > 1 && std::find(answer.ids.begin(), answer.ids.end(), "none") != answer.ids.end())
    return fail("schema error: \"none\" given together with anti-pattern ids");

  simdjson::dom::element confidence;
  if (object["confidence"].get(confidence)) return fail("schema error: missing field \"confidence\"");
  if (confidence.get_double().get(answer.confidence)) {
    // Integral JSON numbers (0 or 1) are numbers too.
    int64_t integral = 0;
    if (confidence.get_int64().get(integral)) return fail("schema error: \"confidence\" is not a number");
    answer.confidence = static_cast<double>(integral);
  }
  if (!(answer.confidence >= 0 && answer.confidence <= 1))
    return fail(fmt::format("schema error: \"confidence\" {} is outside [0, 1]", answer.confidence));

  for (auto [field, target] : {std::pair{"explanation", &answer.explanation}, std::pair{"fix", &answer.fix}}) {
    std::string_view text;
    auto error = object[field].get_string().get(text);
    if (error == simdjson::NO_SUCH_FIELD) return fail(fmt::format("schema error: missing field \"{}\"", field));
    if (error) return fail(fmt::format("schema error: \"{}\" is not a string", field));
    *target = std::string(text);
  }
  auto error = object["needs_more_context"].get_bool().get(answer.needs_more_context);
  if (error == simdjson::NO_SUCH_FIELD) return fail("schema error: missing field \"needs_more_context\"");
  if (error) return fail("schema error: \"needs_more_context\" is not a boolean");
  answer.ok = true;
  return answer;
}

LlmAnswer parse_llm_response(std::string_view response_body) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(response_body);
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root))
    return fail(fmt::format("malformed response: not JSON ({}): {}", simdjson::error_message(error),
                            excerpt(response_body)));
  std::string_view message;
  if (!root["error"]["message"].get_string().get(message))
    return fail(fmt::format("endpoint error: {}", excerpt(message, 300)));
  simdjson::dom::element reply;
  if (root["choices"].at(0)["message"].get(reply))
    return fail(fmt::format("malformed response: no choices[0].message: {}", excerpt(response_body)));
  std::string_view content;
  if (reply["content"].get_string().get(content)) {
    std::string_view refusal;
    if (!reply["refusal"].get_string().get(refusal))
      return fail(fmt::format("the model refused: {}", excerpt(refusal, 300)));
    return fail("malformed response: choices[0].message.content is not a string");
  }
  return parse_llm_answer(content);
}

}  // namespace ttap
