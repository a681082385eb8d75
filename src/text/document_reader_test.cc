#include "text/document_reader.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using testing::TempDir;

struct Event {
  ReadEvent kind{};
  std::string text;
  std::string path;
  DocumentPosition position;
  uint64_t sequence = 0;
  uint32_t repairs = 0;
  ResumePoint next;
  DropReason reason{};
  std::string message;
  uint64_t line = 0, offset = 0;  // of a reject
  FileEnd end;
  Status error;
};

// Every event until kEnd, errors included (the reader goes on after them).
std::vector<Event> ReadAll(DocumentReader* reader) {
  std::vector<Event> out;
  for (int guard = 0; guard < 1000000; ++guard) {
    Result<ReadEvent> r = reader->Next();
    Event e;
    if (!r.ok()) {
      e.error = r.status();
      out.push_back(std::move(e));
      continue;
    }
    e.kind = *r;
    if (*r == ReadEvent::kEnd) break;
    if (*r == ReadEvent::kDocument) {
      const Document& d = reader->document();
      e.text = std::string(d.text);
      e.path = std::string(d.path);
      e.position = d.position;
      e.sequence = d.sequence;
      e.repairs = d.utf8_repairs;
      e.next = d.next;
    } else if (*r == ReadEvent::kReject) {
      const Reject& j = reader->reject();
      e.reason = j.reason;
      e.message = j.message;
      e.path = std::string(j.path);
      e.line = j.line;
      e.offset = j.byte_offset;
    } else {
      e.end = reader->file_end();
      e.path = std::string(e.end.path);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Event> ReadPaths(std::vector<std::string> paths, ReaderOptions options = {}, ResumePoint start = {}) {
  auto reader = DocumentReader::Open(SourceSet::FromPaths(std::move(paths)), options, start);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return {};
  return ReadAll(reader->get());
}

std::vector<Event> Only(const std::vector<Event>& events, ReadEvent kind) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.error.ok() && e.kind == kind) out.push_back(e);
  }
  return out;
}

std::vector<std::string> Texts(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : Only(events, ReadEvent::kDocument)) out.push_back(e.text);
  return out;
}

TEST(DocumentReaderTest, JsonlDocumentsCarryTheirPositions) {
  TempDir dir;
  std::string path = dir.Write("a.jsonl", "{\"text\":\"one\"}\n\n{\"text\":\"two\"}\r\n   \n{\"text\":\"three\"}");
  auto events = ReadPaths({path});
  ASSERT_EQ(events.size(), 4u);
  auto docs = Only(events, ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].text, "one");
  EXPECT_EQ(docs[0].position.line, 1u);
  EXPECT_EQ(docs[0].position.byte_offset, 0u);
  EXPECT_EQ(docs[0].position.ordinal, 0u);
  EXPECT_EQ(docs[0].sequence, 0u);
  EXPECT_EQ(docs[0].path, path);
  EXPECT_EQ(docs[0].next.byte_offset, 15u);
  EXPECT_EQ(docs[0].next.line, 2u);
  EXPECT_EQ(docs[0].next.ordinal, 1u);
  EXPECT_EQ(docs[0].next.sequence, 1u);
  EXPECT_EQ(docs[1].text, "two");
  EXPECT_EQ(docs[1].position.line, 3u);
  EXPECT_EQ(docs[1].position.byte_offset, 16u);
  EXPECT_EQ(docs[1].position.ordinal, 1u);
  EXPECT_EQ(docs[1].next.byte_offset, 32u);  // past the CRLF
  EXPECT_EQ(docs[2].text, "three");
  EXPECT_EQ(docs[2].position.line, 5u);
  EXPECT_EQ(docs[2].position.byte_offset, 36u);
  // No LF after the last line, so nothing can follow in this file: next is the next file.
  EXPECT_EQ(docs[2].next.file_index, 1u);
  EXPECT_EQ(docs[2].next.byte_offset, 0u);
  EXPECT_EQ(docs[2].next.line, 1u);
  EXPECT_EQ(docs[2].next.ordinal, 0u);
  EXPECT_EQ(docs[2].next.sequence, 3u);
  ASSERT_EQ(events.back().kind, ReadEvent::kFileEnd);
  EXPECT_EQ(events.back().end.documents, 3u);
  EXPECT_EQ(events.back().end.rejects, 0u);
  EXPECT_EQ(events.back().end.lines, 5u);
  EXPECT_EQ(events.back().end.bytes, 52u);
  EXPECT_EQ(events.back().end.compression, Compression::kNone);
}

