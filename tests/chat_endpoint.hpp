// A real chat-completions server on loopback for tests (cpp-httplib, in a thread): every
// request is recorded and answered by the test's handler. Used by the LLM and eval suites.
#pragma once

// Debian builds libcpp-httplib with these three (its pkg-config Cflags); the declarations
// must match the library's.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ttap::test {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A JSON string literal for the ASCII texts these tests send.
inline std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A chat-completions response whose message content is `content`.
inline std::string completion(const std::string& content) {
  return R"({"id":"chatcmpl-1","object":"chat.completion","model":"test-model","choices":[{"index":0,)"
         R"("message":{"role":"assistant","content":)" +
         quote(content) + R"(},"finish_reason":"stop"}]})";
}

inline std::string verdict_json(const std::string& ids, double confidence, bool needs_more = false) {
  return "{\"ids\":" + ids + ",\"confidence\":" + std::to_string(confidence) +
         ",\"explanation\":\"cudaStreamSynchronize under aten::item for 3 ms while the GPU idles\","
         "\"fix\":\"keep the loss on the device\",\"needs_more_context\":" +
         (needs_more ? "true" : "false") + "}";
}

struct Received {
  std::string body;
  std::string authorization;
  Clock::time_point at;
};

// The endpoint: every request is recorded, then answered by the test's handler (which
// gets the 1-based request number).
class FakeEndpoint {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, int)>;

  explicit FakeEndpoint(Handler handler) : handler_(std::move(handler)) {
    server_.set_keep_alive_timeout(1);
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      const int in_flight = ++in_flight_;
      int seen = max_in_flight_.load();
      while (in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, in_flight)) {
      }
      int number;
      {
        std::lock_guard lock(mutex_);
        received_.push_back({req.body, req.get_header_value("Authorization"), Clock::now()});
        number = static_cast<int>(received_.size());
      }
      handler_(req, res, number);
      --in_flight_;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the accept loop runs would be lost and the join would hang.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!server_.is_running() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeEndpoint() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int requests() {
    std::lock_guard lock(mutex_);
    return static_cast<int>(received_.size());
  }
  std::vector<Received> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }
  int max_in_flight() const { return max_in_flight_; }
  // Sleeps up to `seconds`, ending early when the server stops (so teardown never waits).
  void sleep(double seconds) const {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (!stopping_ && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

 private:
  Handler handler_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<Received> received_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace ttap::test
