#include "chakra/app/sim_job.h"

#include <cmath>
#include <unordered_map>

#include "byte_codec.h"
#include "chakra/support/error.h"

namespace chakra {

// The job's parts are the simulator's and ASTRA-sim's config types, named as they name them.
using namespace sim;
using namespace astra;

namespace {

using codec::Reader;
using codec::Writer;

constexpr char kJobMagic[8] = {'C', 'K', 'S', 'I', 'M', 'J', 'O', '2'};
constexpr char kResultMagic[8] = {'C', 'K', 'S', 'I', 'M', 'R', 'E', '1'};

}  // namespace

std::string encode_job(const SimJob& job) {
  Writer w(kJobMagic);
  w.u64(job.traces.size());
  for (const std::string& t : job.traces) w.str(t);
  // Configs travel in their ASTRA-sim text forms, which read back equal (tested).
  w.str(format_network(job.network));
  w.str(format_system(job.system));
  w.raw(job.memory.type);
  w.f64(job.memory.latency);
  w.f64(job.memory.bandwidth);
  w.u64(job.memory.npus_per_node);
  codec::write_groups(w, job.groups);
  const SimOptions& o = job.options;
  w.raw(o.backend);
  w.u64(o.queues_per_dim);
  w.f64(o.injection_scale);
  w.raw<uint8_t>(o.rendezvous);
  w.raw<uint8_t>(o.record_spans);
  w.raw<uint8_t>(o.every_message);
  w.raw<uint8_t>(o.every_npu);
  w.raw<uint8_t>(uint8_t(o.stalls));
  w.raw<uint8_t>(o.compare_stall_modes);
  w.u64(o.expected_nodes);
  w.u64(o.speedups.size());
  for (const SimOptions::Speedup& s : o.speedups) {
    w.str(s.name_part);
    w.f64(s.speedup);
  }
  const Slowdowns& slow = o.slowdown;
  for (const std::vector<double>* list : {&slow.compute, &slow.comm, &slow.bandwidth}) {
    w.u64(list->size());
    for (double k : *list) w.f64(k);
  }
  w.u64(slow.delay.size());
  for (uint64_t d : slow.delay) w.u64(d);
  for (double k : {slow.compute_rest, slow.comm_rest, slow.bandwidth_rest}) w.f64(k);
  w.u64(slow.delay_rest);
  return std::move(w.out);
}

SimJob decode_job(std::string_view bytes) {
  Reader r(bytes, kJobMagic, "simulation job");
  SimJob job;
  job.traces.resize(r.count(8));
  for (std::string& t : job.traces) t = r.str();
  job.network = parse_network(r.str(), "simulation job network");
  job.system = parse_system(r.str(), "simulation job system");
  job.memory.type = r.raw<MemoryType>();
  if (static_cast<unsigned>(job.memory.type) > static_cast<unsigned>(MemoryType::Pool)) r.fail("bad memory type");
  job.memory.latency = r.f64();
  job.memory.bandwidth = r.f64();
  job.memory.npus_per_node = static_cast<uint32_t>(r.u64());
  job.groups = codec::read_groups(r);
  SimOptions& o = job.options;
  o.backend = r.raw<Backend>();
  if (size_t(o.backend) >= network_backends().size()) r.fail("bad backend");
  o.queues_per_dim = static_cast<uint32_t>(r.u64());
  o.injection_scale = r.f64();
  o.rendezvous = r.raw<uint8_t>() != 0;
  o.record_spans = r.raw<uint8_t>() != 0;
  o.every_message = r.raw<uint8_t>() != 0;
  o.every_npu = r.raw<uint8_t>() != 0;
  const uint8_t stalls = r.raw<uint8_t>();
  if (stalls > uint8_t(StallMode::Wait)) r.fail("bad stall mode");
  o.stalls = StallMode(stalls);
  o.compare_stall_modes = r.raw<uint8_t>() != 0;
  o.expected_nodes = r.u64();
  o.speedups.resize(r.count(16));
  for (SimOptions::Speedup& s : o.speedups) {
    s.name_part = r.str();
    s.speedup = r.f64();
    if (!(s.speedup > 0) || !std::isfinite(s.speedup)) r.fail("bad speedup");
  }
  auto factor = [&r] {
    const double k = r.f64();
    if (!(k > 0) || !std::isfinite(k)) r.fail("bad slowdown factor");
    return k;
  };
  Slowdowns& slow = o.slowdown;
  for (std::vector<double>* list : {&slow.compute, &slow.comm, &slow.bandwidth}) {
    list->resize(r.count(8));
    for (double& k : *list) k = factor();
  }
  slow.delay.resize(r.count(8));
  for (uint64_t& d : slow.delay) d = r.u64();
  slow.compute_rest = factor(), slow.comm_rest = factor(), slow.bandwidth_rest = factor();
  slow.delay_rest = r.u64();
  r.end();
  return job;
}

std::string encode_result(const SimResult& result) {
  Writer w(kResultMagic);
  w.u64(result.npus.size());
  for (const NpuResult& n : result.npus) {
    w.raw<uint8_t>(n.finished);
    for (Tick t :
         {n.finish, n.astra_exposed_comm, n.compute, n.comm, n.cpu, n.memory, n.overlap, n.nodes, n.measured_step,
          n.start, n.measured_exposed_comm, n.measured_exposed_transfer, n.exposed_transfer, n.stall_waits})
      w.u64(t);
    for (Tick t : n.stalls) w.u64(t);
    w.u64(n.stuck.size());
    for (const std::string& s : n.stuck) w.str(s);
    w.u64(n.profiler_steps.size());
    for (const NpuResult::StepWindow& x : n.profiler_steps) {
      w.str(x.name);
      for (uint64_t v : {x.annotated, x.measured, x.simulated, x.nodes}) w.u64(v);
    }
  }
  w.raw<uint8_t>(uint8_t(result.stall_mode));
  w.raw<uint8_t>(uint8_t(result.other_stall_mode.ran) | uint8_t(result.other_stall_mode.deadlock) << 1);
  w.u64(result.other_stall_mode.end);
  w.u64(result.other_stall_mode.steps.size());
  for (Tick t : result.other_stall_mode.steps) w.u64(t);
  w.str(result.times_origin);
  for (const CollectiveTotals& c : result.collectives) {
    w.u64(c.count);
    w.u64(c.bytes);
    w.u64(c.time);
  }
  w.u64(result.measured_collectives.size());
  for (const CollectiveFit& c : result.measured_collectives)
    for (uint64_t v : {static_cast<uint64_t>(c.comm_type), c.count, c.measured_median, c.simulated_median}) w.u64(v);
  for (uint64_t v : {result.start_error.nodes, result.start_error.median, result.start_error.p90}) w.u64(v);
  w.u64(result.messages);
  w.u64(result.events);
  w.u64(result.simulated_npus);
  w.raw<uint8_t>(uint8_t(result.deadlock) | uint8_t(result.closed_form_contended) << 1);
  w.u64(result.dimensions.size());
  for (const DimensionLoad& d : result.dimensions)
    for (uint64_t v : {d.messages, d.bytes, d.busy}) w.u64(v);
  w.u64(result.links.size());
  for (const LinkLoad& l : result.links)
    for (uint64_t v : {uint64_t{l.from}, uint64_t{l.to}, uint64_t{l.dim}, l.messages, l.bytes, l.busy, l.queued})
      w.u64(v);
  // Spans repeat a few names many times: a name table, then an index per span.
  std::unordered_map<std::string_view, uint32_t> name_index;
  std::vector<std::string_view> names;
  std::vector<uint32_t> span_names;
  span_names.reserve(result.spans.size());
  for (const Span& s : result.spans) {
    auto [it, added] = name_index.try_emplace(s.name, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(s.name);
    span_names.push_back(it->second);
  }
  w.u64(names.size());
  for (std::string_view n : names) w.str(n);
  w.u64(result.spans.size());
  for (size_t i = 0; i < result.spans.size(); ++i) {
    const Span& s = result.spans[i];
    w.raw(s.npu);
    w.raw(s.kind);
    w.u64(s.node);
    w.u64(s.start);
    w.u64(s.end);
    w.raw(span_names[i]);
  }
  return std::move(w.out);
}

SimResult decode_result(std::string_view bytes) {
  Reader r(bytes, kResultMagic, "simulation result");
  SimResult result;
  result.npus.resize(r.count(177));
  for (NpuResult& n : result.npus) {
    n.finished = r.raw<uint8_t>() != 0;
    for (Tick* t : {&n.finish, &n.astra_exposed_comm, &n.compute, &n.comm, &n.cpu, &n.memory, &n.overlap, &n.nodes,
                    &n.measured_step, &n.start, &n.measured_exposed_comm, &n.measured_exposed_transfer,
                    &n.exposed_transfer, &n.stall_waits})
      *t = r.u64();
    for (Tick& t : n.stalls) t = r.u64();
    n.stuck.resize(r.count(8));
    for (std::string& s : n.stuck) s = r.str();
    n.profiler_steps.resize(r.count(40));
    for (NpuResult::StepWindow& x : n.profiler_steps) {
      x.name = r.str();
      for (uint64_t* v : {&x.annotated, &x.measured, &x.simulated, &x.nodes}) *v = r.u64();
    }
  }
  const uint8_t mode = r.raw<uint8_t>();
  if (mode > uint8_t(StallMode::Wait)) r.fail("bad stall mode");
  result.stall_mode = StallMode(mode);
  const uint8_t other = r.raw<uint8_t>();
  result.other_stall_mode.ran = other & 1;
  result.other_stall_mode.deadlock = (other & 2) != 0;
  result.other_stall_mode.end = r.u64();
  result.other_stall_mode.steps.resize(r.count(8));
  for (Tick& t : result.other_stall_mode.steps) t = r.u64();
  result.times_origin = r.str();
  for (CollectiveTotals& c : result.collectives) {
    c.count = r.u64();
    c.bytes = r.u64();
    c.time = r.u64();
  }
  result.measured_collectives.resize(r.count(32));
  for (CollectiveFit& c : result.measured_collectives) {
    c.comm_type = static_cast<int64_t>(r.u64());
    c.count = r.u64();
    c.measured_median = r.u64();
    c.simulated_median = r.u64();
  }
  result.start_error.nodes = r.u64();
  result.start_error.median = r.u64();
  result.start_error.p90 = r.u64();
  result.messages = r.u64();
  result.events = r.u64();
  result.simulated_npus = r.u64();
  const uint8_t flags = r.raw<uint8_t>();
  result.deadlock = flags & 1;
  result.closed_form_contended = (flags & 2) != 0;
  result.dimensions.resize(r.count(24));
  for (DimensionLoad& d : result.dimensions)
    for (uint64_t* v : {&d.messages, &d.bytes, &d.busy}) *v = r.u64();
  result.links.resize(r.count(56));
  for (LinkLoad& l : result.links) {
    const uint64_t from = r.u64(), to = r.u64(), dim = r.u64();
    if (from > UINT32_MAX || to > UINT32_MAX || dim > UINT32_MAX) r.fail("link device out of range");
    l.from = static_cast<uint32_t>(from), l.to = static_cast<uint32_t>(to), l.dim = static_cast<uint32_t>(dim);
    for (uint64_t* v : {&l.messages, &l.bytes, &l.busy, &l.queued}) *v = r.u64();
  }
  std::vector<std::string> names(r.count(8));
  for (std::string& n : names) n = r.str();
  result.spans.resize(r.count(33));
  for (Span& s : result.spans) {
    s.npu = r.raw<uint32_t>();
    s.kind = r.raw<SpanKind>();
    if (static_cast<int>(s.kind) > static_cast<int>(SpanKind::Other)) r.fail("bad span kind");
    s.node = r.u64();
    s.start = r.u64();
    s.end = r.u64();
    uint32_t name = r.raw<uint32_t>();
    if (name >= names.size()) r.fail("span name index out of range");
    s.name = names[name];
  }
  r.end();
  return result;
}

SimResult run_job(const SimJob& job, Progress* progress) {
  SimInputs in;
  in.workload = "workspace";
  in.encoded_traces = &job.traces;
  in.network = job.network;
  in.system = job.system;
  in.memory = job.memory;
  in.groups = job.groups;
  SimOptions options = job.options;
  options.progress = progress;
  return simulate(in, options);
}

}  // namespace chakra
