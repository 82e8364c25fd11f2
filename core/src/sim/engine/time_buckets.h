// Per-NPU events grouped by time (ASTRA-sim's Sys::register_event): calls registered on one NPU
// for the same time form a bucket that runs, in registration order, when the one global event
// scheduled for it comes up. Calls added to a bucket while it runs run in the same pass.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "chakra/sim/simulate.h"

namespace chakra::sim {

template <class Call>
class TimeBuckets {
 public:
  void resize(uint32_t npus) { by_npu_.resize(npus); }

  // Adds `call` to NPU n's bucket for time t; true when the bucket is new, and the caller then
  // schedules one event for (n, t).
  bool add(uint32_t n, Tick t, const Call& call) {
    auto& mine = by_npu_[n];
    for (auto& [time, idx] : mine)
      if (time == t) {
        buckets_[idx].push_back(call);
        return false;
      }
    uint32_t idx;
    if (!free_.empty()) {
      idx = free_.back();
      free_.pop_back();
    } else {
      idx = static_cast<uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[idx].push_back(call);
    mine.emplace_back(t, idx);
    return true;
  }

  // Runs `handle(call)` for every call of NPU n's bucket at time t, then frees it.
  template <class Handle>
  void run(uint32_t n, Tick t, Handle&& handle) {
    uint32_t idx = UINT32_MAX;
    for (auto& [time, i] : by_npu_[n])
      if (time == t) idx = i;
    if (idx == UINT32_MAX) return;
    for (size_t i = 0; i < buckets_[idx].size(); ++i) handle(Call(buckets_[idx][i]));
    auto& mine = by_npu_[n];
    for (size_t i = 0; i < mine.size(); ++i)
      if (mine[i].first == t) {
        mine[i] = mine.back();
        mine.pop_back();
        break;
      }
    buckets_[idx].clear();
    free_.push_back(idx);
  }

 private:
  std::vector<std::vector<std::pair<Tick, uint32_t>>> by_npu_;  // pending (time, bucket)
  std::vector<std::vector<Call>> buckets_;
  std::vector<uint32_t> free_;
};

}  // namespace chakra::sim
