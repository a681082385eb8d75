#include "text/binary_input.h"

#include <gtest/gtest.h>

#include <string>

#include "text/table_text_column.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;
using testing::TempDir;

std::optional<NotText> Classify(std::string_view head, std::optional<std::string_view> tail = std::nullopt,
                                std::string_view path = "x.txt", bool check_name = false) {
  InputSample s;
  s.path = path;
  s.check_name = check_name;
  s.head = head;
  s.tail = tail;
  return ClassifyInput(s);
}

// A Parquet file as far as the checks see it: the magic, a page header, the
// footer's length and the magic again.
std::string ParquetBytes() {
  std::string b = "PAR1";
  b += "\x15\x04\x15\x80\x01\x15\x80\x01\x4c\x15\x02\x15\x00\x12\x00\x00"sv;
  b += "some column values";
  b += "\x1c\x00\x00\x00PAR1"sv;
  return b;
}

std::string PngBytes() {
  std::string b = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00"s;
  b += std::string(200, '\x7f');
  return b;
}

TEST(BinaryInputTest, TextIsText) {
  EXPECT_FALSE(Classify(""));
  EXPECT_FALSE(Classify("hello world\nsecond line\n"));
  EXPECT_FALSE(Classify("{\"text\":\"a\\u0000b\"}\n"));  // an escaped NUL is JSON text
  EXPECT_FALSE(Classify("\xEF\xBB\xBFwith a UTF-8 byte-order mark\n"));
  EXPECT_FALSE(Classify("tabs\tform feeds\f vertical tabs\v CRLF\r\n\x1b[31mterminal colours\x1b[0m\n"));
  EXPECT_FALSE(Classify("a DOS end-of-file mark at the end of a long enough line\n\x1a"));
}

TEST(BinaryInputTest, InvalidUtf8AloneIsNotBinary) {
  // Latin-1 and KOI8-R text: invalid UTF-8 throughout, which the UTF-8 policy
  // handles; nothing here says binary.
  EXPECT_FALSE(Classify("caf\xE9 cr\xE8me br\xFBl\xE9" "e\n"));
  EXPECT_FALSE(Classify("\xF0\xD2\xC9\xD7\xC5\xD4 \xCD\xC9\xD2\n"));
}

TEST(BinaryInputTest, ParquetNeedsTheMagicAtBothEndsWhenTheEndIsKnown) {
  std::string p = ParquetBytes();
  auto v = Classify(p, std::string_view(p).substr(p.size() - 8));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "a Parquet file");
  EXPECT_EQ(v->evidence, "PAR1 at the start and at the end of the file");
  // What to do depends on whether this build reads Parquet.
  EXPECT_NE(v->advice.find(TableTextColumn::Available() ? "give it the extension .parquet"
                                                          : "Parquet support was not built in"),
            std::string::npos)
      << v->advice;
  // A text that happens to start with the four letters is text.
  std::string text = "PAR1 is the first paragraph.\n";
  EXPECT_FALSE(Classify(text, text));
  // Inside a compressed stream the end is unknown: a control byte must follow.
  EXPECT_TRUE(Classify(p));
  EXPECT_FALSE(Classify(text));
}

