#include "kafka/kafka_error.h"

#include <gtest/gtest.h>

namespace tokenfeed::kafka {
namespace {

TEST(KafkaError, CodesMapToStatusCodes) {
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__TRANSPORT), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT), StatusCode::kTimedOut);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT), StatusCode::kTimedOut);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART), StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS), StatusCode::kAlreadyExists);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE), StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET), StatusCode::kOutOfRange);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR__FATAL), StatusCode::kAborted);
  EXPECT_EQ(StatusCodeForKafkaError(RD_KAFKA_RESP_ERR_NO_ERROR), StatusCode::kOk);
}

TEST(KafkaError, MessageNamesWhereAndWhatToDo) {
  Status s = KafkaErrorStatus(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "Kafka produce",
                              {"127.0.0.1:9092", "tokens", 3, 17});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("topic 'tokens', partition 3, offset 17, brokers 127.0.0.1:9092"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("[UNKNOWN_TOPIC_OR_PART]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("create the topic"), std::string::npos) << s.message();
}

TEST(KafkaError, DetailReplacesGenericText) {
  Status s = KafkaErrorStatus(RD_KAFKA_RESP_ERR__TRANSPORT, "connect", {}, "Connection refused");
  EXPECT_EQ(s.message().rfind("connect: Connection refused [_TRANSPORT]", 0), 0u) << s.message();
}

TEST(KafkaError, NoErrorPassedAsFailureIsInternal) {
  EXPECT_EQ(KafkaErrorStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "x", {}).code(), StatusCode::kInternal);
}

TEST(KafkaError, ErrorObjectIsConsumed) {
  EXPECT_TRUE(ConsumeKafkaError(nullptr, "x", {}).ok());
  rd_kafka_error_t* e = rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "not in a transaction");
  Status s = ConsumeKafkaError(e, "Kafka commit transaction", {"b:1", "t"});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not in a transaction"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tokenfeed::kafka
