// The loader over synthetic embedded-log topics: exactness of resume (same
// and other world sizes), sharding, end of data, shuffling, mixing, packing
// and labels, and the bad-input cases.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "loader_test_topics.h"
#include "loader/loader_state.h"
#include "tokenfeed/loader.h"
#include "log/log.h"
#include "tokenfeed/record.h"

namespace tokenfeed {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
};

TEST_F(LoaderTest, PackedRowsAreTheDocumentsInOrderWithLabelsAndPositions) {
  std::string uri = MakeTopic(dir_, "t", 3, 500);
  LoaderOptions o = Opts({{uri, 1}}, 64, 4);
  auto l = Make(o);
  std::vector<Batch> batches;
  auto rows = Drain(*l, SIZE_MAX, &batches);
  ASSERT_FALSE(rows.empty());
  // Every document shows up whole and once, in one shuffled order.
  std::vector<int64_t> stream;
  for (auto& r : rows) stream.insert(stream.end(), r.begin(), r.end());
  std::map<uint32_t, uint32_t> seen;  // doc -> tokens seen
  for (size_t i = 0; i < stream.size(); ++i) {
    uint32_t doc = static_cast<uint32_t>(stream[i] / kStride), pos = static_cast<uint32_t>(stream[i] % kStride);
    ASSERT_EQ(pos, seen[doc]) << "document " << doc << " out of order at stream position " << i;
    ++seen[doc];
  }
  uint64_t total = 0;
  for (uint32_t d = 0; d < 500; ++d) total += DocLen(d);
  EXPECT_LT(total - stream.size(), uint64_t{64} * 4);  // only the last incomplete step is dropped
  // Only where the dropped last step begins may a document be cut short.
  int cut = 0;
  for (auto& [doc, n] : seen) cut += n != DocLen(doc);
  EXPECT_LE(cut, 1);
  // Labels: the next token of the same document, else ignore_index;
  // positions restart with each document; cu_seqlens follows document_ids.
  for (Batch& b : batches) {
    int32_t boundary_count = 0;
    for (uint32_t r = 0; r < b.batch_size; ++r) {
      for (uint32_t t = 0; t < b.seq_len; ++t) {
        size_t i = size_t{r} * b.seq_len + t;
        int64_t id = b.input_ids64()[i];
        uint32_t doc = static_cast<uint32_t>(id / kStride), pos = static_cast<uint32_t>(id % kStride);
        int64_t want = pos + 1 < DocLen(doc) ? id + 1 : o.ignore_index;
        ASSERT_EQ(b.labels64()[i], want) << "row " << r << " t " << t;
        bool starts = t == 0 || b.document_ids[i] != b.document_ids[i - 1];
        if (starts) ++boundary_count;
        ASSERT_EQ(b.position_ids64()[i], starts ? 0 : b.position_ids64()[i - 1] + 1);
      }
    }
    ASSERT_EQ(b.cu_seqlens.size(), static_cast<size_t>(boundary_count) + 1);
    EXPECT_EQ(b.cu_seqlens.back(), static_cast<int32_t>(b.batch_size * b.seq_len));
  }
}

TEST_F(LoaderTest, ResumeFromAnyStepRepeatsTheRestExactly) {
  std::string uri = MakeTopic(dir_, "t", 2, 800);
  LoaderOptions o = Opts({{uri, 1}}, 32, 3);
  o.epochs = 2;
  auto full = Make(o);
  auto want = Drain(*full);
  ASSERT_GT(want.size(), 60u);
  for (size_t k : {0u, 1u, 7u, 20u}) {
    auto first = Make(o);
    auto head = Drain(*first, k);
    std::string state = first->State();
    // More batches prefetched or taken afterwards do not change the state
    // taken at step k.
    (void)Drain(*first, 3);
    auto resumed = Make(o);
    ASSERT_TRUE(resumed->LoadState(state).ok());
    auto tail = Drain(*resumed);
    head.insert(head.end(), tail.begin(), tail.end());
    EXPECT_EQ(head, want) << "resumed at step " << k;
  }
}

