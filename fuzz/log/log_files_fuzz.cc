// Fuzzes the embedded log's files as a reader and a writer's recovery meet
// them: a real topic (one partition, four segments with their index files,
// SYNCED and topic.meta) is written once, and each input is a list of edits
// to its files (overwrite, flip, truncate, append, forge a 32-bit field,
// remove). Then the topic is described, read from the start and from seek
// points, and a writer is opened (discarding damage or not) and appends.
//
// Checked on every input: no crash, no read outside a buffer (ASan), every
// error has a message, offsets come dense and in order from where a read
// starts, and a writer that opens appends records a reader then finds. When
// no segment file was edited (only an index, SYNCED or nothing), the
// data is intact, so more must hold: every read returns exactly the records
// written, Describe reports them all with no problem, and the writer opens
// at the end. (An edited segment may hold a batch the fuzzer gave a valid
// checksum, so its records are not compared.) Aborts on a finding.
//
// Input: up to 8 edits of [file selector][op][arguments...]; one more byte
// picks discard_after_damage. Files are edited in a temporary directory
// (under TMPDIR) that the program removes as it exits.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "byte_edits.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"

namespace {

namespace lg = tokenfeed::log;
namespace fs = std::filesystem;
using tokenfeed::Offset;
using tokenfeed::PartitionId;

constexpr uint64_t kRecords = 240;
constexpr uint32_t kPerBatch = 4;
constexpr size_t kMaxExtra = 61;

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "log_files_fuzz: %s\n", what.c_str());
  std::abort();
}

void NeedMessage(const tokenfeed::Status& s, const char* where) {
  if (s.message().empty()) Finding(std::string(where) + ": an error without a message");
}

struct Template {
  fs::path root;                                   // removed at exit
  fs::path topic_dir;                              // root/t
  std::vector<std::pair<fs::path, std::string>> files;  // relative path, bytes
};

std::string ReadAll(const fs::path& p) {
  auto bytes = tokenfeed::ReadFileToString(tokenfeed::FileSystem::Posix(), p.string());
  if (!bytes.ok()) Finding("template: " + bytes.status().ToString());
  return std::move(bytes).value();
}

void WriteAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Finding("cannot write " + p.string());
}

Template* g_template = nullptr;

void RemoveTemplate() {
  if (g_template == nullptr) return;
  std::error_code ec;
  fs::remove_all(g_template->root, ec);
}

std::string Uri() { return "log:" + g_template->topic_dir.string(); }

const Template& GetTemplate() {
  if (g_template != nullptr) return *g_template;
  auto* t = new Template;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/log_files_fuzz.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) Finding("cannot make a temporary directory");
  t->root = pattern;
  t->topic_dir = t->root / "t";
  g_template = t;
  std::atexit(RemoveTemplate);

  lg::TopicOptions to;
  to.partitions = 1;
  to.segment_bytes = 4096;
  to.index_interval_bytes = 200;
  auto topic = lg::TopicDirectory::Create(Uri(), to);
  if (!topic.ok()) Finding("template: " + topic.status().ToString());
  lg::WriterOptions wo;
  wo.fsync = lg::FsyncPolicy::kNone;
  auto writer = (*topic)->OpenWriter(PartitionId(0), wo);
  if (!writer.ok()) Finding("template: " + writer.status().ToString());
  lg::BatchBuilder b;
  for (uint64_t first = 0; first < kRecords; first += kPerBatch) {
    lg::testing::FillTestBatch(&b, first, kPerBatch, kMaxExtra);
    if (auto r = (*writer)->Append(&b); !r.ok()) Finding("template: " + r.status().ToString());
  }
  if (auto s = (*writer)->Close(); !s.ok()) Finding("template: " + s.ToString());
  for (const auto& e : fs::recursive_directory_iterator(t->topic_dir)) {
    if (!e.is_regular_file() || e.path().filename() == lg::format::kLockFileName) continue;
    t->files.emplace_back(fs::relative(e.path(), t->topic_dir), ReadAll(e.path()));
  }
  std::sort(t->files.begin(), t->files.end());
  return *t;
}

