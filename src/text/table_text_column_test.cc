// TableTextColumn and the DocumentReader over Parquet files, on files
// written here through Arrow's own Parquet writer (snappy, zstd, several row
// groups, nested and dotted columns). Built only with Parquet support.
#include "text/table_text_column.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "text/binary_input.h"
#include "text/document_reader.h"
#include "text/table_test_fixtures.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace testing {

void WriteTableFixture(const std::string& arguments) {
  const std::string command = std::string(TOKENFEED_TABLE_FIXTURE_WRITER) + " " + arguments;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace testing

namespace {

using testing::SampleParquetTexts;
using testing::TempDir;
using testing::WriteTableFixture;

std::vector<std::optional<std::string>> SampleTexts(size_t n) { return SampleParquetTexts(n); }

// text (with nulls), id, and url: a FineWeb-like shape.
std::string WriteSample(const TempDir& dir, const std::string& name, size_t n, const std::string& compression,
                        int64_t row_group_rows) {
  std::string path = dir.Path(name);
  WriteTableFixture("sample " + path + " " + std::to_string(n) + " " + compression + " " +
                      std::to_string(row_group_rows));
  return path;
}

std::vector<TableTextColumn::Row> ReadRows(TableTextColumn* column, std::vector<std::string>* texts) {
  std::vector<TableTextColumn::Row> rows;
  TableTextColumn::Row row;
  for (;;) {
    Result<bool> got = column->Next(&row);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || !*got) break;
    texts->push_back(row.text ? std::string(*row.text) : std::string("<null>"));
    rows.push_back(row);
  }
  return rows;
}

TEST(TableTextColumnTest, ReadsEveryRowOfEveryRowGroupWhateverTheCompression) {
  TempDir dir;
  for (const char* compression : {"snappy", "zstd", "none"}) {
    std::string path = WriteSample(dir, "s.parquet", 23, compression, 5);
    auto column = TableTextColumn::Open(path, TableFormat::kParquet, "text", 0, /*batch_rows=*/3);
    ASSERT_TRUE(column.ok()) << column.status().ToString();
    EXPECT_EQ((*column)->rows(), 23u);
    EXPECT_EQ((*column)->row_groups(), 5u);
    std::vector<std::string> texts;
    auto rows = ReadRows(column->get(), &texts);
    auto want = SampleTexts(23);
    ASSERT_EQ(rows.size(), 23u);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].index, i);
      EXPECT_EQ(rows[i].row_group, i / 5);
      EXPECT_EQ(texts[i], want[i] ? *want[i] : "<null>");
    }
  }
}

TEST(TableTextColumnTest, StartsAtAnyRow) {
  TempDir dir;
  std::string path = WriteSample(dir, "s.parquet", 17, "zstd", 4);
  for (uint64_t first = 0; first <= 17; ++first) {
    auto column = TableTextColumn::Open(path, TableFormat::kParquet, "text", first, 3);
    ASSERT_TRUE(column.ok()) << column.status().ToString();
    std::vector<std::string> texts;
    auto rows = ReadRows(column->get(), &texts);
    ASSERT_EQ(rows.size(), 17 - first) << first;
    if (!rows.empty()) {
      EXPECT_EQ(rows.front().index, first);
      EXPECT_EQ(rows.front().row_group, first / 4);
    }
  }
  auto past = TableTextColumn::Open(path, TableFormat::kParquet, "text", 18);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("row 18 but the file has 17 rows"), std::string::npos)
      << past.status().ToString();
}

