// Transactions for the later consume-transform-produce service: aborted
// records stay invisible to read_committed readers, committed ones appear,
// and a group consumer's offsets commit inside the transaction.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "kafka/group_consumer.h"
#include "kafka_test_env.h"

namespace tokenfeed::kafka::testing {
namespace {

class TransactionBrokerTest : public KafkaBrokerTest {};

TEST_F(TransactionBrokerTest, AbortedRecordsAreInvisibleCommittedOnesAppear) {
  const std::string topic = CreateTopic(1);
  ProducerOptions o = ProducerFor(topic);
  o.transactional_id = "tf-txn-" + std::to_string(::getpid()) + "-" + topic;
  auto producer = Producer::Open(o);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  Producer& p = **producer;
  ASSERT_TRUE(p.InitTransactions().ok());

  ASSERT_TRUE(p.BeginTransaction().ok());
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(p.Produce(0, "", "aborted-" + std::to_string(i), i).ok());
  ASSERT_TRUE(p.AbortTransaction().ok());

  ASSERT_TRUE(p.BeginTransaction().ok());
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(p.Produce(0, "", "kept-" + std::to_string(i), 10 + i).ok());
  Status committed = p.CommitTransaction();
  ASSERT_TRUE(committed.ok()) << committed.ToString();
  std::vector<Delivery> deliveries;
  ASSERT_TRUE(p.PollDeliveries(std::chrono::milliseconds(0), &deliveries).ok());

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  const auto records = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].value, "kept-" + std::to_string(i));
  // Aborted records and transaction markers still occupy offsets: the end
  // position is the high watermark, past the last record.
  auto wm = (*consumer)->QueryWatermarks(0);
  ASSERT_TRUE(wm.ok());
  EXPECT_GT(wm->high, records.back().offset + 1);
  EXPECT_EQ((*consumer)->Position(0), wm->high);
  EXPECT_TRUE((*consumer)->AtEnd(0));
}

TEST_F(TransactionBrokerTest, ANewProducerWithTheIdRecoversFromAFatalOneAndFencedIsToldApart) {
  const std::string topic = CreateTopic(1);
  ProducerOptions o = ProducerFor(topic);
  o.transactional_id = "tf-txn-fatal-" + std::to_string(::getpid()) + "-" + topic;
  auto first = Producer::Open(o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->InitTransactions().ok());
  ASSERT_TRUE((*first)->BeginTransaction().ok());
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE((*first)->Produce(0, "", "lost-" + std::to_string(i), i).ok());
  // The records reach the broker inside the open transaction.
  for (const auto& d : FlushAll(**first, timeout_)) ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ((*first)->failure(), Producer::Failure::kNone);
  (*first)->InjectFatalErrorForTesting("test: a fatal transaction state");
  EXPECT_EQ((*first)->failure(), Producer::Failure::kFatal);
  std::vector<Delivery> ignored;
  EXPECT_FALSE((*first)->Flush(timeout_, &ignored).ok());  // a failed producer refuses from now on

  // The same id again, the first's transaction never aborted by it: the
  // new producer's InitTransactions aborts it (else a read_committed reader
  // would stop before its records and never see "kept").
  auto second = Producer::Open(o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  Status init = (*second)->InitTransactions();
  ASSERT_TRUE(init.ok()) << init.ToString();
  ASSERT_TRUE((*second)->BeginTransaction().ok());
  ASSERT_TRUE((*second)->Produce(0, "", "kept", 10).ok());
  Status committed = (*second)->CommitTransaction();
  ASSERT_TRUE(committed.ok()) << committed.ToString();

  // A third with the same id fences the second: that one is kFenced, not kFatal.
  auto third = Producer::Open(o);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  ASSERT_TRUE((*third)->InitTransactions().ok());
  Status begun = (*second)->BeginTransaction();
  if (begun.ok()) {
    (void)(*second)->Produce(0, "", "fenced", 11);
    EXPECT_FALSE((*second)->CommitTransaction().ok());
  }
  EXPECT_EQ((*second)->failure(), Producer::Failure::kFenced);

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  const auto records = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value, "kept");
}

