// Replay (tokenfeed/replay.h) and seen (tokenfeed/seen.h) against the batches
// a loader really yielded: for random steps of a shuffled, mixed, packed run
// -- and of a sharded run resumed at another world size from merged states
// -- the replayed rows are the yielded rows token for token, their pieces
// rebuild them from the records, and `seen` names exactly the documents the
// yielded batches consumed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "loader_test_topics.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/replay.h"
#include "tokenfeed/seen.h"

namespace tokenfeed {
namespace {

constexpr uint32_t kEos = 999;  // no document token: those are 1000 * d + i with i < 37

// A topic of MakeTopic's documents whose records say they are line d + 1 of
// `path` (document d in partition d % partitions, at offset d / partitions),
// with its token index.
std::string MakeLinedTopic(const ScopedTempDir& dir, const std::string& name, const std::string& path,
                           uint32_t partitions, uint32_t docs) {
  std::string uri = "log:" + dir.Join(name);
  log::TopicOptions to;
  to.partitions = partitions;
  auto topic = log::TopicDirectory::Create(uri, to);
  EXPECT_TRUE(topic.ok()) << topic.status().ToString();
  if (!topic.ok()) return uri;
  std::vector<log::BatchBuilder> batches(partitions);
  std::string rec;
  for (uint32_t d = 0; d < docs; ++d) {
    std::vector<uint32_t> ids(DocLen(d));
    for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = kStride * d + i;
    record::RecordFields f;
    f.FileSource(path, d + 1, 100 * d, d);
    EXPECT_TRUE(record::EncodeRecord(f, ids, &rec).ok());
    batches[d % partitions].Add(rec);
  }
  WriteBatches(**topic, batches);
  BuildTokenIndex(uri, partitions);  // as ingest keeps it
  return uri;
}

// Partition p's token index file of a MakeLinedTopic topic.
std::string TokensOf(const ScopedTempDir& dir, const std::string& name, uint32_t p) {
  char part[32];
  std::snprintf(part, sizeof part, "partition-%05u", p);
  return dir.Join(name) + "/" + part + "/TOKENS";
}

// The row the pieces describe: BOS, the record's ids [a, b), EOS, in order,
// then the padding; the ids of document d are 1000 * d + i, and the piece's
// source line says d.
std::vector<int64_t> RowFromPieces(const ReplayRow& r, uint32_t partitions, uint32_t pad_id,
                                   std::optional<uint32_t> bos = std::nullopt) {
  std::vector<int64_t> row;
  for (const ReplayPiece& p : r.pieces) {
    const uint64_t d = p.source_line - 1;
    EXPECT_EQ(p.offset * partitions + p.partition, d) << "the record at the piece's offset is line " << p.source_line;
    EXPECT_EQ(p.stored, DocLen(static_cast<uint32_t>(d)));
    if (p.bos) {
      EXPECT_TRUE(bos.has_value());
      row.push_back(bos.value_or(0));
    }
    for (uint32_t i = p.token_start; i < p.token_end; ++i) row.push_back(int64_t{kStride} * d + i);
    if (p.eos) row.push_back(kEos);
  }
  row.insert(row.end(), r.padding, pad_id);
  return row;
}

class ReplayTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
};

// One rank's batches, by step, and its state after `save_at` steps.
struct RankBatches {
  std::vector<std::vector<std::vector<int64_t>>> rows;  // [step][row]
  std::vector<std::vector<uint32_t>> sources;           // [step][row]
  std::vector<std::string> states;                      // [step]: before it
  std::string state_at_save;
};

RankBatches RunRank(LoaderOptions o, uint32_t steps, uint32_t save_at, const std::string& load = "") {
  RankBatches out;
  auto l = Make(o);
  if (l == nullptr) return out;
  if (!load.empty()) {
    Status s = l->LoadState(load);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  for (uint32_t k = 0; k < steps; ++k) {
    if (k == save_at) out.state_at_save = l->State();
    out.states.push_back(l->State());
    auto b = l->Next();
    EXPECT_TRUE(b.ok() && *b) << (b.ok() ? "end of data" : b.status().ToString());
    if (!b.ok() || !*b) break;
    std::vector<std::vector<int64_t>> rows;
    for (uint32_t r = 0; r < (*b)->batch_size; ++r) rows.push_back(Row(**b, r));
    out.rows.push_back(std::move(rows));
    out.sources.push_back((*b)->source_of_row);
  }
  if (save_at >= steps) out.state_at_save = l->State();
  return out;
}

TEST_F(ReplayTest, ReplayedStepsOfAShuffledMixedPackedRunAreTheYieldedBatches) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 900);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 500);
  const uint32_t kSteps = 60, kSave = 35, kWorld = 2, kBatch = 3;
  std::vector<RankBatches> ranks;
  for (uint32_t r = 0; r < kWorld; ++r) {
    LoaderOptions o = Opts({{a, 2}, {b, 1}}, 24, kBatch);
    o.eos_id = kEos;
    o.rank = r;
    o.world_size = kWorld;
    ranks.push_back(RunRank(o, kSteps, kSave));
    ASSERT_EQ(ranks.back().rows.size(), kSteps);
  }
  const std::string state = ranks[0].state_at_save;
  const std::map<std::string, uint32_t> partitions = {{a, 3}, {b, 2}};
  std::mt19937 rng(11);
  std::vector<uint64_t> steps = {0, kSave - 1, kSave, kSteps - 1};
  for (int i = 0; i < 8; ++i) steps.push_back(rng() % kSteps);
  for (uint64_t k : steps) {
    auto replayed = ReplayStep(state, k);
    ASSERT_TRUE(replayed.ok()) << "step " << k << ": " << replayed.status().ToString();
    EXPECT_EQ(replayed->started_at_step, k >= kSave ? kSave : 0u) << "step " << k;
    ASSERT_EQ(replayed->rows.size(), kWorld * kBatch);
    for (const ReplayRow& row : replayed->rows) {
      ASSERT_LT(row.rank, kWorld);
      ASSERT_LT(row.row, kBatch);
      EXPECT_EQ(row.step, k);
      EXPECT_EQ(row.input_ids, ranks[row.rank].rows[k][row.row]) << "step " << k << " rank " << row.rank;
      EXPECT_EQ(row.source, ranks[row.rank].sources[k][row.row]);
      ASSERT_FALSE(row.pieces.empty());
      EXPECT_EQ(RowFromPieces(row, partitions.at(row.pieces[0].uri), 0), row.input_ids) << "step " << k;
      for (const ReplayPiece& p : row.pieces) {
        EXPECT_EQ(p.uri, row.source == 0 ? a : b);
        EXPECT_EQ(p.source_path, row.source == 0 ? "corpus/a.jsonl" : "corpus/b.jsonl");
      }
    }
    // One rank's rows, as that rank's loader made them.
    ReplayOptions one;
    one.rank = 1;
    auto rank1 = ReplayStep(state, k, one);
    ASSERT_TRUE(rank1.ok()) << rank1.status().ToString();
    ASSERT_EQ(rank1->rows.size(), kBatch);
    for (const ReplayRow& row : rank1->rows) EXPECT_EQ(row.input_ids, ranks[1].rows[k][row.row]);
  }
  // An earlier checkpoint of the run: a step before the state starts there.
  ReplayOptions earlier;
  earlier.other_states = {ranks[1].states[8], ranks[0].states[50]};
  for (uint64_t k : {5u, 8u, 20u, 40u, 55u}) {
    auto replayed = ReplayStep(state, k, earlier);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    EXPECT_EQ(replayed->started_at_step, k < 8 ? 0u : k < 35 ? 8u : k < 50 ? 35u : 50u) << "step " << k;
    for (const ReplayRow& row : replayed->rows) EXPECT_EQ(row.input_ids, ranks[row.rank].rows[k][row.row]);
  }
  LoaderOptions reseeded = Opts({{a, 2}, {b, 1}}, 24, kBatch);
  reseeded.eos_id = kEos;
  reseeded.seed = 8;
  ReplayOptions foreign;
  foreign.other_states = {RunRank(reseeded, 2, 2).state_at_save};
  auto mixed = ReplayStep(state, 5, foreign);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("another run"), std::string::npos) << mixed.status().ToString();
  // Wrong inputs are named.
  ReplayOptions bad;
  bad.rank = 2;
  auto refused = ReplayStep(state, 3, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("world_size 2"), std::string::npos) << refused.status().ToString();
  EXPECT_FALSE(ReplayStep("{\"version\":1}", 3).ok());
  EXPECT_FALSE(ReplayStep("not json", 3).ok());
}