TEST(TableTextColumnTest, NestedAndDottedColumnNames) {
  TempDir dir;
  std::string path = dir.Path("nested.parquet");
  WriteTableFixture("nested " + path);

  auto read = [&](const std::string& field) {
    std::vector<std::string> texts;
    auto column = TableTextColumn::Open(path, TableFormat::kParquet, field, 0);
    EXPECT_TRUE(column.ok()) << column.status().ToString();
    if (column.ok()) ReadRows(column->get(), &texts);
    return texts;
  };
  EXPECT_EQ(read("meta.body"), (std::vector<std::string>{"a", "<null>", "c"}));  // the struct's null applies
  EXPECT_EQ(read("meta.lang"), (std::vector<std::string>{"en", "<null>", "de"}));
  EXPECT_EQ(read("meta.url"), (std::vector<std::string>{"dot 0", "dot 1", "dot 2"}));  // a top-level name first

  auto missing = TableTextColumn::Open(path, TableFormat::kParquet, "meta.title", 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'" + path +
                                            "' has no column 'meta.title' ('meta' has the fields: lang, body)"),
            std::string::npos)
      << missing.status().ToString();
  auto not_struct = TableTextColumn::Open(path, TableFormat::kParquet, "n.x", 0);
  ASSERT_FALSE(not_struct.ok());
  EXPECT_NE(not_struct.status().message().find("'n' is int64, not a struct with a field 'x'"), std::string::npos)
      << not_struct.status().ToString();
  auto whole_struct = TableTextColumn::Open(path, TableFormat::kParquet, "meta", 0);
  ASSERT_FALSE(whole_struct.ok());
  EXPECT_NE(whole_struct.status().message().find("column 'meta' is struct<"), std::string::npos)
      << whole_struct.status().ToString();
}

TEST(TableTextColumnTest, LargeStringColumnsAreRead) {
  TempDir dir;
  std::string path = dir.Path("large.parquet");
  WriteTableFixture("large " + path);
  auto column = TableTextColumn::Open(path, TableFormat::kParquet, "content", 1);
  ASSERT_TRUE(column.ok()) << column.status().ToString();
  std::vector<std::string> texts;
  ReadRows(column->get(), &texts);
  EXPECT_EQ(texts, (std::vector<std::string>{"large two"}));
}

TEST(TableTextColumnTest, BadFilesAndColumnsAreNamed) {
  TempDir dir;
  std::string path = WriteSample(dir, "s.parquet", 30, "snappy", 10);

  auto no_column = TableTextColumn::Open(path, TableFormat::kParquet, "content", 0);
  ASSERT_FALSE(no_column.ok());
  EXPECT_EQ(no_column.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_column.status().message().find("'" + path + "' has no column 'content' (its columns: id, text, url)"),
            std::string::npos)
      << no_column.status().ToString();

  auto not_string = TableTextColumn::Open(path, TableFormat::kParquet, "id", 0);
  ASSERT_FALSE(not_string.ok());
  EXPECT_NE(not_string.status().message().find("'" + path + "': column 'id' is int64, not a string column"),
            std::string::npos)
      << not_string.status().ToString();

  auto absent = TableTextColumn::Open(dir.Path("absent.parquet"), TableFormat::kParquet, "text", 0);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound) << absent.status().ToString();

  std::string text = dir.Write("plain.parquet", "this is text, not Parquet\n");
  auto not_parquet = TableTextColumn::Open(text, TableFormat::kParquet, "text", 0);
  ASSERT_FALSE(not_parquet.ok());
  EXPECT_EQ(not_parquet.status().code(), StatusCode::kCorruption);
  EXPECT_NE(not_parquet.status().message().find("'" + text + "': not a readable Parquet file"), std::string::npos)
      << not_parquet.status().ToString();

  // Cut short: the footer is gone.
  std::string cut = dir.Path("cut.parquet");
  WriteSample(dir, "cut.parquet", 30, "snappy", 10);
  testing::TruncateFile(cut, testing::FileSize(cut) / 2);
  auto truncated = TableTextColumn::Open(cut, TableFormat::kParquet, "text", 0);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("'" + cut + "'"), std::string::npos) << truncated.status().ToString();

  // Damaged inside a data page, footer intact: the error comes while reading
  // and names the file and the row group.
  std::string damaged = WriteSample(dir, "damaged.parquet", 3000, "none", 1000);
  {
    std::string bytes(testing::FileSize(damaged), '\0');
    FILE* f = std::fopen(damaged.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fread(bytes.data(), 1, bytes.size(), f), bytes.size());
    // Overwrite the page headers of the first text column chunk region with garbage.
    size_t at = bytes.find("document 1");
    ASSERT_NE(at, std::string::npos);
    std::fseek(f, static_cast<long>(at - 40), SEEK_SET);
    std::string junk(60, '\xff');
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  auto opened = TableTextColumn::Open(damaged, TableFormat::kParquet, "text", 0);
  if (opened.ok()) {
    TableTextColumn::Row row;
    Status failed;
    for (int i = 0; i < 4000; ++i) {
      Result<bool> got = (*opened)->Next(&row);
      if (!got.ok()) {
        failed = got.status();
        break;
      }
      if (!*got) break;
    }
    ASSERT_FALSE(failed.ok()) << "damaged pages were read without an error";
    EXPECT_NE(failed.message().find("'" + damaged + "'"), std::string::npos) << failed.ToString();
  } else {
    EXPECT_NE(opened.status().message().find("'" + damaged + "'"), std::string::npos) << opened.status().ToString();
  }
}

