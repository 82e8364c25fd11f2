#include "chakra/analysis/summary.h"

#include <algorithm>
#include <bit>

#include "chakra/analysis/validate.h"

namespace chakra {

TraceSummary summarize(const Trace& t) {
  TraceSummary s;
  s.has_metadata = t.has_metadata();
  s.legacy_schema = looks_like_legacy_schema(t);
  s.version = t.metadata_version();
  for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a) {
    AttrView attr = t.metadata_attr(a);
    if (attr.name() == "schema" && attr.as_string()) s.schema = *attr.as_string();
  }
  s.nodes = t.size();

  // Attribute use per (name, kind): a slot per distinct name, found through a StrId-indexed table.
  std::vector<uint32_t> slot_of_name(t.strings().size(), UINT32_MAX);
  std::vector<StrId> slot_names;
  std::vector<std::array<uint64_t, kMaxAttrKind + 1>> slot_counts;
  StrId comm_type = 0, comm_size = 0, pg_name = 0;
  const bool has_comm_type = t.strings().find("comm_type", &comm_type);
  const bool has_comm_size = t.strings().find("comm_size", &comm_size);
  const bool has_pg_name = t.strings().find("pg_name", &pg_name);

  for (uint32_t n = 0; n < t.size(); ++n) {
    const int32_t type = t.type(n);
    TraceSummary::PerType& per = type >= 0 && type < kNodeTypeCount ? s.by_type[type] : s.other_types;
    ++per.nodes;
    per.duration_micros += t.duration_micros(n);
    s.total_duration_micros += t.duration_micros(n);
    s.data_deps += t.data_deps(n).size();
    s.ctrl_deps += t.ctrl_deps(n).size();
    if (t.data_deps(n).empty()) ++s.nodes_without_data_deps;
    const uint64_t id = t.id(n);
    if (n == 0) s.min_id = s.max_id = id;
    if (n > 0 && id <= t.id(n - 1)) s.ids_ascending = false;
    s.min_id = std::min(s.min_id, id);
    s.max_id = std::max(s.max_id, id);
    if (!t.unknown_fields(n).empty()) ++s.nodes_with_unknown_fields;

    for (uint32_t a = t.attr_begin(n); a < t.attr_end(n); ++a) {
      const StrId name = t.node_attrs().name(a);
      uint32_t& slot = slot_of_name[name];
      if (slot == UINT32_MAX) {
        slot = static_cast<uint32_t>(slot_names.size());
        slot_names.push_back(name);
        slot_counts.emplace_back();
      }
      ++slot_counts[slot][static_cast<size_t>(t.node_attrs().kind(a))];
    }

    TraceSummary::Comm* comm = nullptr;
    if (type == static_cast<int32_t>(NodeType::CommColl)) {
      int64_t ct = -1;
      if (has_comm_type)
        if (auto v = t.find_attr(n, comm_type); v && v->as_int64()) ct = *v->as_int64();
      comm = &s.collectives[ct];
    } else if (type == static_cast<int32_t>(NodeType::CommSend)) {
      comm = &s.sends;
    } else if (type == static_cast<int32_t>(NodeType::CommRecv)) {
      comm = &s.recvs;
    }
    if (comm) {
      ++comm->count;
      std::optional<uint64_t> bytes;
      if (has_comm_size)
        if (auto v = t.find_attr(n, comm_size)) bytes = v->as_uint64();
      if (bytes) {
        comm->bytes += *bytes;
        ++s.comm_sizes_log2[*bytes > 1 ? std::bit_width(*bytes) - 1 : 0];
      } else {
        ++comm->missing_size;
      }
      std::string group = "";
      if (has_pg_name)
        if (auto v = t.find_attr(n, pg_name); v && v->as_string()) group = *v->as_string();
      ++s.process_groups[group];
    }
  }
  for (size_t slot = 0; slot < slot_names.size(); ++slot)
    for (int k = 0; k <= kMaxAttrKind; ++k)
      if (slot_counts[slot][k])
        s.attrs.push_back({std::string(t.str(slot_names[slot])), static_cast<AttrKind>(k), slot_counts[slot][k]});
  std::sort(s.attrs.begin(), s.attrs.end(),
            [](const auto& a, const auto& b) { return a.name != b.name ? a.name < b.name : a.kind < b.kind; });
  return s;
}

namespace {

void write_comm(JsonWriter& w, const TraceSummary::Comm& c) {
  w.begin_object();
  w.key("count").value_uint(c.count);
  w.key("bytes").value_uint(c.bytes);
  if (c.missing_size) w.key("without_comm_size").value_uint(c.missing_size);
  w.end_object();
}

}  // namespace

void write_summary_json(const TraceSummary& s, JsonWriter& w) {
  w.begin_object();
  w.key("has_global_metadata").value(s.has_metadata);
  w.key("version").value(s.version);
  w.key("schema").value(s.schema);
  w.key("nodes").value_uint(s.nodes);
  w.key("node_types").begin_object();
  for (int32_t i = 0; i < kNodeTypeCount; ++i) {
    if (!s.by_type[i].nodes) continue;
    w.key(node_type_name(i)).begin_object();
    w.key("nodes").value_uint(s.by_type[i].nodes);
    w.key("duration_micros").value_uint(s.by_type[i].duration_micros);
    w.end_object();
  }
  if (s.other_types.nodes) {
    w.key("other").begin_object();
    w.key("nodes").value_uint(s.other_types.nodes);
    w.key("duration_micros").value_uint(s.other_types.duration_micros);
    w.end_object();
  }
  w.end_object();
  w.key("collectives").begin_object();
  for (const auto& [type, c] : s.collectives) {
    std::string_view name = comm_type_name(type);
    w.key(name.empty() ? (type < 0 ? std::string("unknown") : std::to_string(type)) : std::string(name));
    write_comm(w, c);
  }
  w.end_object();
  // [smallest size of the bucket in bytes, count] for the non-empty power-of-two buckets.
  w.key("comm_size_histogram").begin_array();
  for (size_t k = 0; k < s.comm_sizes_log2.size(); ++k)
    if (s.comm_sizes_log2[k]) {
      w.begin_array();
      w.value_uint(k ? uint64_t{1} << k : 0);
      w.value_uint(s.comm_sizes_log2[k]);
      w.end_array();
    }
  w.end_array();
  w.key("sends");
  write_comm(w, s.sends);
  w.key("recvs");
  write_comm(w, s.recvs);
  w.key("process_groups").begin_object();
  for (const auto& [group, count] : s.process_groups) w.key(group).value_uint(count);
  w.end_object();
  w.key("attributes").begin_array();
  for (const auto& a : s.attrs) {
    w.begin_object();
    w.key("name").value(a.name);
    w.key("kind").value(a.kind == AttrKind::None ? std::string_view("none") : attr_kind_proto_name(a.kind));
    w.key("nodes").value_uint(a.nodes);
    w.end_object();
  }
  w.end_array();
  w.key("data_deps").value_uint(s.data_deps);
  w.key("ctrl_deps").value_uint(s.ctrl_deps);
  w.key("nodes_without_data_deps").value_uint(s.nodes_without_data_deps);
  w.key("total_duration_micros").value_uint(s.total_duration_micros);
  w.key("min_id").value_uint(s.min_id);
  w.key("max_id").value_uint(s.max_id);
  w.key("ids_ascending").value(s.ids_ascending);
  w.key("nodes_with_unknown_fields").value_uint(s.nodes_with_unknown_fields);
  w.key("legacy_schema").value(s.legacy_schema);
  w.end_object();
}

}  // namespace chakra
