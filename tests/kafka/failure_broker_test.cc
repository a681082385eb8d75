// Failures are bounded in time and say what to do: a record too large for
// the producer or for the topic, an unreachable broker, a rejected property;
// the training reader never commits offsets to Kafka.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kafka_test_env.h"

namespace tokenfeed::kafka::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class FailureBrokerTest : public KafkaBrokerTest {};

bool Contains(const Status& s, const std::string& part) { return s.message().find(part) != std::string::npos; }

TEST_F(FailureBrokerTest, RecordLargerThanProducerLimitNamesSizeLimitAndSetting) {
  const std::string topic = CreateTopic(1);
  auto producer = Producer::Open(ProducerFor(topic));
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const std::string big(1500000, 'x');
  Status s = (*producer)->Produce(0, "", big, 1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_TRUE(Contains(s, "1500000 bytes")) << s.ToString();
  EXPECT_TRUE(Contains(s, "message.max.bytes = 1000000")) << s.ToString();
  EXPECT_TRUE(Contains(s, "max.message.bytes on the topic")) << s.ToString();
  EXPECT_EQ((*producer)->InFlight(), 0u);
}

TEST_F(FailureBrokerTest, RecordLargerThanTopicLimitFailsItsDeliveryClearly) {
  const std::string topic = CreateTopic(1, {{"max.message.bytes", "100000"}});
  auto producer = Producer::Open(ProducerFor(topic, Compression::kNone));
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  ASSERT_TRUE((*producer)->Produce(0, "", RecordPayload(1, 1000), 1).ok());
  ASSERT_TRUE((*producer)->Produce(0, "", std::string(300000, 'y'), 2).ok());
  std::vector<Delivery> deliveries;
  const Status flushed = (*producer)->Flush(timeout_, &deliveries);
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  ASSERT_EQ(deliveries.size(), 2u);
  const Delivery* big = nullptr;
  for (const auto& d : deliveries) {
    if (d.token == 2) big = &d;
  }
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->status.code(), StatusCode::kResourceExhausted) << big->status.ToString();
  EXPECT_TRUE(Contains(big->status, "300000 bytes")) << big->status.ToString();
  EXPECT_TRUE(Contains(big->status, "at most 100000 bytes")) << big->status.ToString();
  EXPECT_TRUE(Contains(big->status, "max.message.bytes")) << big->status.ToString();
  EXPECT_TRUE(Contains(big->status, topic)) << big->status.ToString();
}

int ClosedLoopbackPort() {
  // A port that was free a moment ago: nothing listens on it.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST_F(FailureBrokerTest, UnreachableBrokerIsAnErrorWithinTheBound) {
  const std::string dead = "127.0.0.1:" + std::to_string(ClosedLoopbackPort());
  constexpr milliseconds kBound{2000};
  // Slack for the process and librdkafka's threads; far below the default 30 s.
  constexpr milliseconds kSlack{4000};

  ProducerOptions po;
  po.bootstrap = dead;
  po.topic = "anything";
  po.timeout = kBound;
  auto start = Clock::now();
  auto producer = Producer::Open(po);
  auto took = Clock::now() - start;
  ASSERT_FALSE(producer.ok());
  EXPECT_TRUE(producer.status().code() == StatusCode::kUnavailable ||
              producer.status().code() == StatusCode::kTimedOut)
      << producer.status().ToString();
  EXPECT_TRUE(Contains(producer.status(), dead)) << producer.status().ToString();
  EXPECT_LT(took, kBound + kSlack);

  PartitionConsumerOptions co;
  co.bootstrap = dead;
  co.topic = "anything";
  co.timeout = kBound;
  start = Clock::now();
  auto consumer = PartitionConsumer::Open(co, {{0, 0}});
  took = Clock::now() - start;
  ASSERT_FALSE(consumer.ok());
  EXPECT_TRUE(Contains(consumer.status(), dead)) << consumer.status().ToString();
  EXPECT_LT(took, kBound + kSlack);

  ClientOptions ao;
  ao.bootstrap = dead;
  ao.timeout = kBound;
  start = Clock::now();
  auto admin = AdminClient::Open(ao);
  took = Clock::now() - start;
  ASSERT_FALSE(admin.ok());
  EXPECT_TRUE(Contains(admin.status(), dead)) << admin.status().ToString();
  EXPECT_TRUE(Contains(admin.status(), "Connection refused")) << admin.status().ToString();
  EXPECT_LT(took, kBound + kSlack);
}