TEST(BinaryInputTest, KnownSignatures) {
  struct Case {
    std::string head;
    std::string what;
  } cases[] = {
      {PngBytes(), "a PNG image"},
      {"\xFF\xD8\xFF\xE0\x00\x10JFIF"s, "a JPEG image"},
      {"GIF89a\x01\x00\x01\x00"s, "a GIF image"},
      {"RIFF\x24\x00\x00\x00WEBPVP8 "s, "a WebP image"},
      {"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj\n", "a PDF document"},
      {"PK\x03\x04\x14\x00\x00\x00"s, "a ZIP archive"},
      {"ARROW1\x00\x00\xff\xff\xff\xff"s, "an Arrow IPC file"},
      {"\x93NUMPY\x01\x00v\x00{'descr'"s, "a NumPy array file"},
      {"BZh91AY&SY", "a bzip2-compressed file"},
      {"\xFD" "7zXZ\x00\x00\x04"s, "an xz-compressed file"},
      {"\x7F" "ELF\x02\x01\x01"s, "an ELF executable or library"},
      {std::string(257, '\0') + "ustar\x00" "00"s, "a tar archive"},
  };
  for (const Case& c : cases) {
    auto v = Classify(c.head);
    ASSERT_TRUE(v) << c.what;
    EXPECT_EQ(v->what, c.what);
    EXPECT_NE(v->evidence.find("signature"), std::string::npos) << v->evidence;
  }
  // Text that begins like a short signature is still text.
  EXPECT_FALSE(Classify("BZh is not bzip2\n"));
  EXPECT_FALSE(Classify("BZh91 is not bzip2 either\n"));
  EXPECT_EQ(Classify("BZh9\x17\x72\x45\x38\x50\x90\0\0\0\0"s)->what, "a bzip2-compressed file");  // empty stream
  EXPECT_FALSE(Classify("GIF87 was a year\n"));
}

TEST(BinaryInputTest, DecompressedSignaturesSaySo) {
  std::string tar = std::string(257, 'a') + "ustar  " + std::string(300, '\0');
  InputSample s;
  s.path = "corpus.tar.gz";
  s.head = tar;
  s.decompressed = true;
  auto v = ClassifyInput(s);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "a tar archive");
  EXPECT_EQ(v->evidence, "its tar signature at byte offset 257 of the decompressed data");
}

TEST(BinaryInputTest, NulByteIsBinaryWithItsOffset) {
  std::string head = "looks like text for a while" + std::string(1, '\0') + "then not";
  auto v = Classify(head);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "binary data");
  EXPECT_EQ(v->evidence, "a NUL byte at byte offset 27");
  EXPECT_EQ(v->offset, 27u);
  InputSample s;
  s.path = "a.jsonl.gz";
  s.head = head;
  s.decompressed = true;
  EXPECT_EQ(ClassifyInput(s)->evidence, "a NUL byte at uncompressed byte offset 27");
}

TEST(BinaryInputTest, ManyControlBytesAreBinary) {
  std::string head(100, 'a');
  for (size_t i = 40; i < 51; ++i) head[i] = '\x01';  // 11 of 100
  auto v = Classify(head);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "binary data");
  EXPECT_EQ(v->evidence, "11 of its first 100 bytes are control characters, the first at byte offset 40");
  head[50] = 'a';  // 10 of 100: not over a tenth
  EXPECT_FALSE(Classify(head));
}

TEST(BinaryInputTest, Utf16And32ByteOrderMarks) {
  auto v = Classify("\xFF\xFEh\x00i\x00"s);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "UTF-16 text");
  EXPECT_EQ(v->evidence, "a UTF-16 little-endian byte-order mark at the start");
  EXPECT_EQ(Classify("\xFE\xFF\x00h"s)->what, "UTF-16 text");
  EXPECT_EQ(Classify("\xFF\xFE\x00\x00h\x00\x00\x00"s)->what, "UTF-32 text");
  // Without a mark, UTF-16 text of Latin letters has NUL bytes.
  EXPECT_EQ(Classify("h\x00i\x00"s)->what, "binary data");
}

TEST(BinaryInputTest, ExtensionsCountOnlyWhenAsked) {
  auto v = Classify("x", std::nullopt, "dir/data.PARQUET", true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->what, "named like a Parquet file");
  EXPECT_EQ(v->evidence, "its extension .PARQUET");
  EXPECT_EQ(Classify("", std::nullopt, "shots/a.png.zst", true)->what, "named like a PNG image");
  EXPECT_FALSE(Classify("text\n", std::nullopt, "dir/data.parquet", false));
  EXPECT_FALSE(Classify("text\n", std::nullopt, "dir/parquet", true));
  EXPECT_FALSE(Classify("text\n", std::nullopt, "dir.png/notes.txt", true));
  // The bytes' own signature wins over the name.
  EXPECT_EQ(Classify(PngBytes(), std::nullopt, "a.parquet", true)->what, "a PNG image");
}

