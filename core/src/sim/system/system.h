// The system layer (ASTRA-sim's Sys), one instance for all NPUs: collectives are cut into
// chunks (streams) that walk through phases, each phase waiting in a queue of its dimension
// and run by its algorithm; hand-offs to the memory accelerator and reductions take time; and
// the workload's point-to-point messages and timed steps pass through here on their way to
// the network and the clock. Everything is held in flat vectors indexed by small integers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/astra_names.h"
#include "sim/collectives/collective.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/time_buckets.h"
#include "sim/network/network.h"

namespace chakra::sim {

// What the system layer tells the workload layer: a node it was given finished.
class NodeSink {
 public:
  virtual void node_done(uint32_t npu, uint64_t node) = 0;

 protected:
  ~NodeSink() = default;
};

class System final : public CollectiveContext, public MessageSink, public EventSink {
 public:
  // Checks the configurations against the network (errors name their files). `log`, when
  // given, records the closed-form phases and may restrict them (a rerun). `mirror`: one NPU of
  // each class of alike NPUs runs, for all of it (the classes come with set_mirror); what would
  // tell NPUs of a class apart throws NotMirrored. Classes: CollectiveContext::mirrored, phases
  // solved once for their class. Orbits: every message simulated, the network keeping one link
  // of each orbit.
  System(EventQueue& queue, const SimInputs& in, const SimOptions& o, NodeSink& nodes, ClosedFormLog* log = nullptr,
         MirrorMode mirror = MirrorMode::None);

  // ---- for the workload layer
  // Node `node` of NPU n finishes after `delay`.
  void finish_after(uint32_t n, Tick delay, uint64_t node);
  // A point-to-point message of node `node`; the node finishes when it arrived (send) or was
  // received (recv).
  void node_message(uint32_t n, uint64_t node, uint32_t peer, uint64_t bytes, int64_t tag, bool send);
  // A collective of node `node` over `group` (< 0: all NPUs) on the dimensions `involved`
  // (empty: all); the node finishes when every chunk did.
  void issue_collective(uint32_t npu, const Where& what, Collective type, uint64_t size,
                        const std::vector<bool>& involved, int group, int explicit_priority);
  // A broadcast, replayed with its recorded duration as the reference does.
  void replay_broadcast(uint32_t npu, uint64_t node, uint64_t bytes, Tick duration);
  // The communicator group a node's pg_name names: one announced on this NPU by a METADATA
  // node, else one of the comm-group file.
  int group_of(uint32_t npu, int pg_name, const std::string& spelled, const Where& what) const;
  // A process group announced by NPU `npu` (pg_name `id`, members in ring order). NPUs that
  // announce the same group share it, so that they agree on its ring.
  void add_process_group(uint32_t npu, int id, std::vector<uint32_t> members);
  // A mirrored run's classes, before anything runs; `m` outlives the run.
  void set_mirror(const Mirror& m);
  // Whether a message from a to b takes as long as one from c to d (of any one size).
  bool same_delays(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const { return network_->same_delays(a, b, c, d); }

  uint64_t messages() const { return network_->messages_delivered() + closed_form_messages_; }
  // Collectives of type t (kCollectiveTypes: broadcasts) over every NPU.
  CollectiveTotals totals(int t) const;
  void network_load(SimResult& result) const { network_->load(result); }

  // ---- CollectiveContext
  Stream& stream(uint32_t si) override { return streams_[si]; }
  const EventQueue& clock() const override { return queue_; }
  uint32_t npus() const override { return topo_.npus; }
  void send(uint32_t si, uint32_t dst, uint64_t bytes) override;
  void recv(uint32_t si, uint32_t src, uint64_t bytes) override;
  void bundle(uint32_t si, bool reduce, uint64_t bytes, bool endpoint) override;
  Tick handoff_delay(const Stream& s) const override { return s.cur.ring.local ? 10 : endpoint_delay_; }
  Tick reduction_delay(uint64_t bytes) const override;
  void phase_done(uint32_t si) override { proceed(si); }
  void phase_done_after(uint32_t si, Tick delay) override;
  bool closed_form() const override { return closed_form_; }
  bool mirrored() const override { return mirrored_; }
  bool open_flows(Flows& f) const override { return network_->open_flows(f); }
  void ready_flows(Flows& f) const override { network_->ready_flows(f); }
  void close_flows(const Flows& f, uint64_t per_flow, bool first_for_all) override;
  bool closed_form_for(const ClosedPhase& p) const override {
    return !log_ || !log_->restricted || log_->allowed.count(p) != 0;
  }
  bool direct_closed_forms() const override { return log_ && log_->direct; }
  void closed_form_solved(const ClosedPhase& p, Tick end) override {
    if (log_ && !log_->restricted) log_->solved.emplace_back(p, end);
  }
  void node_send(uint32_t si, uint64_t node, uint32_t dst, uint64_t bytes, int64_t tag) override;
  void node_recv(uint32_t si, uint64_t node, uint32_t src, uint64_t bytes, int64_t tag) override;
  void node_after(uint32_t si, uint64_t node, Tick delay) override;
  const std::vector<uint32_t>& group_members(int group) const override { return groups_[group].members; }

  // ---- MessageSink, EventSink
  void deliver(const Handler& h) override;
  void on_event(const Event& e) override;

 private:
  enum class CallKind : uint8_t { Bundle, NodeDone, DatasetDone, StreamNode, PhaseDone };
  struct SysCall {
    CallKind kind;
    bool reduce;   // Bundle: a reduction follows the hand-off
    uint32_t obj;  // stream or dataset
    uint64_t arg;  // Bundle: bytes; NodeDone, StreamNode: node id
  };
  struct Dataset {
    uint32_t npu;
    uint64_t node;
    uint32_t total, finished = 0;
    Tick created;
    int kind;  // Collective, or kCollectiveTypes for a broadcast
    uint64_t bytes;
  };
  struct QueueLevel {
    uint32_t first_queue = 0, count = 1;
    uint32_t allocator = 0, first_allocator = 0, last_allocator = 0;
  };
  struct Group {
    std::vector<uint32_t> members;
    std::unordered_map<uint32_t, uint32_t> index_of;
    int64_t first_stream_id;  // the reference numbers a group's streams from id * 10^6
  };
  struct Npu {
    std::vector<std::vector<uint32_t>> queues;
    std::vector<int> running;
    std::vector<QueueLevel> levels;
    int priority_counter = 0;
    int64_t streams_created = 0;
    std::map<int, int64_t> group_streams;
    std::map<int, int> runtime_groups;  // pg_name -> group index, from METADATA nodes
  };
  struct Rendezvous {
    uint32_t npu, peer;
    int64_t tag;
    uint64_t size;
    Handler handler;
  };
  // The logical topology a collective runs over: per dimension, a ring and its algorithm.
  struct Plan {
    std::vector<AlgorithmChoice> algos;
    std::vector<RingView> rings;
    std::vector<bool> involved;
  };

  void register_call(uint32_t n, Tick delay, SysCall c);
  void bundle_done(const SysCall& c);
  void sys_send(uint32_t npu, uint32_t dst, uint64_t bytes, int64_t tag, bool collective, Handler h);
  void sys_recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, bool collective, Handler h);

