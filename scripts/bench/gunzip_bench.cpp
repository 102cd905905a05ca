// libdeflate (whole buffer) against zlib (streaming inflate) on one .gz file: the
// measurement behind ttap's choice of libdeflate in src/load/gunzip.cpp.
//   g++ -O2 scripts/bench/gunzip_bench.cpp -ldeflate -lz -o gunzip_bench && ./gunzip_bench FILE.gz
#include <libdeflate.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.gz\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint32_t isize;
  std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
  std::vector<char> out(isize + 64);
  using clock = std::chrono::steady_clock;
  double best_deflate = 1e9, best_zlib = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = clock::now();
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    size_t n = 0;
    if (libdeflate_gzip_decompress(d, gz.data(), gz.size(), out.data(), out.size(), &n) != LIBDEFLATE_SUCCESS) return 1;
    libdeflate_free_decompressor(d);
    best_deflate = std::min(best_deflate, std::chrono::duration<double>(clock::now() - t0).count());
    t0 = clock::now();
    z_stream zs{};
    inflateInit2(&zs, 15 + 32);
    zs.next_in = reinterpret_cast<Bytef*>(gz.data());
    zs.avail_in = static_cast<uInt>(gz.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    if (inflate(&zs, Z_FINISH) != Z_STREAM_END) return 1;
    inflateEnd(&zs);
    best_zlib = std::min(best_zlib, std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::printf("%.1f MB out: libdeflate %.3f s (%.0f MB/s), zlib %.3f s (%.0f MB/s)\n", isize / 1e6, best_deflate,
              isize / 1e6 / best_deflate, best_zlib, isize / 1e6 / best_zlib);
  return 0;
}
