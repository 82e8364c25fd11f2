// Per-device Chakra traces of an analysed program: compute between collectives, collectives, groups.
#include "chakra/stablehlo/stablehlo.h"
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <numeric>
#include <unordered_map>
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "stablehlo_ir.h"
#include "stablehlo_parts.h"

namespace chakra::stablehlo {

// ---- traces -----------------------------------------------------------------------------------

std::map<std::string, std::vector<int64_t>> comm_groups(const Analysis& a) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const CollectiveOp& c : a.collectives)
    for (size_t k = 0; k < c.groups.size(); ++k)
      if (c.group_ids[k])
        out.emplace(std::to_string(c.group_ids[k]), std::vector<int64_t>(c.groups[k].begin(), c.groups[k].end()));
  return out;
}

void device_trace(const Analysis& a, const DeviceSpec& d, uint32_t device, Trace& out) {
  if (device >= a.devices)
    throw Error(a.file + ": device " + std::to_string(device) + " out of range (" + std::to_string(a.devices) +
                " devices)");
  out.clear_nodes();
  AttrDrafts meta;
  meta.add_string(out.intern("schema"), out.intern("chakrakit stablehlo"));
  meta.add_string(out.intern("generator"),
                  out.intern(a.file + (a.module.empty() ? "" : " @" + a.module) + " on " + d.name));
  out.set_metadata(out.intern("0.0.4"), meta);
  const StrId num_ops = out.intern("num_ops"), tensor_size = out.intern("tensor_size"),
              comm_type = out.intern("comm_type"), comm_size = out.intern("comm_size"), pg_name = out.intern("pg_name"),
              is_cpu_op = out.intern("is_cpu_op"), comm_src = out.intern("comm_src"), comm_dst = out.intern("comm_dst"),
              comm_tag = out.intern("comm_tag");

  std::vector<int64_t> node_of(a.ops.size(), -1);
  std::vector<bool> is_comm;  // by node id
  uint64_t next_id = 0;
  NodeDraft n;

  struct Region {
    bool open = false;
    uint64_t id = 0;
    uint64_t ops = 0;
    double flops = 0, bytes = 0, seconds = 0;
    std::vector<uint64_t> deps;
    std::map<uint32_t, uint32_t> names;
  } r;
  int64_t prev_region = -1, region_before_prev = -1;
  double total_us = 0;
  uint64_t emitted_us = 0;
  uint64_t regions = 0;

  auto close_region = [&] {
    if (!r.open) return;
    total_us += r.seconds * 1e6;
    const uint64_t until = static_cast<uint64_t>(std::llround(total_us));
    n.clear();
    n.id = r.id;
    std::vector<std::pair<uint32_t, uint32_t>> top(r.names.begin(), r.names.end());
    std::sort(top.begin(), top.end(),
              [](auto x, auto y) { return x.second != y.second ? x.second > y.second : x.first < y.first; });
    std::string name = "compute." + std::to_string(regions++) + " (" + std::to_string(r.ops) + " ops:";
    for (size_t k = 0; k < top.size() && k < 3; ++k)
      name += " " + std::string(short_name(a.names[top[k].first])) + " x" + std::to_string(top[k].second);
    n.name = out.intern(name + (top.size() > 3 ? " ...)" : ")"));
    n.type = static_cast<int32_t>(NodeType::Comp);
    n.duration_micros = until - emitted_us;
    emitted_us = until;
    std::sort(r.deps.begin(), r.deps.end());
    n.data_deps = r.deps;
    n.attrs.add_int64(num_ops, static_cast<int64_t>(std::min(r.flops, 9.2e18)));
    n.attrs.add_uint64(tensor_size, static_cast<uint64_t>(std::min(r.bytes, 1.8e19)));
    out.append(n);
    region_before_prev = prev_region;
    prev_region = static_cast<int64_t>(r.id);
    r = Region{};
  };
  auto reserve = [&](bool comm) {
    is_comm.push_back(comm);
    return next_id++;
  };
  auto dep_nodes = [&](const ExecOp& e) {
    std::vector<uint64_t> deps;
    for (uint32_t k = e.deps_begin; k < e.deps_end; ++k) {
      const int64_t node = node_of[a.deps[k]];
      if (node >= 0 && std::find(deps.begin(), deps.end(), uint64_t(node)) == deps.end())
        deps.push_back(uint64_t(node));
    }
    return deps;
  };
  auto comm_node = [&](int32_t type, const std::string& name, const std::vector<uint64_t>& deps) {
    n.clear();
    n.id = reserve(true);
    n.name = out.intern(name);
    n.type = type;
    n.data_deps = deps;
    std::sort(n.data_deps.begin(), n.data_deps.end());
    n.attrs.add_bool(is_cpu_op, false);
    return n.id;
  };

  for (size_t i = 0; i < a.ops.size(); ++i) {
    const ExecOp& e = a.ops[i];
    if (e.collective >= 0) {
      const CollectiveOp& c = a.collectives[e.collective];
      const std::string cname = std::string(collective_kind_name(c.kind)) + "." + std::to_string(e.collective);
      const std::vector<uint64_t> deps = dep_nodes(e);
      if (c.kind == CollectiveKind::CollectivePermute) {
        std::vector<std::pair<uint32_t, uint32_t>> mine;
        for (const auto& p : c.pairs)
          if ((p.first == device || p.second == device) && p.first != p.second) mine.push_back(p);
        if (!mine.empty()) {
          close_region();
          int64_t last_recv = -1;
          for (const auto& [src, dst] : mine) {
            const bool send = src == device;
            std::vector<uint64_t> d2 = send ? deps : std::vector<uint64_t>{};
            if (!send && last_recv >= 0) d2.push_back(uint64_t(last_recv));
            comm_node(static_cast<int32_t>(send ? NodeType::CommSend : NodeType::CommRecv),
                      cname + (send ? ".send" : ".recv"), d2);
            n.attrs.add_int64(comm_size, static_cast<int64_t>(c.operand_bytes));
            n.attrs.add_int32(comm_src, static_cast<int32_t>(src));
            n.attrs.add_int32(comm_dst, static_cast<int32_t>(dst));
            n.attrs.add_int32(comm_tag, e.collective);
            out.append(n);
            if (!send) last_recv = static_cast<int64_t>(n.id);
          }
          node_of[i] = last_recv;
          continue;
        }
      } else {
        const std::vector<uint32_t>* group = nullptr;
        uint32_t group_id = 0;
        for (size_t k = 0; k < c.groups.size(); ++k)
          if (std::find(c.groups[k].begin(), c.groups[k].end(), device) != c.groups[k].end())
            group = &c.groups[k], group_id = c.group_ids[k];
        if (group_id) {
          close_region();
          // Issued one compute stretch ahead of where the program places it, as XLA's
          // latency-hiding scheduler starts an async collective early (FSDP's weight gathers
          // overlap the layer before their use), and no earlier: gathers whose inputs are
          // arguments would otherwise all start at once and queue ahead of the first one needed.
          std::vector<uint64_t> issue = deps;
          if (region_before_prev >= 0 &&
              std::find(issue.begin(), issue.end(), uint64_t(region_before_prev)) == issue.end())
            issue.push_back(uint64_t(region_before_prev));
          const bool broadcast = c.kind == CollectiveKind::CollectiveBroadcast;
          CommType type = c.kind == CollectiveKind::AllReduce                ? CommType::AllReduce
                          : c.kind == CollectiveKind::AllGather || broadcast ? CommType::AllGather
                          : c.kind == CollectiveKind::ReduceScatter          ? CommType::ReduceScatter
                                                                             : CommType::AllToAll;
          // A broadcast of S bytes moves about what an all-gather of S/N per device moves.
          const double size = broadcast ? std::ceil(c.operand_bytes / group->size()) : c.operand_bytes;
          node_of[i] = static_cast<int64_t>(comm_node(static_cast<int32_t>(NodeType::CommColl), cname, issue));
          n.attrs.add_int64(comm_type, static_cast<int64_t>(type));
          n.attrs.add_int64(comm_size, static_cast<int64_t>(size));
          n.attrs.add_string(pg_name, out.intern(std::to_string(group_id)));
          out.append(n);
          continue;
        }
      }
    }
    // Compute (or a collective that stays on this device).
    std::vector<uint64_t> deps = dep_nodes(e);
    if (e.flops == 0 && e.bytes == 0 && deps.size() <= 1) {  // free: pass the producer through
      node_of[i] = deps.empty() ? -1 : static_cast<int64_t>(deps[0]);
      continue;
    }
    bool waits_on_new_comm = false;
    for (uint64_t dn : deps)
      if (is_comm[dn] && std::find(r.deps.begin(), r.deps.end(), dn) == r.deps.end()) waits_on_new_comm = true;
    if (r.open && waits_on_new_comm && r.ops > 0) close_region();  // what came before need not wait
    if (!r.open) {
      r.open = true;
      r.id = reserve(false);
      if (prev_region >= 0) r.deps.push_back(static_cast<uint64_t>(prev_region));
    }
    for (uint64_t dn : deps)
      if (is_comm[dn] && std::find(r.deps.begin(), r.deps.end(), dn) == r.deps.end()) r.deps.push_back(dn);
    ++r.ops;
    r.flops += e.flops;
    r.bytes += e.bytes;
    r.seconds += op_seconds(a, e, d);
    ++r.names[e.name];
    node_of[i] = static_cast<int64_t>(r.id);
  }
  close_region();
}

}  // namespace chakra::stablehlo
