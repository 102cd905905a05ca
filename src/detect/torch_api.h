/* The plain C interface of the ttap_torch module: the only code that links libtorch. */
#ifndef TTAP_TORCH_API_H
#define TTAP_TORCH_API_H
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
#ifdef __cplusplus
}
#endif
#endif