// The steps counted past need only their documents' lengths: from sources
// that keep a token index they are taken from it, and no record of those
// steps is read. Without the index (or with one that stops short of the
// snapshot, or fails on the way) the windows are read from the records. The
// replayed rows are the yielded ones every way.
TEST_F(ReplayTest, StepsCountedPastReadNoRecordWhereTheSourcesKeepATokenIndex) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 900);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 500);
  const uint32_t kSteps = 150, kSave = 5, kBatch = 3;
  LoaderOptions o = Opts({{a, 2}, {b, 1}}, 24, kBatch);
  o.eos_id = kEos;
  const RankBatches run = RunRank(o, kSteps, kSave);
  ASSERT_EQ(run.rows.size(), kSteps);
  const std::map<std::string, uint32_t> partitions = {{a, 3}, {b, 2}};
  auto check = [&](const ReplayedStep& replayed, uint64_t k) {
    ASSERT_EQ(replayed.rows.size(), kBatch);
    for (uint32_t i = 0; i < kBatch; ++i) {
      EXPECT_EQ(replayed.rows[i].input_ids, run.rows[k][i]) << "step " << k << " row " << i;
      const uint32_t p = partitions.at(o.sources[replayed.rows[i].source].uri);
      EXPECT_EQ(RowFromPieces(replayed.rows[i], p, o.pad_id), run.rows[k][i]) << "step " << k << " row " << i;
    }
  };
  const uint64_t k = kSteps - 2;
  auto indexed = ReplayStep(run.state_at_save, k);
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  check(*indexed, k);
  EXPECT_EQ(indexed->steps_skipped, k - kSave);
  // Read: the windows that hold step k and the next window of each source
  // (4 blocks of 16 records each).
  const uint64_t window = uint64_t{o.window_blocks} * o.block_records;
  EXPECT_LE(indexed->records_read, 2 * 2 * window);
  // Every step counted past lands where the loader was: a few steps on each
  // side of the windows' ends.
  for (uint64_t j = kSave; j < kSteps; j += 7) {
    auto replayed = ReplayStep(run.state_at_save, j);
    ASSERT_TRUE(replayed.ok()) << "step " << j << ": " << replayed.status().ToString();
    check(*replayed, j);
  }
  auto replay_k = [&](const char* how) {
    auto replayed = ReplayStep(run.state_at_save, k);
    EXPECT_TRUE(replayed.ok()) << how << ": " << replayed.status().ToString();
    if (!replayed.ok()) return uint64_t{0};
    check(*replayed, k);
    return replayed->records_read;
  };
  // A's index stops short of the snapshot (partition 1 cut to half): a's
  // windows are read from the records, b's still come from its index.
  const std::string a1 = TokensOf(dir_, "a", 1);
  const auto a1_size = std::filesystem::file_size(a1);
  std::filesystem::resize_file(a1, a1_size / 2);
  const uint64_t short_a = replay_k("a's index cut short");
  EXPECT_GT(short_a, indexed->records_read + 2 * window);
  // A's index damaged: partition 0's entries decrease. The first window made
  // from it fails, and a is read from the records from there on.
  BuildTokenIndex(a, 3);
  EXPECT_EQ(replay_k("a's index rebuilt"), indexed->records_read);
  const std::string a0 = TokensOf(dir_, "a", 0);
  const auto a0_size = std::filesystem::file_size(a0);
  {
    std::fstream f(a0, std::ios::in | std::ios::out | std::ios::binary);
    for (uint64_t at = 16, v = 1u << 20; at + 8 <= a0_size; at += 8, --v) {
      char le[8];
      for (int i = 0; i < 8; ++i) le[i] = static_cast<char>((v >> (8 * i)) & 0xff);
      f.seekp(static_cast<std::streamoff>(at));
      f.write(le, 8);
    }
  }
  const uint64_t damaged = replay_k("a's index damaged");
  EXPECT_GT(damaged, indexed->records_read + 2 * window);
  // No index at all: every window counted past is read.
  for (const std::string& t : {a0, a1, TokensOf(dir_, "a", 2), TokensOf(dir_, "b", 0), TokensOf(dir_, "b", 1)}) {
    std::filesystem::remove(t);
  }
  const uint64_t none = replay_k("no index");
  EXPECT_GE(none, short_a);
  EXPECT_GT(none, indexed->records_read + 4 * window);
}

