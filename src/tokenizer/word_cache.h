// WordCache: remembers the BPE result of recently seen pieces (pre-tokenized
// words) so that frequent words cost one probe instead of a merge loop.
// Pieces of up to 16 bytes -- nearly all of them in real text -- are keyed
// by two machine words read straight from the text, so a lookup is a
// multiply, one slot load and two compares; longer pieces (up to
// kMaxWordBytes) keep their bytes in an arena. Memory is bounded: the table
// starts small and doubles when half full, up to room for max_entries (that
// last size is filled up to 3/4). At that
// limit, or when the arenas below would pass their budget, it is swept: the
// words found again since the last sweep stay (up to half the bound and half
// the arena budget, in slot order), every other word goes, and both arenas
// are compacted. So the hot words of a long run of text whose distinct words
// outnumber the bound survive each sweep, and a word met once and never
// again is dropped at the next one. Memory: 32-byte slots, a power of two of
// them at most 3/4 full (32 MiB for 524,288 words), plus the ids of
// multi-token words and the bytes of words over 16 bytes in two arenas
// holding at most kArenaBytesPerEntry bytes a word of the bound together (16
// MiB at the default), whatever the text; as they grow by doubling, their
// allocations can reach twice that. A sweep briefly adds its copies: the
// kept slots and arenas, at most half the bound's slots and half the
// budget (8 + 8 MiB at the default). Worst case at the default bound: about
// 80 MiB; on real text about 44 MB.
// The table is offered huge pages when it reaches 2 MiB (HugePageAllocator):
// a probe is a random access into tens of MiB, and with 4 KiB pages most of
// them also missed the TLB (5-8 % faster on text seen before, measured).
// Not thread-safe: each encoding thread owns one (inside its BpeScratch).
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/huge_page_allocator.h"
#include "base/little_endian.h"

