// The network layer's interface (ASTRA-sim's AstraNetworkAPI): the system layer sends and
// receives messages through it and nothing else. Sends and receives are matched by
// (tag, src, dst, size) and their order within that stream, whichever is posted first, as
// ASTRA-sim's callback tracker does; a backend only decides how long a message travels.
//
// To add a backend: a file in this folder deriving from Network (transport(), and its own
// events if it has any) with make_<Name>_network(), and one line in
// chakra/sim/network_backends.def.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "chakra/astra/config.h"
#include "sim/astra_names.h"
#include "sim/common.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/flat_index.h"
#include "sim/engine/flows.h"
#include "sim/network/symmetry.h"

namespace chakra::sim {

// Who is told when a message arrives (send side) or is received (recv side): a value the
// network stores and hands back without looking into it. Kind 0 tells nobody.
struct Handler {
  uint8_t kind = 0;
  uint32_t npu = 0;
  uint64_t arg = 0;
};

class MessageSink {
 public:
  virtual void deliver(const Handler& h) = 0;

 protected:
  ~MessageSink() = default;
};

// Coordinates of NPUs in a multi-dimensional network; dimension 0 varies fastest.
struct Topology {
  explicit Topology(const NetworkConfig& net);
  uint32_t coord(uint32_t npu, uint32_t d) const { return (npu / strides[d]) % net.npus[d]; }
  // Links a message crosses from src to dst within dimension d (a ring: the shorter way round).
  uint32_t hops(uint32_t d, uint32_t src, uint32_t dst) const;

  const NetworkConfig& net;
  uint32_t npus = 0, dims = 0;
  std::vector<uint32_t> strides;     // per dimension, plus the total
  std::vector<double> bytes_per_ns;  // per dimension
  // Slowdowns::comm: the serialisation of a message an NPU sends takes this many times as long
  // (empty: 1 for all).
  std::vector<double> send_slowdown;
  double send_factor(uint32_t src) const { return src < send_slowdown.size() ? send_slowdown[src] : 1; }
  // How long `bytes` sent by `src` take to serialise on dimension `d`, in ns before truncation.
  double serial_ns(uint64_t bytes, uint32_t d, uint32_t src) const {
    return static_cast<double>(bytes) / bytes_per_ns[d] * send_factor(src);
  }
};

struct MatchKey {
  int64_t tag;
  uint32_t src, dst;
  uint64_t size, seq;
  bool operator==(const MatchKey&) const = default;
};

class Network : public EventSink {
 public:
  Network(EventQueue& queue, MessageSink& sink, const NetworkConfig& net);
  virtual ~Network() = default;

