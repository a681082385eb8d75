// Every kind of bad input in one corpus, read the way the ingest reads it:
// SourceSet -> DocumentReader -> Cleaner -> DedupSet (in document order),
// rejects written as a --rejects file. Checks what is kept, what is counted
// under which reason, and that whole-file errors name their file and do not
// stop the other files.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "text/cleaner.h"
#include "text/content_dedup.h"
#include "text/document_reader.h"
#include "text/source_set.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using namespace std::string_literals;

using testing::TempDir;

struct IngestOutcome {
  std::vector<std::string> kept;        // cleaned texts, in order
  std::vector<uint64_t> kept_sequence;  // the reader's sequence numbers of the kept documents
  CleaningStats stats;
  std::string rejects_file;             // --rejects content
  std::vector<Status> file_errors;
  uint64_t files_completed = 0;
};

IngestOutcome Ingest(const std::vector<std::string>& specs, ReaderOptions reader_options = {},
                     CleanOptions clean_options = {}) {
  IngestOutcome out;
  auto sources = SourceSet::Expand(specs);
  EXPECT_TRUE(sources.ok()) << sources.status().ToString();
  if (!sources.ok()) return out;
  auto reader = DocumentReader::Open(*sources, reader_options);
  EXPECT_TRUE(reader.ok());
  auto cleaner = Cleaner::Create(clean_options);
  EXPECT_TRUE(cleaner.ok());
  DedupSet dedup;
  std::string scratch;
  for (int guard = 0; guard < 100000; ++guard) {
    Result<ReadEvent> event = (*reader)->Next();
    if (!event.ok()) {
      out.file_errors.push_back(event.status());  // a non-strict ingest logs it and goes on
      continue;
    }
    if (*event == ReadEvent::kEnd) break;
    if (*event == ReadEvent::kFileEnd) ++out.files_completed;
    if (*event == ReadEvent::kReject) {
      out.stats.RecordReject((*reader)->reject().reason);
      AppendRejectJsonLine((*reader)->reject(), &out.rejects_file);
    }
    if (*event != ReadEvent::kDocument) continue;
    CleanResult r = cleaner->Clean((*reader)->document().text, &scratch, &out.stats);
    if (!r.kept) continue;
    if (!dedup.Admit(HashContent(r.text))) {
      out.stats.RecordDuplicate(r.text.size());
      continue;
    }
    out.kept.emplace_back(r.text);
    out.kept_sequence.push_back((*reader)->document().sequence);
  }
  return out;
}

