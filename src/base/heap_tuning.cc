#include "base/heap_tuning.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tokenfeed {

bool KeepLargeBuffersInHeap(size_t mmap_threshold, size_t trim_threshold) {
#if defined(__GLIBC__)
  const auto clamp = [](size_t v) { return static_cast<int>(v > static_cast<size_t>(INT_MAX) ? INT_MAX : v); };
  // Setting either threshold also turns off glibc's dynamic adjustment of it.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, clamp(mmap_threshold)) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, clamp(trim_threshold)) == 1;
  return mmap_ok && trim_ok;
#else
  (void)mmap_threshold;
  (void)trim_threshold;
  return false;
#endif
}

}  // namespace tokenfeed
