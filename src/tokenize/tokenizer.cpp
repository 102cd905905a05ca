#include "ttap/tokenizer.hpp"

#include <mutex>

#include <fmt/format.h>

#include "spm_api.h"
#include "ttap/module_loader.hpp"

namespace ttap {

namespace {

struct Module {
  void* handle = nullptr;
  std::string path;
  std::string error;
  decltype(&ttap_spm_load) load = nullptr;
  decltype(&ttap_spm_free) free = nullptr;
  decltype(&ttap_spm_vocab_size) vocab_size = nullptr;
  decltype(&ttap_spm_encode) encode = nullptr;
  decltype(&ttap_spm_decode) decode = nullptr;
  decltype(&ttap_spm_train) train = nullptr;
};

const Module& module() {
  static Module m;
  static std::once_flag once;
  std::call_once(once, [] {
    LoadedModule lm = open_module("ttap_spm.so", "TTAP_SPM_MODULE");
    if (lm.handle == nullptr) {
      m.error = lm.error;
      return;
    }
    m.path = lm.path;
    m.load = reinterpret_cast<decltype(m.load)>(lm.symbol("ttap_spm_load"));
    m.free = reinterpret_cast<decltype(m.free)>(lm.symbol("ttap_spm_free"));
    m.vocab_size = reinterpret_cast<decltype(m.vocab_size)>(lm.symbol("ttap_spm_vocab_size"));
    m.encode = reinterpret_cast<decltype(m.encode)>(lm.symbol("ttap_spm_encode"));
    m.decode = reinterpret_cast<decltype(m.decode)>(lm.symbol("ttap_spm_decode"));
    m.train = reinterpret_cast<decltype(m.train)>(lm.symbol("ttap_spm_train"));
    if (!m.load || !m.free || !m.vocab_size || !m.encode || !m.decode || !m.train) {
      m.error = fmt::format("{}: missing symbols (a module from another ttap version?)", lm.path);
      return;
    }
    m.handle = lm.handle;
  });
  return m;
}

const Module& require_module() {
  const Module& m = module();
  if (m.handle == nullptr) throw TokenizerError(m.error);
  return m;
}

}  // namespace

struct Tokenizer::Impl {
  void* handle = nullptr;
  ~Impl() {
    if (handle) module().free(handle);
  }
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::string Tokenizer::module_status() {
  const Module& m = module();
  return m.handle ? m.path : m.error;
}

Tokenizer Tokenizer::load(const std::string& model_path) {
  const Module& m = require_module();
  char err[512] = {0};
  void* h = m.load(model_path.c_str(), err, sizeof(err));
  if (h == nullptr) throw TokenizerError(fmt::format("{}: cannot load tokenizer model: {}", model_path, err));
  auto impl = std::make_unique<Impl>();
  impl->handle = h;
  return Tokenizer(std::move(impl));
}

void Tokenizer::train(const std::string& input_file, const std::string& prefix, int vocab_size) {
  const Module& m = require_module();
  const std::string args = fmt::format(
      "--input={} --model_prefix={} --vocab_size={} --model_type=unigram --character_coverage=1.0 "
      "--hard_vocab_limit=false --minloglevel=2 --num_threads=2",
      input_file, prefix, vocab_size);
  char err[512] = {0};
  if (m.train(args.c_str(), err, sizeof(err)) != 0) throw TokenizerError(fmt::format("tokenizer training failed: {}", err));
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  const Module& m = require_module();
  std::vector<int> ids(text.size() + 8);
  char err[512] = {0};
  long n = m.encode(impl_->handle, text.data(), text.size(), ids.data(), ids.size(), err, sizeof(err));
  if (n < 0) throw TokenizerError(fmt::format("tokenizer: {}", err));
  if (static_cast<size_t>(n) > ids.size()) {
    ids.resize(static_cast<size_t>(n));
    n = m.encode(impl_->handle, text.data(), text.size(), ids.data(), ids.size(), err, sizeof(err));
    if (n < 0) throw TokenizerError(fmt::format("tokenizer: {}", err));
  }
  ids.resize(static_cast<size_t>(n));
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  const Module& m = require_module();
  std::string out(ids.size() * 16 + 16, '\0');
  char err[512] = {0};
  long n = m.decode(impl_->handle, ids.data(), ids.size(), out.data(), out.size(), err, sizeof(err));
  if (n < 0) throw TokenizerError(fmt::format("tokenizer: {}", err));
  if (static_cast<size_t>(n) > out.size()) {
    out.resize(static_cast<size_t>(n));
    n = m.decode(impl_->handle, ids.data(), ids.size(), out.data(), out.size(), err, sizeof(err));
  }
  out.resize(static_cast<size_t>(n));
  return out;
}

int Tokenizer::vocab_size() const { return require_module().vocab_size(impl_->handle); }

}  // namespace ttap
