// The streaming preprocessing service (tokenfeed serve): raw text messages
// from a Kafka topic, in a consumer group, cleaned and tokenized into one
// token record each in another topic, exactly once: records and consumed
// offsets commit in one Kafka transaction. No deduplication, no rejects topic
// (malformed messages are counted and logged). RunService blocks on one
// thread until *stop is set (the open transaction then commits). docs/kafka.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "document/document_encoder.h"
#include "serve/raw_message_decoder.h"
#include "text/cleaner.h"
#include "tokenfeed/status.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::kafka {
class Producer;
}  // namespace tokenfeed::kafka

namespace tokenfeed::serve {

struct ServeOptions {
  std::string from_uri;  // kafka://HOST:PORT/RAW
  std::string to_uri;    // kafka://HOST:PORT/TOKENS (the same cluster: one transaction spans both)
  std::string tokenizer_path;
  std::string group = "tokenfeed-serve";
  // Names this instance's transactional producer, "tokenfeed-serve.GROUP.ID".
  // Give each instance a stable, distinct one (e.g. its pod name): when it
  // restarts, its unfinished transaction is aborted at once instead of
  // blocking read_committed readers until the transaction timeout. Empty: a
  // random one.
  std::string instance_id;
  RawFormat format = RawFormat::kAuto;
  std::string json_field = "text";
  text::CleanOptions clean;
  // BOS/EOS around each document, special-token text (plain text unless
  // kept); the decoder repairs invalid UTF-8 before this stage.
  document::DocumentOptions document;
  int threads = 1;  // tokenizing threads per transaction batch (0: every usable CPU)
  // A transaction commits after this many messages or this long after it
  // began, whichever comes first, and whenever the input is idle.
  size_t max_transaction_messages = 10000;
  std::chrono::milliseconds commit_interval{500};
  // The output topic when it is missing: partitions (0: as many as the input
  // topic), replication, compression; and the Kafka client settings used for
  // every client (-X, --kafka-config, --kafka-timeout-ms).
  topic::WriterConfig output;
  // Metrics endpoint; port -1: none, 0: any free port (logged).
  std::string metrics_address = "127.0.0.1";
  int metrics_port = -1;
  std::chrono::milliseconds log_interval{10000};
  // Where log lines go (default: standard error).
  std::function<void(const std::string&)> log;
  // Tests only: called with the transactional producer after each batch of
  // messages went into the open transaction ("batch") and after each commit
  // ("commit"), to inject the failures the service must survive.
  std::function<void(std::string_view event, kafka::Producer&)> on_event_for_testing;
};

// The checks of serve's arguments that need no cluster and no file: both
// URIs given, Kafka URIs of one cluster (the same brokers) naming two
// different topics, a positive max_transaction_messages and a metrics port
// of at most 65535. InvalidArgument naming the option. RunService makes them
// first; the command makes them to tell a wrong command line from a failure.
Status CheckServeArguments(const ServeOptions& options);

Status RunService(const ServeOptions& options, const std::atomic<bool>* stop);

}  // namespace tokenfeed::serve
