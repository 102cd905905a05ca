// One HTTPS/HTTP POST of a JSON body, through libcurl (this pair of files and
// http_info.cpp are the only ones that include curl.h). No retries here: chat_endpoint
// decides what to retry.
#pragma once

#include <string>

namespace ttap::llm {

struct HttpPost {
  std::string url;
  std::string body;
  std::string api_key;  // sent as "Authorization: Bearer ..." when not empty
  double timeout_s = 60;
  double connect_timeout_s = 10;
};

struct HttpResponse {
  long status = 0;              // HTTP status; 0 when no complete response came back
  std::string body;
  double retry_after_s = -1;    // the Retry-After header in seconds; -1 when absent
  std::string transport_error;  // set when the transfer failed (status is then 0)
  bool timed_out = false;
};

// Largest response body accepted; a longer one is a transport error, not a memory hog.
inline constexpr size_t kMaxResponseBytes = 8u << 20;

HttpResponse http_post_json(const HttpPost& request);

}  // namespace ttap::llm
