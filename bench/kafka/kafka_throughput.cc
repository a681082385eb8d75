// kafka_throughput: how fast tokenfeed::kafka moves token records between this
// process and a broker. Subcommands:
//   gen     --records N --size S --out FILE   records for kcat -P -D @@TFREC@@
//   create  --bootstrap B --topic T --partitions P
//   produce --bootstrap B --topic T --records N --size S [--input FILE] [--compression C]
//   consume --bootstrap B --topic T [--batch N] [--touch] [--tune-heap]
// Common: -X key=value (any librdkafka property). Each run prints one line:
// `<what> records=N bytes=B wall_s=W cpu_s=C MBps=R MBps_per_core=R/C-share`.
// Records are token-like (32-bit token ids, see TokenRecord); `gen` files
// separate them with kDelimiter so kcat -P -D can send the very same bytes.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <iterator>
#include <string_view>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kafka/admin_client.h"
#include "base/heap_tuning.h"
#include "kafka/partition_consumer.h"
#include "kafka/producer.h"

namespace tk = tokenfeed::kafka;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string command, bootstrap, topic, input, out, compression = "lz4";
  uint64_t records = 20000;
  size_t size = 16384;
  int32_t partitions = 1;
  size_t batch = 10000;
  bool touch = false;
  bool tune_heap = false;
  tk::ClientConfig config;
};

[[noreturn]] void Die(const std::string& m) {
  std::fprintf(stderr, "kafka_throughput: %s\n", m.c_str());
  std::exit(1);
}

Args Parse(int argc, char** argv) {
  Args a;
  if (argc < 2) Die("usage: kafka_throughput gen|create|produce|consume [options]");
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(k + " needs a value");
      return argv[++i];
    };
    if (k == "--bootstrap") a.bootstrap = next();
    else if (k == "--topic") a.topic = next();
    else if (k == "--records") a.records = std::stoull(next());
    else if (k == "--size") a.size = std::stoull(next());
    else if (k == "--partitions") a.partitions = std::stoi(next());
    else if (k == "--batch") a.batch = std::stoull(next());
    else if (k == "--input") a.input = next();
    else if (k == "--out") a.out = next();
    else if (k == "--compression") a.compression = next();
    else if (k == "--touch") a.touch = true;
    else if (k == "--tune-heap") a.tune_heap = true;
    else if (k == "-X") {
      auto s = a.config.SetAssignment(next());
      if (!s.ok()) Die(s.ToString());
    } else Die("unknown option " + k);
  }
  return a;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Separates records in the files that `gen` writes (kcat -D reads them). It
// has no zero byte, and every 4 bytes of a record hold two, so it never
// occurs inside one.
constexpr std::string_view kDelimiter = "@@TFREC@@";

std::string TokenRecord(std::mt19937_64& rng, size_t size) {
  // Little-endian 32-bit token ids of a 50257-token vocabulary, log-uniform
  // (close to the Zipf law of real text): what a tokenizer writes.
  std::string r(size, '\0');
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t i = 0; i + 4 <= size; i += 4) {
    const auto id = static_cast<uint32_t>(std::exp(u(rng) * std::log(50257.0))) - 1;
    std::memcpy(&r[i], &id, 4);
  }
  return r;
}

std::vector<std::string> LoadOrMakeRecords(const Args& a) {
  std::vector<std::string> recs;
  if (!a.input.empty()) {
    std::ifstream in(a.input, std::ios::binary);
    if (!in) Die("cannot open " + a.input);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    while (start < all.size() && recs.size() < a.records) {
      size_t end = all.find(kDelimiter, start);
      if (end == std::string::npos) end = all.size();
      recs.push_back(all.substr(start, end - start));
      start = end + kDelimiter.size();
    }
    return recs;
  }
  // A pool of distinct records reused round-robin keeps memory small.
  std::mt19937_64 rng(42);
  const size_t pool = std::min<uint64_t>(a.records, 512);
  for (size_t i = 0; i < pool; ++i) recs.push_back(TokenRecord(rng, a.size));
  return recs;
}

void Report(const char* what, uint64_t records, uint64_t bytes, double wall, double cpu) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%s records=%llu bytes=%llu wall_s=%.3f cpu_s=%.3f MBps=%.1f records_per_s=%.0f MBps_per_cpu_s=%.1f\n",
              what, static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes), wall, cpu,
              mb / wall, static_cast<double>(records) / wall, mb / cpu);
}

