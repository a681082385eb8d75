// Topic administration against the real broker: create, describe (leaders,
// replicas, ISR), configs, watermarks, delete, and the missing-topic choice.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

#include "kafka_test_env.h"

namespace tokenfeed::kafka::testing {
namespace {

class AdminBrokerTest : public KafkaBrokerTest {};

TEST_F(AdminBrokerTest, CreateDescribeDeleteTopic) {
  const std::string topic = CreateTopic(3, {{"max.message.bytes", "2097152"}, {"min.insync.replicas", "1"}}, 1);

  auto info = admin().DescribeTopic(topic);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->name, topic);
  ASSERT_EQ(info->partitions.size(), 3u);
  for (int32_t p = 0; p < 3; ++p) {
    const auto& pi = info->partitions[p];
    EXPECT_EQ(pi.id, p);
    EXPECT_EQ(pi.leader, 1);  // the single node's id
    EXPECT_EQ(pi.replicas, std::vector<int32_t>{1});
    EXPECT_EQ(pi.isr, std::vector<int32_t>{1});
  }

  auto configs = admin().DescribeTopicConfigs(topic);
  ASSERT_TRUE(configs.ok()) << configs.status().ToString();
  auto it = std::find_if(configs->begin(), configs->end(), [](auto& kv) { return kv.first == "max.message.bytes"; });
  ASSERT_NE(it, configs->end());
  EXPECT_EQ(it->second, "2097152");

  auto wm = admin().QueryWatermarks(topic);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  EXPECT_EQ(*wm, (std::vector<Watermarks>{{0, 0}, {0, 0}, {0, 0}}));

  Status again = admin().CreateTopic({topic, 3, 1, {}});
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();

  ASSERT_TRUE(admin().DeleteTopic(topic).ok());
  auto gone = admin().DescribeTopic(topic);
  EXPECT_TRUE(gone.status().IsNotFound()) << gone.status().ToString();
  Status twice = admin().DeleteTopic(topic);
  EXPECT_TRUE(twice.IsNotFound()) << twice.ToString();
}

TEST_F(AdminBrokerTest, MissingTopicIsCreatedOrAnErrorAsAsked) {
  const std::string topic = CreateTopic(1);
  ASSERT_TRUE(admin().DeleteTopic(topic).ok());

  auto err = admin().EnsureTopic({topic, 2, 1, {}}, MissingTopic::kError);
  ASSERT_FALSE(err.ok());
  EXPECT_TRUE(err.status().IsNotFound()) << err.status().ToString();
  EXPECT_NE(err.status().message().find(topic), std::string::npos);

  auto created = admin().EnsureTopic({topic, 2, 1, {}}, MissingTopic::kCreate);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->partitions.size(), 2u);

  // Existing and big enough: described, not changed.
  auto existing = admin().EnsureTopic({topic, 1, 1, {}}, MissingTopic::kError);
  ASSERT_TRUE(existing.ok()) << existing.status().ToString();
  EXPECT_EQ(existing->partitions.size(), 2u);

  auto too_small = admin().EnsureTopic({topic, 5, 1, {}}, MissingTopic::kCreate);
  EXPECT_EQ(too_small.status().code(), StatusCode::kInvalidArgument) << too_small.status().ToString();
}

TEST_F(AdminBrokerTest, InvalidTopicRequestsAreClearErrors) {
  Status bad_rf = admin().CreateTopic({"t.bad-rf." + std::to_string(::getpid()), 1, 3, {}});
  EXPECT_EQ(bad_rf.code(), StatusCode::kInvalidArgument) << bad_rf.ToString();
  EXPECT_NE(bad_rf.message().find("INVALID_REPLICATION_FACTOR"), std::string::npos) << bad_rf.ToString();

  Status bad_config = admin().CreateTopic({"t.bad-config." + std::to_string(::getpid()), 1, 1, {{"no.such.config", "1"}}});
  EXPECT_FALSE(bad_config.ok());
  EXPECT_NE(bad_config.message().find("no.such.config"), std::string::npos) << bad_config.ToString();

  EXPECT_EQ(admin().CreateTopic({"bad name", 1, 1, {}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(admin().CreateTopic({"t.zero", 0, 1, {}}).code(), StatusCode::kInvalidArgument);
}

TEST_F(AdminBrokerTest, MissingTopicOnOpenIsNotFound) {
  auto p = Producer::Open(ProducerFor("t.never-created." + std::to_string(::getpid())));
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.status().IsNotFound()) << p.status().ToString();
  EXPECT_NE(p.status().message().find(bootstrap_), std::string::npos) << p.status().ToString();

  auto c = PartitionConsumer::Open(ConsumerFor("t.never-created." + std::to_string(::getpid())), {{0, 0}});
  EXPECT_TRUE(c.status().IsNotFound()) << c.status().ToString();
  // A metadata request never creates the topic.
  EXPECT_TRUE(admin().DescribeTopic("t.never-created." + std::to_string(::getpid())).status().IsNotFound());
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
