// The ttap_spm module: the only code that links libsentencepiece. Loaded with dlopen.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstring>
#include <string>

#include "spm_api.h"

namespace {
void set_error(char* err, size_t errlen, const std::string& message) {
  if (err == nullptr || errlen == 0) return;
  const size_t n = std::min(errlen - 1, message.size());
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}
}  // namespace

extern "C" {

void* ttap_spm_load(const char* model_path, char* err, size_t errlen) {
  auto* sp = new sentencepiece::SentencePieceProcessor();
  const auto status = sp->Load(model_path);
  if (!status.ok()) {
    set_error(err, errlen, status.ToString());
    delete sp;
    return nullptr;
  }
  return sp;
}

void ttap_spm_free(void* handle) { delete static_cast<sentencepiece::SentencePieceProcessor*>(handle); }

int ttap_spm_vocab_size(void* handle) { return static_cast<sentencepiece::SentencePieceProcessor*>(handle)->GetPieceSize(); }

long ttap_spm_encode(void* handle, const char* text, size_t len, int* ids, size_t max_ids, char* err, size_t errlen) {
  std::vector<int> out;
  const auto status = static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Encode(std::string_view(text, len), &out);
  if (!status.ok()) {
    set_error(err, errlen, status.ToString());
    return -1;
  }
  for (size_t i = 0; i < out.size() && i < max_ids; ++i) ids[i] = out[i];
  return static_cast<long>(out.size());
}

long ttap_spm_decode(void* handle, const int* ids, size_t n, char* out, size_t cap, char* err, size_t errlen) {
  std::string text;
  const auto status = static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Decode(std::vector<int>(ids, ids + n), &text);
  if (!status.ok()) {
    set_error(err, errlen, status.ToString());
    return -1;
  }
  std::memcpy(out, text.data(), std::min(cap, text.size()));
  return static_cast<long>(text.size());
}

int ttap_spm_train(const char* args, char* err, size_t errlen) {
  const auto status = sentencepiece::SentencePieceTrainer::Train(args);
  if (!status.ok()) {
    set_error(err, errlen, status.ToString());
    return -1;
  }
  return 0;
}

}  // extern "C"
