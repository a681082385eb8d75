// The token index of the embedded log (TOKENS, docs/log_format.md "Token
// index"): the topic writer keeps an entry per record, the cumulative count
// of stored token ids; a writer's open repairs the file to match the log
// (missing, torn, short, long, damaged); ReadTokenIndex answers from it with
// two reads per range, counts what the index lacks from the records, and
// reports damage. (A Kafka topic's index: kafka_index_chunk_test.cc, and the
// real-broker tests in python/tests/test_kafka_token_index.py.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "base/fault_injection_file_system.h"
#include "base/file_system.h"
#include "base/little_endian.h"
#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "tokenfeed/record.h"
#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"
#include "log/log.h"
#include "topic/token_index_file.h"
#include "topic/token_index_writer.h"

namespace tokenfeed::topic {
namespace {

namespace f = log::format;

constexpr uint32_t kPartitions = 3;

class TokenIndexTest : public ::testing::Test {
 protected:
  std::unique_ptr<TopicWriter> Open(FileSystem* fs = nullptr, bool sync_each_batch = true) {
    WriterConfig config;
    config.partitions = kPartitions;
    config.log_file_system = fs;
    if (!sync_each_batch) config.log.fsync = log::FsyncPolicy::kNone;
    auto w = OpenTopicWriter(uri_, config);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }

  // A token record of `ids` ids, or (ids < 0) bytes that are no record.
  static std::string Record(int ids, uint64_t seq) {
    if (ids < 0) return "not a token record " + std::to_string(seq);
    std::vector<uint32_t> v(static_cast<size_t>(ids));
    std::iota(v.begin(), v.end(), static_cast<uint32_t>(seq));
    if (ids > 0 && seq % 2 == 1) v[0] = 70000;  // 4-byte ids in some records
    record::RecordFields fields;
    fields.FileSource("corpus.jsonl", seq, seq * 10, seq);
    std::string out;
    EXPECT_TRUE(record::EncodeRecord(fields, v, &out).ok());
    return out;
  }

  // Commits `batches` batches of 1 to 9 records to every partition, the
  // partitions' open batches interleaved, with varying id counts (some
  // records hold no ids, some are not token records).
  void Write(TopicWriter& w, int batches) {
    for (int b = 0; b < batches; ++b) {
      for (uint32_t p = 0; p < kPartitions; ++p) {
        const int records = 1 + static_cast<int>((seq_ * 7 + p) % 9);
        for (int r = 0; r < records; ++r, ++seq_) {
          const int ids = seq_ % 11 == 5 ? -1 : static_cast<int>((seq_ * 13 + p) % 40);
          const std::string bytes = Record(ids, seq_);
          auto dest = w.Reserve(PartitionId(p), bytes.size());
          ASSERT_TRUE(dest.ok()) << dest.status().ToString();
          std::memcpy(dest->data(), bytes.data(), bytes.size());
          ids_[p].push_back(ids < 0 ? 0 : static_cast<uint64_t>(ids));
        }
      }
      for (uint32_t p = 0; p < kPartitions; ++p) ASSERT_TRUE(w.Commit(PartitionId(p)).ok());
    }
  }

  // Entry i of what TOKENS must hold.
  std::vector<uint64_t> Expected(uint32_t p) const {
    std::vector<uint64_t> sums;
    uint64_t total = 0;
    for (uint64_t n : ids_[p]) sums.push_back(total += n);
    return sums;
  }

  std::string TokensPath(uint32_t p) const {
    return JoinPath(dir_.path() + "/topics/t", f::PartitionDirName(PartitionId(p))) + "/TOKENS";
  }

  // The entries of TOKENS (after checking its header), or a failure.
  std::vector<uint64_t> Entries(uint32_t p) const {
    Result<std::string> bytes = ReadFileToString(FileSystem::Posix(), TokensPath(p));
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    if (!bytes.ok() || bytes->size() < f::kTokenIndexHeaderSize) return {};
    EXPECT_EQ(LoadLittleEndian<uint64_t>(bytes->data()), f::kTokenIndexMagic);
    EXPECT_EQ(bytes->compare(0, 8, "TFTOKENS"), 0);
    EXPECT_EQ(LoadLittleEndian<uint32_t>(bytes->data() + 8), 1u);
    EXPECT_EQ(LoadLittleEndian<uint32_t>(bytes->data() + 12), 0u);
    EXPECT_EQ((bytes->size() - f::kTokenIndexHeaderSize) % 8, 0u) << "no partial entry";
    std::vector<uint64_t> entries;
    for (size_t at = f::kTokenIndexHeaderSize; at + 8 <= bytes->size(); at += 8) {
      entries.push_back(LoadLittleEndian<uint64_t>(bytes->data() + at));
    }
    return entries;
  }

