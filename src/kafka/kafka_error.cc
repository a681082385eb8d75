#include "kafka/kafka_error.h"

namespace tokenfeed::kafka {
namespace {

std::string_view Advice(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
      return "check that the brokers run and that bootstrap.servers and the security settings "
             "(security.protocol, sasl.*, ssl.*) are right";
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
      return "the brokers did not answer in time: check that they run and are reachable, or raise the timeout";
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
      return "create the topic first, or check its name";
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return "the topic has fewer partitions: describe it to see how many";
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return "fewer in-sync replicas than the topic's min.insync.replicas: bring the brokers back";
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      return "the offset is not stored (retention may have deleted it, or it is past the end): "
             "check the partition's watermarks";
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
      return "check the credentials (sasl.username, sasl.password, sasl.mechanism)";
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return "the principal lacks an ACL for this operation: ask the cluster's operator to grant it";
    case RD_KAFKA_RESP_ERR__SSL:
      return "check ssl.ca.location and the certificates";
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return "the producer's queue is full: serve deliveries more often or raise queue.buffering.max.kbytes";
    default:
      return {};
  }
}

}  // namespace

StatusCode StatusCodeForKafkaError(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return StatusCode::kOk;
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
      return StatusCode::kUnavailable;
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
      return StatusCode::kTimedOut;
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND:
    case RD_KAFKA_RESP_ERR__NOENT:
      return StatusCode::kNotFound;
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
      return StatusCode::kAlreadyExists;
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
      return StatusCode::kResourceExhausted;
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return StatusCode::kOutOfRange;
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_INVALID_REPLICA_ASSIGNMENT:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_INVALID_REQUEST:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__UNKNOWN_GROUP:
      return StatusCode::kInvalidArgument;
    case RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_COMPRESSION_TYPE:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
      return StatusCode::kUnsupported;
    case RD_KAFKA_RESP_ERR__DESTROY:
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR__FATAL:
      return StatusCode::kAborted;
    case RD_KAFKA_RESP_ERR__BAD_MSG:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    case RD_KAFKA_RESP_ERR__BAD_COMPRESSION:
      return StatusCode::kCorruption;
    default:
      return StatusCode::kIoError;
  }
}

std::string DescribeWhere(const ErrorWhere& where) {
  std::string s;
  auto add = [&s](std::string_view part) {
    s.append(s.empty() ? " (" : ", ").append(part);
  };
  if (!where.topic.empty()) add("topic '" + std::string(where.topic) + "'");
  if (where.partition >= 0) add("partition " + std::to_string(where.partition));
  if (where.offset >= 0) add("offset " + std::to_string(where.offset));
  if (!where.bootstrap.empty()) add("brokers " + std::string(where.bootstrap));
  if (!s.empty()) s.push_back(')');
  return s;
}

Status KafkaErrorStatus(rd_kafka_resp_err_t err, std::string_view what, const ErrorWhere& where,
                        std::string_view detail) {
  std::string m(what);
  m.append(DescribeWhere(where)).append(": ");
  if (detail.empty()) {
    m.append(rd_kafka_err2str(err));
  } else {
    m.append(detail);
  }
  m.append(" [").append(rd_kafka_err2name(err)).append("]");
  if (std::string_view advice = Advice(err); !advice.empty()) m.append("; ").append(advice);
  StatusCode code = StatusCodeForKafkaError(err);
  if (code == StatusCode::kOk) code = StatusCode::kInternal;  // a caller passed NO_ERROR as a failure
  return Status(code, std::move(m));
}

Status ConsumeKafkaError(rd_kafka_error_t* error, std::string_view what, const ErrorWhere& where) {
  if (error == nullptr) return Status::OK();
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  std::string detail = rd_kafka_error_string(error);
  if (rd_kafka_error_is_fatal(error)) detail.append(" (fatal: open a new producer)");
  if (rd_kafka_error_txn_requires_abort(error)) detail.append(" (abort the transaction, then retry it)");
  if (rd_kafka_error_is_retriable(error)) detail.append(" (retriable)");
  rd_kafka_error_destroy(error);
  return KafkaErrorStatus(code, what, where, detail);
}

}  // namespace tokenfeed::kafka
