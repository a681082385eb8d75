#include "loader/source_mixer.h"

#include <utility>

namespace tokenfeed::loader {

SourceMixer::SourceMixer(const std::vector<double>& weights) {
  double total_weight = 0;
  for (double w : weights) total_weight += w;
  for (double w : weights) weights_.push_back(w / total_weight);
  counts_.assign(weights.size(), 0);
}

size_t SourceMixer::Next() {
  size_t best = 0;
  double best_gap = -1e300;
  for (size_t s = 0; s < weights_.size(); ++s) {
    if (weights_[s] <= 0) continue;
    double gap = weights_[s] * static_cast<double>(total_ + 1) - static_cast<double>(counts_[s]);
    if (gap > best_gap + 1e-12) {
      best_gap = gap;
      best = s;
    }
  }
  ++counts_[best];
  ++total_;
  return best;
}

void SourceMixer::Resume(std::vector<uint64_t> counts) {
  counts_ = std::move(counts);
  total_ = 0;
  for (uint64_t c : counts_) total_ += c;
}

}  // namespace tokenfeed::loader
