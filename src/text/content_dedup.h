// Exact deduplication within a run: ContentHash is XXH3-128 of a cleaned
// text; DedupSet remembers the hashes in 16-byte slots (21-43 bytes per unique
// document) up to max_memory_bytes, then stops remembering (saturated()).
// False-duplicate odds: about n^2 / 2^129 for n documents. Hashing is pure;
// DedupSet is not synchronised: call Admit in document order from one thread,
// so which copy survives is deterministic. Costs: docs/sources_and_cleaning.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tokenfeed::text {

struct ContentHash {
  uint64_t low = 0;
  uint64_t high = 0;
  friend bool operator==(const ContentHash& a, const ContentHash& b) { return a.low == b.low && a.high == b.high; }
};

ContentHash HashContent(std::string_view text);

class DedupSet {
 public:
  static constexpr size_t kDefaultMaxMemoryBytes = size_t{2} << 30;

  explicit DedupSet(size_t max_memory_bytes = kDefaultMaxMemoryBytes);
  ~DedupSet();
  DedupSet(DedupSet&&) noexcept;
  DedupSet& operator=(DedupSet&&) noexcept;

  // True when `hash` is new (the document is kept) and false when it was
  // admitted before (a duplicate). Once saturated, unseen hashes are still
  // admitted but no longer remembered.
  bool Admit(const ContentHash& hash);
  bool Contains(const ContentHash& hash) const;

  size_t size() const { return size_; }          // hashes remembered
  size_t memory_bytes() const { return slots_ * sizeof(ContentHash); }
  bool saturated() const { return saturated_; }
  uint64_t unremembered() const { return unremembered_; }  // admitted while saturated

 private:
  bool Grow();
  size_t FindSlot(const ContentHash& hash) const;  // its slot, or the empty slot where it would go

  size_t max_memory_bytes_;
  std::unique_ptr<ContentHash[]> table_;
  size_t slots_ = 0;
  size_t size_ = 0;
  bool has_zero_ = false;  // the all-zero hash marks empty slots, so it is kept aside
  bool saturated_ = false;
  uint64_t unremembered_ = 0;
};

}  // namespace tokenfeed::text
