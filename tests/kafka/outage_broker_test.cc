// A broker that dies under running clients: the producer's records fail with
// TimedOut after its bound, the reader's Poll turns Unavailable after its
// bound (never a hang), and both carry on once the broker is back. Runs its
// own private broker, since it kills it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kafka_test_env.h"

namespace tokenfeed::kafka::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class OutageBrokerTest : public KafkaBrokerTest {
 protected:
  void SetUp() override {
    KafkaBrokerTest::SetUp();  // skips or fails when no broker can run here
    if (IsSkipped() || HasFatalFailure()) return;
    own_dir_ = state_dir_ + "-outage-" + std::to_string(::getpid());
    ASSERT_EQ(KafkaLocal(own_dir_, "start >/dev/null"), 0);
    std::ifstream in(own_dir_ + "/bootstrap");
    std::getline(in, own_bootstrap_);
    ASSERT_FALSE(own_bootstrap_.empty());
  }
  void TearDown() override {
    KafkaBrokerTest::TearDown();
    if (!own_dir_.empty()) {
      EXPECT_EQ(KafkaLocal(own_dir_, "clean >/dev/null"), 0);
    }
  }
  std::string own_dir_;
  std::string own_bootstrap_;
};

TEST_F(OutageBrokerTest, ClientsFailWithinTheirBoundAndRecover) {
  constexpr milliseconds kBound{3000};
  ClientOptions ao;
  ao.bootstrap = own_bootstrap_;
  ao.timeout = milliseconds(20000);
  auto admin = AdminClient::Open(ao);
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  const std::string topic = "t.outage";
  ASSERT_TRUE((*admin)->CreateTopic({topic, 1, 1, {}}).ok());

  ProducerOptions po;
  po.bootstrap = own_bootstrap_;
  po.topic = topic;
  po.timeout = kBound;
  auto producer = Producer::Open(po);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE((*producer)->Produce(0, "", RecordPayload(i, 4096), i).ok());
  for (const auto& d : FlushAll(**producer, milliseconds(20000))) ASSERT_TRUE(d.status.ok()) << d.status.ToString();

  PartitionConsumerOptions co;
  co.bootstrap = own_bootstrap_;
  co.topic = topic;
  co.timeout = kBound;
  auto consumer = PartitionConsumer::Open(co, {{0, 0}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_EQ(ReadToEnd(**consumer, milliseconds(20000)).size(), 10u);

  ASSERT_EQ(KafkaLocal(own_dir_, "kill-node 1 >/dev/null"), 0);

  // Producer: each record fails on its own, after message.timeout.ms.
  auto start = Clock::now();
  for (uint64_t i = 100; i < 105; ++i) ASSERT_TRUE((*producer)->Produce(0, "", RecordPayload(i, 4096), i).ok());
  std::vector<Delivery> failed;
  Status flushed = (*producer)->Flush(milliseconds(20000), &failed);
  EXPECT_TRUE(flushed.ok()) << flushed.ToString();
  EXPECT_LT(Clock::now() - start, kBound + milliseconds(5000));
  ASSERT_EQ(failed.size(), 5u);
  for (const auto& d : failed) {
    EXPECT_EQ(d.status.code(), StatusCode::kTimedOut) << d.status.ToString();
    EXPECT_NE(d.status.message().find("message.timeout.ms = 3000"), std::string::npos) << d.status.ToString();
    EXPECT_NE(d.status.message().find(own_bootstrap_), std::string::npos) << d.status.ToString();
  }

  // Reader: empty polls, then Unavailable once the cluster has been gone
  // longer than the bound.
  start = Clock::now();
  Status down;
  while (down.ok() && Clock::now() - start < milliseconds(30000)) {
    auto batch = (*consumer)->Poll(100, milliseconds(200));
    if (!batch.ok()) down = batch.status();
    if (batch.ok()) {
      EXPECT_TRUE(batch->empty());
    }
  }
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  EXPECT_NE(down.message().find(own_bootstrap_), std::string::npos) << down.ToString();
  EXPECT_LT(Clock::now() - start, 2 * kBound + milliseconds(8000));

  // The broker comes back: the same clients work again.
  ASSERT_EQ(KafkaLocal(own_dir_, "start-node 1 >/dev/null"), 0);
  ASSERT_TRUE((*producer)->Produce(0, "", RecordPayload(200, 4096), 200).ok());
  std::vector<Delivery> after;
  Status again = (*producer)->Flush(milliseconds(20000), &after);
  // Timed-out records do not poison the idempotent producer: it starts a new
  // sequence and the next record is written.
  EXPECT_TRUE(again.ok()) << again.ToString();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].status.ok()) << after[0].status.ToString();
  EXPECT_EQ(after[0].offset, 10);
  const auto deadline = Clock::now() + milliseconds(20000);
  std::vector<int64_t> offsets;
  while (Clock::now() < deadline && offsets.empty()) {
    auto batch = (*consumer)->Poll(100, milliseconds(200));
    if (!batch.ok()) continue;  // Unavailable until it reconnects
    for (const auto& r : *batch) offsets.push_back(r.offset);
  }
  EXPECT_EQ(offsets, std::vector<int64_t>{10});
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