TEST_F(LoaderTest, RanksShareOneStreamAndStopTogether) {
  std::string uri = MakeTopic(dir_, "t", 3, 700);
  LoaderOptions one = Opts({{uri, 1}}, 16, 4);
  auto single = Make(one);
  auto want = Drain(*single);
  // Three ranks of batch 4 cannot use the step of 16 rows the single loader
  // ends with: compare on the steps both have.
  for (uint32_t world : {2u, 4u}) {
    const uint32_t b = 4 / world;
    std::vector<std::vector<std::vector<int64_t>>> per_rank;
    for (uint32_t r = 0; r < world; ++r) {
      LoaderOptions o = Opts({{uri, 1}}, 16, b);
      o.rank = r;
      o.world_size = world;
      auto l = Make(o);
      per_rank.push_back(Drain(*l));
    }
    for (uint32_t r = 1; r < world; ++r) EXPECT_EQ(per_rank[r].size(), per_rank[0].size());
    std::vector<std::vector<int64_t>> merged;
    for (size_t step = 0; step * b < per_rank[0].size(); ++step) {
      for (uint32_t r = 0; r < world; ++r) {
        for (uint32_t i = 0; i < b; ++i) merged.push_back(per_rank[r][step * b + i]);
      }
    }
    EXPECT_EQ(merged, want) << "world size " << world;
  }
}

TEST_F(LoaderTest, ElasticResumeLosesAndRepeatsNothing) {
  std::string uri = MakeTopic(dir_, "t", 2, 900);
  auto single = Make(Opts({{uri, 1}}, 16, 4));
  auto want = Drain(*single);
  // Two ranks (batch 2 each) for 10 steps, then one rank with batch 4.
  std::vector<std::vector<int64_t>> got;
  std::string state;
  std::vector<std::unique_ptr<Loader>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    LoaderOptions o = Opts({{uri, 1}}, 16, 2);
    o.rank = r;
    o.world_size = 2;
    ranks.push_back(Make(o));
  }
  for (int step = 0; step < 10; ++step) {
    for (auto& l : ranks) {
      auto rows = Drain(*l, 1);
      got.insert(got.end(), rows.begin(), rows.end());
    }
  }
  EXPECT_EQ(ranks[0]->State(), ranks[1]->State());
  state = ranks[0]->State();
  auto after = Make(Opts({{uri, 1}}, 16, 4));
  ASSERT_TRUE(after->LoadState(state).ok());
  auto rest = Drain(*after);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, want);
  // A global batch that does not divide the position is refused clearly.
  auto odd = Make(Opts({{uri, 1}}, 16, 3));
  Status s = odd->LoadState(state);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("step boundary"), std::string::npos) << s.ToString();
}

TEST_F(LoaderTest, ShufflingIsSeededAndChangesEveryEpoch) {
  std::string uri = MakeTopic(dir_, "t", 2, 400);
  auto order = [&](uint64_t seed, bool shuffle, uint32_t epochs) {
    LoaderOptions o = Opts({{uri, 1}}, 8, 1);
    o.seed = seed;
    o.shuffle = shuffle;
    o.pack = false;
    o.epochs = epochs;
    auto l = Make(o);
    std::vector<int64_t> docs;
    for (auto& r : Drain(*l)) docs.push_back(r[0] / kStride);
    return docs;
  };
  auto a = order(1, true, 2), b = order(1, true, 2), c = order(2, true, 2), plain = order(1, false, 1);
  ASSERT_EQ(a.size(), 800u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<int64_t> e0(a.begin(), a.begin() + 400), e1(a.begin() + 400, a.end());
  EXPECT_NE(e0, e1);
  std::vector<int64_t> sorted0 = e0, sorted1 = e1, all(400);
  std::sort(sorted0.begin(), sorted0.end());
  std::sort(sorted1.begin(), sorted1.end());
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted0, all);  // each epoch: every document once
  EXPECT_EQ(sorted1, all);
  EXPECT_NE(e0, plain);
  // Unshuffled: the partitions' blocks in turn, each block in offset order.
  EXPECT_EQ(plain[0], 0);
  EXPECT_EQ(plain[1], 2);
}

TEST_F(LoaderTest, MixingFollowsTheWeights) {
  std::string a = MakeTopic(dir_, "a", 2, 3000, 0);
  std::string b = MakeTopic(dir_, "b", 1, 3000, 100000);
  LoaderOptions o = Opts({{a, 0.7}, {b, 0.3}}, 16, 10);
  o.epochs = 0;
  auto l = Make(o);
  uint64_t from_a = 0, from_b = 0;
  for (int step = 0; step < 100; ++step) {
    auto batch = l->Next();
    ASSERT_TRUE(batch.ok() && *batch);
    for (uint32_t r = 0; r < 10; ++r) {
      const uint32_t src = (*batch)->source_of_row[r];
      const bool is_b = (*batch)->input_ids64()[r * 16] / kStride >= 100000;
      EXPECT_EQ(src, is_b ? 1u : 0u);
      (is_b ? from_b : from_a) += 1;
    }
    // Within one sample of the weights at every step.
    const double n = (step + 1) * 10.0;
    EXPECT_LE(std::abs(static_cast<double>(from_a) - 0.7 * n), 1.0);
  }
}

