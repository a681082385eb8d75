// The randomized crash test of the embedded log, in the manner of RocksDB's
// db_crash_test: for a bounded number of rounds, a writer appends numbered
// records with a random fsync policy and batch sizes, and is then
//  * killed (SIGKILL of a child process, log_crash_writer) at a random
//    moment, or
//  * cut off by a simulated power cut (FaultInjectionFileSystem) at a random
//    point, losing unsynced bytes in one of four ways: all, a random prefix,
//    or written back out of order leaving holes (512-byte or 4 KiB blocks),
//    sometimes right after an injected write or fsync failure, sometimes in
//    the middle of recovery itself;
// and the partition is reopened and checked against the expected state: no
// acknowledged record is lost (acknowledged as durable, for a power cut; any
// acknowledged, for a kill), none is doubled, offsets are dense, and nothing
// that was not written (beyond the one batch in flight) appears as valid.
// Kill rounds sometimes also flip a bit in a synced batch of the active
// segment: recovery must refuse it as damage, and discarding it must keep
// the bytes beside the segment.
//
// Short by default (CI). A long run on demand:
//   TOKENFEED_CRASH_ROUNDS=2000 TOKENFEED_CRASH_SEED=7 log_random_crash_test
// (rounds per test; the seed changes every random choice). Each test prints
// its figures on one "[ figures ]" line; docs/crash_testing.md records runs.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "child_process.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using std::chrono::milliseconds;
using testing::FillTestBatch;
using testing::TestRecordNumber;

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

uint64_t Seed() { return EnvNumber("TOKENFEED_CRASH_SEED", 20261203); }

// Each check reads the whole partition, so a long run starts a new topic
// every this many rounds instead of growing one without end.
constexpr uint64_t kRoundsPerTopic = 50;

// Reads the whole partition: every record must be record n at offset n.
// Returns the number of records, or fails the test.
uint64_t VerifyAll(TopicDirectory* topic, size_t max_extra) {
  auto r = topic->OpenReader(PartitionId(0));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  uint64_t n = 0;
  for (;;) {
    auto b = (*r)->Read();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok() || b->empty()) return n;
    for (LogRecord rec : *b) {
      if (rec.offset != Offset(n) || TestRecordNumber(rec.as_string_view(), max_extra) != n) {
        ADD_FAILURE() << "record at offset " << rec.offset.value() << " is not record " << n
                      << " (lost, doubled or never written)";
        return n;
      }
      ++n;
    }
  }
}

FsyncPolicy RandomPolicy(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0: return FsyncPolicy::kEachBatch;
    case 1: return FsyncPolicy::kInterval;
    default: return FsyncPolicy::kNone;
  }
}

