// Tokenizer: sentencepiece, loaded from the ttap_spm module through dlopen (RTLD_LOCAL).
// Debian's libsentencepiece carries its own protobuf, which clashes with libtorch's when
// both are linked into one process; separate modules keep them apart.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ttap {

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Tokenizer {
 public:
  // Loads a sentencepiece .model file. Throws TokenizerError.
  static Tokenizer load(const std::string& model_path);
  // Trains a unigram model from a text file (one sentence per line) to `prefix`.model.
  static void train(const std::string& input_file, const std::string& prefix, int vocab_size);
  // Where the module was found, or an explanation of why it was not.
  static std::string module_status();

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int> encode(std::string_view text) const;
  std::string decode(const std::vector<int>& ids) const;
  int vocab_size() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ttap
