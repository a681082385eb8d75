// Fuzzes the log's token index (TOKENS, docs/log_format.md "Token index") as
// ReadTokenIndex and a topic writer's repair meet it: a real topic (two
// partitions of a few hundred token records of varied lengths, some not
// token records, committed in batches of 1 to 9) is written once through
// OpenTopicWriter, and each input is a list of edits to the TOKENS files
// (overwrite, bit flip, truncate, append, forge an entry, forge a header
// field, remove, replace by a symbolic link). Then the index of each
// partition edited is read at several offsets, a topic writer is opened
// (repairing it) and closed, every TOKENS is compared with what the repair
// promises, and the edited ones are read again.
//
// Checked on every input: no crash, no read outside a buffer (ASan), every
// error has a message, offsets out of range or out of order are refused, and
// an answer has one point per offset, records = offset - start and tokens
// that never decrease. More is known of the file, so more must hold:
// - the answer is what the format defines for the entries the file holds
//   (entry o - 1 for offset o, and past the file's last complete entry that
//   entry plus the ids of the records after it; Corruption where that would
//   pass 2^64), or a Corruption where those
//   entries decrease; when they do not decrease, or the file is missing or
//   torn, the answer is that; a link, a bad header or a newer version is an
//   error. So an index whose entries are true answers the truth, and a
//   forged entry that keeps the order goes unseen (nothing can see it).
// - the writer's repair makes the file what token_index_writer.h promises:
//   missing, torn, a bad header or a decrease in the entries it checks (all
//   of them here: fewer than kCheckedTailEntries) rebuilds it from the
//   records, byte for byte the template's; otherwise the entries up to the
//   end are kept, those past it and a partial one cut, and the missing ones
//   added from the last kept one (rebuilt where that would pass 2^64). A link or a newer version refuses the
//   writer and leaves the file alone.
// Aborts on a finding.
//
// Input: up to 8 edits of [partition][op][arguments...]; the last byte (or
// one after the edits) picks the middle offsets asked. Files are edited in a
// temporary directory (under TMPDIR) that the program removes as it exits.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/little_endian.h"
#include "byte_edits.h"
#include "log/log_format.h"
#include "tokenfeed/record.h"
#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"

namespace {

namespace fs = std::filesystem;
namespace f = tokenfeed::log::format;
using tokenfeed::Offset;
using tokenfeed::PartitionId;
using tokenfeed::Status;
using tokenfeed::StatusCode;

constexpr uint32_t kPartitions = 2;
constexpr int kBatches = 60;  // per partition; 1 to 9 records each

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "token_index_fuzz: %s\n", what.c_str());
  std::abort();
}

void NeedMessage(const Status& s, const std::string& where) {
  if (s.message().empty()) Finding(where + ": an error without a message");
}

std::string Num(uint64_t v) { return std::to_string(v); }

struct Template {
  fs::path root;       // removed at exit
  fs::path topic_dir;  // root/t
  std::vector<std::pair<fs::path, std::string>> files;  // relative path, bytes (TOKENS too)
  // cumulative[p][o]: the token ids of partition p's offsets [0, o).
  std::vector<uint64_t> cumulative[kPartitions];
  std::string tokens[kPartitions];  // the TOKENS bytes the writer made
};

Template* g_template = nullptr;

void RemoveTemplate() {
  if (g_template == nullptr) return;
  std::error_code ec;
  fs::remove_all(g_template->root, ec);
}

std::string Uri() { return "log:" + g_template->topic_dir.string(); }

fs::path TokensPath(uint32_t p) {
  return g_template->topic_dir / f::PartitionDirName(PartitionId(p)) / std::string(f::kTokenIndexFileName);
}

// Where a TOKENS replaced by a symbolic link points: outside the topic.
fs::path LinkTarget(uint32_t p) { return g_template->root / ("link-target-" + Num(p)); }

