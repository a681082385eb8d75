#include "text/line_window.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using testing::TempDir;

struct Expected {
  std::string text;
  uint64_t offset;
  uint64_t number;
  bool too_long;
};

// The reference split: LF ends a line, one CR before it is dropped.
std::vector<Expected> ReferenceSplit(std::string_view data, size_t max_line, size_t start = 0) {
  std::vector<Expected> out;
  uint64_t number = 1;
  size_t pos = start;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    size_t stop = nl == std::string_view::npos ? data.size() : nl;
    std::string_view line = data.substr(pos, stop - pos);
    bool too_long = line.size() > max_line;
    if (!too_long && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({too_long ? "" : std::string(line), pos, number++, too_long});
    pos = nl == std::string_view::npos ? data.size() : nl + 1;
  }
  return out;
}

std::vector<Expected> ReadWithWindow(ByteSource* source, size_t max_line, size_t block, Status* status) {
  LineWindow window(source, max_line, block);
  std::vector<Expected> out;
  Line line;
  for (int guard = 0; guard < 1000000; ++guard) {
    Result<bool> got = window.Next(&line);
    if (!got.ok()) {
      *status = got.status();
      return out;
    }
    if (!*got) break;
    EXPECT_LE(window.allocated_bytes(), window.max_allocation());
    out.push_back({std::string(line.text), line.offset, line.number, line.too_long});
  }
  *status = Status::OK();
  return out;
}

void ExpectSameLines(const std::vector<Expected>& got, const std::vector<Expected>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].text, want[i].text) << what << " line " << i;
    EXPECT_EQ(got[i].offset, want[i].offset) << what << " line " << i;
    EXPECT_EQ(got[i].number, want[i].number) << what << " line " << i;
    EXPECT_EQ(got[i].too_long, want[i].too_long) << what << " line " << i;
  }
}

std::string MixedLines() {
  std::string s;
  for (int i = 0; i < 300; ++i) {
    s += std::string(static_cast<size_t>(i * 37 % 91), static_cast<char>('a' + i % 26));
    s += (i % 5 == 0) ? "\r\n" : "\n";
    if (i % 17 == 0) s += "\n";  // empty lines
    if (i % 29 == 0) s += "lone\rcarriage return\n";
  }
  s += "last line without a newline";
  return s;
}

TEST(LineWindowTest, SplitsLikeTheReferenceAtEveryBlockSize) {
  TempDir dir;
  std::string data = MixedLines();
  std::string plain = dir.Write("a.txt", data);
  std::string gz = dir.WriteGzip("a.txt.gz", data);
  for (const std::string& path : {plain, gz}) {
    for (size_t block : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{4096}}) {
      auto source = ByteSource::Open(path);
      ASSERT_TRUE(source.ok());
      Status s;
      auto got = ReadWithWindow(source->get(), 1000, block, &s);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ExpectSameLines(got, ReferenceSplit(data, 1000), path + " block " + std::to_string(block));
    }
  }
}

TEST(LineWindowTest, LongLinesAreSkippedAndTheRestIsIntact) {
  TempDir dir;
  std::string data = "short\n" + std::string(5000, 'x') + "\nafter\n" + std::string(101, 'y') + "\r\n" +
                     std::string(100, 'z') + "\n" + std::string(3000, 'w');
  std::string path = dir.Write("long.txt", data);
  for (size_t block : {size_t{1}, size_t{16}, size_t{333}, size_t{100000}}) {
    auto source = ByteSource::Open(path);
    ASSERT_TRUE(source.ok());
    Status s;
    auto got = ReadWithWindow(source->get(), 100, block, &s);
    ASSERT_TRUE(s.ok());
    ExpectSameLines(got, ReferenceSplit(data, 100), "block " + std::to_string(block));
  }
}

TEST(LineWindowTest, TooLongLineReportsItsLengthAndPosition) {
  TempDir dir;
  std::string path = dir.Write("long.txt", "a\n" + std::string(10000, 'x') + "\nb");
  auto source = ByteSource::Open(path);
  ASSERT_TRUE(source.ok());
  LineWindow window(source->get(), 50, 64);
  Line line;
  ASSERT_TRUE(*window.Next(&line));
  ASSERT_TRUE(*window.Next(&line));
  EXPECT_TRUE(line.too_long);
  EXPECT_EQ(line.length, 10000u);
  EXPECT_EQ(line.offset, 2u);
  EXPECT_EQ(line.number, 2u);
  EXPECT_TRUE(line.text.empty());
  EXPECT_LE(window.allocated_bytes(), 50u + 64u + LineWindow::kPadding);
  ASSERT_TRUE(*window.Next(&line));
  EXPECT_EQ(line.text, "b");
  EXPECT_EQ(line.number, 3u);
  EXPECT_FALSE(line.ends_with_newline);
  EXPECT_FALSE(*window.Next(&line));
}