namespace tokenfeed::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 96;  // longer pieces are not cached

  // The identity of a piece: its length and two words that, for up to 16
  // bytes, hold its bytes in order and zeros after them; for longer pieces,
  // its first 16 bytes, which with `hash` select candidates that a byte
  // comparison confirms.
  struct Key {
    uint64_t w0, w1;
    uint64_t hash;
    uint32_t len;
  };

  // HOT PATH, inlined where a piece's slot is fetched (the block loop of
  // the encoder) and where parts of a cut piece are looked up: the hash of a
  // word over 16 bytes (rare) is a call. `padded`: the 16 bytes from the
  // word's start may be read, its own and what follows it (the rest of a
  // document). Then the key is two loads and two masks, the same work for
  // every length (no branch on it to mispredict); otherwise loads within the
  // word give the same key. The loads are little-endian on any machine, so
  // the masks keep the word's own bytes.
  [[gnu::always_inline]] static Key MakeKey(std::string_view word, bool padded) {
    const auto* p = reinterpret_cast<const unsigned char*>(word.data());
    const size_t n = word.size();
    Key k{0, 0, 0, static_cast<uint32_t>(n)};
    if (padded || n >= 16) [[likely]] {
      k.w0 = LoadLittleEndian<uint64_t>(p);
      k.w1 = LoadLittleEndian<uint64_t>(p + 8);
      const size_t m = n < 16 ? n : 16;  // a conditional move, and the masks a load each
      k.w0 &= kKeyMasks[m][0];
      k.w1 &= kKeyMasks[m][1];
    } else {
      k = KeyWithin(p, n);
    }
    if (n <= 16) {
      uint64_t h = (k.w0 ^ (uint64_t{n} << 56)) * 0x9E3779B97F4A7C15ULL;
      h ^= (k.w1 + h) * 0xC2B2AE3D27D4EB4FULL;
      k.hash = h ^ (h >> 29);
    } else {
      k.hash = LongWordHash(p, n);
    }
    return k;
  }
  // The key of a word with nothing readable after it.
  static Key MakeKey(std::string_view word) { return MakeKey(word, false); }

  // The arenas' budget, in bytes per word of the bound: real text needs
  // about 24 (long words' bytes, multi-token words' ids); words of many
  // bytes and tokens sweep sooner instead of growing memory. The 2^26 words
  // the bound may be keep the offsets into the arenas within 32 bits.
  static constexpr size_t kArenaBytesPerEntry = 32;
  // The default: 524,288 words, about 44 MB once full (TokenizerOptions).
  static constexpr size_t kDefaultMaxEntries = size_t{1} << 19;
  // The table's first size: room for this many words (or max_entries).
  static constexpr size_t kInitialEntries = size_t{1} << 14;

  explicit WordCache(size_t max_entries = kDefaultMaxEntries)
      : max_entries_(std::max<size_t>(max_entries, 1)), arena_budget_(max_entries_ * kArenaBytesPerEntry) {
    Allocate(std::min(max_entries_, kInitialEntries));
  }

  // Asks the CPU to bring `key`'s first slot into the cache: a hint, no effect
  // on what Find returns.
  void Prefetch(const Key& key) const { __builtin_prefetch(&slots_[key.hash & mask_]); }

  // HOT PATH. Returns false when `word` is not cached; a word found is
  // marked to survive the next sweep. The ids stay valid until the next
  // Insert.
  bool Find(std::string_view word, const Key& key, std::span<const uint32_t>* ids) {
    size_t i = key.hash & mask_;
    while (true) {
      Slot& s = slots_[i];
      if (s.len == kEmpty) return false;
      if (s.len == key.len && s.w0 == key.w0 && s.w1 == key.w1 &&
          (key.len <= 16 || (s.hash == static_cast<uint32_t>(key.hash) &&
                             std::memcmp(long_keys_.data() + s.key_offset, word.data(), word.size()) == 0))) {
        if (!s.found) s.found = 1;  // a store only the first time after a sweep
        *ids = s.ids_len == 1 ? std::span<const uint32_t>(&s.value, 1)
                              : std::span<const uint32_t>(ids_.data() + s.value, s.ids_len);
        return true;
      }
      i = (i + 1) & mask_;
    }
  }

  void Insert(std::string_view word, const Key& key, std::span<const uint32_t> ids) {
    if (word.size() > kMaxWordBytes || ids.size() > UINT8_MAX) return;
    const size_t need = ArenaBytesOf(word.size(), ids.size());
    if (need > arena_budget_ / 2) return;  // only with a tiny bound
    if (size_ >= max_entries_ || arena_bytes() + need > arena_budget_) {
      Sweep();
    } else if (size_ >= room_) {
      Grow();
    }
    // The arenas first: if an append throws, no slot points at it (bytes
    // appended before are only unused until the next sweep).
    Slot n;
    n.w0 = key.w0;
    n.w1 = key.w1;
    n.hash = static_cast<uint32_t>(key.hash);
    n.ids_len = static_cast<uint8_t>(ids.size());
    if (word.size() > 16) {
      n.key_offset = static_cast<uint32_t>(long_keys_.size());
      long_keys_.append(word);
    }
    if (ids.size() == 1) {
      n.value = ids[0];
    } else {
      n.value = static_cast<uint32_t>(ids_.size());
      ids_.insert(ids_.end(), ids.begin(), ids.end());
    }
    n.len = static_cast<uint16_t>(key.len);
    Place(n, &slots_, mask_);
    ++size_;
  }

  // The arena bytes a word of `bytes` bytes and `ids` ids takes.
  static size_t ArenaBytesOf(size_t bytes, size_t ids) {
    return (bytes > 16 ? bytes : 0) + (ids > 1 ? ids * sizeof(uint32_t) : 0);
  }

  size_t size() const { return size_; }
  // Bytes held in the arenas, and their budget.
  size_t arena_bytes() const { return long_keys_.size() + ids_.size() * sizeof(uint32_t); }
  size_t arena_budget() const { return arena_budget_; }
  // Sweeps done so far (each when the cache was full or its arenas at
  // their budget).
  uint64_t sweeps() const { return sweeps_; }
  // Slots in the table now (it grows up to room for max_entries words).
  size_t capacity() const { return slots_.size(); }

 private:
  // For a word of m bytes (16 for 16 and more), the masks that keep its
  // bytes in the two words of its key.
  static constexpr auto kKeyMasks = [] {
    std::array<std::array<uint64_t, 2>, 17> masks{};
    for (size_t m = 0; m <= 16; ++m) {
      masks[m][0] = m >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * m)) - 1;
      masks[m][1] = m >= 16 ? ~uint64_t{0} : m <= 8 ? 0 : (uint64_t{1} << (8 * (m - 8))) - 1;
    }
    return masks;
  }();

  [[gnu::noinline]] static uint64_t LongWordHash(const unsigned char* p, size_t n) { return XXH3_64bits(p, n); }

  // MakeKey's words (not the hash) for a word of n < 16 bytes, from loads
  // within it: two that may overlap, the second shifted down to drop the
  // bytes the first holds.
  static Key KeyWithin(const unsigned char* p, size_t n) {
    assert(n < 16);
    Key k{0, 0, 0, static_cast<uint32_t>(n)};
    if (n >= 8) {
      k.w0 = LoadLittleEndian<uint64_t>(p);
      if (n > 8) {
        k.w1 = LoadLittleEndian<uint64_t>(p + n - 8);
        k.w1 >>= 8 * (16 - n);
      }
    } else if (n >= 4) {
      const uint32_t a = LoadLittleEndian<uint32_t>(p);
      const uint32_t b = LoadLittleEndian<uint32_t>(p + n - 4);
      k.w0 = uint64_t{a} | ((uint64_t{b} >> (8 * (8 - n))) << 32);
    } else if (n > 0) {
      k.w0 = uint64_t{p[0]} | (n > 1 ? uint64_t{p[1]} << 8 : 0) | (n > 2 ? uint64_t{p[2]} << 16 : 0);
    }
    return k;
  }

  static constexpr uint16_t kEmpty = UINT16_MAX;
  static_assert(kMaxWordBytes <= UINT8_MAX);
  // 32 bytes: two slots to a cache line. A word of one token (most of them)
  // keeps the id in the slot itself.
  struct Slot {
    uint64_t w0 = 0, w1 = 0;
    uint32_t hash = 0;       // low half; compared only for words over 16 bytes
    uint16_t len = kEmpty;
    uint8_t ids_len = 0;     // at most kMaxWordBytes: a token has at least one byte
    uint8_t found = 0;       // found by Find since the last sweep
    uint32_t value = 0;      // the id when ids_len is 1, else the offset of the ids in ids_
    uint32_t key_offset = 0;
  };
  static_assert(sizeof(Slot) == 32);
  using Table = std::vector<Slot, HugePageAllocator<Slot>>;

  // The slots for `entries` words at most 3/4 full: a power of two.
  static size_t SlotsFor(size_t entries) {
    size_t cap = 16;
    while (cap * 3 < entries * 4) cap <<= 1;
    return cap;
  }
  // A table with room for `entries` words, every slot empty; `room` is set
  // to the words it takes before it grows: half its slots while a larger
  // table may follow, 3/4 (and at most max_entries) for the last size, so
  // the bound's memory is what 3/4 gives. At 3/4 a probe for a word not
  // there walks about 8.5 slots, at 1/2 about 2.5 (linear probing); every
  // miss makes one, and an insert another. Nothing changes if it throws.
  Table NewTable(size_t entries, size_t* room) const {
    const size_t cap = SlotsFor(entries);
    Table table(cap, Slot{});
    *room = cap >= SlotsFor(max_entries_) ? std::min(max_entries_, cap * 3 / 4) : cap / 2;
    return table;
  }
  void Allocate(size_t entries) {
    slots_ = NewTable(entries, &room_);
    mask_ = slots_.size() - 1;
  }

  // Puts `s` in the first empty slot from its hash's place (linear probing).
  static void Place(const Slot& s, Table* table, size_t mask) {
    size_t i = s.hash & mask;
    while ((*table)[i].len != kEmpty) i = (i + 1) & mask;
    (*table)[i] = s;
  }

  // Keeps the words found since the last sweep, up to half the bound and
  // half the arena budget (the first ones in slot order when more were
  // found), each in a fresh slot and with its bytes and ids copied to new
  // arenas; drops the rest. The table keeps its size. O(slots) work once per
  // at least max_entries / 2 inserts or arena_budget / 2 bytes.
  void Sweep() {
    ++sweeps_;
    const size_t keep_at_most = max_entries_ / 2;
    // First the copies, which may throw with the cache unchanged; then the
    // table is emptied and the kept words put back, which cannot.
    std::vector<Slot> kept;
    kept.reserve(std::min(keep_at_most, size_));
    size_t kept_bytes = 0, key_bytes = 0, id_count = 0;
    for (const Slot& s : slots_) {
      if (kept.size() == keep_at_most) break;
      if (s.len == kEmpty || !s.found) continue;
      const size_t bytes = ArenaBytesOf(s.len, s.ids_len);
      if (kept_bytes + bytes > arena_budget_ / 2) continue;
      kept_bytes += bytes;
      if (s.len > 16) key_bytes += s.len;
      if (s.ids_len != 1) id_count += s.ids_len;
      kept.push_back(s);
    }
    std::string long_keys;
    long_keys.reserve(key_bytes);
    std::vector<uint32_t> ids;
    ids.reserve(id_count);
    for (Slot& k : kept) {
      k.found = 0;
      if (k.len > 16) {
        const uint32_t from = k.key_offset;
        k.key_offset = static_cast<uint32_t>(long_keys.size());
        long_keys.append(long_keys_, from, k.len);
      }
      if (k.ids_len != 1) {
        const uint32_t from = k.value;
        k.value = static_cast<uint32_t>(ids.size());
        ids.insert(ids.end(), ids_.begin() + from, ids_.begin() + from + k.ids_len);
      }
    }
    for (Slot& s : slots_) s.len = kEmpty;
    long_keys_ = std::move(long_keys);
    ids_ = std::move(ids);
    for (const Slot& k : kept) Place(k, &slots_, mask_);
    size_ = kept.size();
  }

  // Twice the slots; every word moves to its place in the new table. A
  // slot keeps the low 32 bits of its key's hash, which place it for any
  // table of up to 2^32 slots. The new table is made before the old one is
  // touched: if it cannot be had, the cache stays as it was (the insert
  // that asked then throws).
  void Grow() {
    size_t room = 0;
    Table table = NewTable(std::min(max_entries_, slots_.size() * 3 / 2), &room);
    const size_t mask = table.size() - 1;
    for (const Slot& s : slots_) {
      if (s.len != kEmpty) Place(s, &table, mask);
    }
    slots_.swap(table);
    mask_ = mask;
    room_ = room;
  }


  size_t max_entries_;
  size_t arena_budget_;
  Table slots_;
  size_t mask_ = 0;
  size_t room_ = 0;  // words the table takes before it grows
  size_t size_ = 0;
  uint64_t sweeps_ = 0;
  std::string long_keys_;
  std::vector<uint32_t> ids_;
};

}  // namespace tokenfeed::tokenizer
