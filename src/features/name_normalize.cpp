// Event names as the tokenizer sees them (docs/features.md, "Name normalization"). The
// same kernel or frame shows up with different template numbers, addresses and line
// numbers across traces; without this, each variant would be a new word to the model.
#include <cctype>

#include "ttap/features.hpp"

namespace ttap {

namespace {
constexpr size_t kMaxNormalizedBytes = 160;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
}  // namespace

std::string normalize_event_name(std::string_view name) {
  const bool signature = name.starts_with("void ");
  if (signature) name.remove_prefix(5);
  // A kernel's parameter list: in a C++ signature (a "void " prefix, or "::" or '<' before
  // the paren), the first '(' at template depth 0 that does not open "(anonymous
  // namespace)". Other parentheses carry meaning: "Memcpy HtoD (Pageable -> Device)",
  // "enumerate(DataLoader)#...", Python frames "f.py(12): g" (reduced to (N) below).
  {
    int depth = 0;
    for (size_t i = 1; i < name.size(); ++i) {
      const char c = name[i];
      if (c == '<') ++depth;
      else if (c == '>' && depth > 0) --depth;
      else if (c == '(' && depth == 0 && !name.substr(i).starts_with("(anonymous namespace)")) {
        const std::string_view head = name.substr(0, i);
        if (signature || head.find("::") != std::string_view::npos || head.find('<') != std::string_view::npos)
          name = head;
        break;
      }
    }
  }
  std::string out;
  out.reserve(std::min(name.size(), kMaxNormalizedBytes));
  for (size_t i = 0; i < name.size() && out.size() < kMaxNormalizedBytes;) {
    if (name[i] == '0' && i + 1 < name.size() && (name[i + 1] == 'x' || name[i + 1] == 'X') && i + 2 < name.size() &&
        is_hex(name[i + 2])) {
      out += "0x";
      i += 2;
      while (i < name.size() && is_hex(name[i])) ++i;
    } else if (is_digit(name[i])) {
      // Digits inside an identifier are part of a word (sm80, h884gemm, 128x64 tile
      // shapes, cudaMemcpy_v2): only free-standing numbers (template arguments, step and
      // line numbers) become N.
      const bool in_word = i > 0 && (std::isalnum(static_cast<unsigned char>(name[i - 1])) || name[i - 1] == '_');
      size_t j = i;
      while (j < name.size() && is_digit(name[j])) ++j;
      if (in_word) out.append(name.substr(i, j - i));
      else out += 'N';
      i = j;
    } else {
      out += name[i++];
    }
  }
  if (out.size() > kMaxNormalizedBytes) out.resize(kMaxNormalizedBytes);
  return out;
}

}  // namespace ttap
