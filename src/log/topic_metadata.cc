#include "log/topic_metadata.h"

#include <charconv>
#include <cstdio>
#include <map>

#include "base/crc32c.h"
#include "log/log_format.h"

namespace tokenfeed::log {

namespace f = format;

namespace {

constexpr std::string_view kChecksumKey = "crc32c=";

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out, int base = 10) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out, base);
  return ec == std::errc() && p == end && !s.empty();
}

}  // namespace

std::string EncodeTopicMetadata(const TopicMetadata& m) {
  std::string body;
  body.append(f::kMetadataMagicLine).append("\n");
  body.append("format_version=").append(std::to_string(m.format_version)).append("\n");
  body.append("partitions=").append(std::to_string(m.partitions)).append("\n");
  body.append("segment_bytes=").append(std::to_string(m.segment_bytes)).append("\n");
  body.append("index_interval_bytes=").append(std::to_string(m.index_interval_bytes)).append("\n");
  body.append("created_unix_ms=").append(std::to_string(m.created_unix_ms)).append("\n");
  std::string by = m.created_by;
  for (char& c : by) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  body.append("created_by=").append(by).append("\n");
  const uint32_t crc = crc32c::Value(body);  // of everything before the checksum line
  body.append(kChecksumKey).append(Hex32(crc)).append("\n");
  return body;
}

Result<TopicMetadata> ParseTopicMetadata(std::string_view text, const std::string& path) {
  auto corrupt = [&](const std::string& what) {
    return Status::Corruption("topic metadata '" + path + "' " + what +
                              ": the file is damaged or was edited by hand; restore it from a copy (it must match "
                              "the partition directories)");
  };
  const std::string magic = std::string(f::kMetadataMagicLine) + "\n";
  if (!text.starts_with(magic)) return corrupt("does not start with the line '" + std::string(f::kMetadataMagicLine) + "'");

  // The version first: a newer one may change everything after it.
  std::map<std::string, std::string> values;
  size_t checksum_line = std::string_view::npos;
  size_t pos = magic.size();
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return corrupt("ends without a newline (truncated)");
    const std::string_view line = text.substr(pos, nl - pos);
    if (line.starts_with(kChecksumKey)) {
      checksum_line = pos;
      if (nl + 1 != text.size()) return corrupt("has text after its checksum line");
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return corrupt("has a line without '=': '" + std::string(line) + "'");
    const std::string key(line.substr(0, eq));
    if (!values.emplace(key, std::string(line.substr(eq + 1))).second) return corrupt("repeats the key '" + key + "'");
    pos = nl + 1;
  }
  auto version_it = values.find("format_version");
  if (version_it == values.end()) return corrupt("has no format_version");
  TopicMetadata m;
  if (!ParseNumber(version_it->second, &m.format_version)) return corrupt("has a bad format_version");
  if (m.format_version != f::kMetadataVersion) {
    if (m.format_version > f::kMetadataVersion) {
      return Status::Unsupported("topic metadata '" + path + "' has format version " +
                                 std::to_string(m.format_version) + ", newer than this build reads (version " +
                                 std::to_string(f::kMetadataVersion) + "): upgrade tokenfeed to open this topic");
    }
    return corrupt("has format version " + std::to_string(m.format_version) + ", which no writer produces");
  }
  if (checksum_line == std::string_view::npos) return corrupt("has no checksum line");
  uint32_t stored = 0;
  if (!ParseNumber(values["crc32c"], &stored, 16) || values["crc32c"].size() != 8) return corrupt("has a bad checksum line");
  if (stored != crc32c::Value(text.substr(0, checksum_line))) return corrupt("fails its checksum");

  auto take = [&](const char* key, auto* out) -> Status {
    auto it = values.find(key);
    if (it == values.end()) return corrupt(std::string("has no ") + key);
    if (!ParseNumber(it->second, out)) return corrupt(std::string("has a bad ") + key + " '" + it->second + "'");
    values.erase(it);
    return Status::OK();
  };
  values.erase("format_version");
  values.erase("crc32c");
  TF_RETURN_IF_ERROR(take("partitions", &m.partitions));
  TF_RETURN_IF_ERROR(take("segment_bytes", &m.segment_bytes));
  TF_RETURN_IF_ERROR(take("index_interval_bytes", &m.index_interval_bytes));
  TF_RETURN_IF_ERROR(take("created_unix_ms", &m.created_unix_ms));
  auto by = values.find("created_by");
  if (by == values.end()) return corrupt("has no created_by");
  // The writer turns carriage returns into spaces, so one here was not written by it.
  if (by->second.find('\r') != std::string::npos) return corrupt("has a carriage return in created_by");
  m.created_by = by->second;
  values.erase(by);
  if (!values.empty()) return corrupt("has an unknown key '" + values.begin()->first + "'");
  if (m.partitions == 0 || m.partitions > f::kMaxPartitions) return corrupt("has an impossible partition count");
  if (m.segment_bytes < f::kMinSegmentBytes || m.segment_bytes > f::kMaxSegmentBytes) {
    return corrupt("has an impossible segment_bytes");
  }
  if (m.index_interval_bytes == 0) return corrupt("has index_interval_bytes 0");
  return m;
}

}  // namespace tokenfeed::log
