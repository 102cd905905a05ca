// Finding and opening ttap's plug-in modules (ttap_spm.so, ttap_torch.so) with dlopen.
// Heavy libraries live in modules: libsentencepiece's bundled protobuf must not meet
// libtorch's, and libtorch's static initializers cost about half a second at every start,
// which `ttap tree` and `ttap summary` should not pay.
#pragma once

#include <string>

namespace ttap {

struct LoadedModule {
  void* handle = nullptr;
  std::string path;   // where it was opened
  std::string error;  // why not, listing every place tried
  void* symbol(const char* name) const;
};

// Looks in $<env_var>, next to the executable, in ../lib/ttap beside it, and in the
// install prefix; opens with RTLD_NOW | RTLD_LOCAL. Never throws.
//
// RTLD_LOCAL keeps each module's libraries (libtorch's libprotobuf, the protobuf bundled
// in libsentencepiece) out of the global scope, so neither binds to the other's. Not
// RTLD_DEEPBIND: it makes a module bind libstdc++'s own std::cout/std::cerr instead of the
// executable's copy-relocated, initialized ones, and sentencepiece's trainer then crashes
// on its first log line (tests/modules_test.cpp).
LoadedModule open_module(const std::string& file_name, const char* env_var);

// Whether open_module has opened a module in this process (main then exits without
// running libtorch's static destructors).
bool any_module_opened();

// The folder of the running executable ("." when /proc/self/exe cannot be read).
std::string executable_dir();

}  // namespace ttap
