#include "chakra/synth/project.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra::project {
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
  return s + (ids.size() > 6 ? ", ... (" + std::to_string(ids.size()) + " groups)" : "");
}

}  // namespace

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
  if (plan.from == 0) throw Error("project: no ranks");
  if (to < plan.from || to % plan.from != 0)
    throw Error("project: --to " + std::to_string(to) + " must be a multiple of the " + std::to_string(plan.from) +
                " ranks traced (data parallelism adds whole replicas)");
  for (const auto& [id, members] : groups) {
    plan.max_group_id = std::max(plan.max_group_id, id);
    for (uint32_t m : members)
      if (m >= plan.from)
        throw Error("project: group " + std::to_string(id) + " names rank " + std::to_string(m) + ", beyond the " +
                    std::to_string(plan.from) + " ranks traced");
  }
  if (static_cast<uint64_t>(plan.max_group_id) * plan.factor() > 1'000'000'000)
    throw Error("project: group ids would pass 10^9 (" + std::to_string(plan.max_group_id) + " groups x " + std::to_string(plan.factor()) + " replicas)");
  // What the traces do in each group.
  std::map<int, uint64_t> collectives;
  std::set<int> all_to_all;
  uint64_t world = 0;
  for (const Trace* t : ranks) {
    std::optional<StrId> pg_name;
    for (uint32_t n = 0; n < t->size(); ++n) {
      if (t->type(n) != static_cast<int32_t>(NodeType::CommColl)) continue;
      auto pg = t->find_attr(n, "pg_name");
      const std::optional<int> id = pg ? group_of(pg->as_string().value_or("")) : std::nullopt;
      if (!id) {
        ++world;
        continue;
      }
      ++collectives[*id];
      if (auto type = t->find_attr(n, "comm_type"); type && type->as_int64() == 6) all_to_all.insert(*id);
    }
  }
  // Classes of congruent groups.
  std::map<std::vector<uint32_t>, GroupClass> classes;  // key: size, then the gaps between members
  for (const auto& [id, members] : groups) {
    std::vector<uint32_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> key = {static_cast<uint32_t>(sorted.size())};
    for (size_t i = 1; i < sorted.size(); ++i) key.push_back(sorted[i] - sorted[i - 1]);
    GroupClass& c = classes[key];
    c.ids.push_back(id);
    c.size = static_cast<uint32_t>(sorted.size());
    c.stride = sorted.size() > 1 && std::all_of(key.begin() + 1, key.end(), [&](uint32_t g) { return g == key[1]; }) ? key[1] : 0;
    c.collectives_per_rank += static_cast<double>(collectives[id]) / std::max<uint32_t>(1, c.size);
    c.reductions_only &= !all_to_all.count(id);
  }
  for (auto& [key, c] : classes) {
    c.collectives_per_rank /= static_cast<double>(c.ids.size());
    plan.classes.push_back(c);
  }
  std::sort(plan.classes.begin(), plan.classes.end(), [](const GroupClass& a, const GroupClass& b) { return a.ids.front() < b.ids.front(); });

  std::string why;
  if (dp_ids) {
    const std::set<int> given(dp_ids->begin(), dp_ids->end());
    for (int id : given)
      if (!groups.count(id)) throw Error("project: data-parallel group " + std::to_string(id) + " is not among the groups");
    for (GroupClass& c : plan.classes) c.data_parallel = std::any_of(c.ids.begin(), c.ids.end(), [&](int id) { return given.count(id); });
    why = "as given";
  } else {
    std::vector<GroupClass*> multi;
    for (GroupClass& c : plan.classes)
      if (c.size > 1) multi.push_back(&c);
    GroupClass* dp = nullptr;
    if (multi.size() == 1) {
      dp = multi[0], why = "the only groups of more than one rank";
    } else if (multi.size() > 1) {
      for (GroupClass* c : multi)
        if (c->reductions_only && c->collectives_per_rank > 0 &&
            (!dp || c->collectives_per_rank < dp->collectives_per_rank ||
             (c->collectives_per_rank == dp->collectives_per_rank && c->stride > dp->stride)))
          dp = c;
      if (!dp) throw Error("project: no group family issues only reductions, so none looks data-parallel; name the data-parallel groups (--groups)");
      why = "the reductions issued least often per rank (gradients are synchronised a few times a step, other parallelisms every layer)";
    }
    if (dp) dp->data_parallel = true;
  }
  for (const GroupClass& c : plan.classes)
    for (int id : c.ids) plan.data_parallel[id] = c.data_parallel;
  std::string text;
  for (const GroupClass& c : plan.classes)
    text += "  groups " + ids_text(c.ids) + ": " + std::to_string(c.size) + " rank" + (c.size == 1 ? "" : "s") +
            (c.stride ? ", spacing " + std::to_string(c.stride) : "") + ", " + format_number(std::round(c.collectives_per_rank * 10) / 10) + " collectives per rank -> " + (c.data_parallel ? "data-parallel: grows " + std::to_string(plan.factor()) + "x" : "kept in each replica") + "\n";
  if (world) text += "  " + std::to_string(world) + " collectives without a group span every rank, so they grow with the world\n";
  if (groups.empty()) text += "  no process groups: the collectives span every rank (pure data parallelism)\n";
  else if (!why.empty()) text = "data-parallel groups (" + why + "):\n" + text;
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
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

std::optional<int> entry_group(const nlohmann::json& e) {
  if (!e.is_object() || !e.contains("pg_name") || !e["pg_name"].is_string() || !e.contains("ranks") || !e["ranks"].is_array()) return std::nullopt;
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
        if (const auto peer = t.attr(a).as_int64(); peer && *peer >= 0) t.set_attr_bits(a, static_cast<uint64_t>(*peer + shift));
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

}  // namespace chakra::project