  // ReadTokenIndex at every offset of the partition agrees with the records.
  void ExpectReadsAgree(uint32_t p, uint64_t want_records_read) {
    const std::vector<uint64_t> sums = Expected(p);
    std::vector<Offset> offsets;
    for (uint64_t o = 0; o <= sums.size(); ++o) offsets.emplace_back(o);
    auto read = ReadTokenIndex(uri_, PartitionId(p), offsets);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_EQ(read->points.size(), offsets.size());
    for (uint64_t o = 0; o <= sums.size(); ++o) {
      EXPECT_EQ(read->points[o].records, o);
      EXPECT_EQ(read->points[o].tokens, o == 0 ? 0 : sums[o - 1]) << "partition " << p << " offset " << o;
    }
    EXPECT_EQ(read->records_read, want_records_read);
    EXPECT_EQ(read->bytes_read > 0, want_records_read > 0);
  }

  void Cut(uint32_t p, uint64_t size) {
    auto file = FileSystem::Posix()->OpenWritable(TokensPath(p), FileSystem::WriteMode::kAppend);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Truncate(size).ok());
  }
  void Add(uint32_t p, std::string_view bytes) {
    auto file = FileSystem::Posix()->OpenWritable(TokensPath(p), FileSystem::WriteMode::kAppend);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).ok());
  }
  // Overwrites 8 bytes of TOKENS at `position`.
  void Put64(uint32_t p, uint64_t position, uint64_t value) {
    Result<std::string> bytes = ReadFileToString(FileSystem::Posix(), TokensPath(p));
    ASSERT_TRUE(bytes.ok());
    StoreLittleEndian<uint64_t>(bytes->data() + position, value);
    ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), TokensPath(p), *bytes).ok());
  }
  static std::string Entry64(uint64_t v) {
    std::string s(8, '\0');
    StoreLittleEndian<uint64_t>(s.data(), v);
    return s;
  }

  ScopedTempDir dir_;
  std::string uri_ = "log:" + dir_.path() + "/topics/t";
  uint64_t seq_ = 0;
  std::vector<uint64_t> ids_[kPartitions];
  log::BatchBuilder last_batch_;
};

TEST_F(TokenIndexTest, TheWriterKeepsCumulativeIdsPerRecord) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    // Several records per batch, through Reserve and Commit.
    for (uint32_t p = 0; p < kPartitions; ++p) {
      for (int r = 0; r < 5; ++r, ++seq_) {
        const int ids = r == 2 ? -1 : 3 * r + static_cast<int>(p);
        const std::string bytes = Record(ids, seq_);
        auto dest = w->Reserve(PartitionId(p), bytes.size());
        ASSERT_TRUE(dest.ok());
        std::memcpy(dest->data(), bytes.data(), bytes.size());
        ids_[p].push_back(ids < 0 ? 0 : static_cast<uint64_t>(ids));
      }
      ASSERT_TRUE(w->Commit(PartitionId(p)).ok());
    }
    Write(*w, 6);
    ASSERT_TRUE(w->Close().ok());
    EXPECT_TRUE(w->RecoveryNotes().empty());
  }
  {
    auto w = Open();  // reopened: the index goes on where it was
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->RecoveryNotes().empty());
    Write(*w, 3);
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(Entries(p), Expected(p)) << "partition " << p;
    ExpectReadsAgree(p, 0);
    // A range is two entries apart: [a, b) from the points at a and b.
    const uint64_t end = ids_[p].size(), mid = end / 2;
    std::vector<Offset> offsets = {Offset(0), Offset(mid), Offset(mid), Offset(end)};
    auto read = ReadTokenIndex(uri_, PartitionId(p), offsets);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    const uint64_t first_half = std::accumulate(ids_[p].begin(), ids_[p].begin() + mid, uint64_t{0});
    const uint64_t all = std::accumulate(ids_[p].begin(), ids_[p].end(), uint64_t{0});
    EXPECT_EQ(read->points[0].tokens, 0u);
    EXPECT_EQ(read->points[1].tokens, first_half);
    EXPECT_EQ(read->points[2].tokens, first_half);
    EXPECT_EQ(read->points[3].tokens, all);
    EXPECT_EQ(read->points[3].records, end);
    EXPECT_EQ(read->records_read, 0u);
  }
  // A reader's coverage is the records the index holds entries for.
  for (uint32_t p = 0; p < kPartitions; ++p) {
    auto reader = OpenTokenIndexReader(uri_, PartitionId(p));
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    EXPECT_EQ((*reader)->covered(), ids_[p].size()) << "partition " << p;
  }
  EXPECT_EQ(OpenTokenIndexReader(uri_, PartitionId(kPartitions)).status().code(), StatusCode::kOutOfRange);
  // No index file: a reader that counts the records.
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(TokensPath(0)).ok());
  auto removed = OpenTokenIndexReader(uri_, PartitionId(0));
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ((*removed)->covered(), 0u);
  auto none = ReadTokenIndex(uri_, PartitionId(0), {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->points.empty());
}