TEST_F(LoaderTest, UnpackedRowsArePaddedAndMasked) {
  std::string uri = MakeTopic(dir_, "t", 1, 50);
  LoaderOptions o = Opts({{uri, 1}}, 20, 5);
  o.pack = false;
  o.shuffle = false;
  o.pad_id = 7;
  o.bos_id = 1;
  auto l = Make(o);
  auto batch = l->Next();
  ASSERT_TRUE(batch.ok() && *batch);
  Batch& b = **batch;
  for (uint32_t r = 0; r < 5; ++r) {
    const int64_t* ids = b.input_ids64().data() + r * 20;
    EXPECT_EQ(ids[0], 1);  // BOS
    const uint32_t doc = static_cast<uint32_t>(ids[1] / kStride);
    const uint32_t len = std::min<uint32_t>(DocLen(doc) + 1, 20);
    for (uint32_t t = 0; t < 20; ++t) {
      EXPECT_EQ(b.attention_mask[r * 20 + t], t < len ? 1 : 0);
      if (t >= len) {
        EXPECT_EQ(ids[t], 7);
      }
      if (t + 1 >= len) {
        EXPECT_EQ(b.labels64()[r * 20 + t], -100);
      }
    }
  }
}

TEST_F(LoaderTest, BadStatesAndOptionsAreClearErrors) {
  std::string uri = MakeTopic(dir_, "t", 2, 300);
  std::string other = MakeTopic(dir_, "o", 2, 300);
  auto l = Make(Opts({{uri, 1}}, 16, 2));
  (void)Drain(*l, 3);
  const std::string state = l->State();
  auto m = Make(Opts({{other, 1}}, 16, 2));
  Status s = m->LoadState(state);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  LoaderOptions longer = Opts({{uri, 1}}, 32, 2);
  s = Make(longer)->LoadState(state);
  EXPECT_NE(s.message().find("other sources or settings"), std::string::npos) << s.ToString();
  EXPECT_FALSE(Make(Opts({{uri, 1}}, 16, 2))->LoadState("{\"version\": 1}").ok());
  EXPECT_FALSE(Make(Opts({{uri, 1}}, 16, 2))->LoadState("not json").ok());
  for (auto [T, B] : {std::pair{0u, 2u}, std::pair{16u, 0u}}) {
    auto bad = Loader::Create(Opts({{uri, 1}}, T, B));
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  }
  LoaderOptions rank = Opts({{uri, 1}}, 16, 2);
  rank.rank = 2;
  rank.world_size = 2;
  EXPECT_NE(Loader::Create(rank).status().message().find("rank 2"), std::string::npos);
  EXPECT_EQ(Loader::Create(Opts({{"log:" + dir_.Join("missing"), 1}}, 16, 2)).status().code(),
            StatusCode::kNotFound);
}

// block_records = 0 picks the block size by transport; for the embedded log
// that is 1024 records, the same stream and state as asking for 1024 (so
// states saved when 1024 was the one default still load).
TEST_F(LoaderTest, BlockRecordsLeftUnsetAre1024OnTheLog) {
  std::string uri = MakeTopic(dir_, "t", 1, 5000);
  LoaderOptions unset = Opts({{uri, 1}}, 32, 2);
  unset.block_records = 0;
  unset.window_blocks = 2;
  unset.epochs = 1;
  LoaderOptions thousand = unset, smaller = unset;
  thousand.block_records = 1024;
  smaller.block_records = 512;
  auto a = Make(unset);
  auto b = Make(thousand);
  auto c = Make(smaller);
  const auto want = Drain(*b);
  EXPECT_EQ(Drain(*a), want);
  EXPECT_NE(Drain(*c), want) << "another block size shuffles otherwise";
  const std::string state = Make(unset)->State();
  EXPECT_TRUE(Make(thousand)->LoadState(state).ok());
  EXPECT_NE(Make(smaller)->LoadState(state).message().find("other sources or settings"), std::string::npos);
}

TEST_F(LoaderTest, PartitionsAddedSinceTheCheckpointAreRefused) {
  std::string uri = MakeTopic(dir_, "t", 2, 300);
  auto l = Make(Opts({{uri, 1}}, 16, 2));
  (void)Drain(*l, 2);
  const std::string state = l->State();
  l.reset();
  ASSERT_TRUE(log::TopicDirectory::Delete(uri).ok());
  MakeTopic(dir_, "t", 3, 300);  // same name, one more partition
  auto again = Make(Opts({{uri, 1}}, 16, 2));
  Status s = again->LoadState(state);
  if (s.ok()) {
    auto b = again->Next();
    s = b.status();
  }
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("partitions"), std::string::npos) << s.ToString();
}

