#include "http_post.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>

namespace ttap::llm {

namespace {

void init_curl_once() {
  // curl_global_init is not thread-safe and must run before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string body;
  bool too_large = false;
};

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (sink->body.size() + n > kMaxResponseBytes) {
    sink->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->body.append(data, n);
  return n;
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};

long to_ms(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000.0)); }

}  // namespace

HttpResponse http_post_json(const HttpPost& request) {
  init_curl_once();
  HttpResponse response;
  // A line break in the key would let it write further headers.
  if (request.api_key.find_first_of("\r\n") != std::string::npos) {
    response.transport_error = "the API key contains a line break";
    return response;
  }
  std::unique_ptr<CURL, EasyDeleter> curl(curl_easy_init());
  if (!curl) {
    response.transport_error = "could not create a libcurl handle";
    return response;
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  const auto add_header = [&](const std::string& h) {
    curl_slist* grown = curl_slist_append(headers.get(), h.c_str());
    if (grown) {
      headers.release();
      headers.reset(grown);
    }
  };
  add_header("Content-Type: application/json");
  add_header("Accept: application/json");
  // Without this curl waits up to a second for "100 Continue" before sending larger bodies.
  add_header("Expect:");
  if (!request.api_key.empty()) add_header("Authorization: Bearer " + request.api_key);

  Sink sink;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "ttap");
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, to_ms(request.timeout_s));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, to_ms(std::min(request.connect_timeout_s, request.timeout_s)));
  // Signals cannot interrupt a worker thread's lookup safely; timeouts still hold.
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  // TLS is always verified; there is deliberately no option to turn this off.
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  // A redirect could carry the request (and the key) elsewhere: it is an error instead.
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);

  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);

  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_off_t retry_after = -1;
  if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0)
    response.retry_after_s = static_cast<double>(retry_after);
  if (rc != CURLE_OK) {
    response.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    if (sink.too_large)
      response.transport_error = fmt::format("response larger than {} MiB", kMaxResponseBytes >> 20);
    else
      response.transport_error = error_buffer[0] ? std::string(error_buffer) : curl_easy_strerror(rc);
    response.transport_error += fmt::format(" (curl error {})", static_cast<int>(rc));
    return response;  // status stays 0: a partial response is no response
  }
  response.status = status;
  response.body = std::move(sink.body);
  return response;
}

}  // namespace ttap::llm
