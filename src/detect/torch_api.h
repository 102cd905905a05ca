/* The plain C interface of the ttap_torch module: the only code that links libtorch. */
#ifndef TTAP_TORCH_API_H
#define TTAP_TORCH_API_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct {
  char version[32];
  int cuda_available;
  int cuda_devices;
  int threads;
} ttap_torch_info_t;
/* Returns 0 on success. */
int ttap_torch_info(ttap_torch_info_t* out);

/* The window detector's inputs (docs/features.md), row-major, borrowed for the call. */
typedef struct {
  int64_t windows, events, names, name_tokens_per_name, numeric;
  const int32_t* name_tokens;  /* [names, name_tokens_per_name] */
  const int32_t* event_name;   /* [windows, events] */
  const int32_t* event_kind;
  const int32_t* event_opcat;
  const int32_t* event_track;
  const float* event_numeric;  /* [windows, events, numeric] */
  const uint8_t* event_mask;   /* [windows, events] */
} ttap_features_t;

typedef struct ttap_detector ttap_detector_t;
/* device: "auto" (the CPU: faster than CUDA for this model, torch_module.cpp), "cpu" or "cuda";
   threads: intra-op threads, 0 = libtorch's default. NULL on failure, with err set. */
ttap_detector_t* ttap_detector_load(const char* path, const char* device, int threads, char* err, size_t errlen);
void ttap_detector_free(ttap_detector_t* d);
/* "cpu" or "cuda". */
const char* ttap_detector_device(const ttap_detector_t* d);
/* Writes features->windows scores to out. Returns 0, or -1 with err set. */
int ttap_detector_score(ttap_detector_t* d, const ttap_features_t* features, float* out, char* err, size_t errlen);
#ifdef __cplusplus
}
#endif
#endif
