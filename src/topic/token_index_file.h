// TokenIndexFile: reads the token index of a log partition (TOKENS,
// docs/log_format.md "Token index"): its header, and its u64 entries at the
// positions asked, 8 bytes each, never the whole file unless asked. Also how
// many token ids a stored record counts for. It is not the log's sparse
// offset index (log/segment_index.h), and it never writes: TokenIndexWriter
// (token_index_writer.h) keeps the file, ReadTokenIndex
// (tokenfeed/token_index.h) asks it.
// The file may grow while it is read (a writer appending), be cut back or
// replaced (a writer's open repairing it): a read past its end as of now is
// reported as such, never made up. Not thread-safe; one owner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/file_system.h"
#include "tokenfeed/status.h"

namespace tokenfeed::topic {

// The token ids a record holds as the index counts them: those of its token
// record (tokenfeed/record.h), 0 when it does not parse as one (the loader
// reports bad records where it reads them). Hot path: the record's header
// and lengths are checked, its ids are not read.
uint64_t RecordTokenCount(std::span<const uint8_t> record);

// The kTokenIndexHeaderSize bytes that start the file.
void EncodeTokenIndexHeader(uint8_t* out);

class TokenIndexFile {
 public:
  // Opens and checks the header. NotFound when there is no file;
  // InvalidArgument for a symbolic link (never followed); Corruption for a
  // bad magic, version 0 or reserved bits; Unsupported for a greater version.
  // A file shorter than its header (a crash while it was being created) has
  // no entries, and torn_header() says so. Every error names the file.
  static Result<TokenIndexFile> Open(FileSystem* fs, const std::string& path);

  const std::string& path() const { return path_; }
  bool torn_header() const { return torn_header_; }
  // The complete entries when it was opened (a partial last one is not counted).
  uint64_t entry_count() const { return entry_count_; }

  // Entry i: the token ids at offsets [0, i + 1). nullopt when the file no
  // longer holds it (cut back since it was opened).
  Result<std::optional<uint64_t>> Entry(uint64_t i);
  // Entries [first, first + out.size()) in one read. false when the file no
  // longer holds them all (cut back since it was opened). Their order is
  // not checked here.
  Result<bool> Entries(uint64_t first, std::span<uint64_t> out);
  // Checks that entries [first, end) never decrease, reading them in
  // chunks, and sets *last to entry end - 1 (0 when the range is empty).
  // Corruption names the file and the first entry that is smaller than the
  // one before it.
  Status CheckOrder(uint64_t first, uint64_t end, uint64_t* last);

  // The Corruption for entry `i` holding `value` after entry `before` held
  // `before_value` (a greater number), naming the file and both entries.
  Status Decrease(uint64_t before, uint64_t before_value, uint64_t i, uint64_t value) const;

 private:
  TokenIndexFile(std::string path, std::unique_ptr<RandomAccessFile> file)
      : path_(std::move(path)), file_(std::move(file)) {}

  std::string path_;
  std::unique_ptr<RandomAccessFile> file_;
  bool torn_header_ = false;
  uint64_t entry_count_ = 0;
};

}  // namespace tokenfeed::topic
