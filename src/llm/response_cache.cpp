#include "response_cache.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>

namespace ttap::llm {

namespace {

constexpr std::string_view kMagic = "ttap-llm-cache/1\n";

// Two independent 64-bit hashes (FNV-1a, and a multiply-xorshift over the bytes) make
// the 128-bit file name; the stored key material settles any collision.
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}
uint64_t mix_hash(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
  for (unsigned char c : s) {
    h += c;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  return h;
}

std::string key_material(const std::string& url, const std::string& model, const std::string& body) {
  // Lengths first, so no choice of url/model/body can make two keys read alike.
  return fmt::format("{}:{}:{}:{}\n{}\n{}", url.size(), model.size(), body.size(), url, model, body);
}

}  // namespace

ResponseCache::ResponseCache(std::string dir) : dir_(std::move(dir)) {}

std::string ResponseCache::path_for(const std::string& url, const std::string& model, const std::string& body) const {
  const std::string key = key_material(url, model, body);
  return (std::filesystem::path(dir_) / fmt::format("{:016x}{:016x}.llm", fnv1a(key), mix_hash(key))).string();
}

std::optional<std::string> ResponseCache::get(const std::string& url, const std::string& model,
                                              const std::string& body) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(path_for(url, model, body), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string file = buffer.str();
  const std::string key = key_material(url, model, body);
  // Layout: magic, key length, newline, key, response.
  if (file.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  const size_t newline = file.find('\n', kMagic.size());
  if (newline == std::string::npos) return std::nullopt;
  const std::string length_text = file.substr(kMagic.size(), newline - kMagic.size());
  if (length_text != std::to_string(key.size())) return std::nullopt;
  if (file.compare(newline + 1, key.size(), key) != 0) return std::nullopt;
  return file.substr(newline + 1 + key.size());
}

bool ResponseCache::put(const std::string& url, const std::string& model, const std::string& body,
                        const std::string& response) const {
  if (!enabled()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    spdlog::warn("llm cache: cannot create {}: {}", dir_, ec.message());
    return false;
  }
  const std::string path = path_for(url, model, body);
  static std::atomic<uint64_t> counter{0};
  const std::string temp = fmt::format("{}.tmp.{}.{}.{}", path, ::getpid(),
                                       std::hash<std::thread::id>{}(std::this_thread::get_id()), counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    const std::string key = key_material(url, model, body);
    out << kMagic << key.size() << '\n' << key << response;
    out.flush();
    if (!out) {
      spdlog::warn("llm cache: cannot write {}", temp);
      out.close();
      std::filesystem::remove(temp, ec);
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    spdlog::warn("llm cache: cannot rename {} to {}", temp, path);
    std::filesystem::remove(temp, ec);
    return false;
  }
  return true;
}

}  // namespace ttap::llm
