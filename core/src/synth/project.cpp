#include "chakra/synth/project.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/synth/synth.h"
#include "chakra/trace/schema.h"

namespace chakra::synth {
namespace {

// A numeric pg_name's group id; nullopt for none, "" or "0" (the whole world) and non-numbers.
std::optional<int> group_of(std::string_view pg) {
  if (pg.empty() || pg.size() > 9 || pg.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const int id = std::stoi(std::string(pg));
  return id > 0 ? std::optional<int>(id) : std::nullopt;
}

std::string ids_text(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < 6; ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + (ids.size() > 6 ? ", ..." : "");
}

std::string count_text(double v) { return format_number(std::round(v * 10) / 10); }

// A scalar loss or metric all-reduce is bytes; the gradient buckets of any real model are far
// more than this per rank and step.
constexpr double kMinGradientBytes = 64 * 1024;

// The collectives gradient synchronisation uses: all-reduce, reduce and reduce-scatter of
// gradients, all-gather of sharded weights (FSDP, ZeRO-3).
bool is_sync(int32_t type) {
  switch (static_cast<CommType>(type)) {
    case CommType::AllReduce:
    case CommType::Reduce:
    case CommType::AllGather:
    case CommType::ReduceScatter:
    case CommType::ReduceScatterBlock: return true;
    default: return false;
  }
}

// "all-reduces" from ALL_REDUCE.
std::string type_plural(int32_t type) {
  std::string s(comm_type_name(type));
  if (s.empty()) return "collectives of type " + std::to_string(type);
  for (char& c : s) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s + "s";
}

// The tensor of most dimensions in an inputs shapes string ("[[394241]]": 1, "[[2048, 4, 4096]]":
// 3), from its innermost lists of numbers; dims 0 when it lists none.
struct TensorShape {
  int dims = 0;
  std::string_view text;
};
TensorShape widest_tensor(std::string_view shapes) {
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  TensorShape widest;
  size_t open = std::string_view::npos;
  int numbers = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const char c = shapes[i];
    if (c == '[') {
      open = i, numbers = 0;
    } else if (c == ']') {
      if (open != std::string_view::npos && numbers > widest.dims)
        widest = {numbers, shapes.substr(open, i + 1 - open)};
      open = std::string_view::npos;
    } else if (is_digit(c) && (i == 0 || !is_digit(shapes[i - 1]))) {
      ++numbers;
    }
  }
  return widest;
}

// One collective a rank issued in a group.
struct Issued {
  int32_t type = 0;
  uint64_t bytes = 0;
  TensorShape shape;
  bool operator==(const Issued& o) const { return type == o.type && bytes == o.bytes; }
};

// What a member issues and what is concluded, one line per family.
std::string family_line(const GroupClass& c, uint32_t ranks) {
  std::string s;
  if (c.world()) {
    s = "  no group (all " + std::to_string(ranks) + " ranks): ";
  } else {
    s = "  groups " + ids_text(c.ids) + " (" + (c.ids.size() > 6 ? std::to_string(c.ids.size()) + " groups of " : "") +
        std::to_string(c.size) + " rank" + (c.size == 1 ? "" : "s") +
        (c.stride ? ", spacing " + std::to_string(c.stride) : "") + "): ";
  }
  if (c.per_rank.empty()) s += "no collectives";
  std::string sep;
  for (const auto& [type, n] : c.per_rank) {
    std::string name = type_plural(type);
    if (count_text(n) == "1") name.pop_back();
    s += sep + count_text(n) + " " + name, sep = ", ";
  }
  if (!c.per_rank.empty()) s += " per rank";
  if (c.syncs_per_rank > 0) {
    s += "; " +
         (c.smallest == c.largest ? format_bytes(c.largest) + " each"
                                  : format_bytes(c.smallest) + " to " + format_bytes(c.largest)) +
         ", " + format_bytes(static_cast<uint64_t>(c.sync_bytes_per_rank)) + " per rank";
    if (c.shaped)
      s += ", tensors like " + c.shaped_example;
    else if (c.flat)
      s += ", flat buffers";
    if (!c.members_agree) s += ", members issuing different ones";
  }
  return s + " -> " + c.verdict + "\n";
}

}  // namespace

std::string synth_command(const Trace& t) {
  for (uint32_t i = 0; i < t.metadata_attrs().size(); ++i)
    if (t.metadata_attr(i).name() == "generator") {
      const std::string_view g = t.metadata_attr(i).as_string().value_or("");
      if (g.rfind("chakra synth ", 0) == 0) return std::string(g);
    }
  return {};
}

std::string command_word(std::string_view command, std::string_view option) {
  for (size_t at = 0; at < command.size();) {
    const size_t end = std::min(command.find(' ', at), command.size());
    if (command.substr(at, end - at) == option) {
      if (end >= command.size()) return {};
      const size_t value_end = std::min(command.find(' ', end + 1), command.size());
      return std::string(command.substr(end + 1, value_end - end - 1));
    }
    at = end + 1;
  }
  return {};
}

std::optional<uint64_t> command_option(std::string_view command, std::string_view option) {
  const std::string value = command_word(command, option);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) return std::nullopt;
  return v;
}

