#include "tokenizer/pre_tokenizer.h"

#include <utility>

#include <utf8proc.h>

#include "tokenizer/deepseek_pretokenizer.h"

namespace tokenfeed::tokenizer {
namespace {

using Range = PreTokenizeScratch::Range;

// The reference's Pattern::find_matches: the whole piece, covered by
// alternating non-matches and matches (an empty piece is one empty non-match).
void CoverWithMatches(uint32_t n, const std::vector<Span>& matches, bool invert, std::vector<Range>* out) {
  out->clear();
  if (n == 0) {
    out->push_back({0, 0, invert});
    return;
  }
  uint32_t prev = 0;
  for (const Span& m : matches) {
    if (prev != m.begin) out->push_back({prev, m.begin, invert});
    out->push_back({m.begin, m.end, !invert});
    prev = m.end;
  }
  if (prev != n) out->push_back({prev, n, invert});
}

// Rewrites `ranges` in place into the pieces to keep, per the reference's
// SplitDelimiterBehavior; is_match is reused as "remove this range".
void ApplyBehavior(SplitBehavior behavior, std::vector<Range>* ranges) {
  std::vector<Range>& r = *ranges;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (Range& x : r) x.is_match = false;
      return;
    case SplitBehavior::kRemoved:
      return;
    case SplitBehavior::kContiguous: {
      size_t out = 0;
      bool previous_match = false;
      for (size_t i = 0; i < r.size(); ++i) {
        bool m = r[i].is_match;
        if (m == previous_match && out > 0) {
          r[out - 1].end = r[i].end;
        } else {
          r[out++] = {r[i].begin, r[i].end, false};
        }
        previous_match = m;
      }
      r.resize(out);
      return;
    }
    case SplitBehavior::kMergedWithPrevious: {
      size_t out = 0;
      bool previous_match = false;
      for (size_t i = 0; i < r.size(); ++i) {
        bool m = r[i].is_match;
        if (m && !previous_match && out > 0) {
          r[out - 1].end = r[i].end;
        } else {
          r[out++] = {r[i].begin, r[i].end, false};
        }
        previous_match = m;
      }
      r.resize(out);
      return;
    }
    case SplitBehavior::kMergedWithNext: {
      // Walk backwards: a match joins the non-match after it.
      std::vector<Range> rev;
      rev.reserve(r.size());
      bool previous_match = false;
      for (size_t k = r.size(); k-- > 0;) {
        bool m = r[k].is_match;
        if (m && !previous_match && !rev.empty()) {
          rev.back().begin = r[k].begin;
        } else {
          rev.push_back({r[k].begin, r[k].end, false});
        }
        previous_match = m;
      }
      r.assign(rev.rbegin(), rev.rend());
      return;
    }
  }
}

// Matches of Rust's char::is_numeric (general category N), one per character.
void FindNumericChars(std::string_view text, std::vector<Span>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char b = p[i];
    size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    bool numeric;
    if (b < 0x80) {
      numeric = b >= '0' && b <= '9';
    } else {
      char32_t c;
      if (len == 2) c = (char32_t(b & 0x1F) << 6) | (p[i + 1] & 0x3F);
      else if (len == 3) c = (char32_t(b & 0x0F) << 12) | (char32_t(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
      else c = (char32_t(b & 0x07) << 18) | (char32_t(p[i + 1] & 0x3F) << 12) | (char32_t(p[i + 2] & 0x3F) << 6) |
               (p[i + 3] & 0x3F);
      auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
      numeric = cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
    }
    if (numeric) out->push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i + len)});
    i += len;
  }
}

}  // namespace