TEST(BinaryInputTest, MessageNamesTheFileWhatAndWhy) {
  NotText n{"a Parquet file", "PAR1 at the start", "do this", 0};
  EXPECT_EQ(n.Message("d/x.parquet"), "'d/x.parquet': a Parquet file (PAR1 at the start); do this");
}

TEST(BinaryInputTest, FilesAreExaminedAfterDecompression) {
  TempDir dir;
  std::string text = "{\"text\":\"hello\"}\n";
  EXPECT_FALSE(CheckTextInput(dir.Write("a.jsonl", text), true));
  EXPECT_FALSE(CheckTextInput(dir.WriteGzip("a.jsonl.gz", text), true));
  EXPECT_FALSE(CheckTextInput(dir.WriteZstd("a.jsonl.zst", text, 2), true));

  std::string binary = text + std::string(1000, '\0');
  auto gz = CheckTextInput(dir.WriteGzip("b.jsonl.gz", binary), true);
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->evidence, "a NUL byte at uncompressed byte offset " + std::to_string(text.size()));
  auto zst = CheckTextInput(dir.WriteZstd("b.txt.zst", PngBytes()), true);
  ASSERT_TRUE(zst);
  EXPECT_EQ(zst->what, "a PNG image");

  // The end of an uncompressed file is read for Parquet's closing magic,
  // also when the file is longer than the part examined.
  std::string parquet = ParquetBytes();
  parquet.insert(30, std::string(kBinaryCheckBytes * 2, 'v'));
  auto pq = CheckTextInput(dir.Write("data.txt", parquet), false);
  ASSERT_TRUE(pq);
  EXPECT_EQ(pq->evidence, "PAR1 at the start and at the end of the file");

  // A PNG named .gz is a PNG, not a damaged gzip file.
  EXPECT_EQ(CheckTextInput(dir.Write("shot.gz", PngBytes()), false)->what, "a PNG image");
}

TEST(BinaryInputTest, ProblemsOtherThanBinaryAreLeftToTheReader) {
  TempDir dir;
  EXPECT_FALSE(CheckTextInput(dir.Path("missing.txt"), true));
  // Not gzip despite the name: the reader reports that with its own message.
  EXPECT_FALSE(CheckTextInput(dir.Write("plain.jsonl.gz", "{\"text\":\"a\"}\n"), true));
  // Damaged after the examined part: the reader reports the damage where it is.
  std::string big(200 * 1024, 'a');
  std::string path = dir.WriteGzip("cut.txt.gz", big);
  testing::TruncateFile(path, testing::FileSize(path) / 2);
  EXPECT_FALSE(CheckTextInput(path, true));
}

TEST(BinaryInputTest, EveryRefusedFileIsNamed) {
  TempDir dir;
  dir.Write("in/a.jsonl", "{\"text\":\"fine\"}\n");
  dir.Write("in/b.png", PngBytes());
  dir.Write("in/c.txt", std::string("x\0y", 3));
  auto sources = SourceSet::Expand({dir.Path("in")});
  ASSERT_TRUE(sources.ok()) << sources.status().ToString();
  Status s = CheckTextInputs(*sources, InputFormat::kAuto);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("2 inputs are not text"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("b.png': a PNG image"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("c.txt': binary data (a NUL byte at byte offset 1)"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("a.jsonl"), std::string::npos) << s.message();

  auto one = SourceSet::Expand({dir.Path("in/a.jsonl"), dir.Path("in/b.png")});
  ASSERT_TRUE(one.ok());
  s = CheckTextInputs(*one, InputFormat::kText);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("input '", 0), 0u) << s.message();

  auto fine = SourceSet::Expand({dir.Path("in/a.jsonl")});
  ASSERT_TRUE(fine.ok());
  EXPECT_TRUE(CheckTextInputs(*fine, InputFormat::kAuto).ok());
}

}  // namespace
}  // namespace tokenfeed::text
