// tokenfeed serve against a real broker when its transactional producer fails
// fatally, as librdkafka reports "invalid transaction state" after some
// rebalances: the service replaces the producer (the new one aborts what the
// old one left open), redoes the work, and every raw message ends up as
// exactly one committed record. A producer failing over and over without a
// commit stops the service with the reason.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kafka_test_env.h"
#include "serve/preprocess_service.h"
#include "tokenfeed/record.h"

namespace tokenfeed::kafka::testing {
namespace {

class ServeRecoveryBrokerTest : public KafkaBrokerTest {
 protected:
  serve::ServeOptions Options(const std::string& raw, const std::string& tokens) {
    serve::ServeOptions o;
    o.from_uri = "kafka://" + bootstrap_ + "/" + raw;
    o.to_uri = "kafka://" + bootstrap_ + "/" + tokens;
    o.tokenizer_path = std::string(TOKENFEED_SOURCE_DIR) + "/src/tokenizer/testdata/sentencepiece_tiny.json";
    o.group = "g-" + raw;
    o.instance_id = "recovery";
    o.max_transaction_messages = 50;
    o.commit_interval = std::chrono::milliseconds(200);
    o.output.kafka_timeout = timeout_;
    o.log = [this](const std::string& line) {
      std::lock_guard lock(log_mu_);
      log_.push_back(line);
    };
    return o;
  }

  void ProduceRaw(const std::string& raw, int n) {
    auto producer = Producer::Open(ProducerFor(raw));
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE((*producer)->Produce(i % 2, "", "message " + std::to_string(i) + " abc", i).ok());
    }
    for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  }

  // (raw partition, raw offset) -> how many committed records name it.
  std::map<std::pair<uint64_t, uint64_t>, int> CommittedOrigins(const std::string& tokens) {
    std::map<std::pair<uint64_t, uint64_t>, int> out;
    auto topic = admin().DescribeTopic(tokens);
    if (!topic.ok()) return out;  // not created yet
    std::vector<PartitionOffset> from;
    for (const auto& p : topic->partitions) from.push_back({p.id, 0});
    auto consumer = PartitionConsumer::Open(ConsumerFor(tokens), from);
    EXPECT_TRUE(consumer.ok()) << consumer.status().ToString();
    if (!consumer.ok()) return out;
    for (const ReadRecord& r : ReadToEnd(**consumer, timeout_)) {
      auto view = record::RecordView::Parse(r.value);
      EXPECT_TRUE(view.ok()) << view.status().ToString();
      if (view.ok()) ++out[{view->source_line(), view->source_byte_offset()}];
    }
    return out;
  }

  std::string Log() {
    std::lock_guard lock(log_mu_);
    std::string all;
    for (const auto& l : log_) all += l + "\n";
    return all;
  }

  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(ServeRecoveryBrokerTest, AFatalProducerIsReplacedAndEveryMessageCommitsOnce) {
  const std::string raw = CreateTopic(2);
  const std::string tokens = NewTopicName();
  constexpr int kMessages = 400;
  ProduceRaw(raw, kMessages);

  serve::ServeOptions o = Options(raw, tokens);
  std::atomic<int> batches{0}, commits{0};
  std::atomic<bool> done{false};
  o.on_event_for_testing = [&](std::string_view event, Producer& p) {
    // Inside the second transaction, and after the third commit (the next
    // transaction's records then fail): each time the failed producer's
    // transaction is aborted and a new producer replaces it. (An injected
    // fatal error leaves librdkafka's transaction state as it was, so the
    // refusals a real one brings to the abort and to the next begin are not
    // reproduced here; tests/kafka/transaction_broker_test.cc shows that
    // the new producer ends a transaction the old one left open.)
    if (event == "batch" && ++batches == 2) p.InjectFatalErrorForTesting("test: inside a transaction");
    if (event == "commit" && ++commits == 3) p.InjectFatalErrorForTesting("test: between transactions");
  };
  Status result;
  std::thread service([&] { result = serve::RunService(o, &done); });
  std::map<std::pair<uint64_t, uint64_t>, int> origins;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (commits.load() < 3) continue;
    origins = CommittedOrigins(tokens);
    if (origins.size() >= static_cast<size_t>(kMessages)) break;
  }
  done = true;
  service.join();
  ASSERT_TRUE(result.ok()) << result.ToString() << "\n" << Log();
  origins = CommittedOrigins(tokens);
  EXPECT_EQ(origins.size(), static_cast<size_t>(kMessages)) << Log();
  for (const auto& [origin, count] : origins) {
    EXPECT_EQ(count, 1) << "raw partition " << origin.first << " offset " << origin.second;
  }
  const std::string log = Log();
  size_t reopened = 0;
  for (size_t at = log.find("opening it again"); at != std::string::npos; at = log.find("opening it again", at + 1)) {
    ++reopened;
  }
  EXPECT_EQ(reopened, 2u) << log;
}

TEST_F(ServeRecoveryBrokerTest, AProducerThatKeepsFailingStopsTheServiceWithTheReason) {
  const std::string raw = CreateTopic(2);
  const std::string tokens = NewTopicName();
  ProduceRaw(raw, 200);
  serve::ServeOptions o = Options(raw, tokens);
  o.on_event_for_testing = [](std::string_view event, Producer& p) {
    if (event == "batch") p.InjectFatalErrorForTesting("test: every transaction");
  };
  std::atomic<bool> done{false}, finished{false};
  Status result;
  std::thread service([&] {
    result = serve::RunService(o, &done);
    finished = true;
  });
  // Six failures with back-offs of 0.1 .. 1.6 s between: well within this.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && !finished.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  done = true;
  service.join();
  ASSERT_FALSE(result.ok()) << Log();
  EXPECT_NE(result.message().find("failed 6 times without a commit between; stopping"), std::string::npos)
      << result.ToString();
  EXPECT_NE(Log().find("test: every transaction"), std::string::npos) << Log();
  EXPECT_TRUE(CommittedOrigins(tokens).empty());
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
