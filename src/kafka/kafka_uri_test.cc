#include "kafka/kafka_uri.h"

#include <gtest/gtest.h>

namespace tokenfeed::kafka {
namespace {

TEST(KafkaUri, ParsesOneBroker) {
  auto u = ParseKafkaUri("kafka://127.0.0.1:9092/tokens");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_EQ(u->brokers.size(), 1u);
  EXPECT_EQ(u->brokers[0], "127.0.0.1:9092");
  EXPECT_EQ(u->topic, "tokens");
  EXPECT_EQ(u->Bootstrap(), "127.0.0.1:9092");
  EXPECT_EQ(u->ToString(), "kafka://127.0.0.1:9092/tokens");
}

TEST(KafkaUri, ParsesSeveralBrokersAndIpv6) {
  auto u = ParseKafkaUri("kafka://a.example:1,b-2:65535,[::1]:9092/my_topic.v-1");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->Bootstrap(), "a.example:1,b-2:65535,[::1]:9092");
  EXPECT_EQ(u->topic, "my_topic.v-1");
}

void ExpectMalformed(const std::string& uri, const std::string& why) {
  auto u = ParseKafkaUri(uri);
  ASSERT_FALSE(u.ok()) << uri;
  EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(u.status().message().find("'" + uri + "'"), std::string::npos) << u.status().ToString();
  EXPECT_NE(u.status().message().find(why), std::string::npos) << u.status().ToString();
  EXPECT_NE(u.status().message().find("kafka://HOST:PORT"), std::string::npos);
}

TEST(KafkaUri, RejectsMalformedUrisNamingThem) {
  ExpectMalformed("log:/tmp/x", "does not start with kafka://");
  ExpectMalformed("kafka://host:9092", "no /TOPIC");
  ExpectMalformed("kafka:///t", "no broker");
  ExpectMalformed("kafka://host:9092/", "no topic");
  ExpectMalformed("kafka://host/t", "has no :PORT");
  ExpectMalformed("kafka://host:0/t", "not a number in 1..65535");
  ExpectMalformed("kafka://host:70000/t", "not a number in 1..65535");
  ExpectMalformed("kafka://host:9x/t", "not a number");
  ExpectMalformed("kafka://h1:1,,h2:2/t", "empty broker");
  ExpectMalformed("kafka://:9092/t", "no host");
  ExpectMalformed("kafka://host:9092/bad topic", "only letters");
  ExpectMalformed("kafka://host:9092/a/b", "only letters");
  ExpectMalformed("kafka://[::1/t", "[IPV6]:PORT");
}

TEST(KafkaUri, TopicNameRules) {
  EXPECT_TRUE(ValidateTopicName("a").ok());
  EXPECT_FALSE(ValidateTopicName("").ok());
  EXPECT_FALSE(ValidateTopicName(".").ok());
  EXPECT_FALSE(ValidateTopicName("..").ok());
  EXPECT_TRUE(ValidateTopicName(std::string(249, 'x')).ok());
  EXPECT_FALSE(ValidateTopicName(std::string(250, 'x')).ok());
  EXPECT_TRUE(LooksLikeKafkaUri("kafka://x"));
  EXPECT_FALSE(LooksLikeKafkaUri("log:dir/t"));
}

}  // namespace
}  // namespace tokenfeed::kafka
