// Python binding of replay and seen (tokenfeed/replay.h, tokenfeed/seen.h):
// the results cross as dicts and lists; python/tokenfeed/dataset.py gives
// them their public form (TokenDataset.replay, tokenfeed.seen). The work
// runs without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "status_to_exception.h"
#include "tokenfeed/replay.h"
#include "tokenfeed/seen.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

nb::dict PieceDict(const ReplayPiece& p) {
  nb::dict d;
  d["uri"] = p.uri;
  d["partition"] = p.partition;
  d["offset"] = p.offset;
  d["token_start"] = p.token_start;
  d["token_end"] = p.token_end;
  d["bos"] = p.bos;
  d["eos"] = p.eos;
  nb::dict source;  // as the CLI's --json and `tokenfeed inspect --json` have it
  source["kind"] = p.source_kind;
  if (p.source_kind == "message") {
    source["topic"] = p.source_path;
    source["partition"] = p.source_line;
    source["offset"] = p.source_byte_offset;
  } else {
    source["path"] = p.source_path;
    source["line"] = p.source_line;
    source["byte_offset"] = p.source_byte_offset;
  }
  d["source"] = source;
  return d;
}

nb::list Replay(const std::string& state, uint64_t step, std::optional<uint32_t> rank,
                std::optional<uint32_t> batch_size, std::optional<uint32_t> world_size,
                const std::vector<std::string>& other_states, const std::vector<std::string>& kafka_properties) {
  ReplayOptions o;
  o.other_states = other_states;
  o.rank = rank;
  o.batch_size = batch_size;
  o.world_size = world_size;
  o.kafka_properties = kafka_properties;
  Result<ReplayedStep> r = Status::Internal("not replayed");
  {
    nb::gil_scoped_release release;
    r = ReplayStep(state, step, o);
  }
  ReplayedStep replayed = ValueOrThrow(std::move(r));
  nb::list rows;
  for (const ReplayRow& row : replayed.rows) {
    nb::dict d;
    d["step"] = row.step;
    d["rank"] = row.rank;
    d["row"] = row.row;
    d["source"] = row.source;
    nb::list pieces;
    for (const ReplayPiece& p : row.pieces) pieces.append(PieceDict(p));
    d["pieces"] = pieces;
    d["padding"] = row.padding;
    d["input_ids"] = row.input_ids;
    d["labels"] = row.labels;
    rows.append(d);
  }
  return rows;
}

nb::dict SeenOf(const std::string& state, const std::vector<std::string>& kafka_properties) {
  SeenOptions o;
  o.kafka_properties = kafka_properties;
  Result<SeenReport> r = Status::Internal("not computed");
  {
    nb::gil_scoped_release release;
    r = Seen(state, o);
  }
  SeenReport report = ValueOrThrow(std::move(r));
  nb::dict d;
  d["samples"] = report.samples;
  d["step"] = report.step ? nb::cast(*report.step) : nb::none();
  nb::list sources;
  for (const SeenSource& s : report.sources) {
    nb::dict src;
    src["uri"] = s.uri;
    src["all"] = s.all;
    src["samples"] = s.samples;
    src["tokens"] = s.tokens ? nb::cast(*s.tokens) : nb::none();
    src["whole_records"] = s.whole_offsets;
    nb::list whole;
    for (const auto& ranges : s.whole) {
      nb::list part;
      for (const auto& [a, b] : ranges) part.append(nb::make_tuple(a, b));
      whole.append(part);
    }
    src["whole"] = whole;
    nb::list partial;
    for (const SeenPartial& p : s.partial) {
      nb::dict pd;
      pd["partition"] = p.partition;
      pd["offset"] = p.offset;
      pd["tokens_taken"] = p.tokens_taken;
      pd["tokens"] = p.tokens;
      partial.append(pd);
    }
    src["partial"] = partial;
    sources.append(src);
  }
  d["sources"] = sources;
  return d;
}

}  // namespace

void RegisterReplay(nb::module_& m) {
  m.def("_replay", &Replay, nb::arg("state"), nb::arg("step"), nb::arg("rank").none(), nb::arg("batch_size").none(),
        nb::arg("world_size").none(), nb::arg("other_states"), nb::arg("kafka_properties"),
        "Global step `step` of the run a loader state belongs to, row by row (tokenfeed::ReplayStep).");
  m.def("_seen", &SeenOf, nb::arg("state"), nb::arg("kafka_properties"),
        "The records a loader state's run consumed (tokenfeed::Seen).");
}

}  // namespace tokenfeed::python