TEST_F(LoaderTest, UnknownRecordVersionAndDeletedTopicAreErrorsNotHangs) {
  std::string uri = "log:" + dir_.Join("bad");
  log::TopicOptions to;
  auto topic = log::TopicDirectory::Create(uri, to);
  ASSERT_TRUE(topic.ok());
  auto w = (*topic)->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok());
  log::BatchBuilder batch;
  std::string rec;
  record::RecordFields f;
  std::vector<uint32_t> ids = {1, 2, 3};
  ASSERT_TRUE(record::EncodeRecord(f, ids, &rec).ok());
  batch.Add(rec);
  rec[0] = 9;  // an unknown format version
  batch.Add(rec);
  ASSERT_TRUE((*w)->Append(&batch).ok());
  ASSERT_TRUE((*w)->Close().ok());
  LoaderOptions o = Opts({{uri, 1}}, 2, 1);
  auto l = Make(o);
  auto b = l->Next();
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("offset 1"), std::string::npos) << b.status().ToString();

  std::string gone = MakeTopic(dir_, "gone", 1, 5000);
  LoaderOptions g = Opts({{gone, 1}}, 16, 1);
  g.prefetch_batches = 1;
  auto lg = Make(g);
  ASSERT_TRUE(lg->Next().ok());
  ASSERT_TRUE(log::TopicDirectory::Delete(gone).ok());
  Status last;
  for (int i = 0; i < 100000 && last.ok(); ++i) {
    auto n = lg->Next();
    if (!n.ok()) last = n.status();
    else if (!*n) break;
  }
  EXPECT_FALSE(last.ok()) << "the loader went on after its topic was deleted";
}

TEST_F(LoaderTest, AnEmptySourceIsRefusedNamingIt) {
  std::string full = MakeTopic(dir_, "full", 2, 300);
  std::string empty = MakeTopic(dir_, "empty", 2, 0);
  for (uint32_t epochs : {0u, 1u}) {
    LoaderOptions o = Opts({{full, 1}, {empty, 1}}, 16, 2);
    o.epochs = epochs;
    auto l = Loader::Create(o);
    ASSERT_FALSE(l.ok()) << "epochs " << epochs;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(l.status().message().find(empty), std::string::npos) << l.status().ToString();
    EXPECT_NE(l.status().message().find("empty"), std::string::npos) << l.status().ToString();
  }
  // With weight 0 it contributes nothing and is allowed.
  LoaderOptions o = Opts({{full, 1}, {empty, 0}}, 16, 2);
  auto l = Make(o);
  ASSERT_NE(l, nullptr);
  EXPECT_FALSE(Drain(*l).empty());
}

// A topic of `docs` records that each hold no token (a valid record with an
// empty id list, as a writer of empty documents would leave).
std::string MakeTopicOfEmptyRecords(const ScopedTempDir& dir, const std::string& name, uint32_t docs) {
  std::string uri = "log:" + dir.Join(name);
  auto topic = log::TopicDirectory::Create(uri, log::TopicOptions{});
  EXPECT_TRUE(topic.ok()) << topic.status().ToString();
  auto writer = std::move((*topic)->OpenWriter(PartitionId(0))).value();
  log::BatchBuilder batch;
  std::string rec;
  for (uint32_t d = 0; d < docs; ++d) {
    record::RecordFields f;
    f.source_path = "empty-documents";
    f.doc_seq = d;
    EXPECT_TRUE(record::EncodeRecord(f, std::vector<uint32_t>{}, &rec).ok());
    batch.Add(rec);
  }
  EXPECT_TRUE(writer->Append(&batch).ok());
  EXPECT_TRUE(writer->Close().ok());
  return uri;
}