TEST_F(ReplayTest, ReplayAfterAnElasticShardedResumeIsTheYieldedBatches) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 1500);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 800);
  auto opts = [&](uint32_t batch, uint32_t rank, uint32_t world) {
    LoaderOptions o = Opts({{a, 1}, {b, 1}}, 16, batch);
    o.shards = 4;
    o.epochs = 0;
    o.rank = rank;
    o.world_size = world;
    return o;
  };
  // 20 steps at world size 2 (batch 4), then from the merged states 25 at
  // world size 4 (batch 2): the global batch stays 8.
  std::vector<RankBatches> first, second;
  std::vector<std::string> states;
  for (uint32_t r = 0; r < 2; ++r) {
    first.push_back(RunRank(opts(4, r, 2), 20, 20));
    states.push_back(first.back().state_at_save);
  }
  auto merged = MergeLoaderStates(states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  std::vector<std::string> later_states;
  for (uint32_t r = 0; r < 4; ++r) {
    second.push_back(RunRank(opts(2, r, 4), 26, 25, *merged));
    ASSERT_EQ(second.back().rows.size(), 26u);
    later_states.push_back(second.back().state_at_save);
  }
  auto later = MergeLoaderStates(later_states);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  // The later merged state is at step 45 of world size 4: every step of the
  // second part, each rank's rows.
  for (uint64_t k : {20u, 27u, 33u, 44u}) {
    auto replayed = ReplayStep(*later, k);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    ASSERT_EQ(replayed->rows.size(), 8u);
    for (const ReplayRow& row : replayed->rows) {
      EXPECT_EQ(row.input_ids, second[row.rank].rows[k - 20][row.row]) << "step " << k << " rank " << row.rank;
      EXPECT_EQ(RowFromPieces(row, row.source == 0 ? 3 : 2, 0), row.input_ids);
    }
    // One rank's own (unmerged) state, at its own rank.
    ReplayOptions own;
    own.rank = 3;
    auto rank3 = ReplayStep(later_states[3], k, own);
    ASSERT_TRUE(rank3.ok()) << rank3.status().ToString();
    for (const ReplayRow& row : rank3->rows) EXPECT_EQ(row.input_ids, second[3].rows[k - 20][row.row]);
  }
  // Steps of the first part, counted in its own sizes.
  ReplayOptions before;
  before.batch_size = 4;
  before.world_size = 2;
  for (uint64_t k : {0u, 9u, 19u}) {
    auto replayed = ReplayStep(*later, k, before);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    ASSERT_EQ(replayed->rows.size(), 8u);
    for (const ReplayRow& row : replayed->rows) {
      EXPECT_EQ(row.input_ids, first[row.rank].rows[k][row.row]) << "step " << k << " rank " << row.rank;
    }
  }
  // Every rank's rows need every shard: one rank's state has only its own,
  // so the replay starts at the run's start (which holds them all).
  auto partial = ReplayStep(later_states[0], 45);
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  EXPECT_EQ(partial->started_at_step, 0u);
  for (const ReplayRow& row : partial->rows) EXPECT_EQ(row.input_ids, second[row.rank].rows[25][row.row]);
  ReplayOptions own;
  own.rank = 0;
  auto from_own = ReplayStep(later_states[0], 45, own);
  ASSERT_TRUE(from_own.ok()) << from_own.status().ToString();
  EXPECT_EQ(from_own->started_at_step, 45u);
  for (const ReplayRow& row : from_own->rows) EXPECT_EQ(row.input_ids, second[0].rows[25][row.row]);
}

