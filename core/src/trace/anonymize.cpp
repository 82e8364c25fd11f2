#include "chakra/trace/anonymize.h"

#include <random>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "chakra/support/sha256.h"

namespace chakra {

std::string random_anonymize_key() {
  std::random_device device;
  std::string key(32, '\0');
  for (char& c : key) c = static_cast<char>(device() & 0xff);
  return key;
}

void AnonymizeReport::merge(const AnonymizeReport& o) {
  nodes += o.nodes, names += o.names, names_kept += o.names_kept, io_literals += o.io_literals;
  metadata_strings += o.metadata_strings, shapes_bucketed += o.shapes_bucketed;
  docs_dropped += o.docs_dropped, unknown_fields_dropped += o.unknown_fields_dropped;
  for (const auto& [name, n] : o.attributes) attributes[name] += n;
}

std::string AnonymizeReport::text() const {
  std::string attrs;
  for (const auto& [name, n] : attributes)
    if (n) attrs += (attrs.empty() ? "" : ", ") + name + " " + std::to_string(n);
  std::string out = "replaced: " + std::to_string(names) + " node names" +
                    (names_kept ? " (" + std::to_string(names_kept) + " kept by --keep-names)" : "") + ", string attributes (" +
                    (attrs.empty() ? "none" : attrs) + "), " + std::to_string(io_literals) + " strings in inputs/outputs values, " +
                    std::to_string(metadata_strings) + " metadata strings\n";
  out += "kept: " + std::to_string(nodes) +
         " nodes' ids, types, dependencies, durations, start times, numeric and bool attributes (num_ops, tensor "
         "sizes, communication), numeric process-group ids, tensor types, attribute names, " +
         (shapes_bucketed ? "shapes bucketed to powers of two (" + std::to_string(shapes_bucketed) + " dimensions rounded up)" : std::string("shapes")) +
         "\n";
  if (docs_dropped || unknown_fields_dropped)
    out += "dropped: " + std::to_string(docs_dropped) + " attribute doc strings, " + std::to_string(unknown_fields_dropped) +
           " nodes' or attributes' fields outside the schema\n";
  return out;
}

Anonymizer::Anonymizer(AnonymizeOptions options) : options_(std::move(options)) {}

std::string Anonymizer::token(std::string_view kind, std::string_view original) const {
  std::string message(kind);
  message += ':';
  message += original;
  return std::string(kind) + "_" + to_hex(hmac_sha256(options_.key, message)).substr(0, 12);
}

namespace {

bool is_number_text(std::string_view s) { return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string_view::npos; }

// Each quoted literal ('...' or "...", backslash escapes) of a Python-repr value list replaced by
// replace(content); numbers, brackets, True/False/None kept.
std::string replace_literals(std::string_view s, const std::function<std::string(std::string_view)>& replace, uint64_t& count) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char q = s[i];
    if (q != '\'' && q != '"') {
      out += s[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < s.size() && s[j] != q) j += s[j] == '\\' ? 2 : 1;
    const std::string_view content = s.substr(i + 1, std::min(j, s.size()) - i - 1);
    out += q;
    out += replace(content);
    out += q;
    ++count;
    i = j + 1;
  }
  return out;
}

// A tensor dimension rounded up to a power of two (0 and 1 kept; at most 2^62).
uint64_t bucketed(uint64_t v) {
  uint64_t p = 1;
  while (p < v && p < (uint64_t{1} << 62)) p <<= 1;
  return v <= 1 ? v : p;
}

// Every integer of a shapes string rounded up to a power of two.
std::string bucket_shapes(std::string_view s, uint64_t& count) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] < '0' || s[i] > '9') {
      out += s[i++];
      continue;
    }
    size_t j = i;
    uint64_t v = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') v = v * 10 + static_cast<uint64_t>(s[j++] - '0');
    count += bucketed(v) != v;
    out += std::to_string(bucketed(v));
    i = j;
  }
  return out;
}

}  // namespace

