// A fast 64-bit hash of a file's bytes: ttap merge counts a trace reported twice (two
// shards, a rerun) once when path and hash agree. Reading a file back from the page cache
// costs far less than analyzing it (docs/fleet.md); collisions matter only between
// reports of the same path.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"

namespace ttap::cli {

namespace {

constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4FULL;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// MurmurHash3's finalizer: every input bit reaches every output bit.
uint64_t fmix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

// Four independent lanes of 8-byte words, so the multiplies overlap.
struct Hasher {
  uint64_t lane[4] = {kMul1, kMul2, ~kMul1, ~kMul2};
  uint64_t length = 0;
  void block(const unsigned char* p, size_t n) {  // n a multiple of 32
    for (size_t i = 0; i < n; i += 32)
      for (int l = 0; l < 4; ++l) {
        uint64_t w;
        std::memcpy(&w, p + i + 8 * l, 8);
        lane[l] = rotl(lane[l] ^ (w * kMul2), 31) * kMul1;
      }
    length += n;
  }
  uint64_t finish(const unsigned char* tail, size_t n) {
    uint64_t h = length + n;
    for (int l = 0; l < 4; ++l) h = rotl(h ^ fmix(lane[l]), 27) * kMul1;
    for (size_t i = 0; i < n; ++i) h = (h ^ tail[i]) * kMul2;
    return fmix(h);
  }
};

}  // namespace

std::string content_hash(const std::string& path) {
  if (path == "-") return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  Hasher h;
  std::vector<unsigned char> buf(1 << 20);
  size_t have = 0;  // bytes in buf not yet hashed (fewer than 32 after each block)
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return {};
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
    const size_t whole = have / 32 * 32;
    h.block(buf.data(), whole);
    std::memmove(buf.data(), buf.data() + whole, have - whole);
    have -= whole;
  }
  ::close(fd);
  return fmt::format("{:016x}", h.finish(buf.data(), have));
}

}  // namespace ttap::cli
