/* The plain C interface of the ttap_spm module (see include/ttap/tokenizer.hpp). */
#ifndef TTAP_SPM_API_H
#define TTAP_SPM_API_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* All functions write a message into err (size errlen) on failure. */
void* ttap_spm_load(const char* model_path, char* err, size_t errlen);
void ttap_spm_free(void* handle);
int ttap_spm_vocab_size(void* handle);
/* Returns the number of ids (may exceed max_ids: call again with more room), -1 on error. */
long ttap_spm_encode(void* handle, const char* text, size_t len, int* ids, size_t max_ids, char* err, size_t errlen);
/* Returns the decoded length (may exceed cap), -1 on error. */
long ttap_spm_decode(void* handle, const int* ids, size_t n, char* out, size_t cap, char* err, size_t errlen);
int ttap_spm_train(const char* args, char* err, size_t errlen);
#ifdef __cplusplus
}
#endif
#endif