TEST_F(TransactionBrokerTest, ConsumedOffsetsCommitWithTheTransaction) {
  const std::string in = CreateTopic(1);
  const std::string out = CreateTopic(1);
  {
    auto producer = Producer::Open(ProducerFor(in));
    ASSERT_TRUE(producer.ok());
    for (uint64_t i = 0; i < 6; ++i) ASSERT_TRUE((*producer)->Produce(0, "", "in-" + std::to_string(i), i).ok());
    for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok());
  }
  GroupConsumerOptions go;
  go.bootstrap = bootstrap_;
  go.timeout = timeout_;
  go.group_id = "tf-service-" + std::to_string(::getpid()) + "-" + in;
  go.topics = {in};
  auto consumer = GroupConsumer::Open(go);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();

  ProducerOptions po = ProducerFor(out);
  po.transactional_id = "tf-service-txn-" + std::to_string(::getpid()) + "-" + out;
  auto producer = Producer::Open(po);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  ASSERT_TRUE((*producer)->InitTransactions().ok());
  ASSERT_TRUE((*producer)->BeginTransaction().ok());

  size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (seen < 6 && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->Poll(100, std::chrono::milliseconds(200));
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    for (const auto& r : *batch) {
      const std::string v(reinterpret_cast<const char*>(r.value.data()), r.value.size());
      ASSERT_TRUE((*producer)->Produce(0, "", "out-" + v, static_cast<uint64_t>(r.offset)).ok());
      ++seen;
    }
  }
  ASSERT_EQ(seen, 6u);
  EXPECT_TRUE((*consumer)->TakeAssignmentChange());  // the first assignment
  EXPECT_FALSE((*consumer)->TakeAssignmentChange());
  auto positions = (*consumer)->Positions();
  ASSERT_TRUE(positions.ok()) << positions.status().ToString();
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0], (TopicPartitionOffset{in, 0, 6}));
  auto meta = (*consumer)->GroupMetadata();
  ASSERT_TRUE(meta.ok());
  Status sent = (*producer)->SendOffsetsToTransaction(*positions, *meta);
  ASSERT_TRUE(sent.ok()) << sent.ToString();
  Status committed = (*producer)->CommitTransaction();
  ASSERT_TRUE(committed.ok()) << committed.ToString();
  EXPECT_TRUE((*consumer)->Close().ok());

  // The broker applies the transaction's offsets once its markers are
  // written, a moment after the commit returns.
  Result<std::vector<TopicPartitionOffset>> offsets = std::vector<TopicPartitionOffset>{};
  const auto offsets_deadline = std::chrono::steady_clock::now() + timeout_;
  do {
    offsets = admin().ListGroupOffsets(go.group_id);
    ASSERT_TRUE(offsets.ok()) << offsets.status().ToString();
    if (!offsets->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < offsets_deadline);
  EXPECT_EQ(*offsets, (std::vector<TopicPartitionOffset>{{in, 0, 6}}));
  auto reader = PartitionConsumer::Open(ConsumerFor(out), {{0, 0}});
  ASSERT_TRUE(reader.ok());
  const auto records = ReadToEnd(**reader, timeout_);
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[5].value, "out-in-5");
}

TEST_F(TransactionBrokerTest, SecondMemberTakesPartitionsAndTheFirstIsTold) {
  const std::string topic = CreateTopic(2);
  {
    auto producer = Producer::Open(ProducerFor(topic));
    ASSERT_TRUE(producer.ok());
    for (uint64_t i = 0; i < 20; ++i) ASSERT_TRUE((*producer)->Produce(i % 2, "", std::to_string(i), i).ok());
    for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok());
  }
  GroupConsumerOptions go;
  go.bootstrap = bootstrap_;
  go.timeout = timeout_;
  go.group_id = "tf-rebalance-" + std::to_string(::getpid()) + "-" + topic;
  go.topics = {topic};
  auto a = GroupConsumer::Open(go);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto assigned = [](GroupConsumer& c) {
    auto r = c.Assignment();
    return r.ok() ? r->size() : size_t{999};
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(40000);
  size_t read_a = 0;
  while (assigned(**a) != 2 && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*a)->Poll(100, std::chrono::milliseconds(100));
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    read_a += batch->size();
  }
  ASSERT_EQ(assigned(**a), 2u);
  EXPECT_TRUE((*a)->TakeAssignmentChange());

  auto b = GroupConsumer::Open(go);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  while ((assigned(**a) != 1 || assigned(**b) != 1) && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE((*a)->Poll(100, std::chrono::milliseconds(50)).ok());
    ASSERT_TRUE((*b)->Poll(100, std::chrono::milliseconds(50)).ok());
  }
  EXPECT_EQ(assigned(**a), 1u);
  EXPECT_EQ(assigned(**b), 1u);
  EXPECT_TRUE((*a)->TakeAssignmentChange()) << "the first member was not told it lost a partition";
  EXPECT_TRUE((*b)->TakeAssignmentChange());
  // Positions only for what each member holds now.
  auto pa = (*a)->Positions();
  ASSERT_TRUE(pa.ok());
  auto aa = (*a)->Assignment();
  ASSERT_TRUE(aa.ok());
  for (const auto& p : *pa) EXPECT_EQ(p.partition, (*aa)[0].partition);
  EXPECT_TRUE((*b)->Close().ok());
  EXPECT_TRUE((*a)->Close().ok());
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