// A source whose records are all empty has records, so the loader is made;
// its first read then fails naming it, alone or mixed with a good source,
// with epochs or without end, instead of looping over empty windows.
TEST_F(LoaderTest, ASourceWhoseRecordsHoldNoTokenIsAnErrorNamingIt) {
  std::string full = MakeTopic(dir_, "full", 1, 300);
  std::string hollow = MakeTopicOfEmptyRecords(dir_, "hollow", 200);
  const std::vector<std::vector<LoaderSource>> cases = {{{hollow, 1}}, {{full, 1}, {hollow, 1}}};
  for (const std::vector<LoaderSource>& sources : cases) {
    for (uint32_t epochs : {0u, 1u}) {
      LoaderOptions o = Opts(sources, 16, 2);
      o.epochs = epochs;
      auto l = Make(o);
      ASSERT_NE(l, nullptr);
      Status error;
      for (int step = 0; step < 1000 && error.ok(); ++step) {
        auto b = l->Next();
        if (!b.ok()) {
          error = b.status();
        } else if (!*b) {
          break;
        }
      }
      SCOPED_TRACE(std::to_string(sources.size()) + " source(s), epochs " + std::to_string(epochs));
      ASSERT_FALSE(error.ok()) << "the stream ended or ran on without an error";
      EXPECT_EQ(error.code(), StatusCode::kInvalidArgument) << error.ToString();
      EXPECT_NE(error.message().find("source " + hollow + " holds no token"), std::string::npos) << error.ToString();
      EXPECT_EQ(error.message().find(full), std::string::npos) << error.ToString();
    }
  }
}

// epochs=N with mixing: the stream ends when every source has completed N
// passes; a source that finishes first is read again (reshuffled), so the
// weights hold to the end; metrics name the source that ended it.
TEST_F(LoaderTest, MixedEpochsEndWhenEverySourceHasMadeItsPasses) {
  std::string a = MakeTopic(dir_, "a", 2, 2000, 0);
  std::string b = MakeTopic(dir_, "b", 1, 300, 100000);
  LoaderOptions o = Opts({{a, 0.5}, {b, 0.5}}, 16, 4);
  o.epochs = 1;
  o.pack = false;  // one document per row: rows name their documents
  auto l = Make(o);
  std::map<int64_t, int> seen_a, seen_b;
  uint64_t rows_a = 0, rows_b = 0;
  std::vector<Batch> batches;
  (void)Drain(*l, SIZE_MAX, &batches);
  for (Batch& batch : batches) {
    for (uint32_t r = 0; r < batch.batch_size; ++r) {
      const int64_t doc = batch.input_ids64()[r * 16] / kStride;
      if (batch.source_of_row[r] == 0) {
        ++seen_a[doc];
        ++rows_a;
      } else {
        ++seen_b[doc];
        ++rows_b;
      }
    }
  }
  // Every document of the larger source shows up (its pass is complete up
  // to the last unfilled step), exactly once.
  EXPECT_GE(seen_a.size(), 2000u - 4u);
  for (auto& [doc, n] : seen_a) EXPECT_EQ(n, 1) << "document " << doc;
  // The smaller one was read about 2000/300 times over, in equal measure.
  EXPECT_EQ(seen_b.size(), 300u);
  EXPECT_LE(rows_a > rows_b ? rows_a - rows_b : rows_b - rows_a, 1u);
  LoaderMetrics m = l->Metrics();
  ASSERT_TRUE(m.ended_source.has_value());
  EXPECT_EQ(*m.ended_source, 0u) << "the larger source ends the stream";
  ASSERT_EQ(m.epochs_completed.size(), 2u);
  EXPECT_GE(m.epochs_completed[1], 5u);
}

TEST_F(LoaderTest, MixedEpochsResumeExactly) {
  std::string a = MakeTopic(dir_, "a", 2, 1500, 0);
  std::string b = MakeTopic(dir_, "b", 1, 200, 100000);
  LoaderOptions o = Opts({{a, 0.6}, {b, 0.4}}, 16, 4);
  o.epochs = 1;
  auto full = Make(o);
  auto want = Drain(*full);
  ASSERT_GT(want.size(), 400u);
  for (size_t k : {13u, 150u}) {
    auto first = Make(o);
    auto head = Drain(*first, k);
    auto resumed = Make(o);
    ASSERT_TRUE(resumed->LoadState(first->State()).ok());
    auto tail = Drain(*resumed);
    head.insert(head.end(), tail.begin(), tail.end());
    EXPECT_EQ(head, want) << "resumed at step " << k;
  }
}

