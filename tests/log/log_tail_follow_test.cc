// Readers following the tail while a writer appends in another thread: each
// must see every record exactly once, in order, across segment rolls, and
// never a part of a batch.
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using std::chrono::milliseconds;
using testing::FillTestBatch;
using testing::TestRecordNumber;

constexpr uint64_t kTotal = 30000;

// Reads from `start` until kTotal records are seen (or 60 s pass).
std::string Follow(TopicDirectory* topic, uint64_t start, uint64_t* seen) {
  auto r = topic->OpenReader(PartitionId(0));
  if (!r.ok()) return r.status().ToString();
  if (Status s = (*r)->Seek(Offset(start)); !s.ok()) return s.ToString();
  uint64_t next = start;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (next < kTotal) {
    if (std::chrono::steady_clock::now() > deadline) return "timed out at offset " + std::to_string(next);
    auto b = (*r)->Read(milliseconds(50));
    if (!b.ok()) return b.status().ToString();
    for (LogRecord rec : *b) {
      if (rec.offset != Offset(next) || TestRecordNumber(rec.as_string_view()) != next) {
        return "at offset " + std::to_string(rec.offset.value()) + " expected record " + std::to_string(next);
      }
      ++next;
    }
  }
  *seen = next - start;
  return "";
}

TEST(LogTailFollowTest, ReadersSeeEveryRecordExactlyOnceInOrder) {
  ScopedTempDir dir;
  TopicOptions options;
  options.segment_bytes = 64 << 10;
  auto topic = TopicDirectory::Create("log:" + dir.Join("tail"), options);
  ASSERT_TRUE(topic.ok());

  std::atomic<uint64_t> written{0};
  std::string writer_error;
  std::thread writer([&] {
    WriterOptions o;
    o.fsync = FsyncPolicy::kNone;
    auto w = (*topic)->OpenWriter(PartitionId(0), o);
    if (!w.ok()) {
      writer_error = w.status().ToString();
      return;
    }
    std::mt19937 rng(5);
    BatchBuilder b;
    while ((*w)->end_offset().value() < kTotal) {
      const uint64_t first = (*w)->end_offset().value();
      FillTestBatch(&b, first, static_cast<uint32_t>(std::min<uint64_t>(1 + rng() % 100, kTotal - first)));
      auto r = (*w)->Append(&b);
      if (!r.ok()) {
        writer_error = r.status().ToString();
        return;
      }
      written = r->end_offset().value();
      if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    }
    (void)(*w)->Close();
  });

  uint64_t seen_from_start = 0, seen_from_middle = 0;
  std::string error_start, error_middle;
  std::thread from_start([&] { error_start = Follow(topic->get(), 0, &seen_from_start); });
  // The second reader starts later, in the middle of the data.
  while (written < kTotal / 3) std::this_thread::sleep_for(milliseconds(1));
  const uint64_t middle = written / 2;
  std::thread from_middle([&] { error_middle = Follow(topic->get(), middle, &seen_from_middle); });
  writer.join();
  from_start.join();
  from_middle.join();
  ASSERT_EQ(writer_error, "");
  EXPECT_EQ(error_start, "");
  EXPECT_EQ(error_middle, "");
  EXPECT_EQ(seen_from_start, kTotal);
  EXPECT_EQ(seen_from_middle, kTotal - middle);
  auto d = (*topic)->Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_GT(d->partitions[0].segment_count, 5u) << "the readers must have crossed segment rolls";
}

}  // namespace
}  // namespace tokenfeed::log