TEST(DocumentReaderTest, SequenceRunsAcrossFilesAndOrdinalsRestart) {
  TempDir dir;
  std::string a = dir.Write("a.jsonl", "{\"text\":\"a0\"}\n{\"text\":\"a1\"}\n");
  std::string b = dir.WriteZstd("b.jsonl.zst", "{\"text\":\"b0\"}\n{\"text\":\"b1\"}\n{\"text\":\"b2\"}\n");
  auto events = ReadPaths({a, b});
  auto docs = Only(events, ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 5u);
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(docs[i].sequence, i);
  EXPECT_EQ(docs[2].text, "b0");
  EXPECT_EQ(docs[2].position.file_index, 1u);
  EXPECT_EQ(docs[2].position.ordinal, 0u);
  EXPECT_EQ(docs[4].position.ordinal, 2u);
  auto ends = Only(events, ReadEvent::kFileEnd);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[1].end.compression, Compression::kZstd);
  EXPECT_EQ(ends[1].end.documents, 3u);
}

TEST(DocumentReaderTest, PerDocumentProblemsAreRejectsAndReadingGoesOn) {
  TempDir dir;
  std::string path = dir.Write("r.jsonl",
                               "{\"text\":\"good 1\"}\n"
                               "{\"text\": \"unterminated\n"
                               "{\"body\":\"no text field\"}\n"
                               "{\"text\":42}\n"
                               "{\"text\":null}\n"
                               "[1,2,3]\n"
                               "{\"text\":\"" + std::string(300, 'x') + "\"}\n"
                               "{\"text\":\"good 2\"}\n");
  ReaderOptions options;
  options.max_document_bytes = 200;
  auto events = ReadPaths({path}, options);
  EXPECT_EQ(Texts(events), (std::vector<std::string>{"good 1", "good 2"}));
  auto rejects = Only(events, ReadEvent::kReject);
  ASSERT_EQ(rejects.size(), 6u);
  DropReason want[] = {DropReason::kBadJson,    DropReason::kMissingField, DropReason::kNotAString,
                       DropReason::kNotAString, DropReason::kBadJson,      DropReason::kTooLong};
  for (size_t i = 0; i < rejects.size(); ++i) {
    EXPECT_EQ(rejects[i].reason, want[i]) << i << ": " << rejects[i].message;
    EXPECT_EQ(rejects[i].line, i + 2);
    EXPECT_EQ(rejects[i].path, path);
    EXPECT_FALSE(rejects[i].message.empty());
  }
  EXPECT_EQ(rejects[0].offset, 18u);
  EXPECT_EQ(rejects[1].offset, 18u + 23u);
  EXPECT_NE(rejects[5].message.find("over the maximum document size of 200"), std::string::npos);
  EXPECT_EQ(events.back().end.rejects, 6u);
  auto docs = Only(events, ReadEvent::kDocument);
  EXPECT_EQ(docs[1].position.ordinal, 1u);  // rejects take no ordinal
  EXPECT_EQ(docs[1].position.line, 8u);
}

TEST(DocumentReaderTest, DottedFieldPath) {
  TempDir dir;
  std::string path = dir.Write("n.jsonl", "{\"meta\":{\"body\":\"nested\"},\"text\":\"top\"}\n");
  ReaderOptions options;
  options.json_field = "meta.body";
  EXPECT_EQ(Texts(ReadPaths({path}, options)), (std::vector<std::string>{"nested"}));
  for (const char* bad : {"", ".a", "a.", "a..b"}) {
    options.json_field = bad;
    EXPECT_FALSE(DocumentReader::Open(SourceSet::FromPaths({path}), options).ok()) << bad;
  }
  ReaderOptions zero;
  zero.max_document_bytes = 0;
  EXPECT_FALSE(DocumentReader::Open(SourceSet::FromPaths({path}), zero).ok());
  ReaderOptions huge;
  huge.max_document_bytes = size_t{1} << 40;
  EXPECT_FALSE(DocumentReader::Open(SourceSet::FromPaths({path}), huge).ok());
}

