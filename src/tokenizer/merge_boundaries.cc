#include "tokenizer/merge_boundaries.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace tokenfeed::tokenizer {
namespace {

inline bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Length of the UTF-8 sequence a lead byte starts; 0 for a continuation byte.
inline size_t SequenceLength(unsigned char b) {
  if (b < 0x80) return 1;
  if (b < 0xC0) return 0;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

uint32_t DecodeWhole(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  switch (s.size()) {
    case 1: return p[0];
    case 2: return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
    case 3: return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    default: return 0x110000;  // four bytes: outside the tabulated plane
  }
}

std::string EncodeBmp(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// Interns sets of fragment ids as class numbers 1, 2, ...; the empty set is 0.
class ClassInterner {
 public:
  uint16_t Intern(const std::vector<uint32_t>& set) {
    if (set.empty()) return 0;
    auto [it, inserted] = ids_.emplace(set, static_cast<uint16_t>(sets_.size() + 1));
    if (inserted) sets_.push_back(set);
    return it->second;
  }
  // sets()[c - 1] is class c.
  const std::vector<std::vector<uint32_t>>& sets() const { return sets_; }

 private:
  std::map<std::vector<uint32_t>, uint16_t> ids_;
  std::vector<std::vector<uint32_t>> sets_;
};

}  // namespace

// Where a rule (A, B) can join: A's end and B's start must be a character
// boundary of the piece, so A ends there with the whole of a character (its
// last lead byte and all that character's continuation bytes) or with a tail
// of one made of continuation bytes only, and B starts with a lead byte and
// then some or all of that character. Rules that cannot meet a boundary so
// (B starts with a continuation byte, A stops inside a character) join
// bytes inside one character and are no concern here.
std::unique_ptr<MergeBoundaries> MergeBoundaries::Build(
    const std::vector<MergeTable::Rule>& rules, const std::function<std::string_view(uint32_t)>& token_bytes) {
  std::unique_ptr<MergeBoundaries> m(new MergeBoundaries());
  std::vector<MergeTable::Rule> whole;
  std::map<std::string, uint32_t> tail_ids, head_ids;
  std::set<std::pair<uint32_t, uint32_t>> partial_pairs;
  for (const MergeTable::Rule& r : rules) {
    const std::string_view a = token_bytes(r.left), b = token_bytes(r.right);
    if (a.empty() || b.empty()) continue;
    const size_t head_len = SequenceLength(static_cast<unsigned char>(b[0]));
    if (head_len == 0) continue;
    const std::string_view head = b.substr(0, std::min(head_len, b.size()));
    if (!std::all_of(head.begin() + 1, head.end(), [](char c) { return IsContinuation(c); })) continue;
    size_t last = a.size() - 1;
    while (last > 0 && IsContinuation(static_cast<unsigned char>(a[last]))) --last;
    std::string_view tail;
    bool whole_tail;
    if (IsContinuation(static_cast<unsigned char>(a[last]))) {
      if (a.size() > 3) continue;  // longer than any character's continuation bytes
      tail = a;
      whole_tail = false;
    } else {
      tail = a.substr(last);
      if (tail.size() != SequenceLength(static_cast<unsigned char>(a[last]))) continue;  // A ends mid-character
      whole_tail = true;
    }
    if (whole_tail && head.size() == head_len) {
      const uint32_t left = DecodeWhole(tail), right = DecodeWhole(head);
      // Characters outside the plane are never tabulated: CanJoin is true for them anyway.
      if (left < 0x10000 && right < 0x10000) whole.push_back({left, right, 0});
      continue;
    }
    const uint32_t t = tail_ids.emplace(std::string(tail), static_cast<uint32_t>(tail_ids.size())).first->second;
    const uint32_t h = head_ids.emplace(std::string(head), static_cast<uint32_t>(head_ids.size())).first->second;
    partial_pairs.insert({t, h});
  }
  m->whole_ = MergeTable(whole);
  std::map<uint32_t, std::set<uint32_t>> joiners;  // right character -> left characters
  for (const MergeTable::Rule& r : whole) joiners[r.right].insert(r.left);
  constexpr char32_t kNoChar = 0x110000;
  m->few_joiners_.push_back({kNoChar, kNoChar, kNoChar});  // slot 0: none
  m->joiner_slot_.assign(0x10000, 0);
  for (const auto& [right, lefts] : joiners) {
    if (lefts.size() > kFewJoiners || m->few_joiners_.size() >= kManyJoiners) {
      m->joiner_slot_[right] = kManyJoiners;
      continue;
    }
    std::array<char32_t, kFewJoiners> few = {kNoChar, kNoChar, kNoChar};
    std::copy(lefts.begin(), lefts.end(), few.begin());
    m->joiner_slot_[right] = static_cast<uint16_t>(m->few_joiners_.size());
    m->few_joiners_.push_back(few);
  }

  // Each character's endings and beginnings that some partial rule uses.
  ClassInterner lefts, rights;
  m->left_class_.assign(0x10000, 0);
  m->right_class_.assign(0x10000, 0);
  std::vector<uint32_t> set;
  for (uint32_t cp = 0; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // never in valid UTF-8
    const std::string bytes = EncodeBmp(cp);
    set.clear();
    for (size_t from = 0; from < bytes.size(); ++from) {  // the whole character, then its continuation tails
      auto it = tail_ids.find(bytes.substr(from));
      if (it != tail_ids.end()) set.push_back(it->second);
    }
    std::sort(set.begin(), set.end());
    m->left_class_[cp] = lefts.Intern(set);
    set.clear();
    for (size_t len = 1; len <= bytes.size(); ++len) {
      auto it = head_ids.find(bytes.substr(0, len));
      if (it != head_ids.end()) set.push_back(it->second);
    }
    std::sort(set.begin(), set.end());
    m->right_class_[cp] = rights.Intern(set);
    if (m->right_class_[cp] != 0) m->joiner_slot_[cp] = kManyJoiners;  // partial rules: ask CanJoin
  }
  const size_t left_classes = lefts.sets().size() + 1, right_classes = rights.sets().size() + 1;
  // A vocabulary with an unusual wealth of partial-character rules would
  // make the class matrix large; it then goes without the shortcut.
  if (left_classes * right_classes > (size_t{1} << 24)) return nullptr;
  m->right_classes_ = static_cast<uint32_t>(right_classes);
  m->partial_.assign(left_classes * right_classes, 0);
  for (size_t l = 1; l < left_classes; ++l) {
    for (size_t r = 1; r < right_classes; ++r) {
      bool any = false;
      for (uint32_t t : lefts.sets()[l - 1]) {
        for (uint32_t h : rights.sets()[r - 1]) any = any || partial_pairs.count({t, h}) != 0;
      }
      m->partial_[l * right_classes + r] = any;
    }
  }
  return m;
}

size_t MergeBoundaries::memory_bytes() const {
  return whole_.memory_bytes() + (left_class_.size() + right_class_.size()) * sizeof(uint16_t) + partial_.size() +
         joiner_slot_.size() * sizeof(uint16_t) + few_joiners_.size() * sizeof(few_joiners_[0]);
}

}  // namespace tokenfeed::tokenizer
