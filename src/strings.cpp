#include "ttap/strings.hpp"

#include <cstring>

namespace ttap {

namespace {
constexpr size_t kBlockBytes = 1 << 20;
constexpr size_t kInitialSlots = 1 << 12;
}  // namespace

uint64_t hash_bytes(std::string_view s) {
  // FNV-1a over 8-byte words with a final mix: fast on the long kernel names that dominate
  // traces, and good enough for a table that resolves collisions by comparison.
  uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ tail) * 0x100000001b3ULL;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  return h;
}

StringPool::StringPool() : slots_(kInitialSlots, 0) {}
StringPool::StringPool(StringPool&&) noexcept = default;
StringPool& StringPool::operator=(StringPool&&) noexcept = default;
StringPool::~StringPool() = default;

size_t StringPool::bytes() const {
  return block_bytes_ + slots_.size() * sizeof(uint32_t) + strings_.capacity() * sizeof(std::string_view) +
         hashes_.capacity() * sizeof(uint64_t);
}

StringId StringPool::find(std::string_view s) const {
  const uint64_t h = hash_bytes(s);
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t slot = slots_[i];
    if (slot == 0) return kNoString;
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return slot - 1;
  }
}

StringId StringPool::intern(std::string_view s) {
  const uint64_t h = hash_bytes(s);
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const uint32_t slot = slots_[i];
    if (slot == 0) break;
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return slot - 1;
  }
  // Copy the characters into a stable block.
  if (blocks_.empty() || block_used_ + s.size() > block_size_) {
    block_size_ = s.size() > kBlockBytes ? s.size() : kBlockBytes;
    blocks_.push_back(std::unique_ptr<char[]>(new char[block_size_]));  // no zero fill: every byte is written before use
    block_used_ = 0;
    block_bytes_ += block_size_;
  }
  char* dst = blocks_.back().get() + block_used_;
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  const StringId id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(dst, s.size());
  hashes_.push_back(h);
  slots_[i] = id + 1;
  if (strings_.size() * 2 > slots_.size()) grow();
  return id;
}

void StringPool::grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  const size_t mask = bigger.size() - 1;
  for (uint32_t id = 0; id < strings_.size(); ++id) {
    size_t i = hashes_[id] & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = id + 1;
  }
  slots_.swap(bigger);
}

}  // namespace ttap
