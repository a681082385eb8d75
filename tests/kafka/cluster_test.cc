// Three brokers: a topic with replication factor 3 and min.insync.replicas=2
// keeps accepting acks=all writes while one broker is killed (SIGKILL), every
// record lands exactly once (idempotence: retried batches are not
// duplicated), and the restarted broker rejoins every ISR.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <set>
#include <thread>

#include "kafka_test_env.h"

namespace tokenfeed::kafka::testing {
namespace {

using std::chrono::milliseconds;

class ClusterTest : public KafkaBrokerTest {};

bool AllIsrFull(AdminClient& admin, const std::string& topic, size_t want) {
  auto info = admin.DescribeTopic(topic);
  if (!info.ok()) return false;
  for (const auto& p : info->partitions) {
    if (p.isr.size() != want || p.leader < 0) return false;
  }
  return true;
}

TEST_F(ClusterTest, BrokerKilledWhileProducingLosesAndDuplicatesNothing) {
  const std::string topic = CreateTopic(3, {{"min.insync.replicas", "2"}}, 3);
  auto info = admin().DescribeTopic(topic);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  for (const auto& p : info->partitions) {
    EXPECT_EQ(p.replicas.size(), 3u);
    EXPECT_EQ(p.isr.size(), 3u);
  }
  const int32_t victim = info->partitions[0].leader;
  ASSERT_GE(victim, 1);

  ProducerOptions o = ProducerFor(topic, Compression::kLz4);
  o.timeout = milliseconds(60000);
  auto producer = Producer::Open(o);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();

  constexpr uint64_t kRecords = 3000;
  constexpr size_t kSize = 8192;
  std::vector<Delivery> deliveries;
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(120000);
  for (uint64_t i = 0; i < kRecords; ++i) {
    ASSERT_TRUE((*producer)->Produce(static_cast<int32_t>(i % 3), std::to_string(i), RecordPayload(i, kSize), i).ok());
    if (i % 50 == 49) {
      // Keep the writes spread out in time so the kill lands mid-stream.
      ASSERT_TRUE((*producer)->PollDeliveries(milliseconds(5), &deliveries).ok());
      while ((*producer)->InFlight() > 400 && std::chrono::steady_clock::now() < deadline) {
        ASSERT_TRUE((*producer)->PollDeliveries(milliseconds(20), &deliveries).ok());
      }
    }
    if (!killed && deliveries.size() >= kRecords / 3) {
      ASSERT_EQ(KafkaLocal(state_dir_, "kill-node " + std::to_string(victim)), 0);
      killed = true;
    }
  }
  ASSERT_TRUE(killed);
  Status flushed = (*producer)->Flush(milliseconds(90000), &deliveries);
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();

  ASSERT_EQ(deliveries.size(), kRecords);
  std::set<uint64_t> tokens;
  for (const auto& d : deliveries) {
    ASSERT_TRUE(d.status.ok()) << "token " << d.token << ": " << d.status.ToString();
    EXPECT_TRUE(tokens.insert(d.token).second) << "token " << d.token << " reported twice";
  }

  // The partitions led by the victim moved; the topic stays writable with two.
  auto during = admin().DescribeTopic(topic);
  ASSERT_TRUE(during.ok());
  for (const auto& p : during->partitions) EXPECT_NE(p.leader, victim);

  ASSERT_EQ(KafkaLocal(state_dir_, "start-node " + std::to_string(victim)), 0);
  const auto isr_deadline = std::chrono::steady_clock::now() + milliseconds(90000);
  while (!AllIsrFull(admin(), topic, 3) && std::chrono::steady_clock::now() < isr_deadline) {
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_TRUE(AllIsrFull(admin(), topic, 3)) << "the restarted broker did not rejoin every ISR";

  // Exactly once on the log: as many offsets as records, each token once.
  auto wm = admin().QueryWatermarks(topic);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  int64_t total = 0;
  for (const auto& w : *wm) total += w.high - w.low;
  EXPECT_EQ(total, static_cast<int64_t>(kRecords));

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}, {1, 0}, {2, 0}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  const auto records = ReadToEnd(**consumer, milliseconds(60000));
  ASSERT_EQ(records.size(), kRecords);
  std::set<uint64_t> read_tokens;
  for (const auto& r : records) {
    const uint64_t token = std::stoull(r.key);
    EXPECT_TRUE(read_tokens.insert(token).second) << "token " << token << " read twice";
    EXPECT_EQ(r.partition, static_cast<int32_t>(token % 3));
    ASSERT_EQ(r.value, RecordPayload(token, kSize)) << "token " << token;
  }
  EXPECT_EQ(read_tokens.size(), kRecords);
}

TEST_F(ClusterTest, ReplicationFactorAboveBrokerCountIsRejected) {
  Status s = admin().CreateTopic({"t.rf4." + std::to_string(::getpid()), 1, 4, {}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