TEST(LogRandomCrashTest, PowerCutsAtRandomPoints) {
  const uint64_t rounds = EnvNumber("TOKENFEED_CRASH_ROUNDS", 120);
  std::mt19937_64 rng(Seed());
  ScopedTempDir dir;
  FaultInjectionFileSystem fs;
  TopicOptions topic_options;
  topic_options.segment_bytes = 16 << 10;  // rolls every few batches
  topic_options.index_interval_bytes = 1024;
  std::string uri;
  uint64_t durable_end = 0;  // every record below was acknowledged as durable
  uint64_t attempted_end = 0;  // no record at or above was ever written
  uint64_t cuts[4] = {}, torn = 0, write_faults = 0, sync_faults = 0, recovery_cuts = 0, records = 0;
  uint64_t previous_end = 0;
  for (uint64_t round = 0; round < rounds; ++round) {
    SCOPED_TRACE("power-cut round " + std::to_string(round) + ", seed " + std::to_string(Seed()));
    if (round % kRoundsPerTopic == 0) {
      uri = "log:" + dir.Join("pc" + std::to_string(round / kRoundsPerTopic));
      ASSERT_TRUE(TopicDirectory::Create(uri, topic_options, &fs).ok());
      durable_end = attempted_end = previous_end = 0;
    }
    auto topic = TopicDirectory::Open(uri, &fs);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    WriterOptions options;
    options.fsync = RandomPolicy(rng);
    options.fsync_interval_ms = 1000000;
    options.fsync_interval_bytes = 1 + rng() % (8 << 10);
    auto w = (*topic)->OpenWriter(PartitionId(0), options);
    ASSERT_TRUE(w.ok()) << "recovery refused after a power cut (a torn tail taken for damage?): "
                        << w.status().ToString();
    PartitionWriter& writer = **w;
    torn += writer.recovery().truncated_bytes > 0;
    const uint64_t end = writer.end_offset().value();
    ASSERT_GE(end, durable_end) << "records acknowledged as durable were lost: " << writer.recovery().ToString();
    ASSERT_LE(end, attempted_end) << "records that were never written appear: " << writer.recovery().ToString();
    ASSERT_EQ(VerifyAll(topic->get(), 61), end);
    auto d = (*topic)->Describe();
    ASSERT_TRUE(d.ok());
    ASSERT_EQ(d->partitions[0].end_offset, Offset(end));
    records += end - previous_end;
    previous_end = end;
    // The writer's open synced what recovery kept.
    durable_end = attempted_end = end;

    const int batches = static_cast<int>(rng() % 30);
    const int fault_at = rng() % 4 == 0 ? static_cast<int>(rng() % (batches + 1)) : -1;
    BatchBuilder b;
    for (int i = 0; i < batches; ++i) {
      const uint64_t first = writer.end_offset().value();
      FillTestBatch(&b, first, 1 + static_cast<uint32_t>(rng() % 80));
      if (i == fault_at) {
        FaultInjectionFileSystem::Fault fault;
        fault.path_contains = ".seg";
        if (rng() % 2 == 0) {
          fault.op = FaultInjectionFileSystem::Op::kAppend;
          fault.partial_bytes = rng() % b.size_bytes();
          ++write_faults;
        } else {
          fault.op = FaultInjectionFileSystem::Op::kSync;
          ++sync_faults;
        }
        fs.InjectFault(fault);
      }
      attempted_end = std::max(attempted_end, first + b.record_count());
      auto r = writer.Append(&b);
      fs.ClearFaults();
      if (!r.ok()) break;  // a failed write is cut back; a failed sync stops the writer: cut the power now
      if (r->durable) durable_end = r->end_offset().value();
      if (rng() % 8 == 0 && writer.Sync().ok()) durable_end = writer.end_offset().value();
    }
    const int mode = static_cast<int>(rng() % 4);
    ++cuts[mode];
    FaultInjectionFileSystem::PowerCutOptions cut;
    cut.keep_random_unsynced_prefix = mode >= 1;
    cut.reorder_write_back = mode >= 2;
    cut.block_bytes = mode == 2 ? 512 : 4096;
    cut.seed = rng();
    ASSERT_TRUE(fs.SimulatePowerCut(cut).ok());

    // Sometimes the power fails again while recovery cuts the tail.
    if (rng() % 8 == 0) {
      FaultInjectionFileSystem::Fault fault;
      fault.op = rng() % 2 == 0 ? FaultInjectionFileSystem::Op::kTruncate : FaultInjectionFileSystem::Op::kSync;
      fs.InjectFault(fault);
      auto t = TopicDirectory::Open(uri, &fs);
      ASSERT_TRUE(t.ok());
      Status failed = (*t)->OpenWriter(PartitionId(0), options).status();
      recovery_cuts += !failed.ok();
      fs.ClearFaults();
      cut.seed = rng();
      ASSERT_TRUE(fs.SimulatePowerCut(cut).ok());
    }
  }
  std::printf("[ figures ] power cuts: %" PRIu64 " rounds (seed %" PRIu64 "): %" PRIu64 " dropping every unsynced byte, %"
              PRIu64 " keeping a prefix, %" PRIu64 " with 512-byte holes, %" PRIu64 " with 4 KiB holes; %" PRIu64
              " injected write failures, %" PRIu64 " injected fsync failures, %" PRIu64
              " cuts during recovery; %" PRIu64 " torn tails cut; %" PRIu64 " records written; findings: %d\n",
              rounds, Seed(), cuts[0], cuts[1], cuts[2], cuts[3], write_faults, sync_faults, recovery_cuts, torn, records,
              ::testing::Test::HasFailure() ? 1 : 0);
}

