// How the system layer turns a collective into work: its communicator group or dimensions (the
// plan), its chunks, and each chunk's phases with their queues and algorithms.
#include <algorithm>

#include "sim/system/system.h"

namespace chakra::sim {

// Queues of a dimension are handed out round robin; with several queues, the first half runs
// reduce-scatter and all-reduce phases clockwise, the second half all-gathers anticlockwise.
std::pair<int, Dir> System::next_queue(Npu& p, uint32_t dim, int which) {
  QueueLevel& l = p.levels[dim];
  if (which == 0) {  // any queue of the dimension, round robin
    Dir d = (l.count > 1 && l.allocator >= l.count / 2) ? Dir::Anticlockwise : Dir::Clockwise;
    int q = static_cast<int>(l.first_queue + l.allocator++);
    if (l.allocator >= l.count) l.allocator = 0;
    return {q, d};
  }
  if (which == 1) {  // first half: reduce-scatter / all-reduce phases
    int q = static_cast<int>(l.first_queue + l.first_allocator++);
    if (l.first_allocator >= l.count / 2) l.first_allocator = 0;
    return {q, Dir::Clockwise};
  }
  int q = static_cast<int>(l.first_queue + l.last_allocator++);  // second half: all-gather
  if (l.last_allocator >= l.count) l.last_allocator = l.count / 2;
  return {q, Dir::Anticlockwise};
}

// The logical topology a collective runs over: per dimension, a ring (or a tree) and its
// algorithm. `group` < 0: all NPUs.
void System::make_plan(Plan& plan, uint32_t npu, Collective type, int group, const std::vector<bool>& involved,
                       const Where& what) {
  const auto& algos = in_.system.algorithms[int(type)];
  if (algos.empty())
    throw Error(what() + ": the system configuration has no " + std::string(collective_name(type)) + "-implementation");
  plan.algos.clear(), plan.rings.clear(), plan.involved.clear();
  bool whole = group < 0 || groups_[group].members.size() == topo_.npus;
  if (!whole) {
    const Group& g = groups_[group];
    if (!g.index_of.count(npu))
      throw Error(what() + ": NPU " + std::to_string(npu) + " is not in its communicator group");
    AlgorithmChoice a = algos.size() > 1 ? AlgorithmChoice{} : algos[0];
    if (a.kind == Algorithm::DoubleBinaryTree)
      throw Error(what() + ": doubleBinaryTree cannot run on a communicator group");
    a.flat = false;
    RingView r;
    r.n = static_cast<uint32_t>(g.members.size());
    r.members = &g.members;
    r.index_of = &g.index_of;
    r.local = true;
    plan.algos.push_back(a);
    plan.rings.push_back(r);
    plan.involved.push_back(true);
    return;
  }
  for (uint32_t d = 0; d < algos.size(); ++d) {
    RingView r;
    if (algos[d].flat) {
      r.n = topo_.npus;
      r.stride = 1;
      r.base = 0;
    } else {
      r.n = topo_.net.npus[d];
      r.stride = topo_.strides[d];
      r.base = npu - topo_.coord(npu, d) * topo_.strides[d];
    }
    plan.algos.push_back(algos[d]);
    plan.rings.push_back(r);
    // a group of all NPUs involves every dimension, as the reference
    plan.involved.push_back(group >= 0 ? true : (d < involved.size() ? bool(involved[d]) : true));
    if (algos[d].flat) break;
  }
}

PhaseSpec System::make_phase(uint32_t npu, Collective type, Collective phase_type, const Plan& plan, uint32_t dim,
                             uint64_t size, std::pair<int, Dir> queue, const Where& what) {
  PhaseSpec p;
  const AlgorithmChoice& a = plan.algos[dim];
  p.type = phase_type;
  p.size = size;
  p.queue = queue.first;
  p.dir = queue.second;
  p.ring = plan.rings[dim];
  p.window = a.window;
  p.algo = &algorithm(a.kind);
  p.algo->configure(p, PhaseSite{npu, type, dim, what});
  uint64_t n = p.ring.n;
  switch (p.type) {
    case Collective::AllReduce:
    case Collective::AllToAll: p.final_size = size; break;
    case Collective::AllGather: p.final_size = size * n; break;
    case Collective::ReduceScatter: p.final_size = size / n; break;
  }
  return p;
}

void System::issue_collective(uint32_t npu, const Where& what, Collective type, uint64_t size,
                              const std::vector<bool>& involved, int group, int explicit_priority) {
  // A collective over all NPUs has rings of every class unless there is one (the classes were
  // made so; this is the safety net).
  if (group < 0 && ((mirrored_ && mirror_->reps.size() > 1) || orbits_)) throw NotMirrored{};
  totals_[int(type)].count += weight(npu);
  totals_[int(type)].bytes += size * weight(npu);
  const SystemConfig& sys = in_.system;
  if (sys.preferred_dataset_splits == 0)
    throw Error(what() +
                ": the system configuration sets no 'preferred-dataset-splits' "
                "(ASTRA-sim divides by zero)");
  Npu& p = npus_[npu];
  // Scratch kept across calls (a collective is issued per chunk per NPU); taken out while in use.
  Plan plan = std::move(plan_scratch_);
  std::vector<uint32_t> made = std::move(streams_scratch_);
  made.clear();
  const bool custom = !sys.custom[int(type)].empty();
  if (!custom) make_plan(plan, npu, type, group, involved, what);
  // chunking: every chunk has the same size, the last one included
  uint64_t chunk = size / sys.preferred_dataset_splits;
  if (type != Collective::AllGather && chunk < topo_.npus) {
    chunk = topo_.npus;
    size = uint64_t(sys.preferred_dataset_splits) * chunk;
  }
  int priority = sys.scheduling == SchedulingPolicy::LIFO   ? p.priority_counter++
                 : sys.scheduling == SchedulingPolicy::FIFO ? p.priority_counter--
                                                            : explicit_priority;
  uint32_t di = datasets_.add(Dataset{npu, what.node.id(), 0, 0, queue_.now(), int(type), size});
  if (custom) {
    // One stream for the whole collective, on queue 0; the rank's trace is chosen by its
    // position in the group (sorted ranks, as the reference).
    PhaseSpec c{};
    if (!custom_) custom_ = make_custom_algorithm();
    c.algo = custom_.get();
    c.type = type;
    c.size = c.final_size = size;
    c.queue = 0;
    c.dir = Dir::Clockwise;
    uint32_t pos = npu;
    if (group >= 0) {
      std::vector<uint32_t> sorted = groups_[group].members;
      std::sort(sorted.begin(), sorted.end());
      auto it = std::find(sorted.begin(), sorted.end(), npu);
      if (it == sorted.end())
        throw Error(what() + ": NPU " + std::to_string(npu) + " is not in its communicator group");
      pos = static_cast<uint32_t>(it - sorted.begin());
      c.group = group;
    }
    c.custom_file = sys.custom[int(type)] + "." + std::to_string(pos) + ".et";
    made.push_back(new_stream());
    streams_[made.back()].phases.push_back(std::move(c));
  }
  uint32_t dims = static_cast<uint32_t>(plan.rings.size());
  auto active = [&](uint32_t d) { return plan.rings[d].n > 1 && plan.involved[d]; };
  if (chunk == 0) chunk = 1;  // an all-gather smaller than the splits: one byte per chunk
  // Each chunk's phases are written straight into its stream (a pooled one keeps its capacity).
  while (!custom && size > 0) {
    size = chunk > size ? 0 : size - chunk;
    uint64_t remain = chunk;
    const uint32_t si = new_stream();
    std::vector<PhaseSpec>& phases = streams_[si].phases;
    if (type != Collective::AllReduce || sys.optimization == CollectiveOptimization::Baseline) {
      for (uint32_t k = 0; k < dims; ++k) {
        uint32_t d = type == Collective::AllGather ? dims - 1 - k : k;
        if (!active(d)) continue;
        phases.push_back(make_phase(npu, type, type, plan, d, remain, next_queue(p, d, 0), what));
        remain = phases.back().final_size;
      }
    } else {
      // localBWAware: reduce-scatter up to the last active dimension, all-reduce there,
      // all-gather back down
      int last = 0;
      for (uint32_t d = 0; d < dims; ++d)
        if (active(d)) last = static_cast<int>(d);
      int d = 0;
      for (; d < last; ++d) {
        if (!active(d)) continue;
        phases.push_back(make_phase(npu, type, Collective::ReduceScatter, plan, d, remain, next_queue(p, d, 1), what));
        remain = phases.back().final_size;
      }
      if (active(d)) {
        phases.push_back(make_phase(npu, type, Collective::AllReduce, plan, d, remain, next_queue(p, d, 1), what));
        remain = phases.back().final_size;
      }
      for (--d; d >= 0; --d) {
        if (!active(d)) continue;
        phases.push_back(make_phase(npu, type, Collective::AllGather, plan, d, remain, next_queue(p, d, 2), what));
        remain = phases.back().final_size;
      }
    }
    if (phases.empty()) {
      streams_.release(si);
      break;
    }
    made.push_back(si);
  }
  plan_scratch_ = std::move(plan);
  datasets_[di].total = static_cast<uint32_t>(made.size());
  if (made.empty()) {
    // Nobody to talk to (every dimension excluded): done at once. The reference never
    // finishes such a collective.
    datasets_[di].total = 1;
    register_call(npu, 0, SysCall{CallKind::DatasetDone, false, di, 0});
    streams_scratch_ = std::move(made);
    return;
  }
  for (const uint32_t si : made) {
    Stream& s = streams_[si];
    s.npu = npu;
    s.dataset = di;
    s.priority = priority;
    s.id = group >= 0 ? npus_[npu].group_streams.try_emplace(group, groups_[group].first_stream_id).first->second++
                      : npus_[npu].streams_created++;
    s.next_phase = 0;
    s.queue = -1;
    proceed(si);
  }
  streams_scratch_ = std::move(made);
}

// A stream from the pool, as new but for the capacity of its phase list and packet queue.
uint32_t System::new_stream() {
  const uint32_t si = streams_.take();
  Stream& s = streams_[si];
  std::vector<PhaseSpec> phases = std::move(s.phases);
  PacketQueue packets = std::move(s.packets);
  s = Stream{};
  phases.clear();
  packets.clear();
  s.phases = std::move(phases);
  s.packets = std::move(packets);
  return si;
}

void System::replay_broadcast(uint32_t npu, uint64_t node, uint64_t bytes, Tick duration) {
  totals_[kCollectiveTypes].count += weight(npu);
  totals_[kCollectiveTypes].bytes += bytes * weight(npu);
  uint32_t di = datasets_.add(Dataset{npu, node, 1, 0, queue_.now(), kCollectiveTypes, 0});
  register_call(npu, duration, SysCall{CallKind::DatasetDone, false, di, 0});
}

int System::group_of(uint32_t npu, int pg_name, const std::string& spelled, const Where& what) const {
  auto rt = npus_[npu].runtime_groups.find(pg_name);
  if (rt != npus_[npu].runtime_groups.end()) return rt->second;
  auto it = group_index_.find(pg_name);
  if (it == group_index_.end())
    throw Error(what() + ": communicator group " + spelled + " is not defined" +
                (in_.groups_source.empty() ? std::string(" (no comm-group file given)") : " in " + in_.groups_source));
  return it->second;
}

void System::add_process_group(uint32_t npu, int id, std::vector<uint32_t> members) {
  // Group ids are pg_name + 1, as the reference.
  auto [it, added] = runtime_groups_.try_emplace({id, members}, static_cast<int>(groups_.size()));
  if (added) {
    Group g;
    g.members = std::move(members);
    for (uint32_t i = 0; i < g.members.size(); ++i) g.index_of[g.members[i]] = i;
    g.first_stream_id = int64_t(id + 1) * 1000000;
    groups_.push_back(std::move(g));
  }
  npus_[npu].runtime_groups[id] = it->second;
}

}  // namespace chakra::sim