bool IsSegment(const fs::path& p) { return lg::format::ParseSegmentFileName(p.filename().string()).has_value(); }

using Input = tokenfeed::fuzz::EditInput;

// Applies the input's edits to a fresh copy of the template; returns whether
// the segment files are as written.
bool Prepare(Input& in, bool* discard) {
  const Template& t = GetTemplate();
  std::error_code ec;
  fs::remove_all(t.topic_dir, ec);
  std::vector<std::pair<fs::path, std::string>> files = t.files;
  std::vector<bool> removed(files.size(), false);
  bool segments_intact = true;
  for (int edit = 0; edit < 8 && !in.done(); ++edit) {
    const size_t which = in.Byte() % files.size();
    std::string& bytes = files[which].second;
    const uint8_t op = in.Byte() % 7;
    if (op == 6) break;  // no more edits
    if (IsSegment(files[which].first)) segments_intact = false;
    const size_t pos = bytes.empty() ? 0 : in.U16() % (bytes.size() + 1);
    if (tokenfeed::fuzz::EditBytes(in, op, pos, 64, &bytes)) continue;  // overwrite, flip, truncate, append
    switch (op) {
      case 4: {  // forge a little-endian 32-bit field (a length, a count, an offset)
        const uint32_t v = in.U32();
        for (size_t i = 0; i < 4 && pos + i < bytes.size(); ++i) bytes[pos + i] = static_cast<char>(v >> (8 * i));
        break;
      }
      case 5:  // remove the file
        removed[which] = true;
        break;
    }
  }
  *discard = (in.Byte() & 1) != 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path p = t.topic_dir / files[i].first;
    fs::create_directories(p.parent_path(), ec);
    if (!removed[i]) WriteAll(p, files[i].second);
  }
  return segments_intact;
}

// Reads from `from` to the end (or the first error, or an empty read). Every
// batch must continue where the last ended; with intact data every record must
// be the one written at its offset and the read must reach the end cleanly.
Offset ReadOn(lg::PartitionReader& r, Offset from, bool intact) {
  Offset next = from;
  for (int reads = 0; reads < 4 * static_cast<int>(kRecords); ++reads) {
    auto batch = r.Read(std::chrono::milliseconds(0));
    if (!batch.ok()) {
      NeedMessage(batch.status(), "Read");
      if (intact) Finding("Read of intact data failed: " + batch.status().ToString());
      return next;
    }
    if (batch->empty()) break;
    if (batch->first_offset() != next) {
      Finding("a batch starts at " + std::to_string(batch->first_offset().value()) + ", the read was at " +
              std::to_string(next.value()));
    }
    uint32_t n = 0;
    for (lg::LogRecord rec : *batch) {
      if (rec.offset != next) Finding("a record's offset is not the next one");
      if (intact && lg::testing::TestRecordNumber(rec.as_string_view(), kMaxExtra) != next.value()) {
        Finding("intact data returned the wrong record at offset " + std::to_string(next.value()));
      }
      next = next + 1;
      ++n;
    }
    if (n != batch->size()) Finding("a batch view's size differs from its records");
  }
  if (intact && next != Offset(kRecords)) {
    Finding("a read of intact data from " + std::to_string(from.value()) + " ended at " +
            std::to_string(next.value()));
  }
  return next;
}

// A small read buffer (the default is 8 MiB): batches larger than it make
// the reader grow it, and each input runs faster.
lg::ReaderOptions SmallBuffer() {
  lg::ReaderOptions o;
  o.buffer_bytes = 1024;
  return o;
}