// A reader opened once answers many reads from the partition as it was at
// its open; records appended later are a fresh reader's.
TEST_F(TokenIndexTest, AReaderKeepsThePartitionAsItWasAtItsOpen) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 4);
    ASSERT_TRUE(w->Close().ok());
  }
  const uint64_t end = ids_[0].size();
  const uint64_t before = std::accumulate(ids_[0].begin(), ids_[0].end(), uint64_t{0});
  auto reader = OpenTokenIndexReader(uri_, PartitionId(0));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 3);
    ASSERT_TRUE(w->Close().ok());
  }
  const uint64_t later = ids_[0].size();
  ASSERT_GT(later, end);
  for (int i = 0; i < 3; ++i) {  // the same answer every time
    auto read = (*reader)->Read(std::vector<Offset>{Offset(0), Offset(end / 2), Offset(end)});
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->points[2].tokens, before);
    EXPECT_EQ(read->points[1].tokens,
              std::accumulate(ids_[0].begin(), ids_[0].begin() + static_cast<long>(end / 2), uint64_t{0}));
    EXPECT_EQ(read->records_read, 0u);
  }
  EXPECT_EQ((*reader)->Read(std::vector<Offset>{Offset(later)}).status().code(), StatusCode::kOutOfRange);
  auto fresh = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(later)});
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->points[0].tokens, std::accumulate(ids_[0].begin(), ids_[0].end(), uint64_t{0}));
  EXPECT_EQ(OpenTokenIndexReader(uri_, PartitionId(kPartitions)).status().code(), StatusCode::kOutOfRange);
}

TEST_F(TokenIndexTest, AWriterOpenRepairsTheIndexToMatchTheLog) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 8);
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) ASSERT_GE(ids_[p].size(), 20u);
  const uint64_t entries0 = ids_[0].size();
  // Partition 0: removed (a topic written before the index existed).
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(TokensPath(0)).ok());
  // Partition 1: shorter by 7 records, then a torn half entry.
  Cut(1, f::kTokenIndexHeaderSize + (ids_[1].size() - 7) * 8);
  Add(1, "\x01\x02\x03");
  // Partition 2: longer than the log (its tail was cut), with a torn entry.
  Add(2, Entry64(1u << 30) + Entry64(1u << 31) + "\x05");
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->RecoveryNotes().empty()) << "routine repairs lose nothing and need no note";
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(Entries(p), Expected(p)) << "partition " << p;
    ExpectReadsAgree(p, 0);
  }
  EXPECT_EQ(Entries(0).size(), entries0);

  // Damage: a bad magic (0), a decreasing entry (1), a header cut short (2).
  Put64(0, 0, 0x6b6361626d6f7267ull);
  Put64(1, f::kTokenIndexHeaderSize + 8 * 10, 0);
  Cut(2, 5);
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    const std::vector<std::string> notes = w->RecoveryNotes();
    ASSERT_EQ(notes.size(), 2u) << "a header cut short is a crash while the file was made, not damage";
    EXPECT_NE(notes[0].find("partition 0"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find(TokensPath(0)), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("magic"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("rebuilt"), std::string::npos) << notes[0];
    EXPECT_NE(notes[1].find("partition 1"), std::string::npos) << notes[1];
    EXPECT_NE(notes[1].find("entry 10"), std::string::npos) << notes[1];
    EXPECT_NE(notes[1].find("rebuilt"), std::string::npos) << notes[1];
    Write(*w, 2);  // and it goes on from the rebuilt entries
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(Entries(p), Expected(p)) << "partition " << p;
    ExpectReadsAgree(p, 0);
    EXPECT_FALSE(FileSystem::Posix()->Stat(TokensPath(p) + ".rebuild").ok()) << "no temporary file stays behind";
  }
}

