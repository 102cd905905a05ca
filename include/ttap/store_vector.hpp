// StoreVector<T>: the vector type of the event store. Large columns are backed by transparent
// huge pages: on virtual machines every first touch of a 4 KiB page costs microseconds,
// and a 1 GB trace's store spans hundreds of thousands of them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace ttap {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugeThreshold = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugeThreshold) {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      ::madvise(p, bytes, MADV_HUGEPAGE);
      return static_cast<T*>(p);
    }
    void* p = std::malloc(bytes > 0 ? bytes : 1);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugeThreshold) {
      ::munmap(p, bytes);
    } else {
      std::free(p);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

template <typename T>
using StoreVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace ttap
