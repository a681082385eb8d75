#include "log/recovery_point.h"

#include <gtest/gtest.h>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "log/log_format.h"

namespace tokenfeed::log {
namespace {

class RecoveryPointTest : public ::testing::Test {
 protected:
  std::optional<RecoveryPoint> Load() {
    auto p = LoadRecoveryPoint(&fs_, path_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : std::nullopt;
  }
  ScopedTempDir dir_;
  FaultInjectionFileSystem fs_;
  std::string path_ = dir_.Join(std::string(format::kRecoveryPointFileName));
};

TEST_F(RecoveryPointTest, MissingFileIsUnknownAndTheLastNoteCounts) {
  EXPECT_FALSE(Load().has_value());
  RecoveryPointWriter w;
  ASSERT_TRUE(w.Start(&fs_, path_, {Offset(0), 32}).ok());
  EXPECT_EQ(Load()->position, 32u);
  w.Note({Offset(0), 500});
  w.Note({Offset(0), 900});
  EXPECT_EQ(Load()->position, 900u) << "read back from the page cache, as after a kill";
  w.Note({Offset(40), 32});
  EXPECT_EQ(Load()->segment_base, Offset(40));
}

TEST_F(RecoveryPointTest, APowerCutLeavesAnEarlierTruePointNeverALaterOne) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    FaultInjectionFileSystem::PowerCutOptions cut;
    cut.keep_random_unsynced_prefix = true;
    cut.reorder_write_back = true;
    cut.block_bytes = 16;  // tears records, zeroes some
    cut.seed = seed;
    ScopedTempDir d;
    FaultInjectionFileSystem fs;
    RecoveryPointWriter ww;
    const std::string path = d.Join("SYNCED");
    ASSERT_TRUE(ww.Start(&fs, path, {Offset(0), 32}).ok());
    for (uint64_t p = 100; p <= 2000; p += 100) ww.Note({Offset(0), p});
    ASSERT_TRUE(fs.SimulatePowerCut(cut).ok());
    auto point = LoadRecoveryPoint(&fs, path);
    ASSERT_TRUE(point.ok() && point->has_value()) << "the synced start survives";
    EXPECT_LE((*point)->position, 2000u);
    EXPECT_EQ((*point)->position % 100 == 0 || (*point)->position == 32, true) << (*point)->position;
  }
}

TEST_F(RecoveryPointTest, TheFileStaysSmall) {
  RecoveryPointWriter w;
  ASSERT_TRUE(w.Start(&fs_, path_, {Offset(0), 32}).ok());
  for (uint64_t p = 1; p <= 10000; ++p) w.Note({Offset(0), p});
  EXPECT_LE(FileSystem::Posix()->Stat(path_)->size, uint64_t{64 << 10});
  EXPECT_EQ(Load()->position, 10000u);
}

TEST_F(RecoveryPointTest, AFailedStartLeavesNoOlderFileBehind) {
  {
    RecoveryPointWriter w;
    ASSERT_TRUE(w.Start(&fs_, path_, {Offset(0), 32}).ok());
    w.Note({Offset(0), 5000});
    ASSERT_TRUE(w.Sync().ok());
  }
  FaultInjectionFileSystem::Fault fault;
  fault.op = FaultInjectionFileSystem::Op::kSync;
  fault.path_contains = "SYNCED";
  fs_.InjectFault(fault);
  RecoveryPointWriter w;
  EXPECT_TRUE(w.Start(&fs_, path_, {Offset(0), 100}).ok()) << "removed instead";
  EXPECT_FALSE(Load().has_value()) << "a point at 5000 would claim bytes the segment may no longer hold";
}

}  // namespace
}  // namespace tokenfeed::log