// Flips one bit in the records of a random batch of the active (last)
// segment that ends at or before `synced_position`; returns the batch's
// base offset, or nullopt when there is none.
std::optional<uint64_t> FlipBitInSyncedBatch(const std::string& pdir, std::mt19937_64& rng) {
  auto names = FileSystem::Posix()->ListDir(pdir);
  std::optional<Offset> last;
  for (const std::string& n : *names) {
    if (auto base = format::ParseSegmentFileName(n)) last = *base;
  }
  const std::string path = pdir + "/" + format::SegmentFileName(*last);
  std::string bytes = *ReadFileToString(FileSystem::Posix(), path);
  std::vector<std::pair<uint64_t, uint64_t>> batches;  // position, base offset
  for (uint64_t pos = format::kSegmentHeaderSize; pos + format::kBatchHeaderSize <= bytes.size();) {
    format::BatchHeader h;
    if (!format::DecodeBatchHeader(reinterpret_cast<const uint8_t*>(bytes.data() + pos), &h).empty()) break;
    batches.push_back({pos, h.base_offset.value()});
    pos += h.batch_length;
  }
  if (batches.empty()) return std::nullopt;
  const auto [pos, base] = batches[rng() % batches.size()];
  uint32_t len;
  std::memcpy(&len, bytes.data() + pos + 8, 4);
  const uint64_t at = pos + format::kBatchHeaderSize + rng() % (len - format::kBatchHeaderSize);
  bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
  auto f = FileSystem::Posix()->OpenWritable(path, FileSystem::WriteMode::kAppend);
  EXPECT_TRUE(f.ok());
  // Same file, same size: rewritten from the start.
  EXPECT_TRUE((*f)->Truncate(0).ok());
  EXPECT_TRUE((*f)->Append({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).ok());
  EXPECT_TRUE((*f)->Sync().ok());
  return base;
}

TEST(LogRandomCrashTest, KillsAtRandomMoments) {
  const uint64_t rounds = EnvNumber("TOKENFEED_CRASH_ROUNDS", 40);
  constexpr size_t kMaxExtra = 300;
  std::mt19937_64 rng(Seed() + 1);
  ScopedTempDir dir;
  TopicOptions topic_options;
  topic_options.segment_bytes = 256 << 10;
  topic_options.index_interval_bytes = 8 << 10;
  std::string uri, pdir;
  std::unique_ptr<TopicDirectory> topic;
  const char* policies[] = {"each-batch", "interval", "none"};
  uint64_t acked = 0, kills = 0, torn = 0, flips = 0, refused = 0, records = 0, previous_end = 0;
  for (uint64_t round = 0; round < rounds; ++round) {
    SCOPED_TRACE("kill round " + std::to_string(round) + ", seed " + std::to_string(Seed()));
    if (round % kRoundsPerTopic == 0) {
      const std::string name = "kill" + std::to_string(round / kRoundsPerTopic);
      uri = "log:" + dir.Join(name);
      pdir = dir.Join(name + "/partition-00000");
      auto created = TopicDirectory::Create(uri, topic_options);
      ASSERT_TRUE(created.ok());
      topic = std::move(created).value();
      acked = previous_end = 0;
    }
    const std::string policy = policies[rng() % 3];
    // Without fsync the writer spends its time in write(): batches of up to
    // ~1 MB there, so that kills land inside a write and tear a batch.
    const uint32_t per_batch =
        policy == "none" ? 1000 + static_cast<uint32_t>(rng() % 3000) : 1 + static_cast<uint32_t>(rng() % 400);
    testing::ChildProcess child;
    ASSERT_TRUE(child.Start(LOG_CRASH_WRITER, {uri, "0", policy, std::to_string(per_batch), std::to_string(kMaxExtra),
                                               "{fd}", "100000"}));
    // Killed at a random moment: in a third of the rounds any time from its
    // start (often inside recovery), else while it appends.
    if (rng() % 3 != 0) {
      std::optional<std::string> started = child.ReadLine(milliseconds(20000));
      ASSERT_TRUE(started && started->rfind("R ", 0) == 0) << started.value_or("(no output)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    child.Kill();
    child.Wait();
    ++kills;
    while (std::optional<std::string> line = child.ReadLine(milliseconds(2000))) {
      if (line->rfind("A ", 0) == 0) acked = std::max<uint64_t>(acked, std::stoull(line->substr(2)));
      ASSERT_NE(line->rfind("E ", 0), 0u) << *line;
    }
    auto w = topic->OpenWriter(PartitionId(0));
    ASSERT_TRUE(w.ok()) << "recovery refused after a kill: " << w.status().ToString();
    const uint64_t end = (*w)->end_offset().value();
    torn += (*w)->recovery().truncated_bytes > 0;
    ASSERT_GE(end, acked) << "acknowledged records were lost: " << (*w)->recovery().ToString();
    ASSERT_LE(end, acked + per_batch) << "more than the batch in flight appeared";
    ASSERT_EQ(VerifyAll(topic.get(), kMaxExtra), end);
    ASSERT_TRUE((*w)->Close().ok());
    records += end - previous_end;
    acked = previous_end = end;

    // Sometimes a bit flips in a synced batch (the writer's Close synced all).
    if (end > 0 && rng() % 3 == 0) {
      std::optional<uint64_t> damaged = FlipBitInSyncedBatch(pdir, rng);
      if (!damaged) continue;
      ++flips;
      auto again = topic->OpenWriter(PartitionId(0));
      ASSERT_FALSE(again.ok()) << "damage to synced bytes was cut as a torn tail: " << (*again)->recovery().ToString();
      ASSERT_TRUE(again.status().IsCorruption()) << again.status().ToString();
      ++refused;
      WriterOptions discard;
      discard.discard_after_damage = true;
      auto d = topic->OpenWriter(PartitionId(0), discard);
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      ASSERT_EQ((*d)->end_offset().value(), *damaged);
      ASSERT_FALSE((*d)->recovery().quarantined_file.empty());
      ASSERT_TRUE(FileSystem::Posix()->Stat((*d)->recovery().quarantined_file).ok());
      ASSERT_TRUE(FileSystem::Posix()->RemoveFile((*d)->recovery().quarantined_file).ok());
      ASSERT_TRUE((*d)->Close().ok());
      acked = previous_end = *damaged;  // the user chose to give those records up
    }
  }
  std::printf("[ figures ] kills: %" PRIu64 " rounds (seed %" PRIu64 "), %" PRIu64 " SIGKILLs, %" PRIu64
              " torn tails cut, %" PRIu64 " bits flipped in synced batches and %" PRIu64
              " refused as damage; %" PRIu64 " records written; findings: %d\n",
              rounds, Seed(), kills, torn, flips, refused, records, ::testing::Test::HasFailure() ? 1 : 0);
}

}  // namespace
}  // namespace tokenfeed::log