TEST(LineWindowTest, ByteOrderMarkIsNotPartOfLineOne) {
  TempDir dir;
  std::string data = "\xEF\xBB\xBFhello\nworld\n";
  for (size_t block : {size_t{1}, size_t{2}, size_t{4096}}) {
    auto source = ByteSource::Open(dir.WriteGzip("bom.txt.gz", data));
    ASSERT_TRUE(source.ok());
    LineWindow window(source->get(), 100, block);
    Line line;
    ASSERT_TRUE(*window.Next(&line));
    EXPECT_EQ(line.text, "hello");
    EXPECT_EQ(line.offset, 3u);
    EXPECT_EQ(line.number, 1u);
    ASSERT_TRUE(*window.Next(&line));
    EXPECT_EQ(line.text, "world");
  }
  // Only at the start of the file: elsewhere the bytes are text.
  auto source = ByteSource::Open(dir.Write("mid.txt", "a\n\xEF\xBB\xBF" "b\n"));
  ASSERT_TRUE(source.ok());
  LineWindow window(source->get(), 100, 4096);
  Line line;
  ASSERT_TRUE(*window.Next(&line));
  ASSERT_TRUE(*window.Next(&line));
  EXPECT_EQ(line.text, "\xEF\xBB\xBF" "b");
}

TEST(LineWindowTest, PinKeepsSeveralLinesViewableAcrossRefills) {
  TempDir dir;
  std::string data = "p1a\np1b\r\np1c\n\nnext\n";
  auto source = ByteSource::Open(dir.Write("p.txt", data));
  ASSERT_TRUE(source.ok());
  LineWindow window(source->get(), 100, 3);  // tiny blocks force many refills
  Line line;
  ASSERT_TRUE(*window.Next(&line));
  window.Pin(line.offset);
  uint64_t begin = line.offset, end = 0;
  while (*window.Next(&line) && !line.text.empty()) end = line.offset + line.text.size();
  EXPECT_FALSE(window.pin_lost());
  EXPECT_EQ(window.Span(begin, end), "p1a\np1b\r\np1c");
}

TEST(LineWindowTest, PinIsDroppedWhenThePinnedBytesPassTheLimit) {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 100; ++i) data += "0123456789\n";
  auto source = ByteSource::Open(dir.Write("p.txt", data));
  ASSERT_TRUE(source.ok());
  LineWindow window(source->get(), 50, 8);
  Line line;
  ASSERT_TRUE(*window.Next(&line));
  window.Pin(line.offset);
  int lines = 1;
  while (*window.Next(&line)) {
    ++lines;
    EXPECT_LE(window.allocated_bytes(), 50u + 8u + LineWindow::kPadding);
  }
  EXPECT_EQ(lines, 100);
  EXPECT_TRUE(window.pin_lost());
}

TEST(LineWindowTest, StartAtContinuesFromARecordedLine) {
  TempDir dir;
  std::string data = "\xEF\xBB\xBF" + MixedLines();
  auto all = ReferenceSplit(data, 1000, 3);
  std::string plain = dir.Write("a.txt", data);
  std::string zst = dir.WriteZstd("a.txt.zst", data);
  for (const std::string& path : {plain, zst}) {
    for (size_t k : {size_t{0}, size_t{1}, size_t{2}, size_t{50}, all.size() - 1}) {
      auto source = ByteSource::Open(path);
      ASSERT_TRUE(source.ok());
      LineWindow window(source->get(), 1000, 17);
      ASSERT_TRUE(window.StartAt(all[k].offset, all[k].number).ok()) << path << " k=" << k;
      Line line;
      for (size_t i = k; i < all.size(); ++i) {
        ASSERT_TRUE(*window.Next(&line)) << i;
        EXPECT_EQ(line.text, all[i].text) << path << " k=" << k << " i=" << i;
        EXPECT_EQ(line.number, all[i].number);
        EXPECT_EQ(line.offset, all[i].offset);
      }
      EXPECT_FALSE(*window.Next(&line));
    }
  }
}

TEST(LineWindowTest, StartAtCatchesAFileThatChanged) {
  TempDir dir;
  std::string data = "one\ntwo\nthree\n";
  std::string plain = dir.Write("a.txt", data);
  std::string gz = dir.WriteGzip("a.txt.gz", data);
  struct Case {
    std::string path;
    uint64_t offset, line;
  } bad[] = {
      {plain, 5, 2},   // not after an LF
      {plain, 99, 2},  // past the end
      {gz, 6, 2},      // not after an LF
      {gz, 8, 2},      // after an LF, but that is line 3
      {gz, 99, 2},
  };
  for (const Case& c : bad) {
    auto source = ByteSource::Open(c.path);
    ASSERT_TRUE(source.ok());
    LineWindow window(source->get(), 100, 4096);
    Status s = window.StartAt(c.offset, c.line);
    EXPECT_TRUE(s.IsCorruption()) << c.path << " " << c.offset << ": " << s.ToString();
    EXPECT_NE(s.message().find("cannot resume"), std::string::npos);
  }
  auto source = ByteSource::Open(gz);
  ASSERT_TRUE(source.ok());
  LineWindow window(source->get(), 100, 4096);
  ASSERT_TRUE(window.StartAt(8, 3).ok());
  Line line;
  ASSERT_TRUE(*window.Next(&line));
  EXPECT_EQ(line.text, "three");
}

}  // namespace
}  // namespace tokenfeed::text