namespace {

std::string DescribeStages(const std::vector<PreTokenizerStage>& stages) {
  std::string s;
  for (size_t i = 0; i < stages.size(); ++i) {
    const PreTokenizerStage& st = stages[i];
    if (i) s += " > ";
    switch (st.kind) {
      case PreTokenizerStage::Kind::kSplit: s += "Split(" + std::string(st.matcher->name()) + ")"; break;
      case PreTokenizerStage::Kind::kDigits: s += "Digits"; break;
      case PreTokenizerStage::Kind::kByteLevel:
        s += st.matcher ? "ByteLevel(" + std::string(st.matcher->name()) + ")" : "ByteLevel";
        break;
      case PreTokenizerStage::Kind::kMetaspace:
        s += "Metaspace(" + st.replacement + ", prepend=" +
             (st.prepend == PrependScheme::kAlways  ? "always"
              : st.prepend == PrependScheme::kFirst ? "first"
                                                    : "never") +
             (st.split ? ", split)" : ")");
        break;
    }
  }
  return s;
}

bool IsIsolatedSplit(const PreTokenizerStage& st, std::string_view scanner) {
  return st.kind == PreTokenizerStage::Kind::kSplit && st.behavior == SplitBehavior::kIsolated && !st.invert &&
         st.matcher && st.matcher->name() == scanner;
}

}  // namespace

PreTokenizer::PreTokenizer(std::vector<PreTokenizerStage> stages, bool allow_fused)
    : description_(DescribeStages(stages)) {
  for (PreTokenizerStage& st : stages) {
    const bool no_op = st.kind == PreTokenizerStage::Kind::kByteLevel && !st.add_prefix_space && !st.matcher;
    if (!no_op) stages_.push_back(std::move(st));
  }
  // The scanners' names stand for their patterns: each is proven identical
  // to Oniguruma on exactly its pattern strings (fast_matchers.h).
  if (allow_fused && stages_.size() == 3 && IsIsolatedSplit(stages_[0], "fast:deepseek-v3-digits") &&
      IsIsolatedSplit(stages_[1], "fast:deepseek-v3-cjk") && IsIsolatedSplit(stages_[2], "fast:deepseek-v3-main")) {
    fused_ = Fused::kDeepSeekV3;
  }
}

void PreTokenizer::Run(std::string_view text, bool at_input_start, PreTokenizeScratch* scratch,
                       std::vector<std::string_view>* pieces) const {
  if (scratch->matches.size() < stages_.size()) {
    scratch->matches.resize(stages_.size());
    scratch->ranges.resize(stages_.size());
  }
  scratch->owned.clear();
  scratch->input_start = at_input_start ? text.data() : nullptr;
  if (text.empty()) return;
  if (fused_ == Fused::kDeepSeekV3) {
    SplitDeepSeekV3(text, pieces);
    return;
  }
  if (stages_.empty()) {
    pieces->push_back(text);
    return;
  }
  RunStage(0, text, scratch, pieces);
}

void PreTokenizer::Emit(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
                        std::vector<std::string_view>* pieces) const {
  if (piece.empty()) return;  // the reference drops empty pieces after every stage
  if (stage + 1 < stages_.size()) {
    RunStage(stage + 1, piece, scratch, pieces);
  } else {
    pieces->push_back(piece);
  }
}