int Gen(const Args& a) {
  std::ofstream out(a.out, std::ios::binary);
  std::mt19937_64 rng(42);
  for (uint64_t i = 0; i < a.records; ++i) out << TokenRecord(rng, a.size) << kDelimiter;
  return out ? 0 : 1;
}

int Create(const Args& a) {
  tk::ClientOptions o;
  o.bootstrap = a.bootstrap;
  o.config = a.config;
  auto admin = tk::AdminClient::Open(o);
  if (!admin.ok()) Die(admin.status().ToString());
  (void)(*admin)->DeleteTopic(a.topic);
  auto s = (*admin)->CreateTopic({a.topic, a.partitions, -1, {}});
  if (!s.ok()) Die(s.ToString());
  return 0;
}

int Produce(const Args& a) {
  auto compression = tk::ParseCompression(a.compression);
  if (!compression.ok()) Die(compression.status().ToString());
  tk::ProducerOptions o;
  o.bootstrap = a.bootstrap;
  o.topic = a.topic;
  o.compression = *compression;
  o.config = a.config;
  auto producer = tk::Producer::Open(o);
  if (!producer.ok()) Die(producer.status().ToString());
  tk::Producer& p = **producer;
  const std::vector<std::string> recs = LoadOrMakeRecords(a);
  if (recs.empty()) Die("no records");
  std::vector<tk::Delivery> deliveries;
  uint64_t acked = 0, bytes = 0;
  const double cpu0 = CpuSeconds();
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < a.records; ++i) {
    const std::string& r = recs[i % recs.size()];
    auto s = p.Produce(static_cast<int32_t>(i % static_cast<uint64_t>(p.partition_count())), std::string_view(), r, i);
    if (!s.ok()) Die(s.ToString());
    bytes += r.size();
    if (i % 256 == 255) {
      deliveries.clear();
      (void)p.PollDeliveries(std::chrono::milliseconds(0), &deliveries);
      for (const auto& d : deliveries) {
        if (!d.status.ok()) Die(d.status.ToString());
        ++acked;
      }
    }
  }
  deliveries.clear();
  auto s = p.Flush(std::chrono::milliseconds(120000), &deliveries);
  if (!s.ok()) Die(s.ToString());
  for (const auto& d : deliveries) {
    if (!d.status.ok()) Die(d.status.ToString());
    ++acked;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (acked != a.records) Die("acked " + std::to_string(acked) + " of " + std::to_string(a.records));
  Report(("produce." + a.compression).c_str(), a.records, bytes, wall, CpuSeconds() - cpu0);
  return 0;
}

int Consume(const Args& a) {
  tk::PartitionConsumerOptions o;
  o.bootstrap = a.bootstrap;
  o.topic = a.topic;
  o.config = a.config;
  // Open once to learn the partition count, then assign them all.
  auto probe = tk::PartitionConsumer::Open(o, {});
  if (!probe.ok()) Die(probe.status().ToString());
  std::vector<tk::PartitionOffset> all;
  for (int32_t p = 0; p < (*probe)->partition_count(); ++p) all.push_back({p, 0});
  probe->reset();
  auto consumer = tk::PartitionConsumer::Open(o, all);
  if (!consumer.ok()) Die(consumer.status().ToString());
  uint64_t records = 0, bytes = 0, checksum = 0;
  const double cpu0 = CpuSeconds();
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::minutes(5);
  while (!(*consumer)->AllAtEnd() && Clock::now() < deadline) {
    auto batch = (*consumer)->Poll(a.batch, std::chrono::milliseconds(100));
    if (!batch.ok()) Die(batch.status().ToString());
    records += batch->size();
    bytes += batch->value_bytes();
    if (a.touch) {
      // Read every byte, as a loader copying into its buffers would.
      for (const auto& r : *batch) {
        uint64_t w = 0;
        for (size_t i = 0; i + 8 <= r.value.size(); i += 8) {
          uint64_t x;
          std::memcpy(&x, r.value.data() + i, 8);
          w += x;
        }
        checksum += w;
      }
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  Report(a.tune_heap ? "consume.tuned-heap" : a.touch ? "consume.touch" : "consume", records, bytes, wall, CpuSeconds() - cpu0);
  if (a.touch) std::fprintf(stderr, "checksum %llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  if (a.tune_heap && !tokenfeed::KeepLargeBuffersInHeap()) Die("--tune-heap: mallopt refused");
  if (a.command == "gen") return Gen(a);
  if (a.command == "create") return Create(a);
  if (a.command == "produce") return Produce(a);
  if (a.command == "consume") return Consume(a);
  Die("unknown command " + a.command);
}