TEST_F(TokenIndexTest, AWriterRefusesANewerIndexAndALink) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 2);
    ASSERT_TRUE(w->Close().ok());
  }
  const std::string path = TokensPath(0);
  Result<std::string> before = ReadFileToString(FileSystem::Posix(), path);
  ASSERT_TRUE(before.ok());
  Put64(0, 8, 2);  // version 2, reserved 0
  WriterConfig config;
  config.partitions = kPartitions;
  auto newer = OpenTopicWriter(uri_, config);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported) << newer.status().ToString();
  EXPECT_NE(newer.status().message().find(path), std::string::npos) << newer.status().ToString();
  EXPECT_NE(newer.status().message().find("upgrade"), std::string::npos) << newer.status().ToString();

  // A link in its place is never followed, neither written nor read through.
  const std::string elsewhere = dir_.Join("elsewhere");
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), elsewhere, *before).ok());
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(path).ok());
  ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
  auto linked = OpenTopicWriter(uri_, config);
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.status().code(), StatusCode::kInvalidArgument) << linked.status().ToString();
  EXPECT_NE(linked.status().message().find(path), std::string::npos) << linked.status().ToString();
  auto read = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(1)});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_EQ(ReadFileToString(FileSystem::Posix(), elsewhere).value(), *before);
}

TEST_F(TokenIndexTest, AReaderCountsWhatTheIndexLacksFromTheRecords) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 6);
    ASSERT_TRUE(w->Close().ok());
  }
  // No index at all (no writer reopened): every record is read, nothing is written.
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(TokensPath(0)).ok());
  ExpectReadsAgree(0, ids_[0].size());
  EXPECT_TRUE(FileSystem::Posix()->Stat(TokensPath(0)).status().IsNotFound()) << "readers never write the index";
  // Shorter by 4 records and a torn entry (a writer that crashed, or is
  // appending now): only those 4 are read.
  Cut(1, f::kTokenIndexHeaderSize + (ids_[1].size() - 4) * 8 + 5);
  ExpectReadsAgree(1, 4);
  // A header cut short: no entries.
  Cut(2, 9);
  ExpectReadsAgree(2, ids_[2].size());
  // Offsets below the index's end only: nothing is read.
  auto covered = ReadTokenIndex(uri_, PartitionId(1), std::vector<Offset>{Offset(1), Offset(ids_[1].size() - 4)});
  ASSERT_TRUE(covered.ok()) << covered.status().ToString();
  EXPECT_EQ(covered->records_read, 0u);
  EXPECT_EQ(covered->points[0].tokens, ids_[1][0]);
}

