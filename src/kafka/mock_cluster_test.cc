// The client layer against librdkafka's in-process mock cluster: fast, no
// Java, and able to inject broker errors that a real broker rarely shows.
// The real-broker tests in tests/kafka/ remain the reference (the mock, for
// one, creates any topic a client asks about).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>

#include "kafka/partition_consumer.h"
#include "kafka/rdkafka_handle.h"
#include "kafka/producer.h"

namespace tokenfeed::kafka {
namespace {

using std::chrono::milliseconds;

class MockClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char errstr[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof errstr);
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    ASSERT_NE(owner_, nullptr) << errstr;
    cluster_ = rd_kafka_mock_cluster_new(owner_, 3);
    ASSERT_NE(cluster_, nullptr);
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, "tokens", 4, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  void TearDown() override {
    if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
    if (owner_ != nullptr) rd_kafka_destroy(owner_);
  }

  ProducerOptions ProducerOpts() const {
    ProducerOptions o;
    o.bootstrap = bootstrap_;
    o.topic = "tokens";
    o.timeout = milliseconds(5000);
    o.config.Set("log_level", "2");
    return o;
  }
  PartitionConsumerOptions ConsumerOpts() const {
    PartitionConsumerOptions o;
    o.bootstrap = bootstrap_;
    o.topic = "tokens";
    o.timeout = milliseconds(3000);
    o.config.Set("log_level", "2");
    return o;
  }
  static std::string Value(uint64_t i) { return std::string(1000 + i % 3000, static_cast<char>('a' + i % 26)); }

  std::map<int32_t, std::vector<std::string>> ReadAll() {
    std::map<int32_t, std::vector<std::string>> out;
    auto c = PartitionConsumer::Open(ConsumerOpts(), {{0, 0}, {1, 0}, {2, 0}, {3, 0}});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return out;
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(10000);
    while (!(*c)->AllAtEnd() && std::chrono::steady_clock::now() < deadline) {
      auto batch = (*c)->Poll(1000, milliseconds(100));
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok()) break;
      for (const auto& r : *batch) {
        EXPECT_EQ(r.offset, static_cast<int64_t>(out[r.partition].size()));
        out[r.partition].emplace_back(reinterpret_cast<const char*>(r.value.data()), r.value.size());
      }
    }
    EXPECT_TRUE((*c)->AllAtEnd());
    return out;
  }

  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_;
};

TEST_F(MockClusterTest, RecordsRoundTripToChosenPartitions) {
  auto p = Producer::Open(ProducerOpts());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (uint64_t i = 0; i < 200; ++i) ASSERT_TRUE((*p)->Produce(static_cast<int32_t>(i % 4), "", Value(i), i).ok());
  std::vector<Delivery> d;
  ASSERT_TRUE((*p)->Flush(milliseconds(10000), &d).ok());
  ASSERT_EQ(d.size(), 200u);
  for (const auto& x : d) {
    ASSERT_TRUE(x.status.ok()) << x.status.ToString();
    EXPECT_EQ(x.partition, static_cast<int32_t>(x.token % 4));
    EXPECT_EQ(x.offset, static_cast<int64_t>(x.token / 4));
  }
  auto read = ReadAll();
  for (uint64_t i = 0; i < 200; ++i) EXPECT_EQ(read[static_cast<int32_t>(i % 4)].at(i / 4), Value(i));
}

TEST_F(MockClusterTest, ADeliveryHandlerThatThrowsIsTheClientsNextErrorNotTheProcesssEnd) {
  // An exception must not cross librdkafka's C frames (it ended the process).
  auto events = std::make_unique<ClientEvents>();
  int calls = 0;
  events->on_delivery = [&calls](const rd_kafka_message_t&) {
    ++calls;
    throw std::bad_alloc();
  };
  ClientOptions options;
  options.bootstrap = bootstrap_;
  options.timeout = milliseconds(5000);
  options.config.Set("log_level", "2");
  auto client = CreateClient(RD_KAFKA_PRODUCER, options, {}, {}, std::move(events));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE(client->events->CallbackFailure().ok());
  char value[] = "x";
  ASSERT_EQ(rd_kafka_producev(client->handle.get(), RD_KAFKA_V_TOPIC("tokens"), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(value, 1), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_flush(client->handle.get(), 10000);
  EXPECT_EQ(calls, 1);
  const Status failure = client->events->CallbackFailure();
  EXPECT_EQ(failure.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(failure.message().find("delivery report handler failed"), std::string::npos) << failure.ToString();
}

TEST_F(MockClusterTest, RetriableProduceErrorsAreRetriedWithoutDuplicates) {
  auto p = Producer::Open(ProducerOpts());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The next produce requests fail with errors the broker sends during a
  // leader move or an ISR shrink; the idempotent producer retries them.
  rd_kafka_mock_push_request_errors(cluster_, 0 /* Produce */, 4, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                                    RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                                    RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                                    RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
  for (uint64_t i = 0; i < 100; ++i) ASSERT_TRUE((*p)->Produce(static_cast<int32_t>(i % 4), "", Value(i), i).ok());
  std::vector<Delivery> d;
  ASSERT_TRUE((*p)->Flush(milliseconds(10000), &d).ok());
  std::set<uint64_t> tokens;
  for (const auto& x : d) {
    EXPECT_TRUE(x.status.ok()) << x.status.ToString();
    tokens.insert(x.token);
  }
  EXPECT_EQ(tokens.size(), 100u);
  size_t total = 0;
  for (const auto& [partition, values] : ReadAll()) total += values.size();
  EXPECT_EQ(total, 100u);
}

TEST_F(MockClusterTest, PermanentProduceErrorFailsTheRecordsDelivery) {
  auto p = Producer::Open(ProducerOpts());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  rd_kafka_mock_push_request_errors(cluster_, 0 /* Produce */, 1, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  ASSERT_TRUE((*p)->Produce(2, "", Value(1), 77).ok());
  std::vector<Delivery> d;
  ASSERT_TRUE((*p)->Flush(milliseconds(10000), &d).ok());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].token, 77u);
  EXPECT_EQ(d[0].status.code(), StatusCode::kInvalidArgument) << d[0].status.ToString();
  EXPECT_NE(d[0].status.message().find("partition 2"), std::string::npos) << d[0].status.ToString();
  EXPECT_NE(d[0].status.message().find("ACL"), std::string::npos) << d[0].status.ToString();
}

TEST_F(MockClusterTest, ReaderTurnsUnavailableWhenEveryBrokerIsDown) {
  auto p = Producer::Open(ProducerOpts());
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->Produce(0, "", Value(0), 0).ok());
  std::vector<Delivery> d;
  ASSERT_TRUE((*p)->Flush(milliseconds(10000), &d).ok());
  PartitionConsumerOptions o = ConsumerOpts();
  o.timeout = milliseconds(1500);
  auto c = PartitionConsumer::Open(o, {{0, 0}});
  ASSERT_TRUE(c.ok());
  for (int32_t b = 1; b <= 3; ++b) rd_kafka_mock_broker_set_down(cluster_, b);
  const auto start = std::chrono::steady_clock::now();
  Status down;
  while (down.ok() && std::chrono::steady_clock::now() - start < milliseconds(20000)) {
    auto batch = (*c)->Poll(100, milliseconds(100));
    if (!batch.ok()) down = batch.status();
  }
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  // The bound, then a metadata probe of at most the bound, plus slack.
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500 * 2 + 3000));
  for (int32_t b = 1; b <= 3; ++b) rd_kafka_mock_broker_set_up(cluster_, b);
}

}  // namespace
}  // namespace tokenfeed::kafka