struct ReadResult {
  std::vector<std::string> texts;
  std::vector<uint64_t> lines, offsets, sequences;
  std::vector<ResumePoint> next;
  std::vector<std::string> rejects;
  uint64_t files_ended = 0;
};

ReadResult ReadDocuments(const std::vector<std::string>& paths, ReaderOptions options, ResumePoint start = {}) {
  ReadResult out;
  auto reader = DocumentReader::Open(SourceSet::FromPaths(paths), options, start);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return out;
  for (;;) {
    Result<ReadEvent> e = (*reader)->Next();
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok() || *e == ReadEvent::kEnd) break;
    if (*e == ReadEvent::kDocument) {
      const Document& d = (*reader)->document();
      out.texts.emplace_back(d.text);
      out.lines.push_back(d.position.line);
      out.offsets.push_back(d.position.byte_offset);
      out.sequences.push_back(d.sequence);
      out.next.push_back(d.next);
    } else if (*e == ReadEvent::kReject) {
      const Reject& r = (*reader)->reject();
      out.rejects.push_back(std::string(DropReasonName(r.reason)) + "@" + std::to_string(r.line) + ": " + r.message);
    } else {
      ++out.files_ended;
    }
  }
  return out;
}

TEST(ParquetDocumentsTest, RowsBecomeDocumentsLikeJsonlLines) {
  TempDir dir;
  std::string a = WriteSample(dir, "a.parquet", 12, "snappy", 5);
  std::string b = WriteSample(dir, "b.parquet", 7, "zstd", 3);
  ReadResult r = ReadDocuments({a, b}, ReaderOptions{});
  auto want = SampleTexts(12);
  std::vector<std::string> texts;
  for (const auto& t : want) {
    if (t) texts.push_back(*t);
  }
  for (const auto& t : SampleTexts(7)) {
    if (t) texts.push_back(*t);
  }
  EXPECT_EQ(r.texts, texts);
  EXPECT_EQ(r.files_ended, 2u);
  // Row 3 (line 4) and row 8 of a, row 3 of b have a null text.
  ASSERT_EQ(r.rejects.size(), 3u);
  EXPECT_EQ(r.rejects[0], "missing_field@4: row 3 (row group 0) has no text: column 'text' is null");
  EXPECT_EQ(r.lines[0], 1u);
  EXPECT_EQ(r.offsets[0], 0u);
  EXPECT_EQ(r.lines[3], 5u);  // row 4 after the null row 3
  EXPECT_EQ(r.offsets[3], 4u);

  // Resuming from every document's next gives exactly the rest.
  for (size_t k = 0; k < r.next.size(); ++k) {
    ReadResult rest = ReadDocuments({a, b}, ReaderOptions{}, r.next[k]);
    std::vector<std::string> want_rest(r.texts.begin() + static_cast<long>(k) + 1, r.texts.end());
    EXPECT_EQ(rest.texts, want_rest) << "after document " << k;
    if (!rest.sequences.empty()) {
      EXPECT_EQ(rest.sequences.front(), k + 1);
    }
  }
  // A resume point as the ingest rebuilds it from a record: the document's own row.
  ResumePoint at{0, 6, 7, 0, 5, a};
  ReadResult from = ReadDocuments({a, b}, ReaderOptions{}, at);
  ASSERT_FALSE(from.texts.empty());
  EXPECT_EQ(from.texts.front(), *want[6]);
  EXPECT_EQ(from.sequences.front(), 5u);

  ReaderOptions other;
  other.json_field = "url";
  EXPECT_EQ(ReadDocuments({b}, other).texts.size(), 7u);
}

