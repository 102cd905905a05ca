// Kernel names as a report shows them. A kernel's recorded name is its C++ signature:
// "void at::native::elementwise_kernel_manual_unroll<128, 4, at::native::gpu_kernel_impl_nocast<
// ...>(at::TensorIteratorBase&, ...)::{lambda(int, bool)#1}>(int, ...)" runs to 600 characters on
// tracelens_qwen05b_mi300, and a group named by it cannot be read. The function's qualified
// name is what a person recognizes and searches for.
#include <cctype>
#include <string>
#include <vector>

#include "ttap/analyze.hpp"

namespace ttap {

namespace {

constexpr size_t kKeepTemplateArguments = 60;  // a whole name up to this long keeps them
constexpr size_t kMaxReadable = 80;

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '>'; }

// Brackets as a C++ signature nests them: '<' opens a template argument list only outside
// parentheses (inside them it is a comparison: "std::enable_if<((8)>(0)), void>"), and a
// bracket closes only its own kind. `step` returns whether c is at depth 0 after it.
struct Nesting {
  std::vector<char> open;
  void step(char c) {
    switch (c) {
      case '(': case '{': open.push_back(c); break;
      case ')': if (!open.empty() && open.back() == '(') open.pop_back(); break;
      case '}': if (!open.empty() && open.back() == '{') open.pop_back(); break;
      case '<': if (open.empty() || open.back() == '<') open.push_back(c); break;
      case '>': if (!open.empty() && open.back() == '<') open.pop_back(); break;
      default: break;
    }
  }
  bool outside() const { return open.empty(); }
};

// Some kernels are recorded by their mangled symbol ("_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwd...",
// vLLM on MI300X; "_ZN5aiter24add_rmsnorm_quant_kernelIDF16b...", SGLang). Its qualified
// name is the run of <length><identifier> after "_ZN" (or the one after "_Z"): read here
// rather than by abi::__cxa_demangle, which fails on some of them (libstdc++ 12 on DF16b,
// std::bfloat16_t) and would make the name depend on the C++ runtime; baselines and SARIF
// match groups by it. An anonymous namespace ("_GLOBAL__N_1") is left out, as above.
std::string unmangled_name(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  size_t i = 2;
  const bool nested = i < name.size() && name[i] == 'N';
  if (nested) ++i;
  std::string out;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
    size_t len = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) len = len * 10 + static_cast<size_t>(name[i++] - '0');
    if (len == 0 || i + len > name.size()) return std::string(name);
    const std::string_view part = name.substr(i, len);
    i += len;
    if (!part.starts_with("_GLOBAL__N")) out += (out.empty() ? "" : "::") + std::string(part);
    if (!nested) break;
  }
  return out.empty() ? std::string(name) : out;
}

}  // namespace

std::string readable_kernel_name(std::string_view name) {
  std::string s = unmangled_name(name);
  for (size_t p; (p = s.find("(anonymous namespace)::")) != std::string::npos;) s.erase(p, 23);
  if (s.starts_with("void ")) s.erase(0, 5);

  // The parameter list: the first '(' outside every bracket that follows a name
  // ("foo<int>(int)"), not one after a space ("Memcpy HtoD (Pageable -> Device)").
  size_t params = std::string::npos;
  {
    Nesting n;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '(' && n.outside() && i > 0 && is_name_char(s[i - 1])) {
        params = i;
        break;
      }
      n.step(s[i]);
    }
  }
  if (params != std::string::npos) {
    s.resize(params);
    // A return type other than void ("std::enable_if<...>::type vllm::fused_add_rms_norm_kernel<...>"):
    // the name is what follows the last space outside brackets.
    Nesting n;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == ' ' && n.outside()) start = i + 1;
      n.step(s[i]);
    }
    s.erase(0, start);
  }

  // Long template arguments go; a name of the outer template and what follows it stays
  // ("cub::DeviceScanKernel", "A<...>::inner" as "A::inner").
  if (s.size() > kKeepTemplateArguments && s.find('<') != std::string::npos) {
    std::string out;
    Nesting n;
    for (const char c : s) {
      const bool was_outside = n.outside();
      n.step(c);
      if (was_outside && n.outside()) out += c;
    }
    s = std::move(out);
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > kMaxReadable) s.resize(kMaxReadable);
  return s.empty() ? std::string(name.substr(0, kMaxReadable)) : s;
}

std::string without_addresses(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (name.substr(i).starts_with(" at 0x")) {
      size_t j = i + 6;
      while (j < name.size() && std::isxdigit(static_cast<unsigned char>(name[j]))) ++j;
      if (j > i + 6) {
        i = j;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

}  // namespace ttap