  void send(uint32_t src, uint32_t dst, uint64_t bytes, int64_t tag, Handler on_arrival);
  void recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, Handler on_receive);
  uint64_t messages_delivered() const { return delivered_; }
  // Per-NPU send slowdowns (Topology::send_slowdown), set before any message is sent.
  void set_send_slowdown(std::vector<double> factors) { topo_.send_slowdown = std::move(factors); }
  // A mirrored run's: per NPU, how many NPUs' messages its messages stand for (counted so in the
  // messages and load); set before any message is sent, outlives the network.
  void set_weights(const std::vector<uint32_t>* w) { weights_ = w; }
  // A run of one NPU per orbit of `s` (outlives the network; set before any message is sent):
  // a message is received by its destination's orbit's NPU, as from the sender moved alike,
  // and the backend keeps one link of each orbit of links. False: the backend does not.
  virtual bool set_symmetry(const Symmetry* s) { return false; }
  // Whether a message from a to b takes as long as one from c to d (of any one size), whatever
  // else is in flight; false where the backend cannot tell.
  virtual bool same_delays(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const { return false; }

  // Whether the system layer may solve ring phases in closed form through open_flows().
  virtual bool closed_forms() const { return false; }
  // Whether a closed-form phase can turn out contended (close_flows, or a message, throws
  // ClosedFormContended): phases are then logged for a rerun.
  virtual bool closed_forms_contend() const { return false; }
  // Fills in how `f`'s flows (src, dst, bytes set) travel; false when they cannot be carried
  // without events (they share a link), and the phase is then simulated message by message.
  virtual bool open_flows(Flows& f) const { return false; }
  // Just before the flows are carried: their starting state (a contention network's links as
  // they are now) and Flows::alike.
  virtual void ready_flows(Flows& f) const {}
  // `per_flow` messages went along each of `f`'s flows (times from Flows::carry; with
  // `first_for_all` only flow 0 was carried and stands for every flow): records their load.
  // A contention network throws ClosedFormContended if other traffic shared their links.
  virtual void close_flows(const Flows& f, uint64_t per_flow, bool first_for_all) {}

  void on_event(const Event& e) final;

  // Fills result.dimensions (and, for backends that model links, result.links).
  virtual void load(SimResult& result) const;

 protected:
  enum : uint8_t { kArrival, kHandlerNow, kFirstBackendEvent };
  // Carries message m to key(m).dst and calls arrived(m) once it is there (through events
  // scheduled with schedule()).
  virtual void transport(uint32_t m) = 0;
  virtual void on_backend_event(const Event& e) {}
  void arrived(uint32_t m);
  const MatchKey& key(uint32_t m) const { return messages_[m].key; }
  void schedule(Tick t, uint8_t kind, uint32_t a, uint64_t b = 0) { queue_.schedule(t, sink_id_, kind, a, b); }

  // The first dimension in which two NPUs' coordinates differ (dims when none does).
  uint32_t first_dim(uint32_t src, uint32_t dst) const;
  // `count` messages of `bytes` from src to dst crossed the first dimension where they differ.
  void carried(uint32_t src, uint32_t dst, uint64_t bytes, uint64_t count);
  uint64_t weight(uint32_t src) const { return weights_ ? (*weights_)[src] : 1; }
  void account(uint32_t dim, uint64_t bytes, uint64_t count) {
    dim_messages_[dim] += count;
    dim_bytes_[dim] += bytes * count;
  }

  EventQueue& queue_;
  Topology topo_;                       // fixed once built; set_send_slowdown fills its factors first
  const Symmetry* symmetry_ = nullptr;  // set_symmetry's, where the backend takes it

 private:
  std::vector<uint64_t> dim_messages_, dim_bytes_;
  struct PairKey {
    int64_t tag;
    uint32_t src, dst;
    uint64_t size;
    bool operator==(const PairKey&) const = default;
  };
  struct PairHash {
    size_t operator()(const PairKey& k) const;
  };
  // One send and its receive, matched by their position in the stream.
  struct MatchEntry {
    Handler send, recv;
    bool has_recv = false, arrived = false;
  };
  // The messages of one (tag, src, dst, size): sends and receives numbered in posting order;
  // entries[head + k] is the message numbered first + k (those before `first` are done).
  struct Stream {
    PairKey key{};
    uint64_t sends = 0, recvs = 0, first = 0;
    std::vector<MatchEntry> entries;
    size_t head = 0;  // entries before it are done
  };
  struct InFlight {
    MatchKey key;
    uint32_t stream;
  };
  uint32_t stream_of(const PairKey& pk);
  // The entry of message `seq` (not yet done), made when neither side has been posted.
  MatchEntry& entry(Stream& s, uint64_t seq);
  // Entry `seq` of stream `i` is done: drops the done entries at its front, and the stream
  // once every send met its receive (so long runs do not accumulate streams).
  void done(uint32_t i, uint64_t seq);

  MessageSink& sink_;
  uint8_t sink_id_;
  uint64_t delivered_ = 0;
  const std::vector<uint32_t>* weights_ = nullptr;
  FlatIndex<PairKey, PairHash> stream_ids_;  // made and dropped per message by direct phases
  Pool<Stream> streams_;
  Pool<InFlight> messages_;  // messages in flight, by index
  Pool<Handler> handlers_;   // receives that met an arrived message, told at once
};

// The backend registered for `backend` (registry.cpp).
std::unique_ptr<Network> make_network(Backend backend, EventQueue& queue, MessageSink& sink, const NetworkConfig& net);

}  // namespace chakra::sim
