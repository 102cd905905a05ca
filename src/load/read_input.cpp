#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "ttap/input.hpp"

namespace ttap {

namespace {

std::string format_error(const std::string& source, const std::string& message, std::optional<uint64_t> offset) {
  if (offset) return fmt::format("{}: {} (at byte {})", source, message, *offset);
  return fmt::format("{}: {}", source, message);
}

bool is_gzip(const InputBuffer& b) {
  return b.size() >= 2 && static_cast<unsigned char>(b.data()[0]) == 0x1f &&
         static_cast<unsigned char>(b.data()[1]) == 0x8b;
}

// Whether bytes [from, to) of `data` hold something other than JSON white space; throws when
// the first such byte cannot start a trace (JSON's '{' or '[', a UTF-8 byte-order mark,
// gzip's magic). Lets an endless stream that is no trace (/dev/zero, /dev/urandom) fail at
// once instead of after reading up to the input limit.
bool check_start(const std::string& source, const char* data, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{' || c == '[' || c == 0xEF || c == 0x1f) return true;
    throw InputError(source, fmt::format("not JSON or gzip: the input starts with byte 0x{:02x}", c), i);
  }
  return false;
}

// Reads everything from fd into `out`, growing it; `size_hint` sizes the first allocation.
void read_all(int fd, const std::string& source, size_t size_hint, uint64_t max_bytes, InputBuffer& out) {
  out.reserve(size_hint > 0 ? size_hint : (1 << 20));
  size_t used = 0;
  bool started = false;  // a byte other than white space was read (check_start)
  for (;;) {
    if (used == out.capacity()) {
      if (used >= max_bytes)
        throw InputError(source, fmt::format("input is larger than the limit of {} bytes (set TTAP_MAX_INPUT_BYTES)", max_bytes));
      out.resize(used);  // reserve() keeps size() bytes: record what has been read so far
      out.reserve(std::min<uint64_t>(max_bytes, std::max<size_t>(used * 2, 1 << 20)) + 1);
    }
    const ssize_t n = ::read(fd, out.data() + used, out.capacity() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(source, fmt::format("read failed: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    if (!started) started = check_start(source, out.data(), used, used + static_cast<size_t>(n));
    used += static_cast<size_t>(n);
  }
  out.resize(used);
}

}  // namespace

InputError::InputError(std::string source, std::string message, std::optional<uint64_t> offset)
    : std::runtime_error(format_error(source, message, offset)),
      source_(std::move(source)),
      detail_(std::move(message)),
      offset_(offset) {}

InputBuffer::InputBuffer(size_t capacity) { reserve(capacity); }

void InputBuffer::reserve(size_t n) {
  if (n <= capacity_ && data_) return;
  std::shared_ptr<char> bigger;
  const size_t bytes = n + kInputPadding;
  if (bytes >= (size_t{16} << 20)) {
    // Large buffers (a decompressed trace) are mapped on huge pages and populated in one
    // call: faulting them in page by page cost more than the decompression itself on VMs
    // (scripts/bench/gunzip_bench.sh: 326 MB/s into new[], 940 MB/s into a populated map).
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    ::madvise(p, bytes, MADV_POPULATE_WRITE);  // best effort: older kernels fault on first touch
#endif
    bigger = std::shared_ptr<char>(static_cast<char*>(p), [bytes](char* q) { ::munmap(q, bytes); });
  } else {
    // new char[] without value-initialization: only the padding needs zeroes.
    bigger = std::shared_ptr<char>(new char[bytes], std::default_delete<char[]>());
  }
  if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
  std::memset(bigger.get() + size_, 0, kInputPadding);
  data_ = std::move(bigger);
  capacity_ = n;
}

InputBuffer InputBuffer::map_file(int fd, size_t size) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGE_SIZE));
  const size_t total = (size + kInputPadding + page - 1) / page * page;
  // Reserve zeroed anonymous memory for file + padding, then map the file over its start:
  // the padding (and the tail of the last file page) reads as zeros.
  void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return InputBuffer{};
  // Populate read-only (a writable private mapping would be populated by copying every
  // page), then allow writes: the parser's few in-place writes copy single pages.
  void* file = ::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0);
  if (file == MAP_FAILED || ::mprotect(base, size, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(base, total);
    return InputBuffer{};
  }
  InputBuffer b;
  b.data_ = std::shared_ptr<char>(static_cast<char*>(base), [total](char* p) { ::munmap(p, total); });
  b.size_ = size;
  b.capacity_ = size;
  return b;
}

void InputBuffer::resize(size_t n) {
  if (n > capacity_ || !data_) reserve(n);
  size_ = n;
  std::memset(data_.get() + n, 0, kInputPadding);
}

uint64_t default_max_input_bytes() {
  if (const char* env = std::getenv("TTAP_MAX_INPUT_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return v;
  }
  // Half of physical memory: the loader needs about 1.4x the JSON size in all.
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
  return 8ULL << 30;
}

RawInput read_input(const std::string& path, uint64_t max_json_bytes) {
  RawInput raw;
  InputBuffer bytes;
  if (path == "-") {
    read_all(STDIN_FILENO, "<stdin>", 0, max_json_bytes, bytes);
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path, fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw InputError(path, "not a regular file");
    }
    try {
      const size_t hint = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0;
      if (hint > max_json_bytes && S_ISREG(st.st_mode))
        throw InputError(path, fmt::format("input is larger than the limit of {} bytes (set TTAP_MAX_INPUT_BYTES)", max_json_bytes));
      if (S_ISREG(st.st_mode) && hint > 0) bytes = InputBuffer::map_file(fd, hint);
      if (bytes.data() == nullptr)
      // A file of exactly `hint` bytes is read in one allocation; +1 lets read() see EOF.
      read_all(fd, path, hint + 1, max_json_bytes, bytes);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
  const std::string source = path == "-" ? "<stdin>" : path;
  raw.input_bytes = bytes.size();
  if (bytes.size() == 0) throw InputError(source, "empty input");
  if (is_gzip(bytes)) {
    raw.was_gzip = true;
    raw.json = gunzip(source, bytes.data(), bytes.size(), max_json_bytes);
  } else {
    raw.json = std::move(bytes);
  }
  return raw;
}

}  // namespace ttap