int Plan::group_in_replica(int id, uint32_t replica) const {
  auto it = data_parallel.find(id);
  if (replica == 0 || (it != data_parallel.end() && it->second)) return id;
  return id + static_cast<int>(replica) * max_group_id;
}

Plan plan_data_parallel(const std::vector<const Trace*>& ranks, const Groups& groups, uint32_t to,
                        const std::optional<std::vector<int>>& dp_ids) {
  Plan plan;
  plan.from = static_cast<uint32_t>(ranks.size());
  plan.to = to;
  const uint32_t n_ranks = plan.from;
  if (n_ranks == 0) throw Error("project: no ranks");
  if (to < n_ranks || to % n_ranks != 0)
    throw Error("project: --to " + std::to_string(to) + " must be a multiple of the " + std::to_string(n_ranks) +
                " ranks traced (data parallelism adds whole replicas)");
  for (const auto& [id, members] : groups) {
    plan.max_group_id = std::max(plan.max_group_id, id);
    for (uint32_t m : members)
      if (m >= n_ranks)
        throw Error("project: group " + std::to_string(id) + " names rank " + std::to_string(m) + ", beyond the " +
                    std::to_string(n_ranks) + " ranks traced");
  }
  if (static_cast<uint64_t>(plan.max_group_id) * plan.factor() > 1'000'000'000)
    throw Error("project: group ids would pass 10^9 (" + std::to_string(plan.max_group_id) + " groups x " +
                std::to_string(plan.factor()) + " replicas)");

  // What each rank issues in each group (0: without a group, the whole world), in order.
  std::map<int, std::vector<std::vector<Issued>>> issued;
  for (uint32_t r = 0; r < n_ranks; ++r) {
    const Trace& t = *ranks[r];
    for (uint32_t n = 0; n < t.size(); ++n) {
      if (t.type(n) != static_cast<int32_t>(NodeType::CommColl)) continue;
      auto pg = t.find_attr(n, "pg_name");
      const int id = (pg ? group_of(pg->as_string().value_or("")) : std::nullopt).value_or(0);
      if (id && !groups.count(id))
        throw Error("project: rank " + std::to_string(r) + " issues a collective in group " + std::to_string(id) +
                    ", which the process groups do not list");
      Issued x;
      if (auto type = t.find_attr(n, "comm_type")) x.type = static_cast<int32_t>(type->as_int64().value_or(-1));
      if (auto size = t.find_attr(n, "comm_size"))
        x.bytes = static_cast<uint64_t>(std::max<int64_t>(0, size->as_int64().value_or(0)));
      if (t.has_inputs(n)) x.shape = widest_tensor(t.str(t.inputs(n).shapes));
      std::vector<std::vector<Issued>>& per_rank = issued[id];
      per_rank.resize(n_ranks);
      per_rank[r].push_back(x);
    }
  }

  // Families of congruent groups, and the world's collectives as one more. Groups named as
  // data-parallel are a family of their own: congruence cannot tell apart families of
  // single-rank groups, for one.
  std::set<int> given;
  if (dp_ids) {
    if (dp_ids->empty()) throw Error("project: the data-parallel groups given are an empty list");
    for (int id : *dp_ids)
      if (!groups.count(id) && !(id == 0 && issued.count(0)))
        throw Error("project: data-parallel group " + std::to_string(id) + " is not among the groups" +
                    (id == 0 ? " (0 names the collectives issued without a group, and the traces issue none)" : ""));
    given.insert(dp_ids->begin(), dp_ids->end());
  }
  std::map<std::vector<uint32_t>, GroupClass> classes;  // key: given, size, then the gaps between members
  for (const auto& [id, members] : groups) {
    std::vector<uint32_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> key = {static_cast<uint32_t>(given.count(id)), static_cast<uint32_t>(sorted.size())};
    for (size_t i = 1; i < sorted.size(); ++i) key.push_back(sorted[i] - sorted[i - 1]);
    GroupClass& c = classes[key];
    c.ids.push_back(id);
    c.size = static_cast<uint32_t>(sorted.size());
    const bool even = std::all_of(key.begin() + 2, key.end(), [&](uint32_t g) { return g == key[2]; });
    c.stride = sorted.size() > 1 && even ? key[2] : 0;
    c.data_parallel = given.count(id) > 0;
  }
  for (auto& [key, c] : classes) plan.classes.push_back(std::move(c));
  std::sort(plan.classes.begin(), plan.classes.end(),
            [](const GroupClass& a, const GroupClass& b) { return a.ids.front() < b.ids.front(); });
  if (issued.count(0)) {
    GroupClass world;
    world.size = n_ranks, world.stride = 1;
    world.data_parallel = given.count(0) > 0;
    plan.classes.push_back(world);
  }
  std::vector<uint32_t> all_ranks(n_ranks);
  std::iota(all_ranks.begin(), all_ranks.end(), 0u);
  for (GroupClass& c : plan.classes) {
    std::vector<uint32_t> seen(n_ranks, 0);
    uint64_t members_counted = 0;
    bool sized = false;
    for (int id : c.world() ? std::vector<int>{0} : c.ids) {
      const std::vector<uint32_t>& members = id ? groups.at(id) : all_ranks;
      const auto it = issued.find(id);
      std::optional<std::vector<Issued>> first;
      for (uint32_t m : members) {
        ++seen[m], ++members_counted;
        if (it == issued.end()) continue;
        std::vector<Issued> syncs;
        for (const Issued& x : it->second[m]) {
          ++c.per_rank[x.type];
          if (!is_sync(x.type)) continue;
          syncs.push_back(x);
          c.syncs_per_rank += 1, c.sync_bytes_per_rank += static_cast<double>(x.bytes);
          c.smallest = sized ? std::min(c.smallest, x.bytes) : x.bytes;
          c.largest = sized ? std::max(c.largest, x.bytes) : x.bytes;
          sized = true;
          if (x.shape.dims >= 2 && !c.shaped++) c.shaped_example = std::string(x.shape.text);
          c.flat += x.shape.dims == 1, c.unshaped += x.shape.dims == 0;
        }
        if (!first)
          first = std::move(syncs);
        else
          c.members_agree &= *first == syncs;
      }
    }
    for (auto& [type, n] : c.per_rank) n /= static_cast<double>(std::max<uint64_t>(1, members_counted));
    c.syncs_per_rank /= static_cast<double>(std::max<uint64_t>(1, members_counted));
    c.sync_bytes_per_rank /= static_cast<double>(std::max<uint64_t>(1, members_counted));
    c.partitions = std::all_of(seen.begin(), seen.end(), [](uint32_t k) { return k == 1; });
  }

  auto families = [&]() {
    std::string text;
    for (const GroupClass& c : plan.classes) text += family_line(c, n_ranks);
    return text;
  };
  auto refuse = [&](const std::string& why) {
    for (GroupClass& c : plan.classes)
      if (c.verdict.empty()) c.verdict = "not data-parallel";
    throw Error("project: cannot tell which groups are data-parallel: " + why + ":\n" + families() +
                "Name them: --groups FILE with {\"dp\": [group ids]}");
  };
  if (plan.classes.empty() && !dp_ids)
    throw Error(
        "project: the traces list no process groups and issue no collectives: replicas that never communicate "
        "would be the traced step repeated, with nothing to grow");
  GroupClass* dp = nullptr;
  std::string evidence;
  const std::string command = synth_command(*ranks[0]);
  const std::optional<uint64_t> synth_dp = command.empty() ? std::nullopt : command_option(command, "--dp");
  if (dp_ids) {
    evidence = "as given";
  } else if (synth_dp) {
    // chakra synth numbers ranks by its --rank-order (dp fastest unless given; core/docs/synth.md):
    // a data-parallel group is dp ranks `spacing` apart, `spacing` being the product of the
    // degrees numbered faster than dp, from a rank below `spacing` within a block of dp·spacing.
    const uint64_t d = *synth_dp;
    std::string layout;
    for (const char* option : {"--dp", "--tp", "--pp", "--sp", "--ep"})
      if (auto v = command_option(command, option)) layout += std::string(" ") + option + " " + std::to_string(*v);
    const std::string order_text = command_word(command, "--rank-order");
    const std::array<Dim, 4> order = order_text.empty() ? Parallelism{}.rank_order : parse_rank_order(order_text);
    if (!order_text.empty()) layout += " --rank-order " + order_text;
    uint64_t spacing = 1;
    for (Dim dim : order) {
      if (dim == Dim::DP) break;
      static constexpr const char* kOptions[] = {"--dp", "--tp", "--sp", "--ep"};
      spacing *= command_option(command, kOptions[int(dim)]).value_or(1);
    }
    if (d <= 1)
      throw Error("project: the traces' metadata says chakra synth made them with" + layout +
                  ": no data parallelism, so no gradient synchronisation to grow; synthesize at the larger degree "
                  "(chakra synth --dp K), project --tp or --pp, or name the groups to grow (--groups FILE)");
    for (GroupClass& c : plan.classes) {
      const bool runs =
          !c.world() && c.size == d && c.stride == spacing && std::all_of(c.ids.begin(), c.ids.end(), [&](int id) {
            return *std::min_element(groups.at(id).begin(), groups.at(id).end()) % (d * spacing) < spacing;
          });
      if (runs && c.partitions) dp = &c;
    }
    const std::string shape = spacing == 1
                                  ? "runs of " + std::to_string(d) + " consecutive ranks"
                                  : "groups of " + std::to_string(d) + " ranks " + std::to_string(spacing) + " apart";
    if (!dp) refuse("the traces were made with --dp " + std::to_string(d) + " but no family is " + shape);
    evidence = "from the command in the traces' metadata (chakra synth ..." + layout + "): it numbers ranks " +
               rank_order_name(order) + " fastest first, so " + shape;
  } else if (std::any_of(plan.classes.begin(), plan.classes.end(),
                         [](const GroupClass& c) { return c.flat + c.shaped > 0; })) {
    // The traces record their tensors' shapes: gradient buckets are flat, activations are not.
    std::vector<GroupClass*> candidates;
    for (GroupClass& c : plan.classes) {
      if (c.shaped)
        c.verdict = "moves activations: not data-parallel";
      else if (c.syncs_per_rank == 0)
        c.verdict = "no all-reduce, reduce-scatter or all-gather: not data-parallel";
      else if (!c.flat)
        c.verdict = "no tensor shapes recorded: cannot tell";
      else if (c.sync_bytes_per_rank < kMinGradientBytes)
        c.verdict = "too little for gradients (a loss or a metric): not data-parallel";
      else if (!c.partitions)
        c.verdict = "does not hold every rank once: not data-parallel";
      else if (!c.members_agree)
        c.verdict = "its members synchronise different buffers: not data-parallel";
      else
        candidates.push_back(&c);
    }
    for (GroupClass* c : candidates) c->verdict = "gradient buckets";
    if (candidates.empty()) refuse("no family synchronises flat buffers (gradient buckets) of 64 KiB or more per rank");
    if (candidates.size() > 1) refuse("more than one family synchronises flat buffers of 64 KiB or more per rank");
    dp = candidates[0];
    evidence =
        "from the tensors they carry: gradients travel as flat buffers (64 KiB or more per rank), "
        "activations as tensors of 2+ dimensions";
  } else {
    // Counts alone: gradients are synchronised once a step (a layer's or a bucket's at a time),
    // activations in every layer, forward and backward, of every micro-batch.
    std::vector<GroupClass*> candidates;
    for (GroupClass& c : plan.classes) {
      if (c.syncs_per_rank == 0)
        c.verdict = "no all-reduce, reduce-scatter or all-gather: not data-parallel";
      else if (c.per_rank.count(static_cast<int32_t>(CommType::AllToAll)))
        c.verdict = "exchanges all-to-all (experts, embeddings): not data-parallel";
      else if (!c.partitions)
        c.verdict = "does not hold every rank once: not data-parallel";
      else if (!c.members_agree)
        c.verdict = "its members synchronise different buffers: not data-parallel";
      else
        candidates.push_back(&c), c.verdict = "could be data-parallel";
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const GroupClass* a, const GroupClass* b) { return a->syncs_per_rank < b->syncs_per_rank; });
    if (candidates.size() < 2)
      refuse(std::string(candidates.empty() ? "no family" : "one family alone") +
             " issues all-reduces, reduce-scatters or all-gathers, and the traces record no tensor shapes: without "
             "another family to compare with, how often a family synchronises cannot tell gradients from activations");
    if (candidates[0]->syncs_per_rank * 2 > candidates[1]->syncs_per_rank)
      refuse(
          "the families issuing the fewest all-reduces, reduce-scatters and all-gathers per rank issue them about "
          "as often (" +
          count_text(candidates[0]->syncs_per_rank) + " and " + count_text(candidates[1]->syncs_per_rank) +
          "), and the traces record no tensor shapes");
    dp = candidates[0];
    for (size_t i = 1; i < candidates.size(); ++i)
      candidates[i]->verdict = "synchronises " + count_text(candidates[i]->syncs_per_rank / dp->syncs_per_rank) +
                               "x as often: not data-parallel";
    evidence =
        "from how often they synchronise (the traces record no tensor shapes): at most half as often per rank "
        "as any other family, as gradients are synchronised once a step and activations in every layer";
  }
  if (dp) dp->data_parallel = true;
  // The world's collectives span every rank whatever is chosen: reductions there that are not
  // the data-parallel ones would grow wrongly.
  for (const GroupClass& c : plan.classes)
    if (!dp_ids && c.world() && !c.data_parallel && c.syncs_per_rank > 0)
      refuse(
          "the collectives without a group include all-reduces, reduce-scatters or all-gathers that are not the "
          "data-parallel ones, yet they span every rank and would grow with it");
  for (GroupClass& c : plan.classes) {
    if (c.data_parallel)
      c.verdict = "data-parallel: grows " + std::to_string(plan.factor()) + "x";
    else if (c.world())
      c.verdict = "spans every rank, so it grows with the world";
    else
      c.verdict = c.verdict.empty() ? "kept in each replica" : c.verdict + ", kept in each replica";
  }
  for (const GroupClass& c : plan.classes)
    for (int id : c.ids) plan.data_parallel[id] = c.data_parallel;
  std::string text = "data-parallel groups " + evidence + ":\n" + families();
  if (dp && dp->world() && dp->per_rank.count(static_cast<int32_t>(CommType::AllToAll)))
    text +=
        "  its all-to-alls grow with the world, each rank sending what it sent (a model-parallel exchange, such as "
        "sharded embeddings, re-sharded over more ranks)\n";
  plan.explanation = text;
  return plan;
}

