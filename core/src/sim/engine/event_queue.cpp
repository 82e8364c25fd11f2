#include "sim/engine/event_queue.h"

#include "chakra/support/error.h"

namespace chakra::sim {

uint8_t EventQueue::add_sink(EventSink& sink) {
  if (sinks_.size() == UINT8_MAX) throw Error("internal error: too many event sinks");
  sinks_.push_back(&sink);
  return static_cast<uint8_t>(sinks_.size() - 1);
}

void EventQueue::schedule(Tick t, uint8_t sink, uint8_t kind, uint32_t a, uint64_t b) {
  if (t < now_) clock_overflow();  // now + delay wrapped around
  const uint32_t bucket = t == now_ && current_ != UINT32_MAX ? current_ : bucket_for(t);
  buckets_[bucket].events.push_back(Event{t, sink, kind, a, b});
  ++pending_;
}

uint32_t EventQueue::bucket_for(Tick t) {
  if (t == last_time_ && last_bucket_ != UINT32_MAX) return last_bucket_;
  bool added = false;
  uint32_t& id = waiting_.slot_for(t, added);
  if (added) {
    id = buckets_.take();  // empty: buckets are cleared when released
    times_.push(t);
  }
  last_time_ = t, last_bucket_ = id;
  return id;
}

bool EventQueue::run_next() {
  while (current_ == UINT32_MAX || buckets_[current_].next == buckets_[current_].events.size()) {
    if (current_ != UINT32_MAX) {
      buckets_[current_].events.clear();
      buckets_[current_].next = 0;
      buckets_.release(current_);
      current_ = UINT32_MAX;
    }
    if (times_.empty()) return false;
    const Tick t = times_.top();
    times_.pop();
    current_ = *waiting_.find(t);
    waiting_.erase(t);
    if (t == last_time_) last_bucket_ = UINT32_MAX;  // no longer waiting
  }
  // A copy: the handler may schedule into this bucket, which can move its events.
  const Event e = buckets_[current_].events[buckets_[current_].next++];
  --pending_;
  now_ = e.time;
  ++events_;
  sinks_[e.sink]->on_event(e);
  return true;
}

void EventQueue::clock_overflow() const {
  throw Error(workload_ +
              ".*.et: simulated time passed 2^64 ns (584 years): a duration or size in "
              "the traces or configuration is beyond any real run");
}

}  // namespace chakra::sim