std::string ReadAll(const fs::path& p) {
  auto bytes = tokenfeed::ReadFileToString(tokenfeed::FileSystem::Posix(), p.string());
  if (!bytes.ok()) Finding("cannot read " + p.string() + ": " + bytes.status().ToString());
  return std::move(bytes).value();
}

void WriteAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Finding("cannot write " + p.string());
}

// A token record of `ids` ids, or (ids < 0) bytes that are no record.
std::string Record(int ids, uint64_t seq) {
  if (ids < 0) return "not a token record " + Num(seq);
  std::vector<uint32_t> v(static_cast<size_t>(ids));
  std::iota(v.begin(), v.end(), static_cast<uint32_t>(seq));
  if (ids > 0 && seq % 2 == 1) v[0] = 70000;  // 4-byte ids in some records
  tokenfeed::record::RecordFields fields;
  fields.FileSource("corpus.jsonl", seq, seq * 10, seq);
  std::string out;
  if (Status s = tokenfeed::record::EncodeRecord(fields, v, &out); !s.ok()) Finding("template: " + s.ToString());
  return out;
}

tokenfeed::topic::WriterConfig WriterConfigFor(bool create) {
  tokenfeed::topic::WriterConfig config;
  config.partitions = kPartitions;
  config.create_if_missing = create;
  config.log.fsync = tokenfeed::log::FsyncPolicy::kNone;
  config.log_topic.segment_bytes = 8192;
  return config;
}

std::string EncodeEntries(const std::vector<uint64_t>& entries) {
  std::string out(f::kTokenIndexHeaderSize + entries.size() * f::kTokenIndexEntrySize, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  tokenfeed::StoreLittleEndian<uint64_t>(p, f::kTokenIndexMagic);
  tokenfeed::StoreLittleEndian<uint32_t>(p + 8, f::kTokenIndexVersion);
  tokenfeed::StoreLittleEndian<uint32_t>(p + 12, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    tokenfeed::StoreLittleEndian<uint64_t>(p + f::kTokenIndexHeaderSize + i * f::kTokenIndexEntrySize, entries[i]);
  }
  return out;
}

const Template& GetTemplate() {
  if (g_template != nullptr) return *g_template;
  auto* t = new Template;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/token_index_fuzz.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) Finding("cannot make a temporary directory");
  t->root = pattern;
  t->topic_dir = t->root / "t";
  g_template = t;
  std::atexit(RemoveTemplate);

  auto writer = tokenfeed::topic::OpenTopicWriter(Uri(), WriterConfigFor(true));
  if (!writer.ok()) Finding("template: " + writer.status().ToString());
  uint64_t seq = 0;
  for (uint32_t p = 0; p < kPartitions; ++p) t->cumulative[p].push_back(0);
  for (int b = 0; b < kBatches; ++b) {
    for (uint32_t p = 0; p < kPartitions; ++p) {
      const int records = 1 + static_cast<int>((seq * 7 + p) % 9);
      for (int r = 0; r < records; ++r, ++seq) {
        const int ids = seq % 11 == 5 ? -1 : static_cast<int>((seq * 13 + p) % 40);
        const std::string bytes = Record(ids, seq);
        auto dest = (*writer)->Reserve(PartitionId(p), bytes.size());
        if (!dest.ok()) Finding("template: " + dest.status().ToString());
        std::memcpy(dest->data(), bytes.data(), bytes.size());
        t->cumulative[p].push_back(t->cumulative[p].back() + (ids < 0 ? 0 : static_cast<uint64_t>(ids)));
      }
    }
    for (uint32_t p = 0; p < kPartitions; ++p) {
      if (Status s = (*writer)->Commit(PartitionId(p)); !s.ok()) Finding("template: " + s.ToString());
    }
  }
  if (Status s = (*writer)->Close(); !s.ok()) Finding("template: " + s.ToString());
  for (uint32_t p = 0; p < kPartitions; ++p) {
    t->tokens[p] = ReadAll(TokensPath(p));
    const std::vector<uint64_t> entries(t->cumulative[p].begin() + 1, t->cumulative[p].end());
    if (t->tokens[p] != EncodeEntries(entries)) Finding("template: partition " + Num(p) + "'s TOKENS is not true");
  }
  for (const auto& e : fs::recursive_directory_iterator(t->topic_dir)) {
    if (!e.is_regular_file() || e.path().filename() == f::kLockFileName) continue;
    t->files.emplace_back(fs::relative(e.path(), t->topic_dir), ReadAll(e.path()));
  }
  std::sort(t->files.begin(), t->files.end());
  return *t;
}