  void proceed(uint32_t si);
  void insert_stream(std::vector<uint32_t>& q, uint32_t si);
  void start_waiting(uint32_t n, int q);
  void stream_removed(uint32_t n, int q);
  void dataset_step(uint32_t di);

  std::pair<int, Dir> next_queue(Npu& p, uint32_t dim, int which);
  void make_plan(Plan& plan, uint32_t npu, Collective type, int group, const std::vector<bool>& involved,
                 const Where& what);
  uint32_t new_stream();
  PhaseSpec make_phase(uint32_t npu, Collective type, Collective phase_type, const Plan& plan, uint32_t dim,
                       uint64_t size, std::pair<int, Dir> queue, const Where& what);
  CollectiveAlgorithm& algorithm(Algorithm kind);

  EventQueue& queue_;
  const SimInputs& in_;
  NodeSink& nodes_;
  const Topology topo_;  // the network's NPUs and dimensions, for plans
  std::unique_ptr<Network> network_;
  uint8_t sink_id_;
  Tick endpoint_delay_ = 10;
  double local_mem_bw_ = 0;
  int threshold_ = 1;
  bool rendezvous_on_ = false, closed_form_ = false;
  uint64_t closed_form_messages_ = 0;
  bool mirrored_ = false, orbits_ = false;  // MirrorMode Classes, Orbits
  const Mirror* mirror_ = nullptr;          // a mirrored run's classes
  // How many NPUs NPU n's work stands for (its class's size in a mirrored run).
  uint64_t weight(uint32_t n) const { return mirror_ ? mirror_->size[n] : 1; }
  ClosedFormLog* log_;  // null where closed forms cannot be contended

  TimeBuckets<SysCall> buckets_;
  std::vector<Npu> npus_;
  Pool<Stream> streams_;
  Plan plan_scratch_;                      // issue_collective's, kept for its capacity
  std::vector<uint32_t> streams_scratch_;  // likewise
  Pool<Dataset> datasets_;
  Pool<Rendezvous> rendezvous_;
  std::deque<Group> groups_;  // a deque: rings point at members while groups are added
  std::map<int, int> group_index_;
  std::map<std::pair<int, std::vector<uint32_t>>, int> runtime_groups_;  // from METADATA nodes
  std::vector<std::unique_ptr<CollectiveAlgorithm>> algorithms_;         // by Algorithm, made when first used
  std::unique_ptr<CollectiveAlgorithm> custom_;
  CollectiveTotals totals_[kCollectiveTypes + 1] = {};
};

}  // namespace chakra::sim