void PreTokenizer::RunStage(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
                            std::vector<std::string_view>* pieces) const {
  const PreTokenizerStage& st = stages_[stage];
  if (st.kind == PreTokenizerStage::Kind::kMetaspace) {
    RunMetaspace(stage, piece, scratch, pieces);
    return;
  }
  if (st.kind == PreTokenizerStage::Kind::kByteLevel && st.add_prefix_space && piece.front() != ' ') {
    std::string& spaced = scratch->owned.emplace_back();
    spaced.reserve(piece.size() + 1);
    spaced.push_back(' ');
    spaced.append(piece);
    piece = spaced;
  }
  if (st.kind == PreTokenizerStage::Kind::kByteLevel && !st.matcher) {
    Emit(stage, piece, scratch, pieces);
    return;
  }
  // Recursion below reuses the vectors of deeper stages only, so these stay
  // valid while we walk them.
  std::vector<Span>& matches = scratch->matches[stage];
  std::vector<Range>& ranges = scratch->ranges[stage];
  matches.clear();
  SplitBehavior behavior = st.behavior;
  bool invert = st.invert;
  if (st.kind == PreTokenizerStage::Kind::kDigits) {
    FindNumericChars(piece, &matches);
    behavior = st.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous;
    invert = false;
  } else {
    // The most common case of all (a last Isolated split: a Split stage, or
    // ByteLevel with its regex): a scanner whose matches tile the text hands
    // over the final pieces itself.
    if (behavior == SplitBehavior::kIsolated && !invert && stage + 1 == stages_.size() &&
        st.matcher->FindPieces(piece, pieces)) {
      return;
    }
    st.matcher->FindMatches(piece, &matches);
  }
  if (behavior == SplitBehavior::kIsolated && !invert && stage + 1 == stages_.size()) {
    // The most common case of all (one Split stage): the pieces are final.
    uint32_t prev = 0;
    for (const Span& m : matches) {
      if (prev != m.begin) pieces->push_back(piece.substr(prev, m.begin - prev));
      if (m.end != m.begin) pieces->push_back(piece.substr(m.begin, m.end - m.begin));
      prev = m.end;
    }
    if (prev != piece.size()) pieces->push_back(piece.substr(prev));
    return;
  }
  if (behavior == SplitBehavior::kIsolated && !invert) {
    // The common case, without building ranges.
    uint32_t prev = 0;
    const size_t count = matches.size();
    for (size_t i = 0; i < count; ++i) {
      Span m = matches[i];
      if (prev != m.begin) Emit(stage, piece.substr(prev, m.begin - prev), scratch, pieces);
      Emit(stage, piece.substr(m.begin, m.end - m.begin), scratch, pieces);
      prev = m.end;
    }
    if (prev != piece.size()) Emit(stage, piece.substr(prev), scratch, pieces);
    return;
  }
  CoverWithMatches(static_cast<uint32_t>(piece.size()), matches, invert, &ranges);
  ApplyBehavior(behavior, &ranges);
  for (size_t i = 0; i < ranges.size(); ++i) {
    Range r = ranges[i];
    if (r.is_match) continue;  // removed
    Emit(stage, piece.substr(r.begin, r.end - r.begin), scratch, pieces);
  }
}

// The reference's Metaspace: every ' ' becomes the replacement; the
// replacement goes in front unless the piece starts with one (for "first",
// only in front of the input's first piece); with split, the piece is cut in
// front of every replacement (each one joins the text after it).
void PreTokenizer::RunMetaspace(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
                                std::vector<std::string_view>* pieces) const {
  const PreTokenizerStage& st = stages_[stage];
  const std::string_view rep = st.replacement;  // one character (the parser checks)
  const bool first_piece = piece.data() == scratch->input_start;
  std::string& text = scratch->owned.emplace_back();
  text.reserve(piece.size() + 2 * rep.size());
  size_t from = 0;
  for (size_t at = piece.find(' '); at != std::string_view::npos; at = piece.find(' ', from)) {
    text.append(piece.substr(from, at - from));
    text.append(rep);
    from = at + 1;
  }
  text.append(piece.substr(from));
  const bool prepend = st.prepend == PrependScheme::kAlways || (st.prepend == PrependScheme::kFirst && first_piece);
  if (prepend && std::string_view(text).substr(0, rep.size()) != rep) text.insert(0, rep);
  if (first_piece) scratch->input_start = text.data();
  const std::string_view rewritten = text;
  if (!st.split || rep.empty()) {
    Emit(stage, rewritten, scratch, pieces);
    return;
  }
  size_t begin = 0;
  for (size_t at = rewritten.find(rep, 1); at != std::string_view::npos;
       at = rewritten.find(rep, at + rep.size())) {
    if (at > begin) Emit(stage, rewritten.substr(begin, at - begin), scratch, pieces);
    begin = at;
  }
  Emit(stage, rewritten.substr(begin), scratch, pieces);
}

}  // namespace tokenfeed::tokenizer