TEST(DocumentReaderTest, InvalidUtf8IsReplacedByDefault) {
  TempDir dir;
  std::string jsonl = dir.Write("u.jsonl", "{\"text\":\"caf\xE9 ok\"}\n{\"text\":\"fine\"}\n");
  std::string text = dir.Write("u.txt", "ab\xF0\x9F\x98\ncd\n");
  auto docs = Only(ReadPaths({jsonl, text}), ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0].text, "caf\xEF\xBF\xBD ok");
  EXPECT_EQ(docs[0].repairs, 1u);
  EXPECT_EQ(docs[1].repairs, 0u);
  EXPECT_EQ(docs[2].text, "ab\xEF\xBF\xBD");  // a cut 4-byte sequence is one U+FFFD
  EXPECT_EQ(docs[2].repairs, 1u);
}

TEST(DocumentReaderTest, InvalidUtf8UnderRejectNamesTheByteOffset) {
  TempDir dir;
  std::string jsonl = dir.Write("u.jsonl", "{\"text\":\"fine\"}\n{\"text\":\"caf\xE9\"}\n");
  std::string text = dir.Write("u.txt", "ok\nab\xFF\n");
  ReaderOptions options;
  options.utf8 = Utf8Policy::kReject;
  auto events = ReadPaths({jsonl, text}, options);
  EXPECT_EQ(Texts(events), (std::vector<std::string>{"fine", "ok"}));
  auto rejects = Only(events, ReadEvent::kReject);
  ASSERT_EQ(rejects.size(), 2u);
  EXPECT_EQ(rejects[0].reason, DropReason::kInvalidUtf8);
  EXPECT_EQ(rejects[0].line, 2u);
  EXPECT_EQ(rejects[0].offset, 16u + 12u);
  EXPECT_NE(rejects[0].message.find("byte offset 28"), std::string::npos) << rejects[0].message;
  EXPECT_EQ(rejects[1].offset, 5u);
  EXPECT_EQ(rejects[1].line, 2u);
}

TEST(DocumentReaderTest, TextLineMode) {
  TempDir dir;
  std::string path = dir.Write("t.txt", "first line\r\n\n  \nsecond\tline\nlast");
  auto docs = Only(ReadPaths({path}), ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].text, "first line");
  EXPECT_EQ(docs[1].text, "second\tline");
  EXPECT_EQ(docs[1].position.line, 4u);
  EXPECT_EQ(docs[1].position.byte_offset, 16u);
  EXPECT_EQ(docs[2].text, "last");
}

TEST(DocumentReaderTest, TextParagraphMode) {
  TempDir dir;
  std::string path = dir.Write("p.txt", "\n\npara one\r\nstill one\r\n\r\n \t \npara two\n\n\n\npara three\nend");
  ReaderOptions options;
  options.text_mode = TextMode::kParagraph;
  auto docs = Only(ReadPaths({path}, options), ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].text, "para one\r\nstill one");  // the raw bytes; the cleaner normalises
  EXPECT_EQ(docs[0].position.line, 3u);
  EXPECT_EQ(docs[0].position.byte_offset, 2u);
  EXPECT_EQ(docs[1].text, "para two");
  EXPECT_EQ(docs[1].position.line, 7u);
  EXPECT_EQ(docs[2].text, "para three\nend");
  EXPECT_EQ(docs[2].position.ordinal, 2u);
}

TEST(DocumentReaderTest, TextFileMode) {
  TempDir dir;
  std::string a = dir.Write("a.txt", "\xEF\xBB\xBF" "Title\n\nBody one.\n\nBody two.\n\n\n");
  std::string b = dir.WriteGzip("b.md.gz", "just one line");
  std::string blank = dir.Write("c.txt", " \n\t\n");
  ReaderOptions options;
  options.text_mode = TextMode::kFile;
  auto events = ReadPaths({a, b, blank}, options);
  auto docs = Only(events, ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].text, "Title\n\nBody one.\n\nBody two.");
  EXPECT_EQ(docs[0].position.byte_offset, 3u);
  EXPECT_EQ(docs[0].position.line, 1u);
  EXPECT_EQ(docs[1].text, "just one line");
  EXPECT_EQ(Only(events, ReadEvent::kFileEnd).size(), 3u);  // the blank file has no document
}