using Input = tokenfeed::fuzz::EditInput;

// What stands at a partition's TOKENS path.
struct IndexFile {
  enum Kind { kFile, kMissing, kLink } kind = kFile;
  std::string bytes;  // kFile: the file; kLink: the file the link points to
};

void ForgeEntry(Input& in, const std::vector<uint64_t>& truth, std::string& bytes) {
  const size_t entries = bytes.size() < f::kTokenIndexHeaderSize
                             ? 0
                             : (bytes.size() - f::kTokenIndexHeaderSize) / f::kTokenIndexEntrySize;
  const size_t i = in.U16() % (entries + 1);
  const uint8_t how = in.Byte();
  const uint64_t true_value = i + 1 < truth.size() ? truth[i + 1] : truth.back();
  uint64_t v = 0;
  switch (how % 4) {
    case 0: v = in.U64(); break;                                  // anything
    case 1: v = true_value + (how >> 2); break;                   // a little more than true
    case 2: v = true_value - std::min<uint64_t>(true_value, how >> 2); break;  // a little less
    case 3: v = ~uint64_t{0} - (how >> 2); break;                 // near the top
  }
  if (bytes.size() < f::kTokenIndexHeaderSize) bytes.resize(f::kTokenIndexHeaderSize, '\0');
  const size_t at = f::kTokenIndexHeaderSize + i * f::kTokenIndexEntrySize;
  if (bytes.size() < at + f::kTokenIndexEntrySize) bytes.resize(at + f::kTokenIndexEntrySize, '\0');
  tokenfeed::StoreLittleEndian<uint64_t>(reinterpret_cast<uint8_t*>(bytes.data()) + at, v);
}

void ForgeHeader(Input& in, std::string& bytes) {
  if (bytes.size() < f::kTokenIndexHeaderSize) bytes.resize(f::kTokenIndexHeaderSize, '\0');
  auto* p = reinterpret_cast<uint8_t*>(bytes.data());
  const uint8_t field = in.Byte();
  const uint32_t small = field >> 2;  // versions 0 to 63
  switch (field % 4) {
    case 0: tokenfeed::StoreLittleEndian<uint64_t>(p, in.U64()); break;           // magic
    case 1: tokenfeed::StoreLittleEndian<uint32_t>(p + 8, small); break;          // version
    case 2: tokenfeed::StoreLittleEndian<uint32_t>(p + 12, in.U32()); break;      // reserved
    case 3: tokenfeed::StoreLittleEndian<uint32_t>(p + 8, in.U32()); break;       // any version
  }
}