void Anonymizer::anonymize(const Trace& in, Trace& out, AnonymizeReport& report) const {
  out = Trace();
  // Strings by kind, each tokenized once per trace.
  std::unordered_map<uint64_t, StrId> done;
  auto mapped = [&](const char* kind, StrId id) -> StrId {
    const uint64_t key = (uint64_t{static_cast<unsigned char>(kind[0])} << 56) | (uint64_t{static_cast<unsigned char>(kind[1])} << 48) | id;
    auto it = done.find(key);
    if (it != done.end()) return it->second;
    const std::string_view s = in.str(id);
    const StrId to = s.empty() ? out.intern("") : out.intern(token(kind, s));
    done.emplace(key, to);
    return to;
  };
  auto tokenize = [&](std::string_view s) { return s.empty() ? std::string() : token("str", s); };

  // Attributes of one message into `d`: strings tokenized (numeric pg_name kept), docs dropped.
  auto copy_attrs = [&](const AttrTable& table, uint32_t begin, uint32_t end, AttrDrafts& d, bool metadata) {
    for (uint32_t a = begin; a < end; ++a) {
      const AttrKind kind = table.kind(a);
      const std::string name(in.str(table.name(a)));
      const StrId out_name = out.intern(name);
      if (table.doc(a) != StringPool::kEmpty) ++report.docs_dropped;
      if (!table.unknown_fields(a).empty()) ++report.unknown_fields_dropped;
      const bool text = kind == AttrKind::String || kind == AttrKind::Bytes;
      const bool text_list = kind == AttrKind::StringList || kind == AttrKind::BytesList;
      if (!text && !text_list) {
        if (is_list(kind)) d.add_list(out_name, kind, table.list(a));
        else d.add(out_name, kind, table.bits(a));
        continue;
      }
      if (text) {
        const std::string_view v = in.str(static_cast<StrId>(table.bits(a)));
        const bool keep = (name == "pg_name" && (v.empty() || is_number_text(v))) || (metadata && name == "schema");
        if (keep) {
          d.add(out_name, kind, out.intern(v));
          continue;
        }
        d.add(out_name, kind, mapped("str", static_cast<StrId>(table.bits(a))));
        (metadata ? report.metadata_strings : report.attributes[name]) += 1;
      } else {
        std::vector<uint64_t> values;
        for (uint64_t v : table.list(a)) values.push_back(mapped("str", static_cast<StrId>(v)));
        d.add_list(out_name, kind, values);
        (metadata ? report.metadata_strings : report.attributes[name]) += values.size();
      }
    }
  };

  if (in.has_metadata()) {
    AttrDrafts meta;
    copy_attrs(in.metadata_attrs(), 0, in.metadata_attrs().size(), meta, true);
    if (!in.metadata_unknown_fields().empty()) ++report.unknown_fields_dropped;
    out.set_metadata(out.intern(in.metadata_version()), meta);
  }
  out.reserve(in.size());
  NodeDraft d;
  for (uint32_t n = 0; n < in.size(); ++n) {
    d.clear();
    d.id = in.id(n);
    d.type = in.type(n);
    d.start_time_micros = in.start_time_micros(n);
    d.duration_micros = in.duration_micros(n);
    const auto ctrl = in.ctrl_deps(n), data = in.data_deps(n);
    d.ctrl_deps.assign(ctrl.begin(), ctrl.end());
    d.data_deps.assign(data.begin(), data.end());
    d.ctrl_deps_unpacked = in.ctrl_deps_unpacked(n);
    d.data_deps_unpacked = in.data_deps_unpacked(n);
    const std::string_view name = in.name(n);
    if (name.empty()) {
      d.name = out.intern("");
    } else if (options_.keep_name && options_.keep_name(name)) {
      d.name = out.intern(name);
      ++report.names_kept;
    } else {
      d.name = mapped("op", in.name_id(n));
      ++report.names;
    }
    const bool metadata_node = in.type(n) == static_cast<int32_t>(NodeType::Metadata);
    auto io = [&](const IoStrings& s, IoStrings& o) {
      o.values = out.intern(metadata_node ? anonymize_process_groups(in.str(s.values), report)
                                          : replace_literals(in.str(s.values), tokenize, report.io_literals));
      o.shapes = out.intern(options_.bucket_shapes ? bucket_shapes(in.str(s.shapes), report.shapes_bucketed) : std::string(in.str(s.shapes)));
      o.types = out.intern(in.str(s.types));
    };
    d.has_inputs = in.has_inputs(n);
    d.has_outputs = in.has_outputs(n);
    if (d.has_inputs) io(in.inputs(n), d.inputs);
    if (d.has_outputs) io(in.outputs(n), d.outputs);
    copy_attrs(in.node_attrs(), in.attr_begin(n), in.attr_end(n), d.attrs, false);
    if (!in.unknown_fields(n).empty()) ++report.unknown_fields_dropped;
    out.append(d);
  }
  report.nodes += in.size();
}