TEST_F(TokenIndexTest, AReaderReportsADamagedOrNewerIndexAndBadOffsets) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 6);
    ASSERT_TRUE(w->Close().ok());
  }
  const uint64_t end = ids_[0].size();
  const std::vector<Offset> all = {Offset(0), Offset(3), Offset(end)};
  // Entry 2 (offsets [0, 3)) made larger than every later one. Offsets close
  // together are answered from one read of the entries between them, all
  // checked: the first smaller entry, 3, is named with entry 2.
  Put64(0, f::kTokenIndexHeaderSize + 8 * 2, uint64_t{1} << 40);
  auto decreasing = ReadTokenIndex(uri_, PartitionId(0), all);
  ASSERT_FALSE(decreasing.ok());
  EXPECT_EQ(decreasing.status().code(), StatusCode::kCorruption) << decreasing.status().ToString();
  EXPECT_NE(decreasing.status().message().find(TokensPath(0)), std::string::npos) << decreasing.status().ToString();
  EXPECT_NE(decreasing.status().message().find("entry 3 "), std::string::npos) << decreasing.status().ToString();
  EXPECT_NE(decreasing.status().message().find("entry 2 "), std::string::npos) << decreasing.status().ToString();
  // Asked one at a time, the entries read are the ones asked: entry 2 (at
  // offset 3) against the last.
  auto at3 = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(3)});
  ASSERT_TRUE(at3.ok()) << at3.status().ToString();
  EXPECT_EQ(at3->points[0].tokens, uint64_t{1} << 40);

  Put64(1, 8, 7);  // version 7
  auto newer = ReadTokenIndex(uri_, PartitionId(1), all);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported) << newer.status().ToString();
  EXPECT_NE(newer.status().message().find(TokensPath(1)), std::string::npos) << newer.status().ToString();

  Put64(2, 0, 0);  // no magic
  auto garbage = ReadTokenIndex(uri_, PartitionId(2), all);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kCorruption) << garbage.status().ToString();
  EXPECT_NE(garbage.status().message().find(TokensPath(2)), std::string::npos) << garbage.status().ToString();

  // Out of order, past the end, a partition the topic lacks, not a topic.
  auto backwards = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(3), Offset(2)});
  EXPECT_EQ(backwards.status().code(), StatusCode::kInvalidArgument) << backwards.status().ToString();
  auto past = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(end + 1)});
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange) << past.status().ToString();
  for (const std::string& part : {uri_, std::string("partition 0"), "offset " + std::to_string(end + 1),
                                   "[0, " + std::to_string(end) + ")"}) {
    EXPECT_NE(past.status().message().find(part), std::string::npos) << part << ": " << past.status().ToString();
  }
  auto no_partition = ReadTokenIndex(uri_, PartitionId(kPartitions), std::vector<Offset>{Offset(0)});
  EXPECT_EQ(no_partition.status().code(), StatusCode::kOutOfRange) << no_partition.status().ToString();
  EXPECT_FALSE(ReadTokenIndex("nonsense", PartitionId(0), all).ok());
}

TEST_F(TokenIndexTest, AFailedIndexWriteNeverFailsACommit) {
  FaultInjectionFileSystem fs;
  {
    auto w = Open(&fs);
    ASSERT_NE(w, nullptr);
    Write(*w, 2);
    fs.InjectFault({.op = FaultInjectionFileSystem::Op::kAppend, .path_contains = "partition-00001/TOKENS",
                    .error = 28, .skip = 0, .times = 1, .partial_bytes = 13});
    Write(*w, 3);  // every Commit succeeds; partition 1's index stops
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(Entries(0), Expected(0));
  ExpectReadsAgree(0, 0);
  // Partition 1's index ends in the torn write (one entry and 5 bytes of
  // the next): readers count the rest from the records.
  auto size = FileSystem::Posix()->Stat(TokensPath(1));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ((size->size - f::kTokenIndexHeaderSize) % 8, 5u);
  const uint64_t indexed = (size->size - f::kTokenIndexHeaderSize) / 8;
  ASSERT_LT(indexed, ids_[1].size());
  ExpectReadsAgree(1, ids_[1].size() - indexed);
  {
    auto w = Open(&fs);  // and the next open catches up
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(Entries(1), Expected(1));
  ExpectReadsAgree(1, 0);
}

TEST_F(TokenIndexTest, APowerCutLosesIndexEntriesThatTheNextOpenRestores) {
  FaultInjectionFileSystem fs;
  {
    auto w = Open(&fs);  // each batch synced (the default), the index never
    ASSERT_NE(w, nullptr);
    Write(*w, 5);
    ASSERT_TRUE(fs.SimulatePowerCut().ok());
  }
  {
    auto w = Open(&fs);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(Entries(p), Expected(p)) << "partition " << p;
    ExpectReadsAgree(p, 0);
  }
}

TEST_F(TokenIndexTest, AWriterOpenChecksOnlyTheTailOfTheIndex) {
  {
    auto w = Open(nullptr, /*sync_each_batch=*/false);  // thousands of batches
    ASSERT_NE(w, nullptr);
    Write(*w, 1500);
    ASSERT_TRUE(w->Close().ok());
  }
  constexpr uint64_t kTail = TokenIndexWriter::kCheckedTailEntries;
  for (uint32_t p = 0; p < 2; ++p) ASSERT_GT(ids_[p].size(), kTail + 100) << "partition " << p;
  ASSERT_GT(Expected(0)[4], 0u);
  // Partition 0: entry 10 decreases, far before the checked tail. Partition
  // 1: a decrease 5 entries before the end, within it.
  Put64(0, f::kTokenIndexHeaderSize + 8 * 10, 0);
  const uint64_t near_end = ids_[1].size() - 5;
  ASSERT_GT(Expected(1)[near_end - 1], 0u);
  Put64(1, f::kTokenIndexHeaderSize + 8 * near_end, 0);
  std::vector<uint64_t> damaged = Expected(0);
  damaged[10] = 0;
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    const std::vector<std::string> notes = w->RecoveryNotes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("partition 1"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("entry " + std::to_string(near_end)), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("rebuilt"), std::string::npos) << notes[0];
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(Entries(0), damaged) << "the damage far from the tail is not looked for at open";
  EXPECT_EQ(Entries(1), Expected(1));
  ExpectReadsAgree(1, 0);
  // A reader asking across the damage reports it; one that does not, does not.
  auto across = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(5), Offset(11)});
  ASSERT_FALSE(across.ok());
  EXPECT_EQ(across.status().code(), StatusCode::kCorruption) << across.status().ToString();
  EXPECT_NE(across.status().message().find(TokensPath(0)), std::string::npos) << across.status().ToString();
  EXPECT_NE(across.status().message().find("entry 10"), std::string::npos) << across.status().ToString();
  const uint64_t end = ids_[0].size();
  auto beyond = ReadTokenIndex(uri_, PartitionId(0), std::vector<Offset>{Offset(20), Offset(end)});
  ASSERT_TRUE(beyond.ok()) << beyond.status().ToString();
  EXPECT_EQ(beyond->points[1].tokens - beyond->points[0].tokens, Expected(0)[end - 1] - Expected(0)[19]);
  // Removed while no writer runs, it is rebuilt whole at the next open.
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(TokensPath(0)).ok());
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(Entries(0), Expected(0));
}