TEST_F(ReplayTest, ReplayGoesOnIntoTheNextRoundAsANewIterationDoes) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 2, 200);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 60);
  LoaderOptions o = Opts({{a, 1}, {b, 1}}, 16, 4);
  o.eos_id = kEos;
  auto l = Make(o);
  ASSERT_NE(l, nullptr);
  std::vector<std::vector<std::vector<int64_t>>> steps;  // two rounds
  std::string early;
  uint64_t round_end = 0;
  for (int round = 0; round < 2; ++round) {
    while (true) {
      if (steps.size() == 3) early = l->State();
      auto batch = l->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (!*batch) break;
      EXPECT_EQ((*batch)->step, steps.size());
      std::vector<std::vector<int64_t>> rows;
      for (uint32_t r = 0; r < 4; ++r) rows.push_back(Row(**batch, r));
      steps.push_back(std::move(rows));
    }
    if (round == 0) {
      round_end = steps.size();
      ASSERT_TRUE(l->StartNextRound().ok());
    }
  }
  ASSERT_GT(round_end, 10u);
  ASSERT_GT(steps.size(), round_end + 10);
  const std::string late = l->State();  // in the second round
  for (uint64_t k : {uint64_t{1}, round_end - 1, round_end, round_end + 5, uint64_t{steps.size() - 1}}) {
    for (const std::string* state : std::vector<const std::string*>{&early, &late}) {
      auto replayed = ReplayStep(*state, k);
      ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
      for (const ReplayRow& row : replayed->rows) {
        EXPECT_EQ(row.input_ids, steps[k][row.row]) << "step " << k;
        EXPECT_EQ(RowFromPieces(row, 2, 0), row.input_ids);
      }
    }
  }
}