namespace {

// A METADATA node's inputs values: the Python repr of a list holding one JSON string.
std::optional<nlohmann::json> process_group_list(std::string_view values) {
  const std::optional<std::string_view> text = wrapped_process_groups(values);
  if (!text) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(*text);
    if (j.is_array()) return j;
  } catch (const nlohmann::json::exception&) {}
  return std::nullopt;
}

std::optional<int> entry_group(const nlohmann::json& e) {
  if (!e.is_object() || !e.contains("pg_name") || !e["pg_name"].is_string() || !e.contains("ranks") ||
      !e["ranks"].is_array())
    return std::nullopt;
  return group_of(e["pg_name"].get<std::string>());
}

}  // namespace

Groups metadata_groups(const Trace& t) {
  Groups out;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (t.type(n) != static_cast<int32_t>(NodeType::Metadata) || !t.has_inputs(n)) continue;
    const auto list = process_group_list(t.str(t.inputs(n).values));
    if (!list) continue;
    for (const auto& e : *list)
      if (const auto id = entry_group(e)) {
        std::vector<uint32_t>& members = out[*id];
        members.clear();
        for (const auto& r : e["ranks"])
          if (r.is_number_unsigned()) members.push_back(r.get<uint32_t>());
      }
  }
  return out;
}

void project_rank(Trace& t, const Plan& plan, uint32_t new_rank) {
  const uint32_t replica = new_rank / plan.from, shift = replica * plan.from;
  // Its times (if any) were measured on another run, of fewer ranks: never compared as measured.
  if (plan.factor() > 1) t.set_metadata_string(kTimesOriginAttr, "copies of a traced rank's (chakra project)");
  const AttrTable& attrs = t.node_attrs();
  for (uint32_t n = 0; n < t.size(); ++n) {
    for (uint32_t a = t.attr_begin(n); a < t.attr_end(n); ++a) {
      const std::string_view name = t.str(attrs.name(a));
      const AttrKind kind = attrs.kind(a);
      if (name == "pg_name" && kind == AttrKind::String) {
        const std::optional<int> id = group_of(t.str(static_cast<StrId>(attrs.bits(a))));
        if (id && plan.group_in_replica(*id, replica) != *id)
          t.set_attr_bits(a, t.intern(std::to_string(plan.group_in_replica(*id, replica))));
      } else if ((name == "comm_src" || name == "comm_dst") && is_integer(kind) && !is_list(kind) && shift) {
        if (const auto peer = t.attr(a).as_int64(); peer && *peer >= 0)
          t.set_attr_bits(a, static_cast<uint64_t>(*peer + shift));
      }
    }
    if (t.type(n) != static_cast<int32_t>(NodeType::Metadata) || !t.has_inputs(n)) continue;
    const auto list = process_group_list(t.str(t.inputs(n).values));
    if (!list) continue;
    nlohmann::json projected = nlohmann::json::array();
    for (const auto& e : *list) {
      const std::optional<int> id = entry_group(e);
      if (!id) {
        projected.push_back(e);
        continue;
      }
      const auto dp = plan.data_parallel.find(*id);
      const bool grows = dp != plan.data_parallel.end() && dp->second;
      for (uint32_t k = 0; k < (grows ? 1 : plan.factor()); ++k) {
        nlohmann::json copy = e;
        copy["pg_name"] = std::to_string(plan.group_in_replica(*id, k));
        copy["ranks"] = nlohmann::json::array();
        for (uint32_t kk = grows ? 0 : k; kk < (grows ? plan.factor() : k + 1); ++kk)
          for (const auto& r : e["ranks"])
            if (r.is_number_unsigned()) copy["ranks"].push_back(r.get<uint64_t>() + uint64_t{kk} * plan.from);
        projected.push_back(std::move(copy));
      }
    }
    t.set_input_values(n, t.intern("['" + projected.dump() + "']"));
  }
}

Groups projected_groups(const Plan& plan, const Groups& groups) {
  Groups out;
  const uint32_t f = plan.factor();
  for (const auto& [id, members] : groups) {
    if (plan.data_parallel.at(id)) {
      std::vector<uint32_t>& grown = out[id];
      for (uint32_t k = 0; k < f; ++k)
        for (uint32_t m : members) grown.push_back(k * plan.from + m);
      continue;
    }
    for (uint32_t k = 0; k < f; ++k) {
      std::vector<uint32_t>& copy = out[plan.group_in_replica(id, k)];
      for (uint32_t m : members) copy.push_back(k * plan.from + m);
    }
  }
  return out;
}

}  // namespace chakra::synth
