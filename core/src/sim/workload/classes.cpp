// The classes of alike NPUs of a mirrored run (core/docs/simulator.md, "Alike NPUs"): NPUs
// whose traces are the same up to node ids, communicator groups and peers, and whose groups and
// peers sit alike in the network, run as one, their lowest NPU. Found before any NPU runs;
// NotMirrored when nothing is gained or something tells NPUs of a class apart.
#include <algorithm>
#include <map>
#include <set>

#include "chakra/format/io.h"
#include "chakra/support/progress.h"
#include "chakra/trace/schema.h"
#include "sim/workload/workload.h"

namespace chakra::sim {
namespace {

// The communicator group a pg_name names; nullopt for all NPUs ("" and "0"). Names that are not
// group numbers are refused (the run of every NPU reports them).
std::optional<int> named_group(std::string_view pg) {
  if (!names_group(pg)) return std::nullopt;
  const auto number = group_number(pg);
  if (!number) throw NotMirrored{};
  return number;
}

// Per NPU, the values of its trace paired with its class's simulated NPU's (sorted, each once):
// NPU n's are paired[at[n], at[n + 1]).
struct Paired {
  bool group;  // a communicator group (pg_name), else an NPU (comm_src, comm_dst)
  int64_t rep_value, value;
  auto operator<=>(const Paired&) const = default;
};

std::optional<int64_t> paired_with(const std::vector<Paired>& paired, const std::vector<size_t>& at, uint32_t n,
                                   bool group, int64_t rep_value) {
  const auto b = paired.begin() + at[n], e = paired.begin() + at[n + 1];
  const auto it = std::lower_bound(b, e, Paired{group, rep_value, INT64_MIN});
  if (it == e || it->group != group || it->rep_value != rep_value) return std::nullopt;
  return it->value;
}

// Whether `move` takes group a onto group b keeping the ring order (b may start elsewhere).
template <class Move>
bool moves_onto(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, Move move) {
  if (a.size() != b.size() || a.empty()) return false;
  const auto first = std::find(b.begin(), b.end(), move(a[0]));
  if (first == b.end()) return false;
  const size_t shift = size_t(first - b.begin());
  for (size_t k = 0; k < a.size(); ++k)
    if (b[(k + shift) % b.size()] != move(a[k])) return false;
  return true;
}

// The network's rotations (Symmetry::of_network) that map the workload onto itself: NPU n's
// image is in n's class, and where n's trace names an NPU or a group, its image's trace names
// that NPU's image or that group's image (its members moved, in ring order from any start).
// Rotations of distinct digits, those of more values first (an empty group maps onto none).
std::vector<Rotation> workload_rotations(const NetworkConfig& net, const CommGroups& groups,
                                         const std::vector<uint32_t>& class_of, const std::vector<Paired>& paired,
                                         const std::vector<size_t>& at) {
  const auto npus = uint32_t(class_of.size());
  std::vector<Rotation> candidates = Symmetry::of_network(net), kept;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Rotation& a, const Rotation& b) { return a.radix > b.radix; });
  auto independent = [&](const Rotation& r) {
    for (const Rotation& k : kept) {
      if (k.dim != r.dim) continue;
      const Rotation &lo = k.stride < r.stride ? k : r, &hi = k.stride < r.stride ? r : k;
      if (hi.stride % (lo.stride * lo.radix) != 0) return false;
    }
    return true;
  };
  const Symmetry digits(net, {});  // for its rotate()
  for (const Rotation& r : candidates) {
    if (!independent(r)) continue;
    auto move = [&](uint32_t x) { return digits.rotate(x, r, 1); };
    std::set<std::pair<int64_t, int64_t>> groups_checked;
    bool maps = true;
    for (uint32_t n = 0; n < npus && maps; ++n) {
      const uint32_t image = move(n);
      maps = class_of[image] == class_of[n] && at[n + 1] - at[n] == at[image + 1] - at[image];
      for (size_t i = at[n]; i < at[n + 1] && maps; ++i) {
        const Paired& p = paired[i];
        const auto theirs = paired_with(paired, at, image, p.group, p.rep_value);
        if (!theirs) {
          maps = false;
        } else if (!p.group) {
          maps = p.value >= 0 && p.value < npus && *theirs == move(uint32_t(p.value));
        } else if (groups_checked.emplace(p.value, *theirs).second) {
          const auto a = groups.find(int(p.value)), b = groups.find(int(*theirs));
          maps = a != groups.end() && b != groups.end() && moves_onto(a->second, b->second, move);
        }
      }
    }
    if (maps) kept.push_back(r);
  }
  return kept;
}