TEST_F(ReplayTest, UnpackedRowsWithBosAreTheirDocumentsTruncatedAndPadded) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 2, 400);
  LoaderOptions o = Opts({{a, 1}}, 20, 4);
  o.pack = false;
  o.bos_id = 998;
  o.eos_id = kEos;
  o.pad_id = 3;
  RankBatches run = RunRank(o, 30, 12);
  ASSERT_EQ(run.rows.size(), 30u);
  uint32_t padded = 0, cut = 0;
  for (uint64_t k : {0u, 11u, 12u, 29u}) {
    auto replayed = ReplayStep(run.state_at_save, k);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    for (const ReplayRow& row : replayed->rows) {
      EXPECT_EQ(row.input_ids, run.rows[k][row.row]);
      EXPECT_EQ(RowFromPieces(row, 2, 3, 998), row.input_ids);
      ASSERT_EQ(row.pieces.size(), 1u);  // one document a row
      EXPECT_TRUE(row.pieces[0].bos);
      padded += row.padding > 0;
      cut += row.pieces[0].token_end < row.pieces[0].stored;
    }
  }
  EXPECT_GT(padded, 0u);
  EXPECT_GT(cut, 0u);
}

// A state written before states carried the run's sizes replays when they
// are given; one without settings (the earliest form) cannot, and says so.
TEST_F(ReplayTest, OlderStatesReplayWithTheSizesGivenOrSayWhatTheyLack) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 2, 300);
  LoaderOptions o = Opts({{a, 1}}, 16, 4);
  RankBatches run = RunRank(o, 12, 6);
  ASSERT_EQ(run.rows.size(), 12u);
  std::string older = run.state_at_save;
  const size_t at = older.find(",\"run\":{");
  ASSERT_NE(at, std::string::npos);
  older.erase(at, older.find('}', at) + 1 - at);
  auto refused = ReplayStep(older, 8);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("batch_size and world_size"), std::string::npos)
      << refused.status().ToString();
  ReplayOptions sizes;
  sizes.batch_size = 4;
  sizes.world_size = 1;
  for (uint64_t k : {2u, 8u}) {
    auto replayed = ReplayStep(older, k, sizes);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    for (const ReplayRow& row : replayed->rows) EXPECT_EQ(row.input_ids, run.rows[k][row.row]);
  }
  // Sizes that do not divide the state's samples replay from the start.
  sizes.batch_size = 5;
  auto five = ReplayStep(run.state_at_save, 4, sizes);
  ASSERT_TRUE(five.ok()) << five.status().ToString();
  EXPECT_EQ(five->started_at_step, 0u);
  std::string bare = run.state_at_save;
  const size_t settings = bare.find(",\"settings\":{");
  ASSERT_NE(settings, std::string::npos);
  bare.erase(settings, bare.find('}', settings) + 1 - settings);
  auto no_settings = ReplayStep(bare, 2, sizes);
  ASSERT_FALSE(no_settings.ok());
  EXPECT_NE(no_settings.status().message().find("no settings"), std::string::npos)
      << no_settings.status().ToString();
  auto no_settings_seen = Seen(bare);
  ASSERT_FALSE(no_settings_seen.ok());
  EXPECT_NE(no_settings_seen.status().message().find("no settings"), std::string::npos);
  // A state of a topic that no longer holds its records names the topic.
  std::string elsewhere = run.state_at_save;
  const std::string topic_dir = a.substr(4);
  for (size_t pos = 0; (pos = elsewhere.find(topic_dir, pos)) != std::string::npos; pos += topic_dir.size() + 5) {
    elsewhere.replace(pos, topic_dir.size(), topic_dir + "-gone");
  }
  auto gone = ReplayStep(elsewhere, 2);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().ToString().find("-gone"), std::string::npos) << gone.status().ToString();
}

