#include "kafka_test_env.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>

namespace tokenfeed::kafka::testing {
namespace {

bool ReferenceRequired() {
  const char* v = std::getenv("TOKENFEED_REQUIRE_REFERENCE");
  return v != nullptr && std::string(v) == "1";
}

std::string ReadBootstrap(const std::string& dir) {
  std::ifstream in(dir + "/bootstrap");
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

void KafkaBrokerTest::SetUp() {
  const char* dir = std::getenv("TOKENFEED_KAFKA_DIR");
  if (dir != nullptr) state_dir_ = dir;
  if (!state_dir_.empty()) bootstrap_ = ReadBootstrap(state_dir_);
  if (bootstrap_.empty()) {
    const std::string why = "no Kafka test broker (TOKENFEED_KAFKA_DIR=" + state_dir_ +
                            " has no bootstrap file); run through ctest, which starts one with scripts/kafka-local";
    if (ReferenceRequired()) {
      FAIL() << why << " -- and TOKENFEED_REQUIRE_REFERENCE=1";
    }
    GTEST_SKIP() << why;
  }
  ClientOptions o;
  o.bootstrap = bootstrap_;
  o.timeout = timeout_;
  auto admin = AdminClient::Open(o);
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  admin_ = std::move(*admin);
}

void KafkaBrokerTest::TearDown() {
  if (!admin_) return;
  for (const auto& t : topics_) {
    Status s = admin_->DeleteTopic(t);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
  }
}

std::string KafkaBrokerTest::NewTopicName() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string("t.") + info->test_suite_name() + "." + info->name() + "." +
                     std::to_string(::getpid()) + "." + std::to_string(counter++);
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  topics_.push_back(name);
  return name;
}

std::string KafkaBrokerTest::CreateTopic(int32_t partitions, std::vector<std::pair<std::string, std::string>> configs,
                                         int16_t replication_factor) {
  const std::string name = NewTopicName();
  TopicSpec spec{name, partitions, replication_factor, std::move(configs)};
  Status s = admin_->CreateTopic(spec);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return name;
}

ProducerOptions KafkaBrokerTest::ProducerFor(const std::string& topic, Compression c) const {
  ProducerOptions o;
  o.bootstrap = bootstrap_;
  o.timeout = timeout_;
  o.topic = topic;
  o.compression = c;
  return o;
}

PartitionConsumerOptions KafkaBrokerTest::ConsumerFor(const std::string& topic) const {
  PartitionConsumerOptions o;
  o.bootstrap = bootstrap_;
  o.timeout = timeout_;
  o.topic = topic;
  return o;
}

std::string RecordPayload(uint64_t seed, size_t size) {
  std::string s(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Token-like: small values repeat, so the compressors have work to do.
    s[i] = static_cast<char>((x >> 59) + (i % 7 == 0 ? 0 : 'a'));
  }
  return s;
}

size_t RecordSize(uint64_t i) { return 4096 + (i * 7919) % (60 * 1024); }

std::vector<Delivery> FlushAll(Producer& p, std::chrono::milliseconds timeout) {
  std::vector<Delivery> out;
  Status s = p.Flush(timeout, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::vector<ReadRecord> ReadToEnd(PartitionConsumer& c, std::chrono::milliseconds timeout) {
  std::vector<ReadRecord> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!c.AllAtEnd()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "did not reach the end of every partition within " << timeout.count() << " ms";
      break;
    }
    auto batch = c.Poll(1000, std::chrono::milliseconds(200));
    if (!batch.ok()) {
      ADD_FAILURE() << batch.status().ToString();
      break;
    }
    for (const auto& r : *batch) {
      out.push_back({r.partition, r.offset,
                     std::string(reinterpret_cast<const char*>(r.key.data()), r.key.size()),
                     std::string(reinterpret_cast<const char*>(r.value.data()), r.value.size())});
    }
  }
  return out;
}

int KafkaLocal(const std::string& state_dir, const std::string& args) {
  const std::string cmd = std::string("'") + TOKENFEED_SOURCE_DIR + "/scripts/kafka-local' --dir '" + state_dir +
                          "' " + args;
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace tokenfeed::kafka::testing