// Applies the input's edits to the TOKENS of a fresh copy of the template.
void Prepare(Input& in, IndexFile (&index)[kPartitions], bool (&edited)[kPartitions]) {
  const Template& t = GetTemplate();
  for (uint32_t p = 0; p < kPartitions; ++p) index[p] = IndexFile{IndexFile::kFile, t.tokens[p]};
  for (int edit = 0; edit < 8 && in.left() > 1; ++edit) {
    const uint32_t p = in.Byte() % kPartitions;
    edited[p] = true;
    IndexFile& file = index[p];
    std::string& bytes = file.bytes;
    const uint8_t op = in.Byte() % 8;
    if (op < 6 && file.kind == IndexFile::kMissing) file.kind = IndexFile::kFile;  // written anew
    const size_t pos = in.U16() % (bytes.size() + 1);
    if (tokenfeed::fuzz::EditBytes(in, op, pos, 32, &bytes)) continue;  // overwrite, flip, truncate, append
    switch (op) {
      case 4:
        ForgeEntry(in, t.cumulative[p], bytes);
        break;
      case 5:
        ForgeHeader(in, bytes);
        break;
      case 6:  // remove
        file.kind = IndexFile::kMissing;
        bytes.clear();
        break;
      case 7:  // a link to a file with these bytes (which are never read)
        if (file.kind == IndexFile::kFile) file.kind = IndexFile::kLink;
        break;
    }
  }
  std::error_code ec;
  fs::remove_all(t.topic_dir, ec);
  for (const auto& [path, bytes] : t.files) {
    const fs::path at = t.topic_dir / path;
    fs::create_directories(at.parent_path(), ec);
    WriteAll(at, bytes);
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    const fs::path at = TokensPath(p);
    fs::remove(at, ec);
    if (index[p].kind == IndexFile::kFile) WriteAll(at, index[p].bytes);
    if (index[p].kind == IndexFile::kLink) {
      WriteAll(LinkTarget(p), index[p].bytes);
      fs::create_symlink(LinkTarget(p), at, ec);
      if (ec) Finding("cannot make a link: " + ec.message());
    }
  }
}

// What ReadTokenIndex must answer for an index file, from the format alone.
struct Expectation {
  enum Kind {
    kAnswer,          // exactly `tokens`
    kAnswerOrDamage,  // `tokens`, or Corruption: the entries decrease
    kError,           // some error (a link)
    kCorruption,      // a damaged header
    kUnsupported,     // a newer version
  } kind = kAnswer;
  std::vector<uint64_t> tokens;  // [o]: for offset o in [0, end]
  // The first offset whose count, gone on from the last entry, passes 2^64:
  // asking it or a later one is Corruption (UINT64_MAX: none).
  uint64_t overflow_at = UINT64_MAX;
};

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t reserved;
};

Header HeaderOf(const std::string& bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  return {tokenfeed::LoadLittleEndian<uint64_t>(p), tokenfeed::LoadLittleEndian<uint32_t>(p + 8),
          tokenfeed::LoadLittleEndian<uint32_t>(p + 12)};
}

std::vector<uint64_t> EntriesOf(const std::string& bytes) {
  std::vector<uint64_t> entries;
  for (size_t at = f::kTokenIndexHeaderSize; at + f::kTokenIndexEntrySize <= bytes.size();
       at += f::kTokenIndexEntrySize) {
    entries.push_back(tokenfeed::LoadLittleEndian<uint64_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + at));
  }
  return entries;
}

bool Decreases(const std::vector<uint64_t>& v, size_t n) {
  for (size_t i = 1; i < std::min(n, v.size()); ++i) {
    if (v[i] < v[i - 1]) return true;
  }
  return false;
}

Expectation Expect(const IndexFile& file, const std::vector<uint64_t>& truth) {
  Expectation e;
  if (file.kind == IndexFile::kLink) {
    e.kind = Expectation::kError;
    return e;
  }
  if (file.kind == IndexFile::kMissing || file.bytes.size() < f::kTokenIndexHeaderSize) {
    e.tokens = truth;  // counted from the records
    return e;
  }
  const Header h = HeaderOf(file.bytes);
  if (h.magic != f::kTokenIndexMagic) {
    e.kind = Expectation::kCorruption;
    return e;
  }
  if (h.version > f::kTokenIndexVersion) {
    e.kind = Expectation::kUnsupported;
    return e;
  }
  if (h.version == 0 || h.reserved != 0) {
    e.kind = Expectation::kCorruption;
    return e;
  }
  // Entry o - 1 for offset o; past the last complete entry, that entry plus
  // the ids of the records after it, unless that passes 2^64.
  const std::vector<uint64_t> entries = EntriesOf(file.bytes);
  const uint64_t end = truth.size() - 1;
  const uint64_t covered = std::min<uint64_t>(entries.size(), end);
  e.tokens.assign(truth.size(), 0);
  for (uint64_t o = 1; o <= end; ++o) {
    if (o <= covered) {
      e.tokens[o] = entries[o - 1];
    } else if (__builtin_add_overflow(e.tokens[covered], truth[o] - truth[covered], &e.tokens[o]) &&
               e.overflow_at == UINT64_MAX) {
      e.overflow_at = o;
    }
  }
  e.kind = Decreases(entries, covered) ? Expectation::kAnswerOrDamage : Expectation::kAnswer;
  return e;
}