// The documents the rows consumed, from their tokens: per (source,
// partition, offset), the tokens taken (the runs here add no EOS, so that
// every token names its document).
using Taken = std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint32_t>;
void CountTaken(const std::vector<int64_t>& row, uint32_t source, uint32_t partitions, Taken* taken) {
  for (int64_t v : row) {
    const int64_t d = v / kStride;
    ++(*taken)[{source, static_cast<uint32_t>(d % partitions), static_cast<uint64_t>(d / partitions)}];
  }
}

void ExpectSeenIsTaken(const SeenReport& report, const Taken& taken, const std::vector<uint32_t>& partitions) {
  std::set<std::tuple<uint32_t, uint32_t, uint64_t>> whole, seen_whole;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint32_t> partial, seen_partial;
  for (const auto& [key, n] : taken) {
    const auto [s, p, o] = key;
    const uint32_t len = DocLen(static_cast<uint32_t>(o * partitions[s] + p));
    if (n >= len) {
      EXPECT_EQ(n, len);
      whole.insert(key);
    } else {
      partial[key] = n;
    }
  }
  for (uint32_t s = 0; s < report.sources.size(); ++s) {
    const SeenSource& src = report.sources[s];
    EXPECT_FALSE(src.all);
    for (uint32_t p = 0; p < src.whole.size(); ++p) {
      for (const auto& [first, end] : src.whole[p]) {
        for (uint64_t o = first; o < end; ++o) seen_whole.insert({s, p, o});
      }
    }
    for (const SeenPartial& part : src.partial) {
      seen_partial[{s, part.partition, part.offset}] = part.tokens_taken;
      EXPECT_EQ(part.tokens, DocLen(static_cast<uint32_t>(part.offset * partitions[s] + part.partition)));
    }
  }
  EXPECT_GT(whole.size(), 100u);
  EXPECT_FALSE(partial.empty());
  EXPECT_EQ(seen_whole, whole);
  EXPECT_EQ(seen_partial, partial);
  for (const auto& key : whole) {
    EXPECT_EQ(SeenContains(report, report.sources[std::get<0>(key)].uri, std::get<1>(key), std::get<2>(key)),
              SeenAnswer::kYes);
  }
  for (const auto& [key, n] : partial) {
    EXPECT_EQ(SeenContains(report, report.sources[std::get<0>(key)].uri, std::get<1>(key), std::get<2>(key)),
              SeenAnswer::kPartly);
  }
}