TEST(ParquetDocumentsTest, TooLongAndInvalidUtf8RowsAreRejected) {
  TempDir dir;
  std::string path = dir.Path("r.parquet");
  WriteTableFixture("limits " + path);
  ReaderOptions o;
  o.max_document_bytes = 50;
  o.utf8 = Utf8Policy::kReject;
  ReadResult r = ReadDocuments({path}, o);
  EXPECT_EQ(r.texts, (std::vector<std::string>{"short"}));
  ASSERT_EQ(r.rejects.size(), 2u);
  EXPECT_EQ(r.rejects[0].rfind("too_long@2: document of 100 bytes", 0), 0u) << r.rejects[0];
  EXPECT_EQ(r.rejects[1], "invalid_utf8@3: invalid UTF-8 in row 2 at byte 4 of its text");
  o.utf8 = Utf8Policy::kReplace;
  EXPECT_EQ(ReadDocuments({path}, o).texts.back(), "bad \xEF\xBF\xBD byte");
}

TEST(ParquetDocumentsTest, ParquetFilesPassTheTextCheckByNameOrFormat) {
  TempDir dir;
  std::string path = WriteSample(dir, "a.parquet", 3, "snappy", 5);
  EXPECT_TRUE(CheckTextInputs(SourceSet::FromPaths({path}), InputFormat::kAuto).ok());
  EXPECT_TRUE(CheckTextInputs(SourceSet::FromPaths({path}), InputFormat::kParquet).ok());
  // Under another name it is still refused, saying how to read it.
  std::string renamed = dir.Path("export.txt");
  ASSERT_EQ(std::rename(path.c_str(), renamed.c_str()), 0);
  Status s = CheckTextInputs(SourceSet::FromPaths({renamed}), InputFormat::kAuto);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("give it the extension .parquet, or read it with the parquet format"), std::string::npos)
      << s.ToString();
  ReaderOptions o;
  o.format = InputFormat::kParquet;
  EXPECT_EQ(ReadDocuments({renamed}, o).texts.size(), 3u);
  EXPECT_EQ(DocumentReader::FormatForPath("x/A.PARQUET", InputFormat::kAuto), InputFormat::kParquet);
  EXPECT_EQ(DocumentReader::FormatForPath("x/a.parquet.gz", InputFormat::kAuto), InputFormat::kText);
}

std::string WriteIpc(const TempDir& dir, const std::string& name, size_t n, const std::string& compression,
                     int64_t batch_rows) {
  std::string path = dir.Path(name);
  WriteTableFixture("ipc " + path + " " + std::to_string(n) + " " + compression + " " + std::to_string(batch_rows));
  return path;
}