// What the writer's repair must leave; nullopt where it refuses to open.
std::optional<IndexFile> Repaired(const IndexFile& file, const std::string& rebuilt) {
  const IndexFile rebuilt_file{IndexFile::kFile, rebuilt};
  if (file.kind == IndexFile::kLink) return std::nullopt;
  if (file.kind == IndexFile::kMissing || file.bytes.size() < f::kTokenIndexHeaderSize) return rebuilt_file;
  const Header h = HeaderOf(file.bytes);
  if (h.magic != f::kTokenIndexMagic) return rebuilt_file;
  if (h.version > f::kTokenIndexVersion) return std::nullopt;
  if (h.version == 0 || h.reserved != 0) return rebuilt_file;
  std::vector<uint64_t> entries = EntriesOf(file.bytes);
  const std::vector<uint64_t> truth(EntriesOf(rebuilt));
  const size_t keep = std::min(entries.size(), truth.size());
  // Fewer entries than kCheckedTailEntries: the repair checks them all.
  if (Decreases(entries, keep)) return rebuilt_file;
  entries.resize(keep);
  for (size_t i = keep; i < truth.size(); ++i) {
    const uint64_t last = keep == 0 ? 0 : entries[keep - 1];
    const uint64_t last_true = keep == 0 ? 0 : truth[keep - 1];
    uint64_t next = 0;
    // Entries that cannot go on from the last kept one without passing 2^64
    // are damage: the file is rebuilt.
    if (__builtin_add_overflow(last, truth[i] - last_true, &next)) return rebuilt_file;
    entries.push_back(next);
  }
  return IndexFile{IndexFile::kFile, EncodeEntries(entries)};
}

std::string Describe(const std::vector<Offset>& offsets) {
  std::string s;
  for (const Offset o : offsets) {
    if (!s.empty()) s += ',';
    s += Num(o.value());
  }
  return "partition offsets {" + s + "}";
}

