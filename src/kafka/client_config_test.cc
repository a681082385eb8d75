#include "kafka/client_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "kafka/client_options.h"
#include "kafka/producer.h"
#include "kafka/rdkafka_handle.h"
#include "tokenfeed/client_log.h"

namespace tokenfeed::kafka {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()));
  std::ofstream(path) << text;
  return path.string();
}

TEST(ClientConfig, AssignmentSplitsAtFirstEquals) {
  ClientConfig c;
  ASSERT_TRUE(c.SetAssignment("sasl.jaas.config= a=b=c ").ok());
  ASSERT_NE(c.Find("sasl.jaas.config"), nullptr);
  EXPECT_EQ(c.Find("sasl.jaas.config")->value, "a=b=c");
  EXPECT_EQ(c.Find("sasl.jaas.config")->origin, "-X");
}

TEST(ClientConfig, AssignmentWithoutEqualsIsAnError) {
  ClientConfig c;
  Status s = c.SetAssignment("linger.ms");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("key=value"), std::string::npos) << s.ToString();
  EXPECT_EQ(c.SetAssignment("=5").code(), StatusCode::kInvalidArgument);
}

TEST(ClientConfig, LaterSetReplacesEarlier) {
  ClientConfig c;
  c.Set("linger.ms", "1");
  c.Set("linger.ms", "7", "here");
  ASSERT_EQ(c.entries().size(), 1u);
  EXPECT_EQ(c.entries()[0].value, "7");
  EXPECT_EQ(c.entries()[0].origin, "here");
}

TEST(ClientOptionsForUri, DefaultsThenFileThenAssignmentsLaterWinning) {
  const std::string path = WriteTemp("tf_uri_props", "fetch.wait.max.ms=50\nlinger.ms=3\n");
  KafkaUri parsed;
  auto o = ClientOptionsForUri("kafka://b1:9092,b2:9093/t", {"fetch.wait.max.ms=10", "max.partition.fetch.bytes=1"},
                               path, {"linger.ms=9"}, std::chrono::milliseconds(1234), &parsed);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(parsed.topic, "t");
  EXPECT_EQ(o->bootstrap, "b1:9092,b2:9093");
  EXPECT_EQ(o->timeout.count(), 1234);
  EXPECT_EQ(o->config.Find("max.partition.fetch.bytes")->value, "1");
  EXPECT_EQ(o->config.Find("fetch.wait.max.ms")->value, "50");  // the file wins over the default
  EXPECT_EQ(o->config.Find("fetch.wait.max.ms")->origin, path + ":1");
  EXPECT_EQ(o->config.Find("linger.ms")->value, "9");  // -X wins over the file
  EXPECT_EQ(o->config.Find("linger.ms")->origin, "-X");
  std::remove(path.c_str());
}

TEST(ClientOptionsForUri, BadUriPropertyOrTimeoutIsAnError) {
  KafkaUri parsed;
  EXPECT_EQ(ClientOptionsForUri("log:/a/b", {}, "", {}, std::chrono::milliseconds(1), &parsed).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ClientOptionsForUri("kafka://h:1/t", {}, "", {"linger.ms"}, std::chrono::milliseconds(1), &parsed)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  Status s = ClientOptionsForUri("kafka://h:1/t", {}, "", {}, std::chrono::milliseconds(0), &parsed).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("timeout must be positive"), std::string::npos) << s.ToString();
}

TEST(ClientConfig, PropertiesFileSkipsCommentsAndRemembersLines) {
  const std::string path = WriteTemp("tf_props", "# a comment\n\n! also a comment\n security.protocol = SASL_SSL \n"
                                                 "sasl.mechanism=PLAIN\r\n");
  ClientConfig c;
  ASSERT_TRUE(c.LoadPropertiesFile(path).ok());
  ASSERT_EQ(c.entries().size(), 2u);
  EXPECT_EQ(c.Find("security.protocol")->value, "SASL_SSL");
  EXPECT_EQ(c.Find("security.protocol")->origin, path + ":4");
  EXPECT_EQ(c.Find("sasl.mechanism")->value, "PLAIN");
  std::remove(path.c_str());
}

TEST(ClientConfig, PropertiesFileBadLineNamesFileAndLine) {
  const std::string path = WriteTemp("tf_props_bad", "linger.ms=5\nthis line is wrong\n");
  ClientConfig c;
  Status s = c.LoadPropertiesFile(path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(path + ":2"), std::string::npos) << s.ToString();
  std::remove(path.c_str());
}

