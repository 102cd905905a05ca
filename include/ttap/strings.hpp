// Interned strings: every event name, category and string argument is stored once and
// referred to by a 32-bit id. Traces repeat the same few thousand names millions of times.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace ttap {

using StringId = uint32_t;
inline constexpr StringId kNoString = UINT32_MAX;

class StringPool {
 public:
  StringPool();
  StringPool(StringPool&&) noexcept;
  StringPool& operator=(StringPool&&) noexcept;
  ~StringPool();

  // Returns the id of `s`, adding it when new. Ids are dense, starting at 0.
  StringId intern(std::string_view s);
  // Returns the id of `s` or kNoString when it was never interned.
  StringId find(std::string_view s) const;
  std::string_view view(StringId id) const { return id == kNoString ? std::string_view{} : strings_[id]; }
  size_t size() const { return strings_.size(); }
  size_t bytes() const;

 private:
  void grow();
  // Characters live in fixed-size blocks that never move, so string_views stay valid.
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t block_bytes_ = 0;  // all blocks together
  std::vector<std::string_view> strings_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;  // open addressing, holds id + 1 (0 = empty)
};

uint64_t hash_bytes(std::string_view s);

}  // namespace ttap
