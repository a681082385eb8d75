#include "text/line_window.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace tokenfeed::text {
namespace {

constexpr unsigned char kBom[3] = {0xEF, 0xBB, 0xBF};

}  // namespace

LineWindow::LineWindow(ByteSource* source, size_t max_line_bytes, size_t block_bytes)
    : source_(source),
      max_line_(max_line_bytes),
      block_(std::max<size_t>(block_bytes, 1)),
      capacity_limit_(max_line_bytes + std::max<size_t>(block_bytes, 1)) {}

Status LineWindow::Reserve(size_t bytes) {
  if (bytes <= allocated_) return Status::OK();
  size_t size = std::min(std::max({bytes, allocated_ * 2, std::min(2 * block_, capacity_limit_)}), capacity_limit_);
  if (size < bytes) {
    return Status::Internal("line window of '" + source_->path() + "' asked for " + std::to_string(bytes) +
                            " bytes, over its bound of " + std::to_string(capacity_limit_));
  }
  std::unique_ptr<char[]> grown(new (std::nothrow) char[size + kPadding]);
  if (!grown) {
    return Status::ResourceExhausted("out of memory growing the read buffer of '" + source_->path() + "' to " +
                                     std::to_string(size) + " bytes; lower the maximum document size");
  }
  if (end_ > 0) std::memcpy(grown.get(), buffer_.get(), end_);
  // The padding is read by simdjson past the end of a line; keep it defined.
  std::memset(grown.get() + size, ' ', kPadding);
  buffer_ = std::move(grown);
  allocated_ = size;
  return Status::OK();
}

Status LineWindow::Fill() {
  size_t keep = line_start_;
  if (pin_ != kNoPin) {
    if (end_ - pin_ > max_line_) {
      pin_ = kNoPin;
      pin_lost_ = true;
    } else {
      keep = pin_;
    }
  }
  if (keep > 0) {
    std::memmove(buffer_.get(), buffer_.get() + keep, end_ - keep);
    base_ += keep;
    end_ -= keep;
    scan_ -= keep;
    line_start_ -= keep;
    if (pin_ != kNoPin) pin_ -= keep;
  }
  if (allocated_ - end_ < block_) TF_RETURN_IF_ERROR(Reserve(end_ + block_));
  TF_ASSIGN_OR_RETURN(size_t got, source_->Read(buffer_.get() + end_, allocated_ - end_));
  if (got == 0) eof_ = true;
  end_ += got;
  return Status::OK();
}

Status LineWindow::StripByteOrderMark() {
  while (end_ < sizeof(kBom) && !eof_) TF_RETURN_IF_ERROR(Fill());
  if (base_ == 0 && end_ >= sizeof(kBom) && std::memcmp(buffer_.get(), kBom, sizeof(kBom)) == 0) {
    line_start_ = scan_ = sizeof(kBom);
  }
  return Status::OK();
}