TEST_F(TokenIndexTest, AnIndexThatCannotBeRepairedLeavesTheWriterUsable) {
  FaultInjectionFileSystem fs;
  {
    auto w = Open(&fs);
    ASSERT_NE(w, nullptr);
    Write(*w, 4);
    ASSERT_TRUE(w->Close().ok());
  }
  // Partition 0: damaged, and its rebuild fails (a full disk). Partition 1:
  // 6 entries short, and adding them fails.
  Put64(0, 0, 0x6b6361626d6f7267ull);
  Cut(1, f::kTokenIndexHeaderSize + (ids_[1].size() - 6) * 8);
  fs.InjectFault({.op = FaultInjectionFileSystem::Op::kAppend, .path_contains = "partition-00000/TOKENS.rebuild",
                  .error = 28, .skip = 0, .times = 0, .partial_bytes = 0});
  fs.InjectFault({.op = FaultInjectionFileSystem::Op::kAppend, .path_contains = "partition-00001/TOKENS",
                  .error = 5, .skip = 0, .times = 0, .partial_bytes = 0});
  {
    auto w = Open(&fs);
    ASSERT_NE(w, nullptr) << "the index is derived: failing to repair it does not stop the writer";
    const std::vector<std::string> notes = w->RecoveryNotes();
    ASSERT_EQ(notes.size(), 2u);
    for (uint32_t p = 0; p < 2; ++p) {
      EXPECT_NE(notes[p].find("partition " + std::to_string(p)), std::string::npos) << notes[p];
      EXPECT_NE(notes[p].find(TokensPath(p)), std::string::npos) << notes[p];
      EXPECT_NE(notes[p].find("index is off"), std::string::npos) << notes[p];
    }
    EXPECT_NE(notes[0].find("magic"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("removed"), std::string::npos) << notes[0];
    Write(*w, 3);  // every commit succeeds
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_TRUE(FileSystem::Posix()->Stat(TokensPath(0)).status().IsNotFound()) << "the damaged file is gone";
  EXPECT_FALSE(FileSystem::Posix()->Stat(TokensPath(0) + ".rebuild").ok());
  ExpectReadsAgree(0, ids_[0].size());
  ExpectReadsAgree(1, ids_[1].size() - (Entries(1).size()));
  EXPECT_LT(Entries(1).size(), ids_[1].size());
  EXPECT_EQ(Entries(2), Expected(2));
  fs.ClearFaults();
  {
    auto w = Open(&fs);  // the next open repairs both
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->RecoveryNotes().empty());
    ASSERT_TRUE(w->Close().ok());
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(Entries(p), Expected(p)) << "partition " << p;
    ExpectReadsAgree(p, 0);
  }
}

TEST_F(TokenIndexTest, TheIndexStopsWhenItDoesNotCoverTheOffsetsBeforeABatch) {
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    Write(*w, 2);
    ASSERT_TRUE(w->Close().ok());
  }
  auto topic = log::TopicDirectory::Open(uri_);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  auto writer = (*topic)->OpenWriter(PartitionId(0));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::string note;
  auto index = TokenIndexWriter::Open(topic->get(), PartitionId(0), (*writer)->end_offset(), &note);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE(note.empty()) << note;
  const uint64_t indexed = ids_[0].size();
  auto append = [&](int ids) -> log::AppendResult {
    log::BatchBuilder batch;
    batch.Add(Record(ids, seq_++));
    ids_[0].push_back(static_cast<uint64_t>(ids));
    auto appended = (*writer)->Append(&batch);
    EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    if (appended.ok()) last_batch_ = std::move(batch);
    return appended.ok() ? *appended : log::AppendResult{};
  };
  const log::AppendResult first = append(4);
  ASSERT_TRUE((*index)->Append(last_batch_, first.base_offset).ok());
  append(6);  // its entries never reach the index
  const log::AppendResult third = append(8);
  Status guard = (*index)->Append(last_batch_, third.base_offset);
  EXPECT_FALSE(guard.ok());
  EXPECT_NE(guard.message().find(TokensPath(0)), std::string::npos) << guard.ToString();
  EXPECT_NE(guard.message().find("[0, " + std::to_string(indexed + 1) + ")"), std::string::npos) << guard.ToString();
  EXPECT_FALSE((*index)->active());
  EXPECT_TRUE((*index)->Append(last_batch_, Offset(third.base_offset.value() + 1)).ok()) << "said once";
  (*index)->Close();
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(Entries(0).size(), indexed + 1) << "nothing was written out of line";
  ExpectReadsAgree(0, 2);
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(Entries(0), Expected(0));
}