TEST(ArrowIpcTextColumnTest, ReadsEveryRowOfEveryBatchFromAnyRow) {
  TempDir dir;
  for (const char* compression : {"none", "zstd"}) {
    std::string path = WriteIpc(dir, std::string("s_") + compression + ".arrow", 17, compression, 4);
    auto want = SampleTexts(17);
    for (uint64_t first = 0; first <= 17; ++first) {
      auto column = TableTextColumn::Open(path, TableFormat::kArrowIpc, "text", first);
      ASSERT_TRUE(column.ok()) << column.status().ToString();
      EXPECT_EQ((*column)->rows(), 17u);
      EXPECT_EQ((*column)->row_groups(), 5u);
      std::vector<std::string> texts;
      auto rows = ReadRows(column->get(), &texts);
      ASSERT_EQ(rows.size(), 17 - first);
      for (size_t k = 0; k < rows.size(); ++k) {
        EXPECT_EQ(rows[k].index, first + k);
        EXPECT_EQ(rows[k].row_group, (first + k) / 4);
        EXPECT_EQ(texts[k], want[first + k] ? *want[first + k] : "<null>");
      }
    }
    // The nested field gives the same texts.
    auto nested = TableTextColumn::Open(path, TableFormat::kArrowIpc, "meta.body", 0);
    ASSERT_TRUE(nested.ok()) << nested.status().ToString();
    std::vector<std::string> texts;
    EXPECT_EQ(ReadRows(nested->get(), &texts).size(), 17u);
    EXPECT_EQ(texts[1], *want[1]);
  }
}

TEST(ArrowIpcTextColumnTest, BadFilesAndColumnsAreNamed) {
  TempDir dir;
  std::string path = WriteIpc(dir, "s.arrow", 10, "none", 4);
  auto no_column = TableTextColumn::Open(path, TableFormat::kArrowIpc, "content", 0);
  ASSERT_FALSE(no_column.ok());
  EXPECT_NE(no_column.status().message().find("'" + path + "' has no column 'content' (its columns: id, text, meta)"),
            std::string::npos)
      << no_column.status().ToString();
  auto not_string = TableTextColumn::Open(path, TableFormat::kArrowIpc, "id", 0);
  ASSERT_FALSE(not_string.ok());
  EXPECT_NE(not_string.status().message().find("column 'id' is int64, not a string column"), std::string::npos);
  auto past = TableTextColumn::Open(path, TableFormat::kArrowIpc, "text", 11);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("row 11 but the file has 10 rows"), std::string::npos);
  // A Parquet file, a text file and a cut file are not Arrow IPC files.
  for (const std::string& bad : {WriteSample(dir, "p.parquet", 5, "snappy", 5), dir.Write("t.arrow", "text\n")}) {
    auto opened = TableTextColumn::Open(bad, TableFormat::kArrowIpc, "text", 0);
    ASSERT_FALSE(opened.ok()) << bad;
    EXPECT_NE(opened.status().message().find("'" + bad + "': not a readable Arrow IPC file"), std::string::npos)
        << opened.status().ToString();
  }
  std::string cut = WriteIpc(dir, "cut.arrow", 100, "none", 10);
  testing::TruncateFile(cut, testing::FileSize(cut) - 20);
  auto truncated = TableTextColumn::Open(cut, TableFormat::kArrowIpc, "text", 0);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("'" + cut + "'"), std::string::npos);
}

TEST(ArrowIpcTextColumnTest, DocumentsAndResumeLikeParquet) {
  TempDir dir;
  std::string a = WriteIpc(dir, "a.arrow", 12, "zstd", 5);
  std::string b = WriteIpc(dir, "b.feather", 7, "none", 3);
  ReadResult r = ReadDocuments({a, b}, ReaderOptions{});
  ASSERT_EQ(r.texts.size(), 12u - 2 + 7 - 1);
  ASSERT_EQ(r.rejects.size(), 3u);
  EXPECT_EQ(r.rejects[0], "missing_field@4: row 3 (row group 0) has no text: column 'text' is null");
  for (size_t k = 0; k < r.next.size(); ++k) {
    ReadResult rest = ReadDocuments({a, b}, ReaderOptions{}, r.next[k]);
    std::vector<std::string> want_rest(r.texts.begin() + static_cast<long>(k) + 1, r.texts.end());
    EXPECT_EQ(rest.texts, want_rest) << "after document " << k;
  }
  EXPECT_TRUE(CheckTextInputs(SourceSet::FromPaths({a, b}), InputFormat::kAuto).ok());
}

}  // namespace
}  // namespace tokenfeed::text