TEST(DocumentReaderTest, TooLongParagraphAndFileAreRejected) {
  TempDir dir;
  std::string big;
  for (int i = 0; i < 50; ++i) big += "line of the long paragraph\n";
  std::string path = dir.Write("p.txt", "short\n\n" + big + "\nafter\n");
  ReaderOptions options;
  options.text_mode = TextMode::kParagraph;
  options.max_document_bytes = 300;
  options.read_block_bytes = 64;
  auto events = ReadPaths({path}, options);
  EXPECT_EQ(Texts(events), (std::vector<std::string>{"short", "after"}));
  auto rejects = Only(events, ReadEvent::kReject);
  ASSERT_EQ(rejects.size(), 1u);
  EXPECT_EQ(rejects[0].reason, DropReason::kTooLong);
  EXPECT_EQ(rejects[0].line, 3u);
  EXPECT_EQ(rejects[0].offset, 7u);
  EXPECT_NE(rejects[0].message.find("document of " + std::to_string(big.size() - 1) + " bytes"), std::string::npos)
      << rejects[0].message;
  options.text_mode = TextMode::kFile;
  events = ReadPaths({path}, options);
  EXPECT_TRUE(Texts(events).empty());
  EXPECT_EQ(Only(events, ReadEvent::kReject).size(), 1u);
}

TEST(DocumentReaderTest, EmptyFilesHaveNoDocumentsAndAreNotErrors) {
  TempDir dir;
  std::string empty = dir.Write("empty.jsonl", "");
  std::string bom_only = dir.Write("bom.jsonl", "\xEF\xBB\xBF");
  std::string newlines = dir.Write("nl.txt", "\n\r\n\n");
  std::string empty_gz = dir.WriteGzip("e.jsonl.gz", "");
  std::string empty_zst = dir.WriteZstd("e.jsonl.zst", "");
  auto events = ReadPaths({empty, bom_only, newlines, empty_gz, empty_zst});
  ASSERT_EQ(events.size(), 5u);
  for (const Event& e : events) {
    EXPECT_TRUE(e.error.ok()) << e.error.ToString();
    EXPECT_EQ(e.kind, ReadEvent::kFileEnd);
    EXPECT_EQ(e.end.documents, 0u);
  }
}

TEST(DocumentReaderTest, ByteOrderMarkIsStripped) {
  TempDir dir;
  std::string jsonl = dir.Write("b.jsonl", "\xEF\xBB\xBF{\"text\":\"first\"}\n{\"text\":\"second\"}\n");
  std::string text = dir.WriteZstd("b.txt.zst", "\xEF\xBB\xBFplain\n");
  auto events = ReadPaths({jsonl, text});
  EXPECT_TRUE(Only(events, ReadEvent::kReject).empty());
  auto docs = Only(events, ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].text, "first");
  EXPECT_EQ(docs[0].position.byte_offset, 3u);
  EXPECT_EQ(docs[2].text, "plain");
}

TEST(DocumentReaderTest, FormatFromExtension) {
  EXPECT_EQ(DocumentReader::FormatForPath("a.jsonl", InputFormat::kAuto), InputFormat::kJsonl);
  EXPECT_EQ(DocumentReader::FormatForPath("d/a.JSONL.gz", InputFormat::kAuto), InputFormat::kJsonl);
  EXPECT_EQ(DocumentReader::FormatForPath("a.json.zst", InputFormat::kAuto), InputFormat::kJsonl);
  EXPECT_EQ(DocumentReader::FormatForPath("a.txt", InputFormat::kAuto), InputFormat::kText);
  EXPECT_EQ(DocumentReader::FormatForPath("README", InputFormat::kAuto), InputFormat::kText);
  EXPECT_EQ(DocumentReader::FormatForPath("x.jsonl/README", InputFormat::kAuto), InputFormat::kText);
  EXPECT_EQ(DocumentReader::FormatForPath("a.txt", InputFormat::kJsonl), InputFormat::kJsonl);
  EXPECT_EQ(DocumentReader::FormatForPath("a.jsonl", InputFormat::kText), InputFormat::kText);
  EXPECT_EQ(*ParseInputFormat("jsonl"), InputFormat::kJsonl);
  EXPECT_EQ(*ParseTextMode("paragraph"), TextMode::kParagraph);
  EXPECT_EQ(*ParseUtf8Policy("reject"), Utf8Policy::kReject);
  EXPECT_FALSE(ParseTextMode("lines").ok());
}