// A METADATA node's process groups, as the converter stores them (the Python repr of a list
// holding one JSON string: ['[{"pg_name": "3", "ranks": [..], "pg_desc": ...}]']): the groups'
// ids and ranks kept, their other strings tokenized. Anything else: its literals tokenized.
std::string Anonymizer::anonymize_process_groups(std::string_view values, AnonymizeReport& report) const {
  const std::optional<std::string_view> inner = wrapped_process_groups(values);
  const bool wrapped = inner.has_value();
  const std::string_view text = inner.value_or(values);
  nlohmann::ordered_json groups;
  try {
    groups = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return replace_literals(values, [&](std::string_view s) { return s.empty() ? std::string() : token("str", s); }, report.metadata_strings);
  }
  std::function<void(nlohmann::ordered_json&, const std::string&)> walk = [&](nlohmann::ordered_json& j, const std::string& key) {
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) walk(it.value(), it.key());
    } else if (j.is_array()) {
      for (auto& e : j) walk(e, key);
    } else if (j.is_string() && !(key == "pg_name" && is_number_text(j.get<std::string>())) && !j.get<std::string>().empty()) {
      j = token("str", j.get<std::string>());
      ++report.metadata_strings;
    }
  };
  walk(groups, "");
  return wrapped ? "['" + groups.dump() + "']" : groups.dump();
}

std::string Anonymizer::anonymize_json(std::string_view text, const std::string& source, AnonymizeReport& report) const {
  using Json = nlohmann::ordered_json;
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": not JSON: " + e.what());
  }
  auto string_value = [&](Json& j, uint64_t& count) {
    const std::string s = j.get<std::string>();
    if (s.empty()) return;
    if (s.size() > 2 && s[0] == '[' && s[1] == '{' && s.find("pg_name") != std::string::npos) {
      j = anonymize_process_groups(s, report);  // a process_group:init node's groups
      return;
    }
    j = token("str", s);
    ++count;
  };
  // Every string under j tokenized (shapes bucketed when `shapes`).
  std::function<void(Json&, uint64_t&, bool)> strings = [&](Json& j, uint64_t& count, bool shapes) {
    if (j.is_string()) return string_value(j, count);
    if (j.is_number_unsigned() && shapes && options_.bucket_shapes) {
      const uint64_t v = j.get<uint64_t>();
      if (bucketed(v) != v) ++report.shapes_bucketed, j = bucketed(v);
    }
    if (j.is_array() || j.is_object())
      for (auto& e : j) strings(e, count, shapes);
  };
  auto node = [&](Json& n) {
    ++report.nodes;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string& key = it.key();
      Json& v = it.value();
      if (key == "name" && v.is_string()) {
        const std::string name = v.get<std::string>();
        if (name.empty()) continue;
        if (options_.keep_name && options_.keep_name(name)) {
          ++report.names_kept;
        } else {
          v = token("op", name);
          ++report.names;
        }
      } else if (key == "input_types" || key == "output_types") {
        continue;
      } else if (key == "input_shapes" || key == "output_shapes") {
        strings(v, report.io_literals, true);
      } else if (key == "inputs" || key == "outputs") {
        strings(v, report.io_literals, false);
      } else if (key == "pg_name" && v.is_string() && is_number_text(v.get<std::string>())) {
        continue;
      } else if (key == "attrs" && v.is_array()) {
        for (Json& a : v) {
          if (!a.is_object() || !a.contains("value")) continue;
          const std::string attr = a.contains("name") && a["name"].is_string() ? a["name"].get<std::string>() : "";
          Json& value = a["value"];
          if (attr == "pg_name" && value.is_string() && is_number_text(value.get<std::string>())) continue;
          strings(value, report.attributes[attr], false);
        }
      } else {
        strings(v, report.attributes[key], false);
      }
    }
  };
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.key() == "nodes" && it.value().is_array()) {
        for (Json& n : it.value())
          if (n.is_object()) node(n);
      } else if (it.key() != "schema") {
        strings(it.value(), report.metadata_strings, false);
      }
    }
  } else {
    strings(doc, report.metadata_strings, false);
  }
  return doc.dump() + "\n";
}

}  // namespace chakra
