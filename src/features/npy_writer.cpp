// Writes a FeatureBatch as NumPy .npy files (format 1.0): numpy.load reads them with no
// extra package, which is all the training scripts need.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "ttap/features.hpp"
#include "ttap/input.hpp"

namespace ttap {

namespace {

template <typename T>
constexpr const char* npy_dtype() {
  if constexpr (std::is_same_v<T, int32_t>) return "<i4";
  else if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, uint8_t>) return "|u1";
}

void write_file(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, fmt::format("cannot write: {}", std::strerror(errno)));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) throw InputError(path, fmt::format("write failed: {}", std::strerror(errno)));
}

template <typename T>
void write_npy(const std::string& dir, const char* name, const std::vector<T>& data, std::vector<int64_t> shape) {
  std::string dims;
  int64_t n = 1;
  for (int64_t s : shape) {
    dims += fmt::format("{},", s);
    n *= s;
  }
  if (shape.size() > 1) dims.pop_back();  // (3,) for one dimension, (3, 4) otherwise
  if (static_cast<size_t>(n) != data.size())
    throw std::logic_error(fmt::format("{}: {} values for shape ({})", name, data.size(), dims));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", npy_dtype<T>(), dims);
  // Magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
  write_file(fmt::format("{}/{}.npy", dir, name), bytes);
}

}  // namespace

void write_features(const FeatureBatch& b, const std::string& dir, const std::string& meta_json) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, fmt::format("cannot create the folder: {}", ec.message()));
  const int64_t W = b.windows, E = b.events;
  write_npy(dir, "name_tokens", b.name_tokens, {b.names, kMaxNameTokens});
  write_npy(dir, "event_name", b.event_name, {W, E});
  write_npy(dir, "event_kind", b.event_kind, {W, E});
  write_npy(dir, "event_opcat", b.event_opcat, {W, E});
  write_npy(dir, "event_track", b.event_track, {W, E});
  write_npy(dir, "event_numeric", b.event_numeric, {W, E, kNumericFeatures});
  write_npy(dir, "event_mask", b.event_mask, {W, E});
  write_npy(dir, "window_stats", b.window_stats, {W, kWindowStats});
  write_npy(dir, "window_bounds", b.window_bounds, {W, 2});
  write_file(dir + "/meta.json", meta_json);
}

void write_window_labels(const std::string& dir, const std::vector<uint8_t>& labels) {
  write_npy(dir, "window_label", labels, {static_cast<int64_t>(labels.size())});
}

void write_window_scores(const std::string& dir, const std::vector<double>& scores) {
  write_npy(dir, "window_score", scores, {static_cast<int64_t>(scores.size())});
}

}  // namespace ttap