// A corpus of three files and three formats, with rejects between documents.
struct ResumeCorpus {
  TempDir dir;
  std::vector<std::string> paths;
  ReaderOptions options;
  ResumeCorpus() {
    std::string jsonl, text;
    for (int i = 0; i < 40; ++i) {
      jsonl += "{\"text\":\"doc " + std::to_string(i) + "\"}\n";
      if (i % 9 == 4) jsonl += "{broken\n";
      if (i % 7 == 0) jsonl += "\n";
      text += "para " + std::to_string(i) + " first line\r\nsecond line\n\n";
      if (i % 5 == 0) text += "\n\n";
    }
    // a and d end without a line break, b and c with one or more.
    paths.push_back(dir.Write("a.jsonl", jsonl.substr(0, jsonl.size() - 1)));
    paths.push_back(dir.WriteGzip("b.jsonl.gz", jsonl, 2));
    paths.push_back(dir.WriteZstd("c.txt.zst", text, 3));
    paths.push_back(dir.Write("d.txt", text.substr(0, text.size() - 2)));
    options.text_mode = TextMode::kParagraph;
    options.read_block_bytes = 97;  // refills everywhere
  }
};

TEST(DocumentReaderTest, ResumingAfterAnyDocumentGivesTheRestExactly) {
  ResumeCorpus corpus;
  auto all = Only(ReadPaths(corpus.paths, corpus.options), ReadEvent::kDocument);
  ASSERT_EQ(all.size(), 160u);
  std::vector<size_t> after;
  for (size_t k = 0; k < 45; ++k) after.push_back(k);
  for (size_t k = 45; k < all.size(); k += 13) after.push_back(k);
  for (size_t k : {79, 80, 119, 120, 159}) after.push_back(k);  // each file's last and first
  for (size_t k : after) {
    ResumePoint start = all[k].next;
    if (start.file_index < corpus.paths.size()) start.path = corpus.paths[start.file_index];
    auto events = ReadPaths(corpus.paths, corpus.options, start);
    for (const Event& e : events) {
      ASSERT_TRUE(e.error.ok()) << "resumed after document " << k << ": " << e.error.ToString();
    }
    auto rest = Only(events, ReadEvent::kDocument);
    ASSERT_EQ(rest.size(), all.size() - k - 1) << "resumed after document " << k;
    for (size_t i = 0; i < rest.size(); ++i) {
      const Event& want = all[k + 1 + i];
      ASSERT_EQ(rest[i].text, want.text) << k << "/" << i;
      ASSERT_EQ(rest[i].sequence, want.sequence);
      ASSERT_EQ(rest[i].position.file_index, want.position.file_index);
      ASSERT_EQ(rest[i].position.line, want.position.line);
      ASSERT_EQ(rest[i].position.byte_offset, want.position.byte_offset);
      ASSERT_EQ(rest[i].position.ordinal, want.position.ordinal);
    }
  }
}

TEST(DocumentReaderTest, ResumePointOutsideTheSetIsRefused) {
  ResumeCorpus corpus;
  SourceSet set = SourceSet::FromPaths(corpus.paths);
  ResumePoint past;
  past.file_index = 5;
  EXPECT_FALSE(DocumentReader::Open(set, corpus.options, past).ok());
  ResumePoint wrong_file;
  wrong_file.file_index = 1;
  wrong_file.path = corpus.paths[0];
  auto r = DocumentReader::Open(set, corpus.options, wrong_file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--shard"), std::string::npos);
  ResumePoint done;
  done.file_index = 4;
  auto finished = DocumentReader::Open(set, corpus.options, done);
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(*(*finished)->Next(), ReadEvent::kEnd);
  EXPECT_EQ(*(*finished)->Next(), ReadEvent::kEnd);
  // A position in the middle of a line: the file changed.
  ResumePoint mid;
  mid.file_index = 0;
  mid.byte_offset = 3;
  mid.line = 1;
  auto events = ReadPaths(corpus.paths, corpus.options, mid);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events[0].error.IsCorruption()) << events[0].error.ToString();
}

