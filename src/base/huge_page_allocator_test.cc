#include "base/huge_page_allocator.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed {
namespace {

// Large arrays start on a 2 MiB boundary (where a huge page can back them);
// small ones are ordinary allocations; both hold what is written and free
// cleanly (ASan checks the pairing of allocation and release).
TEST(HugePageAllocatorTest, LargeArraysAreAlignedToHugePagesAndSmallOnesAreOrdinary) {
  std::vector<uint64_t, HugePageAllocator<uint64_t>> large((size_t{5} << 20) / sizeof(uint64_t), 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % HugePageAllocator<uint64_t>::kHugePage, 0u);
  large.back() = 9;
  EXPECT_EQ(large.front() + large.back(), 16u);
  std::vector<uint64_t, HugePageAllocator<uint64_t>> small(100, 3);
  EXPECT_EQ(small[99], 3u);
  // Growing across the threshold moves the contents from one kind to the other.
  for (int i = 0; i < 300000; ++i) small.push_back(static_cast<uint64_t>(i));
  EXPECT_EQ(small[99], 3u);
  EXPECT_EQ(small.back(), 299999u);
  EXPECT_GE(small.capacity() * sizeof(uint64_t), HugePageAllocator<uint64_t>::kHugePage);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % HugePageAllocator<uint64_t>::kHugePage, 0u);
}

// Sizes whose bytes overflow, and sizes that fit but whose rounding up to
// a whole huge page would wrap around, are refused, not allocated short.
TEST(HugePageAllocatorTest, AnImpossibleSizeThrowsInsteadOfOverflowing) {
  HugePageAllocator<uint64_t> a;
  EXPECT_THROW((void)a.allocate(SIZE_MAX / 4), std::bad_array_new_length);
  HugePageAllocator<char> c;
  EXPECT_THROW((void)c.allocate(SIZE_MAX - 100), std::bad_array_new_length);
  EXPECT_THROW((void)c.allocate(SIZE_MAX - HugePageAllocator<char>::kHugePage + 1), std::bad_array_new_length);
}

}  // namespace
}  // namespace tokenfeed
