// Reading trace bytes: files or stdin, plain or gzip, into one padded buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace ttap {

// simdjson reads up to 64 bytes past the end of its input; every buffer keeps that many.
inline constexpr size_t kInputPadding = 64;

// Bad input: a message naming the file and, where known, the byte offset. Exit code 2.
class InputError : public std::runtime_error {
 public:
  InputError(std::string source, std::string message, std::optional<uint64_t> offset = std::nullopt);
  const std::string& source() const { return source_; }
  const std::optional<uint64_t>& offset() const { return offset_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string source_;
  std::string detail_;
  std::optional<uint64_t> offset_;
};

class InputBuffer {
 public:
  InputBuffer() = default;
  explicit InputBuffer(size_t capacity);
  // Maps a regular file privately (copy-on-write) with zeroed padding after its end: no
  // copy, and the page cache backs it.
  static InputBuffer map_file(int fd, size_t size);
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  // Usable bytes, not counting the zeroed padding that always follows.
  size_t capacity() const { return capacity_; }
  void resize(size_t n);   // n <= capacity(); zeroes the padding after n
  void reserve(size_t n);  // grows, keeping content

 private:
  std::shared_ptr<char> data_;  // new[]'d or mmap'ed; the deleter knows which
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct RawInput {
  InputBuffer json;
  uint64_t input_bytes = 0;  // bytes read from the file or stream
  bool was_gzip = false;
};

uint64_t default_max_input_bytes();

// Reads `path` ("-" = stdin); gunzips when the bytes start with the gzip magic.
RawInput read_input(const std::string& path, uint64_t max_json_bytes);

// Decompresses a whole gzip stream (one or more members) into a padded buffer.
InputBuffer gunzip(const std::string& source, const char* data, size_t size, uint64_t max_bytes);

}  // namespace ttap