void ExpectTruncatedFileDeliversCompleteDocumentsOnly(bool zstd) {
  TempDir dir;
  std::string jsonl;
  // Enough for several compressed blocks, so that some decode before the cut.
  for (int i = 0; i < 30000; ++i) jsonl += "{\"text\":\"document number " + std::to_string(i) + "\"}\n";
  std::string full = zstd ? testing::ZstdCompress(jsonl) : testing::GzipCompress(jsonl);
  std::string cut = dir.Write(zstd ? "a.jsonl.zst" : "a.jsonl.gz", full.substr(0, full.size() / 2));
  std::string next = dir.Write("b.jsonl", "{\"text\":\"next file\"}\n");
  auto events = ReadPaths({cut, next});
  size_t error_at = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].error.ok()) error_at = i;
  }
  ASSERT_LT(error_at, events.size()) << "the truncation was not reported";
  const Status& error = events[error_at].error;
  EXPECT_TRUE(error.IsCorruption());
  EXPECT_NE(error.message().find(cut), std::string::npos) << error.ToString();
  EXPECT_NE(error.message().find("truncated"), std::string::npos) << error.ToString();
  EXPECT_NE(error.message().find("documents of this file were delivered"), std::string::npos) << error.ToString();
  // Everything before the error is a complete document of the original, in order.
  size_t delivered = 0;
  for (size_t i = 0; i < error_at; ++i) {
    ASSERT_EQ(events[i].kind, ReadEvent::kDocument);
    ASSERT_EQ(events[i].text, "document number " + std::to_string(i));
    ++delivered;
  }
  EXPECT_GT(delivered, 100u);
  EXPECT_LT(delivered, 30000u);
  EXPECT_NE(error.message().find(std::to_string(delivered) + " documents"), std::string::npos);
  // No FileEnd for the incomplete file; the next file is read normally.
  std::vector<Event> after(events.begin() + static_cast<std::ptrdiff_t>(error_at) + 1, events.end());
  EXPECT_EQ(Texts(after), (std::vector<std::string>{"next file"}));
  auto ends = Only(events, ReadEvent::kFileEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].path, next);
}

TEST(DocumentReaderTest, TruncatedGzipDeliversCompleteDocumentsThenAnError) {
  ExpectTruncatedFileDeliversCompleteDocumentsOnly(false);
}

TEST(DocumentReaderTest, TruncatedZstdDeliversCompleteDocumentsThenAnError) {
  ExpectTruncatedFileDeliversCompleteDocumentsOnly(true);
}

TEST(DocumentReaderTest, ParagraphCutByATruncationDoesNotLeakIntoTheNextFile) {
  TempDir dir;
  std::string one_paragraph = "a short first paragraph\n\n";
  for (int i = 0; i < 40000; ++i) one_paragraph += "line " + std::to_string(i) + " of a paragraph with no end\n";
  std::string gz = testing::GzipCompress(one_paragraph);
  std::string cut = dir.Write("a.txt.gz", gz.substr(0, gz.size() / 2));
  std::string next = dir.Write("b.txt", "x\n\ny\n");
  ReaderOptions options;
  options.text_mode = TextMode::kParagraph;
  auto events = ReadPaths({cut, next}, options);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].text, "a short first paragraph");
  EXPECT_TRUE(events[1].error.IsCorruption()) << "the cut paragraph must not be delivered";
  std::vector<Event> after(events.begin() + 2, events.end());
  auto docs = Only(after, ReadEvent::kDocument);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].text, "x");
  EXPECT_EQ(docs[0].position.byte_offset, 0u);
  EXPECT_EQ(docs[0].position.file_index, 1u);
  EXPECT_EQ(docs[1].text, "y");
}

TEST(DocumentReaderTest, FileThatVanishedIsNotFoundAndTheNextIsRead) {
  TempDir dir;
  std::string gone = dir.Write("a.jsonl", "{\"text\":\"a\"}\n");
  std::string here = dir.Write("b.jsonl", "{\"text\":\"b\"}\n");
  auto set = SourceSet::Expand({dir.path()});
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(::unlink(gone.c_str()), 0);
  auto reader = DocumentReader::Open(*set, {});
  ASSERT_TRUE(reader.ok());
  auto events = ReadAll(reader->get());
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events[0].error.IsNotFound());
  EXPECT_NE(events[0].error.message().find("a.jsonl"), std::string::npos);
  EXPECT_EQ(Texts(events), (std::vector<std::string>{"b"}));
}