// After the end, StartNextRound gives another round of N passes, each
// reshuffled; a state taken in the second round resumes there.
TEST_F(LoaderTest, NextRoundIsAnotherReshuffledPassAndResumes) {
  std::string uri = MakeTopic(dir_, "t", 2, 400);
  LoaderOptions o = Opts({{uri, 1}}, 8, 1);
  o.pack = false;
  auto l = Make(o);
  auto first = Drain(*l);
  ASSERT_EQ(first.size(), 400u);
  EXPECT_TRUE(Drain(*l).empty()) << "without a new round the stream stays at its end";
  ASSERT_TRUE(l->StartNextRound().ok());
  auto second_head = Drain(*l, 100);
  const std::string state = l->State();
  auto second_tail = Drain(*l);
  auto second = second_head;
  second.insert(second.end(), second_tail.begin(), second_tail.end());
  ASSERT_EQ(second.size(), 400u);
  EXPECT_NE(second, first) << "the second round is reshuffled";
  auto docs = [](const std::vector<std::vector<int64_t>>& rows) {
    std::set<int64_t> d;
    for (const auto& r : rows) d.insert(r[0] / kStride);
    return d;
  };
  EXPECT_EQ(docs(second), docs(first));
  auto resumed = Make(o);
  ASSERT_TRUE(resumed->LoadState(state).ok());
  EXPECT_EQ(Drain(*resumed), second_tail);
  // Not before the end, and never for a stream without end.
  EXPECT_EQ(Make(o)->StartNextRound().code(), StatusCode::kInvalidArgument);
  LoaderOptions forever = o;
  forever.epochs = 0;
  EXPECT_EQ(Make(forever)->StartNextRound().code(), StatusCode::kInvalidArgument);
}

// The state text is LoaderStateJson of what ParseLoaderState reads from it,
// at the start, mid-run and in a later round.
TEST_F(LoaderTest, StateTextIsWhatTheStateParserReadsWrittenAgain) {
  std::string a = MakeTopic(dir_, "a", 2, 300, 0);
  std::string b = MakeTopic(dir_, "b", 1, 100, 100000);
  LoaderOptions o = Opts({{a, 0.7}, {b, 0.3}}, 16, 2);
  auto l = Make(o);
  std::vector<std::string> states = {l->State()};
  (void)Drain(*l, 3);
  states.push_back(l->State());
  (void)Drain(*l);
  ASSERT_TRUE(l->StartNextRound().ok());
  (void)Drain(*l, 1);
  states.push_back(l->State());
  for (const std::string& text : states) {
    auto state = loader::ParseLoaderState(text);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(loader::LoaderStateJson(*state), text);
    ASSERT_EQ(state->snapshot.sources.size(), 2u);
    EXPECT_EQ(state->snapshot.sources[1].uri, b);
    EXPECT_EQ(loader::SnapshotJson(state->snapshot), l->Snapshot());
  }
  EXPECT_EQ(loader::ParseLoaderState(states[1])->samples, 3u * 2);
  EXPECT_GT(loader::ParseLoaderState(states[2])->epoch_base, 0u);
}

TEST_F(LoaderTest, WeightsCountAsProportionsAndADifferentSettingIsNamed) {
  std::string a = MakeTopic(dir_, "a", 1, 300, 0);
  std::string b = MakeTopic(dir_, "b", 1, 300, 100000);
  auto l = Make(Opts({{a, 0.7}, {b, 0.3}}, 16, 2));
  (void)Drain(*l, 3);
  const std::string state = l->State();
  EXPECT_TRUE(Make(Opts({{a, 7}, {b, 3}}, 16, 2))->LoadState(state).ok());
  LoaderOptions other = Opts({{a, 0.7}, {b, 0.3}}, 16, 2);
  other.pad_id = 5;
  Status s = Make(other)->LoadState(state);
  EXPECT_NE(s.message().find("other sources or settings"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("pad_id is 0 in the state, 5 here"), std::string::npos) << s.ToString();
  other = Opts({{a, 0.5}, {b, 0.5}}, 16, 2);
  s = Make(other)->LoadState(state);
  EXPECT_NE(s.message().find("source 0 is " + a + "@0.7 in the state, " + a + "@0.5 here"), std::string::npos)
      << s.ToString();
  other = Opts({{a, 0.7}, {b, 0.3}}, 16, 2);
  other.epochs = 2;
  EXPECT_NE(Make(other)->LoadState(state).message().find("epochs is 1 in the state, 2 here"), std::string::npos);
}

// Without packing, the padding after a short document is a piece of its own
// in every key: cu_seqlens, document_ids and position_ids agree.
TEST_F(LoaderTest, UnpackedPaddingIsAPieceOfItsOwnInEveryKey) {
  std::string uri = MakeTopic(dir_, "t", 1, 60);
  LoaderOptions o = Opts({{uri, 1}}, 40, 6);
  o.pack = false;
  auto l = Make(o);
  std::vector<Batch> batches;
  (void)Drain(*l, 3, &batches);
  ASSERT_FALSE(batches.empty());
  for (Batch& b : batches) {
    std::vector<int32_t> bounds = {0};
    int32_t longest = 0, run = 0;
    for (uint32_t r = 0; r < b.batch_size; ++r) {
      for (uint32_t t = 0; t < b.seq_len; ++t) {
        const size_t i = size_t{r} * b.seq_len + t;
        const bool starts = t == 0 || b.document_ids[i] != b.document_ids[i - 1];
        if (starts && t > 0) bounds.push_back(static_cast<int32_t>(i));
        if (starts) run = 0;
        longest = std::max(longest, ++run);
        EXPECT_EQ(b.position_ids64()[i], starts ? 0 : b.position_ids64()[i - 1] + 1) << "row " << r << " t " << t;
        EXPECT_EQ(b.document_ids[i], b.attention_mask[i] ? 0 : 1);
      }
      bounds.push_back(static_cast<int32_t>((r + 1) * b.seq_len));
    }
    EXPECT_EQ(b.cu_seqlens, bounds);
    EXPECT_EQ(b.max_seqlen, longest);
  }
}

TEST_F(LoaderTest, ABatchOf2To31TokensIsRefused) {
  std::string uri = MakeTopic(dir_, "t", 1, 10);
  LoaderOptions o = Opts({{uri, 1}}, 1u << 24, 128);  // exactly 2^31 tokens
  auto l = Loader::Create(o);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("batch_size * seq_len"), std::string::npos) << l.status().ToString();
  o.batch_size = 127;
  o.prefetch_batches = 1;
  o.memory_budget_bytes = 1;
  EXPECT_TRUE(ValidateLoaderOptions(o).ok());
  LoaderOptions named = Opts({{uri, 1}}, 16, 2);
  named.prefetch_batches = 0;
  EXPECT_NE(ValidateLoaderOptions(named).message().find("prefetch_batches must be between 1 and 1024, not 0"),
            std::string::npos);
  named = Opts({{uri, 1}}, 16, 2);
  named.memory_budget_bytes = 0;
  EXPECT_NE(ValidateLoaderOptions(named).message().find("memory_budget_bytes"), std::string::npos);
}