TEST(TokenIndexTransportTest, BothTransportsKeepOneAndAnUnreachableBrokerIsNamed) {
  EXPECT_TRUE(HasTokenIndex("log:/data/t"));
  EXPECT_FALSE(HasTokenIndex("not a topic"));
  // The build is Kafka's: a log topic's TOKENS is its writer's.
  auto built = BuildKafkaTokenIndex("log:/data/t");
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kUnsupported) << built.status().ToString();
  EXPECT_NE(built.status().message().find("kept by its writer"), std::string::npos) << built.status().ToString();
  TopicConfig config;
  config.kafka_timeout = std::chrono::milliseconds(1500);
  auto read = ReadTokenIndex("kafka://127.0.0.1:1/t", PartitionId(0), std::vector<Offset>{Offset(0)}, config);
  ASSERT_FALSE(read.ok());
#ifdef TOKENFEED_HAS_KAFKA
  // Kafka keeps its index in a companion topic (kafka_token_index.h; the
  // real-broker tests are python/tests/test_kafka_token_index.py).
  EXPECT_TRUE(HasTokenIndex("kafka://127.0.0.1:1/t"));
  EXPECT_NE(read.status().message().find("127.0.0.1:1"), std::string::npos) << read.status().ToString();
#else
  EXPECT_FALSE(HasTokenIndex("kafka://127.0.0.1:1/t"));
  EXPECT_EQ(read.status().code(), StatusCode::kUnsupported) << read.status().ToString();
#endif
}

TEST(RecordTokenCountTest, CountsTheIdsOfATokenRecordAndNothingElse) {
  record::RecordFields fields;
  fields.FileSource("f", 1, 0, 0);
  std::string record;
  const std::vector<uint32_t> ids = {1, 2, 3, 100000};
  ASSERT_TRUE(record::EncodeRecord(fields, ids, &record).ok());
  auto bytes = [](const std::string& s) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  EXPECT_EQ(RecordTokenCount(bytes(record)), 4u);
  EXPECT_EQ(RecordTokenCount(bytes(record.substr(0, record.size() - 4))), 0u);
  EXPECT_EQ(RecordTokenCount(bytes("")), 0u);
  EXPECT_EQ(RecordTokenCount(bytes("plain text")), 0u);
}

}  // namespace
}  // namespace tokenfeed::topic
