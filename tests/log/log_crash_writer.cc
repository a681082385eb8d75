// log_crash_writer: the child process of the crash tests. It opens a writer
// on one partition (running recovery), reports what recovery did, then
// appends numbered test records batch after batch and reports every
// acknowledged end offset, until it is killed or has written its batches.
//
//   log_crash_writer URI PARTITION each-batch|interval|none RECORDS_PER_BATCH MAX_EXTRA_BYTES ACK_FD MAX_BATCHES
//   log_crash_writer URI PARTITION hold ACK_FD
//
// Lines written to ACK_FD:
//   R <end offset after recovery> <bytes cut off by recovery>
//   A <end offset>            after each successful Append
//   L                         (hold) the lock is held; then it sleeps
//   E <message>               on any error, then exit status 1
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "log/test_records.h"
#include "log/log.h"

namespace {

using namespace tokenfeed;
using namespace tokenfeed::log;

int ack_fd = -1;

void Say(const std::string& line) {
  std::string l = line + "\n";
  const char* p = l.data();
  size_t left = l.size();
  while (left > 0) {
    const ssize_t n = ::write(ack_fd, p, left);
    if (n <= 0) std::_Exit(3);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

[[noreturn]] void Fail(const Status& s) {
  std::string m = s.ToString();
  for (char& c : m) {
    if (c == '\n') c = ' ';
  }
  Say("E " + m);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: see the comment at the top of log_crash_writer.cc\n");
    return 2;
  }
  const std::string uri = argv[1];
  const PartitionId partition(static_cast<uint32_t>(std::atoi(argv[2])));
  const std::string mode = argv[3];
  auto topic = TopicDirectory::Open(uri);
  if (mode == "hold") {
    ack_fd = std::atoi(argv[4]);
    if (!topic.ok()) Fail(topic.status());
    auto w = (*topic)->OpenWriter(partition);
    if (!w.ok()) Fail(w.status());
    Say("L");
    for (int i = 0; i < 600; ++i) ::sleep(1);  // bounded: the test kills it long before
    return 0;
  }
  if (argc < 8) return 2;
  const uint32_t per_batch = static_cast<uint32_t>(std::atoi(argv[4]));
  const size_t max_extra = static_cast<size_t>(std::atoi(argv[5]));
  ack_fd = std::atoi(argv[6]);
  const long max_batches = std::atol(argv[7]);
  if (!topic.ok()) Fail(topic.status());

  WriterOptions options;
  if (mode == "each-batch") {
    options.fsync = FsyncPolicy::kEachBatch;
  } else if (mode == "interval") {
    options.fsync = FsyncPolicy::kInterval;
    options.fsync_interval_ms = 5;
  } else if (mode == "none") {
    options.fsync = FsyncPolicy::kNone;
  } else {
    return 2;
  }
  auto w = (*topic)->OpenWriter(partition, options);
  if (!w.ok()) Fail(w.status());
  PartitionWriter& writer = **w;
  // Records are numbered by the offset they must get; the last record says
  // where to continue, as the ingest resumes from the last record.
  auto last = writer.ReadLastRecord();
  if (!last.ok()) Fail(last.status());
  uint64_t next = 0;
  if (last->has_value()) {
    auto n = testing::TestRecordNumber((*last)->bytes, max_extra);
    if (!n || *n != (*last)->offset.value()) Fail(Status::Corruption("the last record does not name its offset"));
    next = *n + 1;
  }
  if (next != writer.end_offset().value()) Fail(Status::Corruption("last record and end offset disagree"));
  Say("R " + std::to_string(next) + " " + std::to_string(writer.recovery().truncated_bytes));

  BatchBuilder batch;
  for (long i = 0; i < max_batches; ++i) {
    testing::FillTestBatch(&batch, next, per_batch, max_extra);
    auto r = writer.Append(&batch);
    if (!r.ok()) Fail(r.status());
    next = r->end_offset().value();
    Say("A " + std::to_string(next));
  }
  Status s = writer.Close();
  if (!s.ok()) Fail(s);
  return 0;
}
