#include "text/content_dedup.h"

#include <new>

#include <xxhash.h>

namespace tokenfeed::text {
namespace {

constexpr size_t kInitialSlots = 1024;

bool IsEmpty(const ContentHash& h) { return h.low == 0 && h.high == 0; }

}  // namespace

ContentHash HashContent(std::string_view text) {
  XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return ContentHash{h.low64, h.high64};
}

DedupSet::DedupSet(size_t max_memory_bytes) : max_memory_bytes_(max_memory_bytes) {}
DedupSet::~DedupSet() = default;
DedupSet::DedupSet(DedupSet&&) noexcept = default;
DedupSet& DedupSet::operator=(DedupSet&&) noexcept = default;

size_t DedupSet::FindSlot(const ContentHash& hash) const {
  size_t mask = slots_ - 1;
  // XXH3's low word is already uniform: no further mixing needed.
  for (size_t i = static_cast<size_t>(hash.low) & mask;; i = (i + 1) & mask) {
    const ContentHash& slot = table_[i];
    if (IsEmpty(slot) || slot == hash) return i;
  }
}

bool DedupSet::Contains(const ContentHash& hash) const {
  if (IsEmpty(hash)) return has_zero_;
  if (slots_ == 0) return false;
  return !IsEmpty(table_[FindSlot(hash)]);
}

bool DedupSet::Grow() {
  size_t want = slots_ == 0 ? kInitialSlots : slots_ * 2;
  if (want * sizeof(ContentHash) > max_memory_bytes_) return false;
  std::unique_ptr<ContentHash[]> table(new (std::nothrow) ContentHash[want]());
  if (!table) return false;
  std::unique_ptr<ContentHash[]> old = std::move(table_);
  size_t old_slots = slots_;
  table_ = std::move(table);
  slots_ = want;
  for (size_t i = 0; i < old_slots; ++i) {
    if (!IsEmpty(old[i])) table_[FindSlot(old[i])] = old[i];
  }
  return true;
}

bool DedupSet::Admit(const ContentHash& hash) {
  if (IsEmpty(hash)) {
    if (has_zero_) return false;
    has_zero_ = true;
    ++size_;
    return true;
  }
  if (slots_ != 0 && !IsEmpty(table_[FindSlot(hash)])) return false;
  // Keep the load at or under 3/4 so probe runs stay short.
  if (!saturated_ && (size_ + 1) * 4 > slots_ * 3 && !Grow()) saturated_ = true;
  if (saturated_ && (slots_ == 0 || (size_ + 1) * 4 > slots_ * 3)) {
    ++unremembered_;
    return true;
  }
  table_[FindSlot(hash)] = hash;
  ++size_;
  return true;
}

}  // namespace tokenfeed::text
