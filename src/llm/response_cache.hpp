// The on-disk response cache: CI reruns of the same trace ask the endpoint nothing.
// One file per request, named by a 128-bit hash of (url, model, request body); the file
// also holds that key material, checked on read, so a hash collision is a miss, never a
// wrong answer. The API key is not part of the key. Files are written to a temporary name
// and renamed, so a reader (another thread or process) never sees half a file.
#pragma once

#include <optional>
#include <string>

namespace ttap::llm {

class ResponseCache {
 public:
  explicit ResponseCache(std::string dir);  // "" = off
  bool enabled() const { return !dir_.empty(); }
  // The stored response for this request, or nothing (miss, unreadable or mismatched file).
  std::optional<std::string> get(const std::string& url, const std::string& model, const std::string& body) const;
  // Stores `response`; returns false (and logs why) when it could not be written.
  bool put(const std::string& url, const std::string& model, const std::string& body,
           const std::string& response) const;
  // The file a request is stored in.
  std::string path_for(const std::string& url, const std::string& model, const std::string& body) const;

 private:
  std::string dir_;
};

}  // namespace ttap::llm
