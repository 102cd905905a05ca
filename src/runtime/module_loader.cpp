#include "ttap/module_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#ifndef TTAP_LIBDIR
#define TTAP_LIBDIR "/usr/local/lib/ttap"
#endif

namespace ttap {

namespace {
std::atomic<bool> opened{false};
}  // namespace

bool any_module_opened() { return opened.load(); }

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

void* LoadedModule::symbol(const char* name) const { return handle ? ::dlsym(handle, name) : nullptr; }

LoadedModule open_module(const std::string& file_name, const char* env_var) {
  std::vector<std::string> paths;
  if (const char* env = std::getenv(env_var); env && *env) paths.emplace_back(env);
  const std::string dir = executable_dir();
  paths.push_back(dir + "/" + file_name);
  paths.push_back(dir + "/../lib/ttap/" + file_name);
  paths.push_back(std::string(TTAP_LIBDIR) + "/" + file_name);

  LoadedModule m;
  std::string tried;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += fmt::format("\n  {}: not found", path);
      continue;
    }
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = ::dlerror();
      tried += fmt::format("\n  {}: {}", path, why ? why : "dlopen failed");
      continue;
    }
    m.handle = h;
    m.path = path;
    opened = true;
    return m;
  }
  m.error = fmt::format("{} was not found or could not be opened; looked at:{} (set {} to its path)", file_name, tried, env_var);
  return m;
}

}  // namespace ttap
