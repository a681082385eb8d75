#include "text/cleaner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/utf8.h"

namespace tokenfeed::text {
namespace {

using namespace std::string_literals;

// A slow, obviously correct statement of the default rules over code points.
std::string ReferenceClean(std::string_view in) {
  std::u32string cps;
  for (size_t i = 0; i < in.size();) {
    auto b = static_cast<unsigned char>(in[i]);
    size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(in[i + k]) & 0x3F);
    cps.push_back(cp);
    i += len;
  }
  std::u32string kept;
  for (size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    if (c == U'\r') {
      if (i + 1 < cps.size() && cps[i + 1] == U'\n') continue;
      kept.push_back(U'\n');
      continue;
    }
    bool control = (c < 0x20 && c != U'\t' && c != U'\n') || c == 0x7F || (c >= 0x80 && c <= 0x9F && c != 0x85);
    if (!control) kept.push_back(c);
  }
  auto white = [](char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
  };
  size_t b = 0, e = kept.size();
  while (b < e && white(kept[b])) ++b;
  while (e > b && white(kept[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) AppendUtf8(kept[i], &out);
  return out;
}

Cleaner Make(CleanOptions options = {}) {
  auto c = Cleaner::Create(options);
  EXPECT_TRUE(c.ok());
  return std::move(c).value();
}

std::string CleanToString(const Cleaner& cleaner, std::string_view in, DropReason* reason = nullptr) {
  std::string scratch;
  CleaningStats stats;
  CleanResult r = cleaner.Clean(in, &scratch, &stats);
  if (reason != nullptr) *reason = r.reason;
  return r.kept ? std::string(r.text) : "<dropped:" + std::string(DropReasonName(r.reason)) + ">";
}

TEST(CleanerTest, CleanTextComesBackAsAViewOfTheInput) {
  Cleaner cleaner = Make();
  std::string in = "Grüße, «мир» — 世界\n\tindented line";
  std::string scratch;
  CleaningStats stats;
  CleanResult r = cleaner.Clean(in, &scratch, &stats);
  ASSERT_TRUE(r.kept);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text.data(), in.data());  // no copy
  EXPECT_EQ(r.text.size(), in.size());
  EXPECT_TRUE(scratch.empty());
}

TEST(CleanerTest, TrimmingOnlyNarrowsTheView) {
  Cleaner cleaner = Make();
  std::string in = " \t\n  body text \xC2\xA0\xE3\x80\x80\r\n";
  std::string scratch;
  CleaningStats stats;
  CleanResult r = cleaner.Clean(in, &scratch, &stats);
  ASSERT_TRUE(r.kept);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.text, "body text");
  EXPECT_EQ(r.text.data(), in.data() + 5);
}

TEST(CleanerTest, LineEndingsBecomeLf) {
  Cleaner cleaner = Make();
  EXPECT_EQ(CleanToString(cleaner, "a\r\nb\rc\n\rd\r\r\ne"), "a\nb\nc\n\nd\n\ne");
  CleanOptions keep;
  keep.normalize_newlines = false;
  EXPECT_EQ(CleanToString(Make(keep), "a\r\nb\rc"), "a\r\nb\rc");
}

TEST(CleanerTest, ControlCharactersAreDroppedExceptTabAndLineBreaks) {
  Cleaner cleaner = Make();
  std::string in = "a\0b\x01\x08\tc\x0B\x0C\x1B\x1F\x7F\nd"s;
  EXPECT_EQ(CleanToString(cleaner, in), "ab\tc\nd");
  // C1 controls go, NEL (U+0085) stays, other U+00xx letters stay.
  EXPECT_EQ(CleanToString(cleaner, "x\xC2\x80y\xC2\x9Fz\xC2\x85w\xC2\xA9\xC3\xA9"), "xyz\xC2\x85w\xC2\xA9\xC3\xA9");
  // Line and paragraph separators stay too.
  EXPECT_EQ(CleanToString(cleaner, "a\xE2\x80\xA8" "b\xE2\x80\xA9" "c"), "a\xE2\x80\xA8" "b\xE2\x80\xA9" "c");
  CleanOptions keep;
  keep.drop_controls = false;
  EXPECT_EQ(CleanToString(Make(keep), "a\0b"s), "a\0b"s);
}

TEST(CleanerTest, TrimRemovesUnicodeWhiteSpaceAtTheEndsOnly) {
  Cleaner cleaner = Make();
  EXPECT_EQ(CleanToString(cleaner, "\xE2\x80\x83\xE1\x9A\x80 a \xE2\x80\x83 b\xE2\x81\x9F\xE2\x80\xAF\xC2\x85"),
            "a \xE2\x80\x83 b");
  // U+200B ZERO WIDTH SPACE is not White_Space and stays.
  EXPECT_EQ(CleanToString(cleaner, "\xE2\x80\x8B" "a"), "\xE2\x80\x8B" "a");
  CleanOptions keep;
  keep.trim = false;
  EXPECT_EQ(CleanToString(Make(keep), "  a  "), "  a  ");
}

TEST(CleanerTest, EmptyAfterCleaningIsDropped) {
  Cleaner cleaner = Make();
  DropReason reason{};
  EXPECT_EQ(CleanToString(cleaner, "", &reason), "<dropped:empty>");
  EXPECT_EQ(CleanToString(cleaner, " \0\x01\r\n \xC2\xA0"s, &reason), "<dropped:empty>");
  EXPECT_EQ(reason, DropReason::kEmpty);
}

TEST(CleanerTest, LengthLimitsInCharactersAndBytes) {
  CleanOptions o;
  o.min_chars = 3;
  o.max_chars = 5;
  Cleaner chars = Make(o);
  EXPECT_EQ(CleanToString(chars, "ab"), "<dropped:too_short>");
  EXPECT_EQ(CleanToString(chars, "\xC3\xA9\xC3\xA9\xC3\xA9"), "\xC3\xA9\xC3\xA9\xC3\xA9");  // 3 chars, 6 bytes
  EXPECT_EQ(CleanToString(chars, "abcdef"), "<dropped:too_long>");
  EXPECT_EQ(CleanToString(chars, "  abcde  "), "abcde");  // limits apply after cleaning

  CleanOptions b;
  b.min_bytes = 4;
  b.max_bytes = 6;
  Cleaner bytes = Make(b);
  EXPECT_EQ(CleanToString(bytes, "\xC3\xA9"), "<dropped:too_short>");
  EXPECT_EQ(CleanToString(bytes, "\xC3\xA9\xC3\xA9"), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(CleanToString(bytes, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"), "<dropped:too_long>");

  CleanOptions inverted;
  inverted.min_chars = 10;
  inverted.max_chars = 5;
  EXPECT_FALSE(Cleaner::Create(inverted).ok());
}

TEST(CleanerTest, InvalidUtf8IsRepairedNeverPassedOn) {
  Cleaner cleaner = Make();
  std::string scratch;
  CleaningStats stats;
  CleanResult r = cleaner.Clean("a\xFF\xC3(b\x01", &scratch, &stats);
  ASSERT_TRUE(r.kept);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.text, "a\xEF\xBF\xBD\xEF\xBF\xBD(b");
}

TEST(CleanerTest, StatsCountEveryOutcomeAndMerge) {
  Cleaner cleaner = Make(CleanOptions{.min_chars = 2});
  CleaningStats a, b;
  std::string scratch;
  for (std::string_view t : {"hello", " hi ", "x", "", "ok\r\n"}) (void)cleaner.Clean(t, &scratch, &a);
  (void)cleaner.Clean("again", &scratch, &b);
  b.RecordReject(DropReason::kBadJson);
  b.RecordDuplicate(5);
  EXPECT_EQ(a.documents, 5u);
  EXPECT_EQ(a.kept, 3u);
  EXPECT_EQ(a.changed, 2u);
  EXPECT_EQ(a.dropped_for(DropReason::kTooShort), 1u);
  EXPECT_EQ(a.dropped_for(DropReason::kEmpty), 1u);
  EXPECT_EQ(a.bytes_in, 5u + 4 + 1 + 0 + 4);
  EXPECT_EQ(a.bytes_out, 5u + 2 + 2);
  a.Merge(b);
  EXPECT_EQ(a.documents, 6u);
  EXPECT_EQ(a.kept, 3u);  // "again" was kept, then found to be a duplicate
  EXPECT_EQ(a.dropped_for(DropReason::kDuplicate), 1u);
  EXPECT_EQ(a.dropped_for(DropReason::kBadJson), 1u);
  EXPECT_EQ(a.total_dropped(), 4u);
  EXPECT_EQ(a.bytes_out, 9u);
  EXPECT_NE(a.ToString().find("bad_json"), std::string::npos);
  // The drops alone: reasons only, none of the other counts.
  EXPECT_EQ(a.DropsToString(), "  empty         1\n  too_short     1\n  duplicate     1\n  bad_json      1\n");
}

TEST(CleanerTest, AgreesWithTheReferenceOnRandomText) {
  Cleaner cleaner = Make();
  const std::vector<std::string> pieces = {
      "a", "Z", " ", "\t", "\n", "\r", "\r\n", std::string(1, '\0'), "\x01", "\x0B", "\x0C", "\x1F", "\x7F",
      "\xC2\x80", "\xC2\x85", "\xC2\x9F", "\xC2\xA0", "\xC2\xA9", "\xC3\xA9", "\xE2\x80\x83", "\xE2\x80\x8B",
      "\xE2\x80\xA8", "\xE3\x80\x80", "\xE4\xB8\x96", "\xF0\x9F\x98\x80", "word"};
  std::mt19937 rng(12345);
  std::string scratch;
  CleaningStats stats;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string in;
    int len = static_cast<int>(rng() % 12);
    for (int k = 0; k < len; ++k) in += pieces[rng() % pieces.size()];
    std::string want = ReferenceClean(in);
    CleanResult r = cleaner.Clean(in, &scratch, &stats);
    if (want.empty()) {
      ASSERT_FALSE(r.kept) << "input #" << iter;
      ASSERT_EQ(r.reason, DropReason::kEmpty);
    } else {
      ASSERT_TRUE(r.kept) << "input #" << iter;
      ASSERT_EQ(std::string(r.text), want) << "input #" << iter;
      ASSERT_EQ(r.changed, want != in) << "input #" << iter;
    }
  }
}

TEST(CleanerTest, DropReasonNamesRoundTrip) {
  for (size_t i = 0; i < kDropReasonCount; ++i) {
    auto reason = static_cast<DropReason>(i);
    EXPECT_EQ(DropReasonFromName(DropReasonName(reason)), reason);
  }
  EXPECT_EQ(DropReasonName(DropReason::kNotAString), "not_a_string");
  EXPECT_FALSE(DropReasonFromName("nonsense").has_value());
}

}  // namespace
}  // namespace tokenfeed::text