Status LineWindow::StartAt(uint64_t offset, uint64_t line_number) {
  if (started_) return Status::Internal("LineWindow::StartAt called after reading began");
  started_ = true;
  const std::string& path = source_->path();
  auto mismatch = [&](const std::string& why) {
    return Status::Corruption("cannot resume '" + path + "' at byte offset " + std::to_string(offset) + ", line " +
                              std::to_string(line_number) + ": " + why +
                              ". The file changed since that position was recorded; restore it, or start the "
                              "ingest again from the beginning");
  };
  if (line_number == 0) return mismatch("line numbers start at 1");
  if (offset == 0) {
    if (line_number != 1) return mismatch("offset 0 is line 1");
    return StripByteOrderMark();
  }
  // A plain file seeks to the byte before `offset`, which must be an LF.
  // Compressed streams are read from the start, so their LFs are counted too.
  const bool seeked = source_->can_seek() && offset > sizeof(kBom);
  if (seeked) {
    TF_RETURN_IF_ERROR(source_->SeekTo(offset - 1));
    base_ = offset - 1;
  }
  uint64_t line_feeds = 0;
  unsigned char last = 0;
  unsigned char head[sizeof(kBom)] = {0, 0, 0};
  for (;;) {
    size_t before_offset = static_cast<size_t>(std::min<uint64_t>(base_ + end_, offset) - base_);
    const char* p = buffer_.get();
    for (size_t i = scan_; i < before_offset && base_ + i < sizeof(kBom); ++i) head[base_ + i] = p[i];
    if (before_offset > scan_) {
      line_feeds += static_cast<uint64_t>(std::count(p + scan_, p + before_offset, '\n'));
      last = static_cast<unsigned char>(p[before_offset - 1]);
      scan_ = before_offset;
    }
    if (base_ + end_ >= offset) break;
    if (eof_) {
      return mismatch("the file has only " + std::to_string(base_ + end_) + " bytes");
    }
    line_start_ = scan_ = end_;
    TF_RETURN_IF_ERROR(Fill());
  }
  line_start_ = scan_ = static_cast<size_t>(offset - base_);
  bool after_bom = !seeked && offset == sizeof(kBom) && std::memcmp(head, kBom, sizeof(kBom)) == 0;
  if (last != '\n' && !after_bom) return mismatch("no line starts there");
  if (!seeked && line_feeds != line_number - 1) {
    return mismatch("that offset is line " + std::to_string(line_feeds + 1));
  }
  line_number_ = line_number;
  return Status::OK();
}

Result<bool> LineWindow::Next(Line* line) {
  if (!started_) {
    started_ = true;
    TF_RETURN_IF_ERROR(StripByteOrderMark());
  }
  for (;;) {
    char* p = buffer_.get();
    const void* found = end_ > scan_ ? std::memchr(p + scan_, '\n', end_ - scan_) : nullptr;
    if (skipping_) {
      if (found != nullptr || eof_) {
        size_t stop = found ? static_cast<size_t>(static_cast<const char*>(found) - p) : end_;
        *line = Line{};
        line->offset = skip_offset_;
        line->number = line_number_++;
        line->length = base_ + stop - skip_offset_;
        line->too_long = true;
        line->ends_with_newline = found != nullptr;
        line_start_ = scan_ = found ? stop + 1 : end_;
        skipping_ = false;
        return true;
      }
      line_start_ = scan_ = end_;  // nothing of a too-long line is kept
      TF_RETURN_IF_ERROR(Fill());
      continue;
    }
    if (found != nullptr || (eof_ && line_start_ < end_)) {
      size_t stop = found ? static_cast<size_t>(static_cast<const char*>(found) - p) : end_;
      *line = Line{};
      line->offset = base_ + line_start_;
      line->number = line_number_++;
      line->length = stop - line_start_;
      line->ends_with_newline = found != nullptr;
      if (line->length > max_line_) {
        line->too_long = true;
      } else {
        size_t text_end = stop;
        if (text_end > line_start_ && p[text_end - 1] == '\r') --text_end;
        line->text = std::string_view(p + line_start_, text_end - line_start_);
      }
      line_start_ = scan_ = found ? stop + 1 : end_;
      return true;
    }
    scan_ = end_;
    if (eof_) return false;
    if (end_ - line_start_ > max_line_) {
      skipping_ = true;
      skip_offset_ = base_ + line_start_;
      if (pin_ != kNoPin) {
        pin_ = kNoPin;
        pin_lost_ = true;
      }
      line_start_ = scan_ = end_;
    }
    TF_RETURN_IF_ERROR(Fill());
  }
}

void LineWindow::Pin(uint64_t offset) {
  if (offset < base_ || offset > base_ + end_) {
    pin_ = kNoPin;
    pin_lost_ = true;
    return;
  }
  pin_ = static_cast<size_t>(offset - base_);
  pin_lost_ = false;
}

void LineWindow::Unpin() {
  pin_ = kNoPin;
  pin_lost_ = false;
}

std::string_view LineWindow::Span(uint64_t begin, uint64_t end) const {
  if (begin < base_ || end < begin || end > base_ + end_) return {};
  return std::string_view(buffer_.get() + (begin - base_), static_cast<size_t>(end - begin));
}

}  // namespace tokenfeed::text