TEST(ClientConfig, MalformedLinesNameTheKeyAndLineNeverTheValue) {
  const std::string path = WriteTemp("tf_props_secret", "linger.ms=5\nsasl.password: hunter2\n");
  ClientConfig c;
  Status s = c.LoadPropertiesFile(path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(path + ":2"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("'sasl.password'"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s.ToString();
  std::remove(path.c_str());

  const std::string bare = WriteTemp("tf_props_bare", "hunter2\n=hunter3\n");
  s = c.LoadPropertiesFile(bare);
  EXPECT_NE(s.message().find(bare + ":1"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s.ToString();
  std::ofstream(bare) << "=hunter3\n";
  s = c.LoadPropertiesFile(bare);
  EXPECT_NE(s.message().find(bare + ":1"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().find("hunter3"), std::string::npos) << s.ToString();
  std::remove(bare.c_str());

  for (std::string arg : {"sasl.password hunter2", "hunter2", "=hunter2", " = hunter2"}) {
    s = c.SetAssignment(arg);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << arg;
    EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s.ToString();
  }
  EXPECT_NE(c.SetAssignment("sasl.password hunter2").message().find("'sasl.password'"), std::string::npos);
}

TEST(ClientConfig, MissingPropertiesFileIsNotFound) {
  ClientConfig c;
  Status s = c.LoadPropertiesFile("/nonexistent/tokenfeed.properties");
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("/nonexistent/tokenfeed.properties"), std::string::npos);
}

TEST(ClientConfig, SecretPropertiesAreRecognised) {
  EXPECT_TRUE(IsSecretProperty("sasl.password"));
  EXPECT_TRUE(IsSecretProperty("ssl.key.password"));
  EXPECT_TRUE(IsSecretProperty("sasl.oauthbearer.client.secret"));
  EXPECT_FALSE(IsSecretProperty("linger.ms"));
}

// librdkafka validates keys when a client is created: no broker is needed.
TEST(ClientCreation, UnknownPropertyNamesKeyAndOrigin) {
  ClientOptions o;
  o.bootstrap = "127.0.0.1:1";
  ASSERT_TRUE(o.config.SetAssignment("no.such.property=1").ok());
  auto c = CreateClient(RD_KAFKA_PRODUCER, o, {}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("'no.such.property' (-X)"), std::string::npos) << c.status().ToString();
}

TEST(ClientCreation, BadValueNamesFileLine) {
  const std::string path = WriteTemp("tf_props_val", "linger.ms=forever\n");
  ClientOptions o;
  o.bootstrap = "127.0.0.1:1";
  ASSERT_TRUE(o.config.LoadPropertiesFile(path).ok());
  auto c = CreateClient(RD_KAFKA_PRODUCER, o, {}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'linger.ms' (" + path + ":1)"), std::string::npos) << c.status().ToString();
  std::remove(path.c_str());
}

TEST(ClientCreation, PinnedSettingCannotBeOverridden) {
  ProducerOptions o;
  o.bootstrap = "127.0.0.1:1";
  o.topic = "t";
  o.config.Set("enable.idempotence", "false", "-X");
  auto p = Producer::Open(o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("enable.idempotence=false"), std::string::npos) << p.status().ToString();
}

TEST(ClientCreation, NoBootstrapIsAnError) {
  ClientOptions o;
  auto c = CreateClient(RD_KAFKA_PRODUCER, o, {}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("bootstrap"), std::string::npos);
}

TEST(ClientCreation, BootstrapFromConfigIsUsed) {
  ClientOptions o;
  o.config.Set("bootstrap.servers", "127.0.0.1:9");
  auto c = CreateClient(RD_KAFKA_PRODUCER, o, {}, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->bootstrap, "127.0.0.1:9");
}

TEST(ClientLog, WithoutASinkLinesGoToStderrInLibrdkafkasFormat) {
  testing::internal::CaptureStderr();
  EmitClientLog({4, "FAIL", "rdkafka#producer-1", "broker down"});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "%4|FAIL|rdkafka#producer-1| broker down\n");
}

// A refused connection makes librdkafka log (FAIL, level 3) on its own
// threads: with a sink installed the line reaches it, and stderr stays clean.
TEST(ClientLog, LibraryLinesGoToTheInstalledSinkAndNotToStderr) {
  std::mutex mu;
  std::vector<ClientLogLine> lines;
  SetClientLogSink([&](const ClientLogLine& line) {
    std::lock_guard lock(mu);
    lines.push_back(line);
  });
  testing::internal::CaptureStderr();
  {
    ClientOptions o;
    o.bootstrap = "127.0.0.1:1";  // nothing listens on port 1
    o.timeout = std::chrono::milliseconds(1500);
    auto c = CreateClient(RD_KAFKA_PRODUCER, o, {}, {});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto count = FetchPartitionCount(*c, "t");
    EXPECT_FALSE(count.ok());
  }  // the client is destroyed here: no line arrives after this
  const std::string err = testing::internal::GetCapturedStderr();
  SetClientLogSink({});
  EXPECT_EQ(err.find("|FAIL|"), std::string::npos) << err;
  std::lock_guard lock(mu);
  bool refused = false;
  for (const auto& l : lines) {
    if (l.severity <= 4 && l.message.find("127.0.0.1:1") != std::string::npos) refused = true;
    EXPECT_FALSE(l.client.empty());
    EXPECT_FALSE(l.facility.empty());
  }
  EXPECT_TRUE(refused) << lines.size() << " lines";
}

TEST(ClientLog, SeverityNames) {
  EXPECT_STREQ(ClientLogSeverityName(0), "critical");
  EXPECT_STREQ(ClientLogSeverityName(3), "error");
  EXPECT_STREQ(ClientLogSeverityName(4), "warning");
  EXPECT_STREQ(ClientLogSeverityName(7), "debug");
}

}  // namespace
}  // namespace tokenfeed::kafka
