// HugePageAllocator: a std::allocator for large arrays read at random (hash
// tables). An allocation of 2 MiB or more is aligned to 2 MiB and offered to
// the kernel for transparent huge pages (madvise MADV_HUGEPAGE), so that a
// random probe into a table of tens of MiB misses the TLB far less often;
// smaller ones come from operator new. It is a hint only: where the kernel
// gives no huge pages (THP off, no madvise) the memory is ordinary pages.
// It is not a pool: each allocation is its own. Stateless; thread-safe as
// malloc is.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace tokenfeed {

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: converting, as allocators are

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new(bytes));
    if (bytes > SIZE_MAX - kHugePage) throw std::bad_array_new_length();  // the rounding would wrap
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    (void)madvise(p, rounded, MADV_HUGEPAGE);  // a hint; failure leaves ordinary pages
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugePage) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace tokenfeed
