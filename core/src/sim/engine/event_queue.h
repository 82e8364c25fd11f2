// The simulator's clock and its one global event queue. Events of the same time run in the
// order they were scheduled (FIFO), as in ASTRA-sim: reproducing its numbers to the nanosecond
// means reproducing its event order. Layers register as sinks and get their own events back;
// the queue knows nothing of what an event means.
//
// Events are kept in one bucket per distinct time, in scheduling order, and only the times are
// ordered (a heap): simulations schedule many events for few times (a collective's messages
// land together), so this orders a few times instead of every event.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "chakra/sim/simulate.h"
#include "sim/common.h"
#include "sim/engine/flat_index.h"

namespace chakra::sim {

struct Event {
  Tick time;
  uint8_t sink;  // who handles it (EventQueue::add_sink)
  uint8_t kind;  // the sink's own event kind
  uint32_t a;
  uint64_t b;
};

class EventSink {
 public:
  virtual void on_event(const Event& e) = 0;

 protected:
  ~EventSink() = default;
};

class EventQueue {
 public:
  // `workload` names the run in errors about the clock.
  explicit EventQueue(std::string workload) : workload_(std::move(workload)) {}

  // Registers a sink; its events carry the returned id.
  uint8_t add_sink(EventSink& sink);
  Tick now() const { return now_; }
  void schedule(Tick t, uint8_t sink, uint8_t kind, uint32_t a, uint64_t b = 0);
  // Runs the earliest event; false when none is left.
  bool run_next();
  uint64_t events_run() const { return events_; }
  size_t pending() const { return pending_; }

  // The clock is 64-bit nanoseconds (584 years). Hostile or broken inputs (a size of 2^62
  // bytes on a slow link) go past it; wrapping around would give silently wrong times, and
  // converting such a double to an integer is undefined. Both are errors instead.
  Tick to_tick(double ns) const {
    if (!(ns < 18446744073709549568.0)) clock_overflow();  // the largest double below 2^64; NaN too
    return ns > 0 ? static_cast<Tick>(ns) : 0;
  }
  [[noreturn]] void clock_overflow() const;

 private:
  std::string workload_;
  std::vector<EventSink*> sinks_;
  struct Bucket {
    std::vector<Event> events;  // in scheduling order
    size_t next = 0;            // the first not yet run
  };
  uint32_t bucket_for(Tick t);

  std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>> times_;  // of waiting buckets
  FlatIndex<Tick, IntegerHash> waiting_;                                    // time -> bucket, for times after now
  // The waiting bucket found last: events come in runs for one time (a collective's messages).
  Tick last_time_ = 0;
  uint32_t last_bucket_ = UINT32_MAX;
  Pool<Bucket> buckets_;
  uint32_t current_ = UINT32_MAX;  // the bucket of now, while it runs
  Tick now_ = 0;
  uint64_t events_ = 0;
  size_t pending_ = 0;
};

}  // namespace chakra::sim