void CheckRead(uint32_t p, const std::vector<Offset>& offsets, const Expectation& e, const char* when) {
  const std::string where = std::string(when) + ", partition " + Num(p) + ", " + Describe(offsets);
  auto read = tokenfeed::topic::ReadTokenIndex(Uri(), PartitionId(p), offsets);
  const bool overflows = !offsets.empty() && offsets.back().value() >= e.overflow_at;
  if (overflows && (read.ok() || read.status().code() != StatusCode::kCorruption) &&
      (e.kind == Expectation::kAnswer || e.kind == Expectation::kAnswerOrDamage)) {
    Finding("ReadTokenIndex " + where + ": counting past the index's last entry passes 2^64 at offset " +
            Num(e.overflow_at) + ", which must be Corruption, not " + (read.ok() ? "an answer" : read.status().ToString()));
  }
  if (overflows && !read.ok()) {
    NeedMessage(read.status(), "ReadTokenIndex " + where);
    return;
  }
  if (!read.ok()) {
    const Status& s = read.status();
    NeedMessage(s, "ReadTokenIndex " + where);
    const bool allowed = e.kind == Expectation::kError ||
                         (e.kind == Expectation::kAnswerOrDamage && s.code() == StatusCode::kCorruption) ||
                         (e.kind == Expectation::kCorruption && s.code() == StatusCode::kCorruption) ||
                         (e.kind == Expectation::kUnsupported && s.code() == StatusCode::kUnsupported);
    if (!allowed) Finding("ReadTokenIndex " + where + " failed: " + s.ToString());
    return;
  }
  if (e.kind != Expectation::kAnswer && e.kind != Expectation::kAnswerOrDamage) {
    Finding("ReadTokenIndex " + where + " answered, from an index it must refuse");
  }
  if (read->points.size() != offsets.size()) Finding("ReadTokenIndex " + where + ": not one point per offset");
  for (size_t i = 0; i < offsets.size(); ++i) {
    const uint64_t o = offsets[i].value();
    const tokenfeed::topic::IndexPoint& point = read->points[i];
    // The template keeps every record: the partitions start at offset 0.
    if (point.records != o) {
      Finding("ReadTokenIndex " + where + ": offset " + Num(o) + " has " + Num(point.records) + " records before it");
    }
    if (i > 0 && point.tokens < read->points[i - 1].tokens) {
      Finding("ReadTokenIndex " + where + ": tokens decrease at offset " + Num(o));
    }
    if (point.tokens != e.tokens[o]) {
      Finding("ReadTokenIndex " + where + ": offset " + Num(o) + " has " + Num(point.tokens) + " tokens before it, " +
              "the index file says " + Num(e.tokens[o]) + " (records say " +
              Num(g_template->cumulative[p][o]) + ")");
    }
  }
}

// A reader kept open (TokenIndexReader) answers each read as a fresh
// ReadTokenIndex of the unchanged file does, every time it is asked.
void CheckKeptReader(uint32_t p, const std::vector<Offset>& offsets, const char* when) {
  const std::string where = std::string(when) + ", partition " + Num(p) + ", " + Describe(offsets);
  auto fresh = tokenfeed::topic::ReadTokenIndex(Uri(), PartitionId(p), offsets);
  auto reader = tokenfeed::topic::OpenTokenIndexReader(Uri(), PartitionId(p));
  if (!reader.ok()) {
    NeedMessage(reader.status(), "OpenTokenIndexReader " + where);
    if (fresh.ok()) Finding("OpenTokenIndexReader " + where + " failed where ReadTokenIndex answered");
    return;
  }
  for (int turn = 0; turn < 2; ++turn) {
    auto kept = (*reader)->Read(offsets);
    if (kept.ok() != fresh.ok() || (!kept.ok() && kept.status().code() != fresh.status().code())) {
      Finding("TokenIndexReader::Read " + where + " (turn " + Num(turn) + "): " +
              (kept.ok() ? "an answer" : kept.status().ToString()) + ", ReadTokenIndex: " +
              (fresh.ok() ? "an answer" : fresh.status().ToString()));
    }
    if (!kept.ok()) {
      NeedMessage(kept.status(), "TokenIndexReader::Read " + where);
      continue;
    }
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (kept->points[i].records != fresh->points[i].records || kept->points[i].tokens != fresh->points[i].tokens) {
        Finding("TokenIndexReader::Read " + where + " (turn " + Num(turn) + "): offset " + Num(offsets[i].value()) +
                " differs from ReadTokenIndex's answer");
      }
    }
  }
}

void CheckReads(uint32_t p, uint8_t choice, const Expectation& e, const char* when) {
  const uint64_t end = g_template->cumulative[p].size() - 1;
  std::vector<Offset> offsets = {Offset(0), Offset(choice % (end + 1)), Offset((choice * 37u + 11u) % (end + 1)),
                                 Offset(end)};
  std::sort(offsets.begin(), offsets.end());
  CheckRead(p, offsets, e, when);
  // Alone, a middle offset makes the reader read one entry, not several.
  CheckRead(p, {offsets[1]}, e, when);
  CheckRead(p, {offsets[2]}, e, when);
  CheckKeptReader(p, offsets, when);
}