TEST_F(FailureBrokerTest, InvalidPropertyIsAClearError) {
  const std::string topic = CreateTopic(1);
  ProducerOptions o = ProducerFor(topic);
  ASSERT_TRUE(o.config.SetAssignment("linger.ms=soon").ok());
  auto producer = Producer::Open(o);
  ASSERT_FALSE(producer.ok());
  EXPECT_EQ(producer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(producer.status(), "'linger.ms' (-X)")) << producer.status().ToString();

  PartitionConsumerOptions c = ConsumerFor(topic);
  c.config.Set("enable.auto.commit", "true", "-X");
  auto consumer = PartitionConsumer::Open(c, {{0, 0}});
  ASSERT_FALSE(consumer.ok());
  EXPECT_TRUE(Contains(consumer.status(), "enable.auto.commit=true")) << consumer.status().ToString();
}

TEST_F(FailureBrokerTest, PropertiesFileIsApplied) {
  const std::string topic = CreateTopic(1);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tf_kafka_" + std::to_string(::getpid()) + ".properties")).string();
  std::ofstream(path) << "# producer limits for this test\nmessage.max.bytes = 2000\nclient.id=tf-file-test\n";
  ProducerOptions o = ProducerFor(topic);
  ASSERT_TRUE(o.config.LoadPropertiesFile(path).ok());
  auto producer = Producer::Open(o);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  EXPECT_TRUE((*producer)->Produce(0, "", std::string(1500, 'a'), 1).ok());
  Status s = (*producer)->Produce(0, "", std::string(5000, 'a'), 2);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_TRUE(Contains(s, "message.max.bytes = 2000")) << s.ToString();
  for (const auto& d : FlushAll(**producer, timeout_)) EXPECT_TRUE(d.status.ok()) << d.status.ToString();
  std::remove(path.c_str());
}

TEST_F(FailureBrokerTest, TrainingReaderNeverCommitsOffsets) {
  const std::string topic = CreateTopic(2);
  {
    auto producer = Producer::Open(ProducerFor(topic));
    ASSERT_TRUE(producer.ok());
    for (uint64_t i = 0; i < 20; ++i) ASSERT_TRUE((*producer)->Produce(i % 2, "", RecordPayload(i, 4096), i).ok());
    for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok());
  }
  const std::string group = "tf-reader-" + std::to_string(::getpid()) + "-" + topic;
  PartitionConsumerOptions o = ConsumerFor(topic);
  o.config.Set("group.id", group);
  {
    auto consumer = PartitionConsumer::Open(o, {{0, 0}, {1, 0}});
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    EXPECT_EQ(ReadToEnd(**consumer, timeout_).size(), 20u);
    // Longer than librdkafka's default auto-commit interval (5 s) would
    // matter only if auto-commit were on; closing is when a commit would go.
  }
  auto offsets = admin().ListGroupOffsets(group);
  ASSERT_TRUE(offsets.ok()) << offsets.status().ToString();
  EXPECT_TRUE(offsets->empty()) << offsets->size() << " committed offsets, first at partition "
                                << offsets->front().partition;

  // The check can see a commit: kcat's group consumer commits what it read.
  if (std::system("command -v kcat >/dev/null 2>&1") == 0) {
    const std::string other = group + "-kcat";
    const std::string cmd = "kcat -q -b " + bootstrap_ + " -G " + other + " -o beginning -e -X auto.commit.interval.ms=100 " +
                            topic + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    auto committed = admin().ListGroupOffsets(other);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    EXPECT_FALSE(committed->empty());
  }
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
