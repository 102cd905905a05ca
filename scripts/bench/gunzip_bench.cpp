// libdeflate (whole buffer, as src/load/gunzip.cpp does it) against zlib inflate on one
// .gz file: the measurement behind ttap's choice of libdeflate. Best of 5 each, MB/s of
// decompressed output:
//   libdeflate into a reused buffer     decompression alone (pages already mapped)
//   libdeflate into a fresh new[]       what ttap's InputBuffer does: first-touch page
//                                       faults included (slow on VMs)
//   libdeflate into fresh MAP_POPULATE  the same output memory, mapped up front
//   zlib inflate, whole buffer          one inflate() into a reused buffer
//   zlib inflate, 256 KiB window        streaming, as a reader that does not know the size
// Built and run by scripts/bench/gunzip_bench.sh:
//   g++ -O2 -std=c++17 scripts/bench/gunzip_bench.cpp -ldeflate -lz -o gunzip_bench && ./gunzip_bench FILE.gz
#include <libdeflate.h>
#include <sys/mman.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Whole buffer, every gzip member, into out[0, cap). 0 when the output does not fit.
size_t libdeflate_into(const std::vector<unsigned char>& gz, unsigned char* out, size_t cap) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t in_pos = 0, out_pos = 0;
  libdeflate_result rc = LIBDEFLATE_SUCCESS;
  while (in_pos < gz.size()) {
    size_t in_used = 0, out_used = 0;
    rc = libdeflate_gzip_decompress_ex(d, gz.data() + in_pos, gz.size() - in_pos, out + out_pos, cap - out_pos,
                                       &in_used, &out_used);
    if (rc != LIBDEFLATE_SUCCESS) break;
    in_pos += in_used;
    out_pos += out_used;
  }
  libdeflate_free_decompressor(d);
  if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) return 0;
  if (rc != LIBDEFLATE_SUCCESS) {
    std::fprintf(stderr, "libdeflate: corrupt input (%d)\n", static_cast<int>(rc));
    std::exit(1);
  }
  return out_pos;
}

size_t run_libdeflate(const std::vector<unsigned char>& gz, std::vector<unsigned char>& out) {
  for (;;) {
    if (size_t n = libdeflate_into(gz, out.data(), out.size())) return n;
    out.resize(out.size() * 2);
  }
}

// Into fresh memory each time, faults and unmapping included. populate: mmap with
// MAP_POPULATE; otherwise new char[] (uninitialized, so pages fault in on first write).
size_t run_libdeflate_fresh(const std::vector<unsigned char>& gz, size_t cap, bool populate) {
  for (;;) {
    size_t n = 0;
    if (populate) {
      void* p = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (p == MAP_FAILED) std::exit(1);
      n = libdeflate_into(gz, static_cast<unsigned char*>(p), cap);
      munmap(p, cap);
    } else {
      unsigned char* p = new unsigned char[cap];
      n = libdeflate_into(gz, p, cap);
      delete[] p;
    }
    if (n) return n;
    cap *= 2;
  }
}

// window == 0: one inflate() into `out`; otherwise through a window of that many bytes.
size_t run_zlib(const std::vector<unsigned char>& gz, std::vector<unsigned char>& out, size_t window) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 32);
  zs.next_in = const_cast<Bytef*>(gz.data());
  zs.avail_in = static_cast<uInt>(gz.size());
  size_t total = 0;
  for (;;) {
    if (window == 0) {
      zs.next_out = out.data() + total;
      zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - total, UINT32_MAX));
    } else {
      zs.next_out = out.data();
      zs.avail_out = static_cast<uInt>(window);
    }
    const uInt before = zs.avail_out;
    const int rc = inflate(&zs, window == 0 ? Z_FINISH : Z_NO_FLUSH);
    total += before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // next member
      continue;
    }
    if (rc == Z_BUF_ERROR && window == 0) {
      out.resize(out.size() * 2);
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::fprintf(stderr, "zlib: %s\n", zs.msg ? zs.msg : "error");
      std::exit(1);
    }
  }
  inflateEnd(&zs);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.gz\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<unsigned char> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (gz.size() < 18) {
    std::fprintf(stderr, "%s: not a gzip file\n", argv[1]);
    return 1;
  }
  uint32_t isize;
  std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
  std::vector<unsigned char> out(std::max<size_t>(isize, 1 << 20) + 64);
  std::vector<unsigned char> check(out.size());

  constexpr int kReps = 5;
  double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
  size_t bytes[5] = {0, 0, 0, 0, 0};
  for (int rep = 0; rep < kReps; ++rep) {
    auto t0 = Clock::now();
    bytes[0] = run_libdeflate(gz, out);
    best[0] = std::min(best[0], seconds_since(t0));
    if (check.size() < out.size()) check.resize(out.size());
    t0 = Clock::now();
    bytes[1] = run_zlib(gz, check, 0);
    best[1] = std::min(best[1], seconds_since(t0));
    t0 = Clock::now();
    std::vector<unsigned char> window(256 << 10);
    bytes[2] = run_zlib(gz, window, window.size());
    best[2] = std::min(best[2], seconds_since(t0));
    t0 = Clock::now();
    bytes[3] = run_libdeflate_fresh(gz, out.size(), false);
    best[3] = std::min(best[3], seconds_since(t0));
    t0 = Clock::now();
    bytes[4] = run_libdeflate_fresh(gz, out.size(), true);
    best[4] = std::min(best[4], seconds_since(t0));
  }
  if (bytes[0] != bytes[1] || bytes[0] != bytes[2] || bytes[0] != bytes[3] || bytes[0] != bytes[4] || std::memcmp(out.data(), check.data(), bytes[0]) != 0) {
    std::fprintf(stderr, "outputs differ: %zu / %zu / %zu bytes\n", bytes[0], bytes[1], bytes[2]);
    return 1;
  }
  const double mb = bytes[0] / 1e6;
  std::printf("%s: %.1f MB compressed -> %.1f MB, best of %d\n", argv[1], gz.size() / 1e6, mb, kReps);
  std::printf("  %-38s %7.3f s %7.0f MB/s\n", "libdeflate, reused buffer", best[0], mb / best[0]);
  std::printf("  %-38s %7.3f s %7.0f MB/s\n", "libdeflate, fresh new[] (page faults)", best[3], mb / best[3]);
  std::printf("  %-38s %7.3f s %7.0f MB/s\n", "libdeflate, fresh mmap MAP_POPULATE", best[4], mb / best[4]);
  std::printf("  %-38s %7.3f s %7.0f MB/s\n", "zlib inflate, whole buffer", best[1], mb / best[1]);
  std::printf("  %-38s %7.3f s %7.0f MB/s\n", "zlib inflate, 256 KiB window", best[2], mb / best[2]);
  std::printf("  libdeflate / zlib, both into a reused buffer: %.2fx\n", best[1] / best[0]);
  return 0;
}
