// StepReplayer: the loader's own pipeline (batch_loader.cc), run on the
// calling thread without prefetching, so that one global step can be
// produced again from a state and each row's record slices noted as the
// RowPacker copies them. What replay.h builds on; not the public API, and
// not a second implementation of the stream: the same LoaderImpl produces
// the steps. Not thread-safe: one thread uses a replayer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loader/row_packer.h"
#include "loader/source_stream.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

// A run of one document's tokens copied into a row, in the stream's
// coordinates: [from, to) of the document as length() counts it (the
// configured BOS first, then the record's stored ids, then the EOS).
struct RowPiece {
  uint32_t row = 0;
  uint32_t source = 0;
  uint32_t partition = 0;
  uint64_t offset = 0;
  uint32_t stored = 0;  // ids the record stores
  uint32_t from = 0, to = 0;
};

// A DocumentStream (row_packer.h) that forwards to a SourceStream and notes
// every run the packer copies into a row (CopyTokens is called once per
// piece; TokenAt, the label peek, is not a copy).
class RecordingStream {
 public:
  RecordingStream(SourceStream& s, uint32_t row, std::vector<RowPiece>* out) : s_(s), row_(row), out_(out) {}
  Result<bool> Ready() { return s_.Ready(); }
  uint32_t length() const { return s_.length(); }
  uint32_t token_offset() const { return s_.token_offset(); }
  uint32_t TokenAt(uint32_t i) const { return s_.TokenAt(i); }
  template <typename T>
  void CopyTokens(uint32_t from, uint32_t n, T* out) const {
    s_.CopyTokens(from, n, out);
    if (n == 0) return;
    const SourceStream::RecordKey key = s_.record();
    out_->push_back({row_, s_.config().source_index, key.partition, key.offset, key.stored, from, from + n});
  }
  void Advance(uint32_t n) { s_.Advance(n); }
  void DropRest() { s_.DropRest(); }

 private:
  SourceStream& s_;
  uint32_t row_;
  std::vector<RowPiece>* out_;
};

class StepReplayer {
 public:
  virtual ~StepReplayer() = default;
  // Positions the pipeline at a state (as Loader::LoadState does).
  virtual Status Load(const std::string& state_json) = 0;
  // The global step Step() produces next.
  virtual uint64_t next_step() const = 0;
  // Records read from the topics so far, the windows read ahead included
  // (it waits for them). Steps counted past read none where the sources
  // keep a token index.
  virtual uint64_t records_read() = 0;
  // Produces global step next_step(). copy: this rank's rows are filled
  // (and, with `pieces`, their record slices noted there); otherwise every
  // row is only counted past, and the returned batch holds no tokens. At
  // the end of a round (epochs=N), the next round is begun, as
  // Loader::StartNextRound does, and the step produced there.
  // FailedPrecondition-like InvalidArgument when the sources hold less than
  // one step.
  virtual Result<Batch> Step(bool copy, std::vector<RowPiece>* pieces) = 0;
  // The stream of source `source` in shard `shard` (unsharded: 0), one
  // this replayer holds, for seen.cc to ask which blocks and records a
  // position has passed. Not read by Step() meanwhile.
  virtual SourceStream* Stream(uint32_t shard, uint32_t source) = 0;
};

// A loader over `options` (options.snapshot_json set: the state's) that runs
// no prefetch thread.
Result<std::unique_ptr<StepReplayer>> OpenStepReplayer(const LoaderOptions& options);

}  // namespace tokenfeed::loader