void CheckReads(lg::TopicDirectory& topic, bool intact) {
  auto reader = topic.OpenReader(PartitionId(0), SmallBuffer());
  if (!reader.ok()) {
    NeedMessage(reader.status(), "OpenReader");
    if (intact) Finding("OpenReader on intact data: " + reader.status().ToString());
    return;
  }
  const Offset start = (*reader)->position();
  ReadOn(**reader, start, intact);
  for (uint64_t at : {uint64_t{0}, uint64_t{1}, kRecords / 3, kRecords / 2 + 1, kRecords - 1}) {
    tokenfeed::Status s = (*reader)->Seek(Offset(at));
    if (!s.ok()) {
      NeedMessage(s, "Seek");
      if (intact) Finding("Seek(" + std::to_string(at) + ") on intact data: " + s.ToString());
      continue;
    }
    ReadOn(**reader, Offset(at), intact);
  }
}

void CheckWriter(lg::TopicDirectory& topic, bool intact, bool discard) {
  lg::WriterOptions wo;
  wo.fsync = lg::FsyncPolicy::kNone;
  wo.discard_after_damage = discard;
  auto writer = topic.OpenWriter(PartitionId(0), wo);
  if (!writer.ok()) {
    NeedMessage(writer.status(), "OpenWriter");
    if (intact) Finding("OpenWriter on intact segments: " + writer.status().ToString());
    return;
  }
  const Offset end = (*writer)->end_offset();
  if (intact && end != Offset(kRecords)) {
    Finding("the writer opened intact segments at " + std::to_string(end.value()));
  }
  (void)(*writer)->recovery().ToString();
  lg::BatchBuilder b;
  lg::testing::FillTestBatch(&b, end.value(), 3, kMaxExtra);
  auto appended = (*writer)->Append(&b);
  if (!appended.ok()) Finding("Append after recovery: " + appended.status().ToString());
  if (appended->base_offset != end) Finding("Append after recovery did not continue at the writer's end offset");
  auto last = (*writer)->ReadLastRecord();
  if (!last.ok() || !last->has_value() || (*last)->offset != end + 2 ||
      (*last)->bytes != lg::testing::TestRecord(end.value() + 2, kMaxExtra)) {
    Finding("ReadLastRecord after Append does not return the record just written");
  }
  if (auto s = (*writer)->Close(); !s.ok()) Finding("Close after recovery: " + s.ToString());
  // A reader positions itself at the partition's first batch, so damage
  // there (in a sealed segment recovery does not read) may refuse it.
  auto reader = topic.OpenReader(PartitionId(0), SmallBuffer());
  if (!reader.ok()) {
    NeedMessage(reader.status(), "OpenReader");
    if (intact) Finding("OpenReader after a writer recovered: " + reader.status().ToString());
    return;
  }
  if (auto s = (*reader)->Seek(end); !s.ok()) Finding("Seek to the appended batch: " + s.ToString());
  auto batch = (*reader)->Read(std::chrono::milliseconds(0));
  if (!batch.ok() || batch->size() != 3 || batch->first_offset() != end) {
    Finding("the batch appended after recovery does not read back: " +
            (batch.ok() ? std::to_string(batch->size()) + " records" : batch.status().ToString()));
  }
  uint64_t n = end.value();
  for (lg::LogRecord rec : *batch) {
    if (rec.as_string_view() != lg::testing::TestRecord(n++, kMaxExtra)) Finding("an appended record differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  bool discard = false;
  const bool intact = Prepare(in, &discard);
  auto topic = lg::TopicDirectory::Open(Uri());
  if (!topic.ok()) {
    NeedMessage(topic.status(), "Topic::Open");
    return 0;  // topic.meta edited (its parser has its own target)
  }
  auto described = (*topic)->Describe();
  if (!described.ok()) {
    NeedMessage(described.status(), "Describe");
    if (intact) Finding("Describe on intact segments: " + described.status().ToString());
  } else if (intact) {
    const lg::PartitionDescription& p = described->partitions.at(0);
    if (p.end_offset != Offset(kRecords) || p.record_count != kRecords || !p.problem.empty()) {
      Finding("Describe of intact segments: end " + std::to_string(p.end_offset.value()) + ", " +
              std::to_string(p.record_count) + " records, problem '" + p.problem + "'");
    }
  }
  CheckReads(**topic, intact);
  CheckWriter(**topic, intact, discard);
  return 0;
}