// The limits live in one table that ValidateLoaderOptions and the Python
// binding both read, worded once.
TEST(LoaderOptionRangeTest, OneTableAndOneWordingForTheLimits) {
  const std::optional<LoaderOptionRange> seq_len = FindLoaderOptionRange("seq_len");
  ASSERT_TRUE(seq_len.has_value());
  EXPECT_EQ(seq_len->lo, 1u);
  EXPECT_EQ(seq_len->hi, uint64_t{1} << 24);
  EXPECT_FALSE(FindLoaderOptionRange("rank").has_value());  // its limit is world_size, checked on its own
  Status s = LoaderOptionOutOfRange("seq_len", *seq_len, "1099511627776");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "seq_len must be between 1 and 16777216, not 1099511627776");
  LoaderOptions o = Opts({{"log:/nowhere", 1}}, 0, 2);
  EXPECT_EQ(ValidateLoaderOptions(o).message(), "seq_len must be between 1 and 16777216, not 0");
}

// In a child process: 0 when a loader whose batch cannot be allocated under
// an address-space limit reports it from Next().
int NextUnderAnAddressSpaceLimit(const std::string& uri) {
  // Room for what the process holds, not for a 50 GB batch.
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{2} << 30);
  const rlimit rl{limit, limit};
  if (setrlimit(RLIMIT_AS, &rl) != 0) return 4;
  auto l = Loader::Create(Opts({{uri, 1}}, 32767, 65536));
  if (!l.ok()) return 2;
  auto b = (*l)->Next();
  const bool reported = !b.ok() && b.status().code() == StatusCode::kResourceExhausted &&
                        b.status().message().find("out of memory") != std::string::npos;
  return reported ? 0 : 3;
}

// An exception on the prefetch thread (here: out of memory for a batch) is
// the Status of Next(), not the end of the process.
TEST_F(LoaderTest, OutOfMemoryOnThePrefetchThreadIsAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit and a sanitizer's shadow memory do not mix";
#else
  std::string uri = MakeTopic(dir_, "t", 1, 100);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(NextUnderAnAddressSpaceLimit(uri)), ::testing::ExitedWithCode(0), "");
#endif
}

