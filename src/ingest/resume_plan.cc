#include "ingest/resume_plan.h"

#include <algorithm>

#include "ingest/record_attributes.h"
#include "tokenfeed/record.h"

namespace tokenfeed::ingest {

std::string ComparablePath(const std::string& path) { return text::ResolvedPath(path); }

Result<ResumePlan> PlanResume(topic::TopicWriter& writer, const std::vector<PartitionId>& partitions,
                              const std::vector<std::string>& fingerprints, const text::SourceSet& sources,
                              bool from_stream) {
  ResumePlan plan;
  plan.last_sequence.resize(partitions.size());
  bool all_have_records = true;
  std::optional<uint64_t> earliest;
  text::ResumePoint earliest_point;
  for (size_t slot = 0; slot < partitions.size(); ++slot) {
    const PartitionId p = partitions[slot];
    TF_ASSIGN_OR_RETURN(std::optional<std::string> last, writer.LastRecord(p));
    if (!last) {
      all_have_records = false;
      continue;
    }
    plan.fresh = false;
    const std::string where = writer.uri() + " partition " + ToString(p) + ", last record";
    auto view = record::RecordView::Parse(*last);
    if (!view.ok()) return view.status().WithContext(where);
    auto run = view->FindAttribute(kRunAttribute);
    if (!run || std::find(fingerprints.begin(), fingerprints.end(), *run) == fingerprints.end()) {
      return Status::InvalidArgument(
          where + " was written by another ingest (settings fingerprint " +
          (run ? std::string(*run) : std::string("none")) + ", this run's is " + fingerprints.front() +
          (from_stream ? "): an Arrow stream's run cannot be resumed or added to a topic that holds records; "
                         "write it to a new topic"
                       : "): resuming needs the same tokenizer, inputs and options; write to a new topic to start "
                         "afresh"));
    }
    plan.last_sequence[slot] = view->doc_seq();
    if (!earliest || view->doc_seq() < *earliest) {
      earliest = view->doc_seq();
      const auto& files = sources.files();
      size_t index = files.size();
      const std::string source = ComparablePath(std::string(view->source_path()));
      for (size_t i = 0; i < files.size(); ++i) {
        if (files[i].path == view->source_path() || ComparablePath(files[i].path) == source) {
          index = i;
          break;
        }
      }
      if (index == files.size()) {
        return Status::InvalidArgument(where + " comes from '" + std::string(view->source_path()) +
                                       "', which is not among this run's inputs: resume with the same inputs "
                                       "(and --shard), or write to a new topic");
      }
      earliest_point = text::ResumePoint{};
      earliest_point.file_index = static_cast<uint32_t>(index);
      earliest_point.byte_offset = view->source_byte_offset();
      earliest_point.line = view->source_line();
      earliest_point.sequence = view->doc_seq();
      earliest_point.path = files[index].path;
    }
  }
  if (all_have_records && earliest) {
    plan.start = earliest_point;
    plan.start_sequence = *earliest;
  }
  return plan;
}

}  // namespace tokenfeed::ingest
