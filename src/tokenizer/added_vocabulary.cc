#include "tokenizer/added_vocabulary.h"

#include <algorithm>
#include <cstring>

#include <utf8proc.h>

namespace tokenfeed::tokenizer {
namespace {

char32_t DecodeAt(std::string_view s, size_t i, size_t* len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  unsigned char b = p[i];
  if (b < 0x80) { *len = 1; return b; }
  if (b < 0xE0) { *len = 2; return (char32_t(b & 0x1F) << 6) | (p[i + 1] & 0x3F); }
  if (b < 0xF0) {
    *len = 3;
    return (char32_t(b & 0x0F) << 12) | (char32_t(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
  }
  *len = 4;
  return (char32_t(b & 0x07) << 18) | (char32_t(p[i + 1] & 0x3F) << 12) | (char32_t(p[i + 2] & 0x3F) << 6) |
         (p[i + 3] & 0x3F);
}

// The code point that ends at byte `end` (exclusive) of valid UTF-8.
char32_t DecodeBefore(std::string_view s, size_t end, size_t* len) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  char32_t c = DecodeAt(s, start, len);
  return c;
}

bool IsSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The reference uses Rust's Unicode `\w` here: Alphabetic, marks, decimal
// digits, connector punctuation and the join controls. Alphabetic is letters,
// letter numbers and Other_Alphabetic, which is marks plus a few symbol
// ranges (circled and squared Latin letters) listed here.
bool IsWordChar(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189)) {
    return true;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<std::string> patterns, std::vector<const AddedTokenSpec*> tokens)
    : tokens_(std::move(tokens)) {
  nodes_.emplace_back();
  for (size_t t = 0; t < patterns.size(); ++t) {
    const std::string& pat = patterns[t];
    if (pat.empty()) continue;  // an empty token never matches
    first_byte_[static_cast<unsigned char>(pat[0])] = true;
    uint32_t node = 0;
    for (unsigned char b : pat) {
      auto& ch = nodes_[node].children;
      auto it = std::lower_bound(ch.begin(), ch.end(), b, [](const auto& e, unsigned char v) { return e.first < v; });
      if (it != ch.end() && it->first == b) {
        node = it->second;
      } else {
        uint32_t next = static_cast<uint32_t>(nodes_.size());
        nodes_[node].children.insert(it, {b, next});
        nodes_.emplace_back();
        node = next;
      }
    }
    // Two tokens with the same pattern: the later one wins, as in the
    // reference's map from pattern to id.
    nodes_[node].token = static_cast<int32_t>(t);
  }
  if (nodes_.size() == 1) tokens_.clear();
  int distinct = 0;
  for (int b = 0; b < 256; ++b) {
    if (first_byte_[b]) {
      ++distinct;
      single_first_byte_ = b;
    }
  }
  if (distinct != 1) single_first_byte_ = -1;
}

int32_t AddedTokenMatcher::LongestMatchAt(std::string_view text, size_t pos, size_t* len) const {
  uint32_t node = 0;
  int32_t best = -1;
  for (size_t i = pos; i < text.size(); ++i) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    const auto& ch = nodes_[node].children;
    auto it = std::lower_bound(ch.begin(), ch.end(), b, [](const auto& e, unsigned char v) { return e.first < v; });
    if (it == ch.end() || it->first != b) break;
    node = it->second;
    if (nodes_[node].token >= 0) {
      best = nodes_[node].token;
      *len = i + 1 - pos;
    }
  }
  return best;
}

void AddedTokenMatcher::Split(std::string_view text, bool skip_special, std::vector<AddedSplit>* out) const {
  const uint32_t n = static_cast<uint32_t>(text.size());
  if (tokens_.empty() || n == 0) {
    out->push_back({0, n, -1});
    return;
  }
  uint32_t start_offset = 0;  // end of the last split emitted
  size_t pos = 0;
  while (pos < n) {
    if (single_first_byte_ >= 0) {
      // Usually every token starts with '<': memchr skips the text between.
      const void* hit = std::memchr(text.data() + pos, single_first_byte_, n - pos);
      if (!hit) break;
      pos = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    } else if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    size_t len = 0;
    int32_t t = LongestMatchAt(text, pos, &len);
    if (t < 0) {
      ++pos;
      continue;
    }
    const AddedTokenSpec& tok = *tokens_[t];
    size_t start = pos;
    size_t stop = pos + len;
    pos = stop;  // the scan resumes after the match, even when it is discarded
    if (skip_special && tok.special) continue;
    if (tok.single_word) {
      size_t l = 0;
      bool start_space = start == 0 || !IsWordChar(DecodeBefore(text, start, &l));
      bool stop_space = stop == n || !IsWordChar(DecodeAt(text, stop, &l));
      if (!start_space || !stop_space) continue;
    }
    if (tok.lstrip) {
      size_t s = start;
      while (s > 0) {
        size_t l = 0;
        char32_t c = DecodeBefore(text, s, &l);
        if (!IsSpace(c)) break;
        s -= l;
      }
      start = std::max<size_t>(s, start_offset);
    }
    if (tok.rstrip) {
      while (stop < n) {
        size_t l = 0;
        if (!IsSpace(DecodeAt(text, stop, &l))) break;
        stop += l;
      }
    }
    if (start_offset < start) out->push_back({start_offset, static_cast<uint32_t>(start), -1});
    out->push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(stop), static_cast<int64_t>(tok.id)});
    start_offset = static_cast<uint32_t>(stop);
  }
  if (start_offset != n) out->push_back({start_offset, n, -1});
}

AddedVocabulary::AddedVocabulary(std::vector<AddedTokenSpec> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  std::vector<std::string> raw_patterns, norm_patterns;
  std::vector<const AddedTokenSpec*> raw_tokens, norm_tokens;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    // Later entries replace earlier ones with the same id or content.
    by_id_[tokens_[i].id] = i;
    by_content_[tokens_[i].content] = i;
  }
  for (const AddedTokenSpec& t : tokens_) {
    if (t.normalized) {
      std::string storage;
      std::string_view form = normalizer ? normalizer->Normalize(t.content, &storage) : std::string_view(t.content);
      norm_patterns.emplace_back(form);
      norm_tokens.push_back(&t);
    } else {
      raw_patterns.push_back(t.content);
      raw_tokens.push_back(&t);
    }
  }
  raw_ = AddedTokenMatcher(std::move(raw_patterns), std::move(raw_tokens));
  normalized_ = AddedTokenMatcher(std::move(norm_patterns), std::move(norm_tokens));
}

const AddedTokenSpec* AddedVocabulary::FindById(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedTokenSpec* AddedVocabulary::FindByContent(std::string_view content) const {
  auto it = by_content_.find(content);
  return it == by_content_.end() ? nullptr : &tokens_[it->second];
}

}  // namespace tokenfeed::tokenizer