// Metrics and the buffered-byte count while windows are being read in the
// background (the sanitized build checks that nothing races).
TEST_F(LoaderTest, MetricsWhileWindowsAreReadInTheBackground) {
  std::string uri = MakeTopic(dir_, "t", 4, 4000);
  LoaderOptions o = Opts({{uri, 1}}, 32, 4);
  o.block_records = 8;
  o.window_blocks = 2;
  o.prefetch_batches = 2;
  auto l = Make(o);
  uint64_t max_bytes = 0;
  for (int i = 0; i < 400; ++i) {
    auto b = l->Next();
    ASSERT_TRUE(b.ok());
    if (!*b) break;
    LoaderMetrics m = l->Metrics();
    max_bytes = std::max(max_bytes, m.buffered_bytes);
    ASSERT_EQ(m.partition_lag.size(), 4u);
    for (uint32_t p = 0; p < 4; ++p) {
      EXPECT_EQ(m.partition_lag[p].partition, p);
      EXPECT_EQ(m.partition_lag[p].uri, uri);
      EXPECT_LE(m.partition_lag[p].records_behind, 1000u);
    }
  }
  EXPECT_GT(max_bytes, 0u);
}

// Token accounting: per source and epoch, exactly the tokens of the rows
// (by the rows' sources) and, once a pass is complete, the source's whole.
TEST_F(LoaderTest, TokenAccountingMatchesTheRowsPerSourceAndEpoch) {
  const std::string a = MakeTopic(dir_, "a", 2, 300), b = MakeTopic(dir_, "b", 1, 120);
  LoaderOptions o = Opts({{a, 2}, {b, 1}}, 48, 4);
  o.epochs = 2;
  auto l = Make(o);
  std::vector<Batch> batches;
  Drain(*l, SIZE_MAX, &batches);
  std::map<uint32_t, uint64_t> row_tokens;
  for (const Batch& batch : batches) {
    for (uint32_t r = 0; r < batch.batch_size; ++r) row_tokens[batch.source_of_row[r]] += batch.seq_len;
  }
  const LoaderMetrics m = l->Metrics();
  std::map<uint32_t, uint64_t> counted;
  std::map<std::pair<uint32_t, uint64_t>, std::pair<uint64_t, uint64_t>> by_epoch;
  for (const LoaderMetrics::SourceConsumption& c : m.consumed) {
    counted[c.source] += c.tokens;
    by_epoch[{c.source, c.epoch}] = {c.tokens, c.documents};
  }
  EXPECT_EQ(counted, row_tokens);
  EXPECT_EQ(m.consumed_from_sample, 0u);
  uint64_t whole_a = 0, whole_b = 0;
  for (uint32_t d = 0; d < 300; ++d) whole_a += DocLen(d);
  for (uint32_t d = 0; d < 120; ++d) whole_b += DocLen(d);
  const std::pair<uint64_t, uint64_t> first_a = by_epoch[{0, 0}], first_b = by_epoch[{1, 0}];
  EXPECT_EQ(first_a, std::make_pair(whole_a, uint64_t{300}));
  EXPECT_EQ(first_b, std::make_pair(whole_b, uint64_t{120}));
  // The state holds the same counts: a loader given it reports them.
  auto again = Make(o);
  ASSERT_TRUE(again->LoadState(l->State()).ok());
  EXPECT_EQ(again->Metrics().consumed.size(), m.consumed.size());
  for (size_t i = 0; i < m.consumed.size(); ++i) EXPECT_EQ(again->Metrics().consumed[i].tokens, m.consumed[i].tokens);
}

std::string Get(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    timeval timeout{3, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
    ::send(fd, request.data(), request.size(), 0);
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// The endpoint reads the loader from its own thread while the training
// thread takes batches and loads states (a TSan build checks the locking).
TEST_F(LoaderTest, TheMetricsEndpointIsScrapedWhileTheLoaderWorks) {
  const std::string uri = MakeTopic(dir_, "t", 2, 400);
  LoaderOptions o = Opts({{uri, 1}}, 32, 2);
  o.epochs = 0;
  o.metrics_port = 0;
  auto l = Make(o);
  const uint16_t port = l->MetricsPort();
  ASSERT_GT(port, 0);
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    while (!done.load()) {
      if (Get(port).find("tokenfeed_loader_tokens_total") != std::string::npos) ++scrapes;
    }
  });
  std::string state;
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(l->Next().ok());
    if (i == 20) state = l->State();
    if (i == 40) {
      ASSERT_TRUE(l->LoadState(state).ok());
    }
  }
  done = true;
  scraper.join();
  EXPECT_GT(scrapes.load(), 0);
  const std::string text = Get(port);
  EXPECT_NE(text.find("tokenfeed_loader_batches_total{rank=\"0\"} 60\n"), std::string::npos) << text;
  LoaderOptions none = Opts({{uri, 1}}, 32, 2);
  EXPECT_EQ(Make(none)->MetricsPort(), 0);
}

}  // namespace
}  // namespace tokenfeed