// Whether some rotation of the network maps every communicator group onto one (ring order
// kept): without one there are no orbits, and no trace need be read to find that out.
bool some_rotation_keeps_groups(const NetworkConfig& net, const CommGroups& groups) {
  std::map<std::vector<uint32_t>, int> by_members;  // sorted members -> group
  for (const auto& [id, members] : groups) {
    std::vector<uint32_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    by_members.emplace(std::move(sorted), id);
  }
  const Symmetry digits(net, {});
  for (const Rotation& r : Symmetry::of_network(net)) {
    auto move = [&](uint32_t x) { return digits.rotate(x, r, 1); };
    bool keeps = true;
    for (auto g = groups.begin(); g != groups.end() && keeps; ++g) {
      std::vector<uint32_t> image;
      for (const uint32_t x : g->second) image.push_back(x < net.total_npus() ? move(x) : x);
      std::sort(image.begin(), image.end());
      const auto found = by_members.find(image);
      keeps = found != by_members.end() && moves_onto(g->second, groups.at(found->second), move);
    }
    if (keeps) return true;
  }
  return false;
}

}  // namespace

void Workload::find_classes(std::vector<std::string>& rep_bytes, bool orbits) {
  if (orbits && !some_rotation_keeps_groups(in_.network, in_.groups)) throw NotMirrored{};
  ReadOptions read = in_.read;
  read.progress = nullptr;
  auto decode = [&](std::string_view bytes, uint32_t n) {
    try {
      return read_et(
          memory_input({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, trace_file(n), read.input),
          read);
    } catch (const Error&) {
      throw NotMirrored{};  // the run of every NPU reports it
    }
  };
  const SystemConfig& sys = in_.system;
  // Collectives whose every phase has a mirrored closed form: a ring, or a direct exchange with
  // every peer at once, not one ring of all NPUs.
  auto closed_form_only = [&](Collective c) {
    return sys.custom[int(c)].empty() &&
           std::all_of(sys.algorithms[int(c)].begin(), sys.algorithms[int(c)].end(), [](const AlgorithmChoice& a) {
             return !a.flat && (a.kind == Algorithm::Ring || (a.kind == Algorithm::Direct && a.window == -1));
           });
  };
  const bool shared_memory = in_.memory.type != MemoryType::PerNpu;
  bool whole_collectives = false;  // some collective is over all NPUs (one class only then)
  // Groups whose every ordered pair of members is as far apart in the network as their first
  // two: a direct exchange with every peer at once then takes the same times for each member.
  // Pairs are checked for groups of up to 256 members (quadratic); larger ones are not taken.
  std::map<int, bool> uniform_groups;
  std::set<int> direct_groups;  // groups of the simulated NPUs that run a direct exchange
  auto uniform = [&](int pg) {
    const auto [it, fresh] = uniform_groups.try_emplace(pg, false);
    if (!fresh) return it->second;
    const auto group = in_.groups.find(pg);
    if (group == in_.groups.end() || group->second.size() > 256) return false;
    const std::vector<uint32_t>& g = group->second;
    bool alike = true;
    for (size_t i = 0; i < g.size() && alike; ++i)
      for (size_t j = 0; j < g.size() && alike; ++j) alike = i == j || system_.same_delays(g[i], g[j], g[0], g[1]);
    return it->second = alike;
  };
  // A group's collective in closed form for one member: a ring algorithm with ring neighbours
  // all as far apart in the network (their flows then take the same times), or a direct
  // exchange with every peer at once in a uniform group (a group runs the one algorithm
  // configured, else the default ring).
  auto group_closed_form = [&](Collective c, int pg) {
    const auto& algos = sys.algorithms[int(c)];
    const auto group = in_.groups.find(pg);
    if (!sys.custom[int(c)].empty() || group == in_.groups.end()) return false;
    if (algos.size() == 1 && algos[0].kind == Algorithm::Direct && !algos[0].flat && algos[0].window == -1) {
      direct_groups.insert(pg);
      return uniform(pg);
    }
    if (algos.size() == 1 && algos[0].kind != Algorithm::Ring) return false;
    const std::vector<uint32_t>& g = group->second;
    for (size_t k = 1; k < g.size(); ++k)
      if (!system_.same_delays(g[k], g[(k + 1) % g.size()], g[0], g[1])) return false;
    return true;
  };
  // Orbits: every message is simulated, so a group's algorithm need only treat its members
  // alike up to a rotation of the ring (ring, direct: each member's peers are its ring
  // neighbours at the same offsets). A collective over all NPUs runs on the dimensions' rings,
  // which the rotations need not keep.
  auto rotation_invariant = [&](Collective c) {
    const auto& algos = sys.algorithms[int(c)];
    const Algorithm kind = algos.size() == 1 ? algos[0].kind : Algorithm::Ring;
    return sys.custom[int(c)].empty() && (kind == Algorithm::Ring || kind == Algorithm::Direct);
  };
  // What a simulated NPU's trace may not have: replay metadata and measured times (each NPU's
  // differ in real traces and set its start), accesses to a remote memory NPUs share, collectives
  // without a mirrored closed form (classes) or treating members apart (orbits), process groups
  // announced at run time beside collectives over groups. Messages and the groups of other NPUs
  // are checked against the other NPUs below.
  auto check_simulated = [&](const Trace& t) {
    for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a) {
      const std::string_view name = t.metadata_attr(a).name();
      if (name == kReplayLanesAttr || name == kReplayStartAttr) throw NotMirrored{};
    }
    bool announces = false, names_groups = false;
    for (uint32_t n = 0; n < t.size(); ++n) {
      const auto type = NodeType(t.type(n));
      if (t.start_time_micros(n) > 0 || (shared_memory && (type == NodeType::MemLoad || type == NodeType::MemStore)))
        throw NotMirrored{};
      announces = announces || type == NodeType::Metadata;
      if (type != NodeType::CommColl) continue;
      const auto pg = t.find_attr(n, node_attr_name(NodeAttr::pg_name));
      const auto comm_type = t.find_attr(n, node_attr_name(NodeAttr::comm_type));
      const auto collective = comm_type ? collective_of(comm_type->as_int64().value_or(-1)) : std::nullopt;
      const auto group = pg ? named_group(pg->as_string().value_or("?")) : std::nullopt;
      // A group of every NPU runs on the dimensions' rings, as a collective over all NPUs.
      const auto members = group ? in_.groups.find(*group) : in_.groups.end();
      const bool whole = !group || (members != in_.groups.end() && members->second.size() == n_npus_);
      if (collective) {
        const Collective c = collective.value();
        if (orbits ? whole || !rotation_invariant(c) : !(whole ? closed_form_only(c) : group_closed_form(c, *group)))
          throw NotMirrored{};
      }
      names_groups = names_groups || group.has_value();
      whole_collectives = whole_collectives || whole;
    }
    if (announces && names_groups) throw NotMirrored{};
  };

  std::vector<Paired> paired, scratch;
  std::vector<size_t> paired_at(n_npus_ + 1, 0);  // NPU n's are paired[paired_at[n], paired_at[n + 1])
  // A value of the class's first NPU's trace and this NPU's, of a pg_name or of an NPU
  // (comm_src, comm_dst), paired into `scratch`; false if they cannot be.
  auto pair_groups = [&](std::optional<std::string_view> x, std::optional<std::string_view> y) {
    if (!x || !y) return false;
    const auto gx = named_group(*x), gy = named_group(*y);
    if (gx.has_value() != gy.has_value()) return false;
    if (gx) scratch.push_back(Paired{true, *gx, *gy});
    return true;
  };
  auto pair_npus = [&](std::optional<int64_t> x, std::optional<int64_t> y) {
    if (!x || !y) return false;
    scratch.push_back(Paired{false, *x, *y});
    return true;
  };
  const std::string_view pg_name = node_attr_name(NodeAttr::pg_name);
  AttrPairing pairing{{pg_name, node_attr_name(NodeAttr::comm_src), node_attr_name(NodeAttr::comm_dst)},
                      [&](std::string_view name, const AttrView& a, const AttrView& b) {
                        return name == pg_name ? pair_groups(a.as_string(), b.as_string())
                                               : pair_npus(a.as_int64(), b.as_int64());
                      }};
  // The same on the encoded traces (same_records_but_paired).
  auto pair_encoded = [&](std::string_view name, const EncodedScalar& a, const EncodedScalar& b) {
    auto text = [](const EncodedScalar& v) {
      const auto* s = std::get_if<std::string_view>(&v);
      return s ? std::optional(*s) : std::nullopt;
    };
    auto integer = [](const EncodedScalar& v) {
      const auto* i = std::get_if<int64_t>(&v);
      return i ? std::optional(*i) : std::nullopt;
    };
    return name == pg_name ? pair_groups(text(a), text(b)) : pair_npus(integer(a), integer(b));
  };
  // `scratch` sorted, once each, and a function both ways (one value of each side per value of
  // the other), or false.
  auto consistent = [&] {
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    for (size_t i = 1; i < scratch.size(); ++i)
      if (scratch[i].group == scratch[i - 1].group && scratch[i].rep_value == scratch[i - 1].rep_value) return false;
    std::vector<std::pair<bool, int64_t>> values;
    for (const Paired& p : scratch) values.emplace_back(p.group, p.value);
    std::sort(values.begin(), values.end());
    return std::adjacent_find(values.begin(), values.end()) == values.end();
  };

  mirror_.rep.assign(n_npus_, 0);
  mirror_.index.assign(n_npus_, 0);
  std::vector<Trace> rep_traces;
  std::vector<uint32_t> class_count, class_of(n_npus_);
  std::string file_bytes;
  // Classes worth it: at most half the NPUs (and 1,024); past 64 classes, at most half the NPUs
  // read so far, so that traces that all differ are given up on after a few dozen reads.
  const uint32_t most_classes = std::min<uint32_t>(1024, n_npus_ / 2);
  for (uint32_t n = 0; n < n_npus_; ++n) {
    if (n % 1024 == 0 && n > 0) report_progress(o_.progress, "compare traces", n, n_npus_);
    std::string_view bytes;
    try {
      bytes = trace_bytes(n, file_bytes);
    } catch (const Error&) {
      throw NotMirrored{};
    }
    scratch.clear();
    uint32_t cls = UINT32_MAX;
    // The same bytes as a simulated NPU's: its values, paired with themselves.
    for (uint32_t k = 0; k < rep_bytes.size() && cls == UINT32_MAX; ++k)
      if (bytes == rep_bytes[k]) {
        cls = k;
        const uint32_t r = mirror_.reps[k];
        scratch.assign(paired.begin() + paired_at[r], paired.begin() + paired_at[r + 1]);
      }
    // Most traces of a class differ from its first NPU's only in groups and peers, which a walk
    // over the encoded records tells without decoding; the previous NPU's class is tried first
    // (neighbouring NPUs tend to share one).
    for (uint32_t i = 0; i < rep_bytes.size() && cls == UINT32_MAX; ++i) {
      const uint32_t k = (i + (n > 0 ? class_of[n - 1] : 0)) % uint32_t(rep_bytes.size());
      scratch.clear();
      if (same_records_but_paired(rep_bytes[k], bytes, pairing.names, pair_encoded) && consistent()) cls = k;
    }
    if (cls == UINT32_MAX) {
      Trace t = decode(bytes, n);
      for (uint32_t k = 0; k < rep_traces.size() && cls == UINT32_MAX; ++k) {
        scratch.clear();
        if (rep_traces[k].size() == t.size() && same_up_to_node_ids(rep_traces[k], t, &pairing) && consistent())
          cls = k;
      }
      if (cls == UINT32_MAX) {  // a class of its own
        if (rep_traces.size() == most_classes || (rep_traces.size() >= 64 && rep_traces.size() * 2 > n))
          throw NotMirrored{};
        check_simulated(t);
        if (whole_collectives && !rep_traces.empty()) throw NotMirrored{};  // its rings would mix classes
        scratch.clear();
        if (!same_up_to_node_ids(t, t, &pairing) || !consistent()) throw NotMirrored{};
        cls = static_cast<uint32_t>(rep_traces.size());
        rep_traces.push_back(std::move(t));
        rep_bytes.emplace_back(bytes);
        mirror_.reps.push_back(n);
        class_count.push_back(0);
      }
    }
    mirror_.rep[n] = mirror_.reps[cls];
    class_of[n] = cls;
    mirror_.index[n] = class_count[cls]++;
    paired.insert(paired.end(), scratch.begin(), scratch.end());
    paired_at[n + 1] = paired.size();
  }
  mirror_.size.resize(n_npus_);
  for (uint32_t n = 0; n < n_npus_; ++n) mirror_.size[n] = class_count[class_of[n]];
  if (orbits) {
    // One NPU of each orbit of the rotations that map the workload onto itself runs instead.
    std::vector<Rotation> rotations = workload_rotations(in_.network, in_.groups, class_of, paired, paired_at);
    if (rotations.empty()) throw NotMirrored{};
    const Symmetry& sym = mirror_.symmetry.emplace(in_.network, std::move(rotations));
    // A simulated NPU's collective messages are received by its peers' orbits' NPUs, in the
    // stream of their own collective over the same group (tags number a group's collectives):
    // the move taking each member of a group it names to its orbit's NPU keeps the group.
    std::set<std::pair<int64_t, uint32_t>> checked;  // group, element
    for (uint32_t n = 0; n < n_npus_; ++n) {
      if (sym.canonical(n) != n) continue;
      for (size_t i = paired_at[n]; i < paired_at[n + 1]; ++i) {
        if (!paired[i].group) continue;
        const auto group = in_.groups.find(int(paired[i].value));
        if (group == in_.groups.end()) throw NotMirrored{};  // the run of every NPU reports it
        const std::vector<uint32_t>& members = group->second;
        for (const uint32_t d : members)
          if (checked.emplace(paired[i].value, sym.element_taking(d)).second &&
              !moves_onto(members, members, [&](uint32_t x) { return sym.move_as(x, d); }))
            throw NotMirrored{};
      }
    }
    mirror_.reps.clear();
    rep_bytes.clear();
    for (uint32_t n = 0; n < n_npus_; ++n) {
      mirror_.rep[n] = sym.canonical(n);
      mirror_.size[n] = sym.order();
      mirror_.index[n] = sym.element_taking(n);
      if (mirror_.rep[n] == n) {
        mirror_.reps.push_back(n);
        rep_bytes.emplace_back(trace_bytes(n, file_bytes));
      }
    }
    return;
  }

  // Groups and peers: NPU n's stand for its simulated NPU's, alike in the network.
  auto paired_value = [&](uint32_t n, bool group, int64_t rep_value) {
    return paired_with(paired, paired_at, n, group, rep_value);
  };
  for (uint32_t n = 0; n < n_npus_; ++n) {
    const uint32_t r = mirror_.rep[n];
    for (size_t i = paired_at[n]; i < paired_at[n + 1]; ++i) {
      const Paired p = paired[i];
      if (p.group) {
        // Its group: in the class, n in it, as large as the simulated NPU's, each member with
        // the same group in its place, each neighbour pair in ring order as far apart in the
        // network as the simulated NPU's group's (so every ring phase takes the same times).
        const auto own = in_.groups.find(int(p.rep_value)), its = in_.groups.find(int(p.value));
        if (own == in_.groups.end() || its == in_.groups.end()) throw NotMirrored{};
        const std::vector<uint32_t>& g = its->second;
        const std::vector<uint32_t>& h = own->second;
        if (g.size() != h.size() || std::find(g.begin(), g.end(), n) == g.end() ||
            (direct_groups.count(int(p.rep_value)) && !uniform(int(p.value))))
          throw NotMirrored{};
        for (size_t k = 0; k < g.size(); ++k) {
          const uint32_t m = g[k], next = g[(k + 1) % g.size()];
          if (m >= n_npus_ || mirror_.rep[m] != r || paired_value(m, true, p.rep_value) != p.value ||
              !system_.same_delays(m, next, h[k], h[(k + 1) % h.size()]))
            throw NotMirrored{};
        }
        continue;
      }
      // A peer: n itself where the simulated NPU names itself; else the NPU in n's place in
      // the class of the simulated NPU's peer, which is simulated, as far from n as that peer is
      // from the simulated NPU.
      if (p.rep_value == r) {
        if (p.value != n) throw NotMirrored{};
        continue;
      }
      if (p.rep_value < 0 || p.rep_value >= n_npus_ || p.value < 0 || p.value >= n_npus_) throw NotMirrored{};
      const auto q = uint32_t(p.rep_value), peer = uint32_t(p.value);
      if (mirror_.rep[q] != q || mirror_.rep[peer] != q || mirror_.index[peer] != mirror_.index[n] ||
          mirror_.size[q] != mirror_.size[n] || !system_.same_delays(n, peer, r, q) ||
          !system_.same_delays(peer, n, q, r))
        throw NotMirrored{};
    }
  }
}

}  // namespace chakra::sim
