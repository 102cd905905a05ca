// What `ttap analyze` pays before its first forward, phase by phase, in a fresh process:
// dlopen of the libtorch module (the dynamic linker's relocations over every library
// libtorch pulls in, then libtorch's static initializers), the TorchScript model's load,
// the sentencepiece module and its model. CPU time of the process (all threads) and wall
// time per phase. Run by scripts/bench/module_load_bench.sh.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  // dlmopen
#endif
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "../../src/detect/torch_api.h"

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
double wall_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Phase {
  double cpu = cpu_ms(), wall = wall_ms();
  void report(const char* name) {
    const double c = cpu_ms(), w = wall_ms();
    std::printf("%s %.1f %.1f\n", name, c - cpu, w - wall);
    cpu = c;
    wall = w;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s ttap_torch.so detector.pt ttap_spm.so names.model\n", argv[0]);
    return 2;
  }
  Phase p;
  // As src/runtime/module_loader.cpp opens it; or, to see whether the executable's libraries
  // in the lookup scope cost anything, in a link-map namespace of its own.
  void* torch = std::getenv("MODULE_LOAD_BENCH_DLMOPEN") ? dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW | RTLD_LOCAL)
                                                         : dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!torch) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  p.report("dlopen_torch_module");
  auto load = reinterpret_cast<decltype(&ttap_detector_load)>(dlsym(torch, "ttap_detector_load"));
  char err[1024] = {0};
  if (!load || !load(argv[2], "cpu", 0, err, sizeof(err))) {
    std::fprintf(stderr, "model: %s\n", err);
    return 1;
  }
  p.report("load_model");
  void* spm = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
  auto spm_load = spm ? reinterpret_cast<void* (*)(const char*, char*, size_t)>(dlsym(spm, "ttap_spm_load")) : nullptr;
  if (!spm_load || !spm_load(argv[4], err, sizeof(err))) {
    std::fprintf(stderr, "sentencepiece: %s\n", spm ? err : dlerror());
    return 1;
  }
  p.report("sentencepiece");
  std::fflush(stdout);
  // What exit() would add: libtorch's static destructors (ttap skips them, src/cli/main.cpp).
  if (std::getenv("MODULE_LOAD_BENCH_EXIT")) {
    std::exit(0);
  }
  std::_Exit(0);
}
