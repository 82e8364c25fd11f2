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
  queue_.push(Event{t, seq_++, sink, kind, a, b});
}

bool EventQueue::run_next() {
  if (queue_.empty()) return false;
  Event e = queue_.top();
  queue_.pop();
  now_ = e.time;
  ++events_;
  sinks_[e.sink]->on_event(e);
  return true;
}

void EventQueue::clock_overflow() const {
  throw Error(workload_ + ".*.et: simulated time passed 2^64 ns (584 years): a duration or size in "
              "the traces or configuration is beyond any real run");
}

}  // namespace chakra::sim