// Refusals that come before the index is read.
void CheckRefusals(uint32_t p, uint8_t choice) {
  const uint64_t end = g_template->cumulative[p].size() - 1;
  const std::vector<Offset> past_end = {Offset(end + 1)};
  auto read = tokenfeed::topic::ReadTokenIndex(Uri(), PartitionId(p), past_end);
  if (read.ok() || read.status().code() != StatusCode::kOutOfRange) {
    Finding("ReadTokenIndex past the end of partition " + Num(p) + " is not OutOfRange");
  }
  NeedMessage(read.status(), "ReadTokenIndex past the end");
  const std::vector<Offset> backwards = {Offset(end), Offset(choice % end)};
  read = tokenfeed::topic::ReadTokenIndex(Uri(), PartitionId(p), backwards);
  if (read.ok() || read.status().code() != StatusCode::kInvalidArgument) {
    Finding("ReadTokenIndex of decreasing offsets of partition " + Num(p) + " is not InvalidArgument");
  }
  NeedMessage(read.status(), "ReadTokenIndex of decreasing offsets");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  IndexFile index[kPartitions];
  bool edited[kPartitions] = {};
  Prepare(in, index, edited);
  const uint8_t choice = in.Byte();
  const Template& t = GetTemplate();

  // Reads cost most of an input's time (each opens the topic and a reader
  // with its buffer): they ask the partitions edited, or partition 0.
  bool ask[kPartitions] = {};
  for (uint32_t p = 0; p < kPartitions; ++p) ask[p] = edited[p];
  if (std::none_of(std::begin(ask), std::end(ask), [](bool b) { return b; })) ask[0] = true;
  CheckRefusals(choice % kPartitions, choice);
  for (uint32_t p = 0; p < kPartitions; ++p) {
    if (ask[p]) CheckReads(p, choice, Expect(index[p], t.cumulative[p]), "as edited");
  }

  std::optional<IndexFile> repaired[kPartitions];
  bool refused = false;
  for (uint32_t p = 0; p < kPartitions; ++p) {
    repaired[p] = Repaired(index[p], t.tokens[p]);
    refused = refused || !repaired[p].has_value();
  }
  auto writer = tokenfeed::topic::OpenTopicWriter(Uri(), WriterConfigFor(false));
  if (!writer.ok()) {
    NeedMessage(writer.status(), "OpenTopicWriter");
    if (!refused) Finding("OpenTopicWriter failed on an index it must repair: " + writer.status().ToString());
    // The index refused is left as it was (a partition opened before it may
    // have been repaired); the reads above covered it.
    for (uint32_t p = 0; p < kPartitions; ++p) {
      if (repaired[p].has_value()) continue;
      const bool link = index[p].kind == IndexFile::kLink;
      const fs::path at = link ? LinkTarget(p) : TokensPath(p);
      if (fs::is_symlink(TokensPath(p)) != link || ReadAll(at) != index[p].bytes) {
        Finding("OpenTopicWriter refused partition " + Num(p) + "'s TOKENS but changed it");
      }
    }
    return 0;
  }
  if (refused) Finding("OpenTopicWriter opened with a link or a newer index version");
  for (const std::string& note : (*writer)->RecoveryNotes()) {
    if (note.empty()) Finding("an empty recovery note");
  }
  if (Status s = (*writer)->Close(); !s.ok()) Finding("Close: " + s.ToString());

  for (uint32_t p = 0; p < kPartitions; ++p) {
    const std::string now = ReadAll(TokensPath(p));
    if (now != repaired[p]->bytes) {
      Finding("after repair partition " + Num(p) + "'s TOKENS holds " + Num(now.size()) + " bytes, not the " +
              Num(repaired[p]->bytes.size()) + " the repair promises" +
              (now.size() == repaired[p]->bytes.size() ? " (same size, other bytes)" : ""));
    }
    if (ask[p]) CheckReads(p, choice, Expect(*repaired[p], t.cumulative[p]), "after repair");
  }
  return 0;
}