TEST(TextBadInputTest, EveryProblemIsCountedAndTheRestIsRead) {
  TempDir dir;
  std::string long_doc(5000, 'L');
  dir.Write("in/01_good.jsonl", "{\"text\":\"alpha\",\"source\":\"x\"}\n{\"text\":\"beta\"}\n");
  dir.Write("in/02_bom_crlf.jsonl", "\xEF\xBB\xBF{\"text\":\"gamma\"}\r\n{\"text\":\"delta\\r\\nline two\"}\r\n");
  dir.Write("in/03_bad.jsonl",
            "{\"text\": broken\n"              // bad_json
            "{\"title\":\"no text\"}\n"        // missing_field
            "{\"text\":7}\n"                   // not_a_string
            "{\"text\":\"   \\u0000\\t \"}\n"  // empty after cleaning
            "{\"text\":\"alpha\"}\n"           // duplicate of 01
            "{\"text\":\"" + long_doc + "\"}\n"  // too_long for the reader
            "{\"text\":\"caf\xE9\"}\n");       // invalid UTF-8, replaced
  // A PNG header read as JSONL: three "lines", none of them JSON.
  dir.Write("in/04_binary.jsonl", "\x89PNG\r\n\x1A\n\x00\x00\x00\x0D" "IHDR\x00\x01"s);
  dir.Write("in/05_nul.txt", "text with\0 NULs\0 inside\n"s);
  dir.Write("in/06_empty.jsonl", "");
  std::string gz_docs_text, zst_docs_text;
  for (int i = 0; i < 30000; ++i) {
    gz_docs_text += "{\"text\":\"gz doc " + std::to_string(i) + "\"}\n";
    zst_docs_text += "{\"text\":\"zst doc " + std::to_string(i) + "\"}\n";
  }
  std::string gz = testing::GzipCompress(gz_docs_text);
  dir.Write("in/07_truncated.jsonl.gz", gz.substr(0, gz.size() / 2));
  std::string zst = testing::ZstdCompress(zst_docs_text);
  dir.Write("in/08_truncated.jsonl.zst", zst.substr(0, zst.size() / 2));
  dir.Write("in/09_last.txt", "the end\n");

  ReaderOptions options;
  options.max_document_bytes = 1000;
  IngestOutcome out = Ingest({dir.path() + "/in"}, options);

  // The good documents, in file order, cleaned.
  ASSERT_GE(out.kept.size(), 8u);
  EXPECT_EQ(out.kept[0], "alpha");
  EXPECT_EQ(out.kept[1], "beta");
  EXPECT_EQ(out.kept[2], "gamma");
  EXPECT_EQ(out.kept[3], "delta\nline two");
  EXPECT_EQ(out.kept[4], "caf\xEF\xBF\xBD");
  EXPECT_EQ(out.kept[5], "text with NULs inside");
  EXPECT_EQ(out.kept.back(), "the end");
  // Both truncated archives delivered their complete documents, then errors.
  size_t gz_docs = 0, zst_docs = 0;
  for (const std::string& k : out.kept) {
    gz_docs += k.rfind("gz doc ", 0) == 0;
    zst_docs += k.rfind("zst doc ", 0) == 0;
  }
  EXPECT_GT(gz_docs, 0u);
  EXPECT_GT(zst_docs, 0u);
  EXPECT_LT(gz_docs + zst_docs, 60000u);
  ASSERT_EQ(out.file_errors.size(), 2u);
  EXPECT_NE(out.file_errors[0].message().find("07_truncated.jsonl.gz"), std::string::npos);
  EXPECT_NE(out.file_errors[1].message().find("08_truncated.jsonl.zst"), std::string::npos);
  for (const Status& s : out.file_errors) EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(out.files_completed, 7u);

  const CleaningStats& st = out.stats;
  EXPECT_EQ(st.dropped_for(DropReason::kBadJson), 4u);  // the broken line and the PNG's three
  EXPECT_EQ(st.dropped_for(DropReason::kMissingField), 1u);
  EXPECT_EQ(st.dropped_for(DropReason::kNotAString), 1u);
  EXPECT_EQ(st.dropped_for(DropReason::kEmpty), 1u);
  EXPECT_EQ(st.dropped_for(DropReason::kDuplicate), 1u);
  EXPECT_EQ(st.dropped_for(DropReason::kTooLong), 1u);
  EXPECT_EQ(st.dropped_for(DropReason::kInvalidUtf8), 0u);  // replaced, not rejected
  EXPECT_EQ(st.kept, out.kept.size());

  // The rejects file: one JSON object per reader reject, naming file, line and offset.
  simdjson::dom::parser parser;
  std::map<std::string, int> by_reason;
  size_t lines = 0;
  size_t start = 0;
  while (start < out.rejects_file.size()) {
    size_t nl = out.rejects_file.find('\n', start);
    ASSERT_NE(nl, std::string::npos);
    simdjson::dom::element e;
    ASSERT_EQ(parser.parse(out.rejects_file.substr(start, nl - start)).get(e), simdjson::SUCCESS);
    std::string_view file, reason, message;
    uint64_t line = 0, offset = 0;
    ASSERT_EQ(e["file"].get(file), simdjson::SUCCESS);
    ASSERT_EQ(e["reason"].get(reason), simdjson::SUCCESS);
    ASSERT_EQ(e["message"].get(message), simdjson::SUCCESS);
    ASSERT_EQ(e["line"].get(line), simdjson::SUCCESS);
    ASSERT_EQ(e["offset"].get(offset), simdjson::SUCCESS);
    EXPECT_GE(line, 1u);
    EXPECT_FALSE(message.empty());
    if (reason == "too_long") {
      EXPECT_NE(file.find("03_bad.jsonl"), std::string_view::npos);
      EXPECT_EQ(line, 6u);
      EXPECT_EQ(offset, 88u);
      EXPECT_NE(message.find("document of 5011 bytes"), std::string_view::npos) << message;
    }
    ++by_reason[std::string(reason)];
    ++lines;
    start = nl + 1;
  }
  EXPECT_EQ(lines, 7u);
  EXPECT_EQ(by_reason["bad_json"], 4);
  EXPECT_EQ(by_reason["missing_field"], 1);
  EXPECT_EQ(by_reason["not_a_string"], 1);
  EXPECT_EQ(by_reason["too_long"], 1);
}

TEST(TextBadInputTest, RejectPolicyNamesTheBadByte) {
  TempDir dir;
  dir.Write("u.jsonl", "{\"text\":\"ok\"}\n{\"text\":\"bad \xC0\xAF here\"}\n");
  ReaderOptions options;
  options.utf8 = Utf8Policy::kReject;
  IngestOutcome out = Ingest({dir.path() + "/u.jsonl"}, options);
  EXPECT_EQ(out.kept, (std::vector<std::string>{"ok"}));
  EXPECT_EQ(out.stats.dropped_for(DropReason::kInvalidUtf8), 1u);
  EXPECT_NE(out.rejects_file.find("\"offset\":27"), std::string::npos) << out.rejects_file;
  EXPECT_NE(out.rejects_file.find("\"reason\":\"invalid_utf8\""), std::string::npos);
}

TEST(TextBadInputTest, WholeInputProblemsStopBeforeReading) {
  TempDir dir;
  dir.Write("ok.jsonl", "{\"text\":\"x\"}\n");
  auto missing = SourceSet::Expand({dir.path() + "/ok.jsonl", dir.path() + "/missing.jsonl"});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_NE(missing.status().message().find("missing.jsonl"), std::string::npos);
  auto no_match = SourceSet::Expand({dir.path() + "/*.parquet"});
  ASSERT_FALSE(no_match.ok());
  EXPECT_TRUE(no_match.status().IsNotFound());
  std::string fifo = dir.Path("fifo.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto not_regular = SourceSet::Expand({fifo});
  ASSERT_FALSE(not_regular.ok());
  EXPECT_NE(not_regular.status().message().find("fifo.jsonl"), std::string::npos);
}

TEST(TextBadInputTest, DeduplicationKeepsTheFirstCopyInDocumentOrder) {
  TempDir dir;
  dir.Write("a.jsonl", "{\"text\":\"same\"}\n{\"text\":\"  same \"}\n{\"text\":\"other\"}\n");
  dir.Write("b.txt", "same\r\nother\nnew\n");
  IngestOutcome out = Ingest({dir.path()});
  EXPECT_EQ(out.kept, (std::vector<std::string>{"same", "other", "new"}));
  EXPECT_EQ(out.kept_sequence, (std::vector<uint64_t>{0, 2, 5}));
  EXPECT_EQ(out.stats.dropped_for(DropReason::kDuplicate), 3u);
}

}  // namespace
}  // namespace tokenfeed::text
