// Fuzzes the parsers of Kafka client settings (kafka::ClientConfig): each
// line of the input as a `-X key=value` argument, and the whole input as a
// --kafka-config properties file. Each is accepted or refused with a message;
// a refusal never shows the value after a line's '=' (it may be a
// password: the message is the same with every value replaced); an accepted
// setting is found under its key. Aborts on a
// finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "kafka/client_config.h"

namespace {

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "client_properties_fuzz: %s\n", what.c_str());
  std::abort();
}

// `text` with every byte after each line's first '=' replaced by 'Q': the
// same settings with other values. A refusal that shows no value reads the
// same for both.
std::string Masked(std::string_view text) {
  std::string out(text);
  bool in_value = false;
  for (char& c : out) {
    if (c == '\n') {
      in_value = false;
    } else if (in_value) {
      if (c != '\r') c = 'Q';
    } else if (c == '=') {
      in_value = true;
    }
  }
  return out;
}

tokenfeed::Status LoadFile(const std::string& path, std::string_view text, tokenfeed::kafka::ClientConfig* config) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  tokenfeed::Status s = config->LoadPropertiesFile(path);
  std::remove(path.c_str());
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace kf = tokenfeed::kafka;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    kf::ClientConfig config;
    const tokenfeed::Status s = config.SetAssignment(line);
    if (!s.ok()) {
      if (s.message().empty()) Finding("a refusal without a message");
      kf::ClientConfig other;
      const tokenfeed::Status masked = other.SetAssignment(Masked(line));
      if (masked.ok() || masked.message() != s.message()) {
        Finding("a refused -X argument's message depends on its value: " + s.message());
      }
    } else if (config.entries().size() != 1 || config.Find(config.entries()[0].key) == nullptr ||
               config.entries()[0].key.empty()) {
      Finding("an accepted -X argument is not found under its key");
    }
    start = end + 1;
  }

  static const std::string path = "/tmp/tokenfeed-fuzz-" + std::to_string(getpid()) + ".properties";
  kf::ClientConfig config;
  const tokenfeed::Status s = LoadFile(path, text, &config);
  if (!s.ok()) {
    if (s.message().empty()) Finding("a refusal without a message");
    kf::ClientConfig other;
    const tokenfeed::Status masked = LoadFile(path, Masked(text), &other);
    if (masked.ok() || masked.message() != s.message()) {
      Finding("a refused properties file's message depends on a value: " + s.message());
    }
  }
  for (const kf::ConfigEntry& e : config.entries()) {
    if (e.key.empty()) Finding("an entry without a key");
  }
  return 0;
}