TEST(DocumentReaderTest, RejectLineIsValidJson) {
  Reject r;
  r.reason = DropReason::kBadJson;
  r.message = "not valid JSON: \"quote\" and \\ and \x01";
  r.path = "dir/we\xFFird.jsonl";
  r.line = 7;
  r.byte_offset = 1234;
  std::string out;
  AppendRejectJsonLine(r, &out);
  EXPECT_EQ(out,
            "{\"file\":\"dir/we\xEF\xBF\xBDird.jsonl\",\"line\":7,\"offset\":1234,\"reason\":\"bad_json\","
            "\"message\":\"not valid JSON: \\\"quote\\\" and \\\\ and \\u0001\"}\n");
}

// Peak resident memory, which /proc/self/clear_refs can reset (Linux 4.0+).
bool ResetPeakMemory() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

size_t PeakMemoryBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      size_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

// A file with a 100 MB line between two short ones, written in pieces.
std::string WriteHugeLineFile(const TempDir& dir, bool jsonl) {
  std::string path = dir.Path(jsonl ? "huge.jsonl" : "huge.txt");
  std::ofstream out(path, std::ios::binary);
  out << (jsonl ? "{\"text\":\"before\"}\n{\"text\":\"" : "before\n");
  std::string chunk(1 << 20, 'a');
  for (int i = 0; i < 100; ++i) out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  out << (jsonl ? "\"}\n{\"text\":\"after\"}\n" : "\nafter\n");
  return path;
}

TEST(DocumentReaderTest, HundredMegabyteLineIsRejectedInBoundedMemory) {
  TempDir dir;
  std::string path = WriteHugeLineFile(dir, /*jsonl=*/true);
  ReaderOptions options;
  options.max_document_bytes = 1 << 20;
  auto reader = DocumentReader::Open(SourceSet::FromPaths({path}), options);
  ASSERT_TRUE(reader.ok());
  bool measured = ResetPeakMemory();
  size_t peak_before = PeakMemoryBytes();
  size_t max_buffer = 0;
  std::vector<Event> events;
  for (;;) {
    auto r = (*reader)->Next();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    max_buffer = std::max(max_buffer, (*reader)->buffer_bytes());
    if (*r == ReadEvent::kEnd) break;
    Event e;
    e.kind = *r;
    if (*r == ReadEvent::kDocument) e.text = std::string((*reader)->document().text);
    if (*r == ReadEvent::kReject) {
      e.reason = (*reader)->reject().reason;
      e.line = (*reader)->reject().line;
      e.message = (*reader)->reject().message;
    }
    events.push_back(e);
  }
  EXPECT_EQ(Texts(events), (std::vector<std::string>{"before", "after"}));
  auto rejects = Only(events, ReadEvent::kReject);
  ASSERT_EQ(rejects.size(), 1u);
  EXPECT_EQ(rejects[0].reason, DropReason::kTooLong);
  EXPECT_EQ(rejects[0].line, 2u);
  EXPECT_NE(rejects[0].message.find("document of " + std::to_string((100u << 20) + 11) + " bytes"),
            std::string::npos)
      << rejects[0].message;
  EXPECT_LE(max_buffer, (*reader)->max_buffer_bytes());
  EXPECT_LE((*reader)->max_buffer_bytes(), (3u << 20));
  if (measured) {
    // Well under the 100 MB the line would take if it were held.
    EXPECT_LT(PeakMemoryBytes() - std::min(PeakMemoryBytes(), peak_before), size_t{24} << 20);
  }
}

TEST(DocumentReaderTest, HundredMegabyteLineIsReadWhenTheLimitAllowsIt) {
  TempDir dir;
  std::string path = WriteHugeLineFile(dir, /*jsonl=*/false);
  ReaderOptions options;
  options.max_document_bytes = 128u << 20;
  auto reader = DocumentReader::Open(SourceSet::FromPaths({path}), options);
  ASSERT_TRUE(reader.ok());
  std::vector<size_t> sizes;
  for (;;) {
    auto r = (*reader)->Next();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (*r == ReadEvent::kEnd) break;
    if (*r != ReadEvent::kDocument) continue;
    std::string_view text = (*reader)->document().text;
    sizes.push_back(text.size());
    if (text.size() > 1000) {
      EXPECT_TRUE(std::all_of(text.begin(), text.end(), [](char c) { return c == 'a'; }));
      EXPECT_LE((*reader)->buffer_bytes(), (*reader)->max_buffer_bytes());
    }
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{6, 100u << 20, 5}));
}

}  // namespace
}  // namespace tokenfeed::text