TEST_F(ReplayTest, SeenIsWhatTheYieldedBatchesConsumed) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 1200);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 700);
  const uint32_t kSteps = 70;
  LoaderOptions o = Opts({{a, 2}, {b, 1}}, 24, 4);
  RankBatches run = RunRank(o, kSteps, kSteps);
  ASSERT_EQ(run.rows.size(), kSteps);
  Taken taken;
  for (uint32_t k = 0; k < kSteps; ++k) {
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t s = run.sources[k][r];
      CountTaken(run.rows[k][r], s, s == 0 ? 3 : 2, &taken);
    }
  }
  auto report = Seen(run.state_at_save);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->sources.size(), 2u);
  EXPECT_EQ(report->step, kSteps);
  EXPECT_EQ(*report->sources[0].tokens + *report->sources[1].tokens, uint64_t{kSteps} * 4 * 24);
  ExpectSeenIsTaken(*report, taken, {3, 2});
  // A document not taken, and lookups by file and line.
  uint32_t untouched = 0;
  while (taken.count({1, untouched % 2, untouched / 2})) ++untouched;
  EXPECT_EQ(SeenContains(*report, b, untouched % 2, untouched / 2), SeenAnswer::kNo);
  auto refs = FindRecordsOfLine(run.state_at_save, "corpus/b.jsonl", untouched + 1);
  ASSERT_TRUE(refs.ok()) << refs.status().ToString();
  ASSERT_EQ(refs->size(), 1u);
  EXPECT_EQ((*refs)[0].source, 1u);
  EXPECT_EQ((*refs)[0].partition, untouched % 2);
  EXPECT_EQ((*refs)[0].offset, untouched / 2);
  const auto& [s0, p0, o0] = taken.begin()->first;
  auto first = FindRecordsOfLine(run.state_at_save, s0 == 0 ? "corpus/a.jsonl" : "corpus/b.jsonl",
                                 o0 * (s0 == 0 ? 3 : 2) + p0 + 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].offset, o0);
  auto none = FindRecordsOfLine(run.state_at_save, "corpus/c.jsonl", 1);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(ReplayTest, SeenOfMergedShardedStatesIsWhatEveryRankConsumed) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 1500);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 800);
  Taken taken;
  std::vector<std::string> states;
  for (uint32_t r = 0; r < 2; ++r) {
    LoaderOptions o = Opts({{a, 1}, {b, 1}}, 16, 4);
    o.shards = 4;
    o.epochs = 0;
    o.rank = r;
    o.world_size = 2;
    RankBatches run = RunRank(o, 30, 30);
    ASSERT_EQ(run.rows.size(), 30u);
    for (size_t k = 0; k < run.rows.size(); ++k) {
      for (size_t i = 0; i < run.rows[k].size(); ++i) {
        const uint32_t s = run.sources[k][i];
        CountTaken(run.rows[k][i], s, s == 0 ? 3 : 2, &taken);
      }
    }
    states.push_back(run.state_at_save);
  }
  auto one_rank = Seen(states[0]);
  ASSERT_FALSE(one_rank.ok());
  EXPECT_NE(one_rank.status().message().find("merge"), std::string::npos) << one_rank.status().ToString();
  auto merged = MergeLoaderStates(states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto report = Seen(*merged);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ExpectSeenIsTaken(*report, taken, {3, 2});
}

TEST_F(ReplayTest, AFiniteShardedRunReplaysAndIsSeenWholeAtItsEnd) {
  const std::string a = MakeLinedTopic(dir_, "a", "corpus/a.jsonl", 3, 700);
  const std::string b = MakeLinedTopic(dir_, "b", "corpus/b.jsonl", 2, 300);
  auto opts = [&](uint32_t rank) {
    LoaderOptions o = Opts({{a, 1}, {b, 1}}, 16, 4);
    o.shards = 4;
    o.epochs = 1;
    o.rank = rank;
    o.world_size = 2;
    return o;
  };
  // The round's length, then each rank to its end.
  auto probe = Make(opts(0));
  const size_t steps = Drain(*probe).size() / 4;
  ASSERT_GT(steps, 10u);
  std::vector<RankBatches> ranks;
  std::vector<std::string> states;
  for (uint32_t r = 0; r < 2; ++r) {
    ranks.push_back(RunRank(opts(r), static_cast<uint32_t>(steps), static_cast<uint32_t>(steps)));
    ASSERT_EQ(ranks.back().rows.size(), steps);
    states.push_back(ranks.back().state_at_save);
  }
  auto merged = MergeLoaderStates(states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  for (uint64_t k : {uint64_t{0}, uint64_t{steps / 2}, uint64_t{steps - 1}}) {
    auto replayed = ReplayStep(*merged, k);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    ASSERT_EQ(replayed->rows.size(), 8u);
    for (const ReplayRow& row : replayed->rows) {
      EXPECT_EQ(row.input_ids, ranks[row.rank].rows[k][row.row]) << "step " << k << " rank " << row.rank;
    }
  }
  // Past the end: the next round's first step, as a loader gives it.
  auto next = Make(opts(1));
  Drain(*next);
  ASSERT_TRUE(next->StartNextRound().ok());
  auto first_of_next = next->Next();
  ASSERT_TRUE(first_of_next.ok() && *first_of_next);
  auto replayed = ReplayStep(*merged, steps);
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  for (const ReplayRow& row : replayed->rows) {
    if (row.rank == 1) {
      EXPECT_EQ(row.input_ids, Row(**first_of_next, row.row));
    }
  }
  // Every shard has made its pass (some are into the next): all was seen.
  auto report = Seen(*merged);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  for (const SeenSource& src : report->sources) EXPECT_TRUE(src.all) << src.uri;
}

}  // namespace
}  // namespace tokenfeed
