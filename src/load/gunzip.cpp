// gzip decompression. libdeflate decompresses whole buffers about twice as fast as
// zlib's streaming inflate (measured in scripts/bench/gunzip_bench.sh); zlib is used to
// explain a failure, since it can say at which compressed byte the stream went wrong.
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "ttap/input.hpp"

namespace ttap {

namespace {

// zlib walks the stream to find where and why it is bad, for the error message.
[[noreturn]] void explain_failure(const std::string& source, const char* data, size_t size) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(source, "gzip: cannot initialize zlib");
  std::unique_ptr<unsigned char[]> sink(new unsigned char[1 << 16]);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(size, UINT32_MAX));
  std::string why = "truncated gzip stream (unexpected end of data)";
  for (;;) {
    zs.next_out = sink.get();
    zs.avail_out = 1 << 16;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR) {
      why = fmt::format("corrupt gzip data: {}", zs.msg ? zs.msg : "bad data");
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // ran out of input mid-stream
  }
  const uint64_t offset = zs.total_in;
  inflateEnd(&zs);
  throw InputError(source, why, offset);
}

}  // namespace

InputBuffer gunzip(const std::string& source, const char* data, size_t size, uint64_t max_bytes) {
  if (size < 18) explain_failure(source, data, size);
  // The last member's trailer holds its size mod 2^32: a good first guess, corrected by
  // doubling if the stream holds several members or more than 4 GiB.
  uint32_t isize = 0;
  std::memcpy(&isize, data + size - 4, 4);
  // Deflate cannot expand data more than 1032:1, which also bounds what a bomb can ask for.
  const uint64_t ceiling = std::min<uint64_t>(max_bytes, static_cast<uint64_t>(size) * 1032 + 4096);
  const uint64_t guess = std::min<uint64_t>(ceiling, isize <= ceiling ? std::max<uint64_t>(isize, 4096) : size * 4);

  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> dec(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (!dec) throw InputError(source, "gzip: out of memory");

  InputBuffer out(guess);
  for (;;) {
    size_t in_pos = 0, out_pos = 0;
    libdeflate_result rc = LIBDEFLATE_SUCCESS;
    while (in_pos < size) {
      size_t in_used = 0, out_used = 0;
      rc = libdeflate_gzip_decompress_ex(dec.get(), data + in_pos, size - in_pos, out.data() + out_pos,
                                         out.capacity() - out_pos, &in_used, &out_used);
      if (rc != LIBDEFLATE_SUCCESS) break;
      in_pos += in_used;
      out_pos += out_used;
      // Trailing zero bytes after the last member (some writers pad) are ignored.
      if (in_pos < size && static_cast<unsigned char>(data[in_pos]) != 0x1f) {
        bool zeros = std::all_of(data + in_pos, data + size, [](char c) { return c == 0; });
        if (zeros) break;
        throw InputError(source, "trailing garbage after gzip stream", in_pos);
      }
    }
    if (rc == LIBDEFLATE_SUCCESS) {
      out.resize(out_pos);
      return out;
    }
    if (rc != LIBDEFLATE_INSUFFICIENT_SPACE) explain_failure(source, data, size);
    if (out.capacity() >= ceiling) {
      if (ceiling == max_bytes)
        throw InputError(source, fmt::format("decompressed input is larger than the limit of {} bytes (set TTAP_MAX_INPUT_BYTES)", max_bytes));
      explain_failure(source, data, size);
    }
    out = InputBuffer(std::min<uint64_t>(ceiling, out.capacity() * 2));
  }
}

}  // namespace ttap
