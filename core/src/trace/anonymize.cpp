#include "chakra/trace/anonymize.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <random>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "chakra/support/sha256.h"
#include "chakra/trace/schema.h"

namespace chakra {

std::string random_anonymize_key() {
  std::random_device device;
  std::string key(32, '\0');
  for (char& c : key) c = static_cast<char>(device() & 0xff);
  return key;
}

void AnonymizeReport::merge(const AnonymizeReport& o) {
  nodes += o.nodes, events += o.events, names += o.names, names_kept += o.names_kept;
  names_vocabulary += o.names_vocabulary, io_literals += o.io_literals;
  metadata_strings += o.metadata_strings, shapes_bucketed += o.shapes_bucketed;
  docs_dropped += o.docs_dropped, unknown_fields_dropped += o.unknown_fields_dropped;
  for (const auto& [name, n] : o.attributes) attributes[name] += n;
}

std::string AnonymizeReport::text() const {
  std::string attrs;
  for (const auto& [name, n] : attributes)
    if (n) attrs += (attrs.empty() ? "" : ", ") + name + " " + std::to_string(n);
  std::string out = "replaced: " + std::to_string(names) + " names";
  if (names_kept) out += " (" + std::to_string(names_kept) + " kept by --keep-names)";
  out += ", string attributes (" + (attrs.empty() ? std::string("none") : attrs) + "), " + std::to_string(io_literals) +
         " strings in inputs/outputs values, " + std::to_string(metadata_strings) + " metadata strings\n";
  out += "kept: " + std::to_string(names_vocabulary) +
         " names the tools read (communication, memory copies, runtime calls, profiler steps), " +
         std::to_string(nodes) +
         " nodes' ids, types, dependencies, durations, start times, numeric and bool attributes (num_ops, tensor "
         "sizes, communication), strings of numbers only, tensor types, attribute names, ";
  out += shapes_bucketed
             ? "shapes bucketed to powers of two (" + std::to_string(shapes_bucketed) + " dimensions rounded up)"
             : std::string("shapes");
  if (events)
    out += "; " + std::to_string(events) + " Kineto events' phases, categories, pids, tids, times, ids, numeric args";
  out += "\n";
  if (docs_dropped || unknown_fields_dropped)
    out += "dropped: " + std::to_string(docs_dropped) + " attribute doc strings, " +
           std::to_string(unknown_fields_dropped) + " nodes' or attributes' fields outside the schema\n";
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

bool all_of(std::string_view s, int (*is)(int)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return is(static_cast<unsigned char>(c)) != 0; });
}
int is_identifier_char(int c) { return std::isalnum(c) || c == '_'; }

}  // namespace

size_t vocabulary_kept(std::string_view name) {
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  // Communication and memory copies: the analyses classify GPU work by these names, the
  // converter finds collectives by them (nccl*, ncclDevKernel_*, "Memcpy DtoH (...)", ...).
  if (!name.empty() && classify_gpu_op(name) != GpuKind::Computation) return kWholeName;
  // CUDA/HIP runtime and driver calls (cudaLaunchKernel, hipMemcpyAsync, cuStreamSynchronize):
  // the linker and the critical path tell launches, copies and synchronisations by them.
  for (std::string_view api : {"cuda", "hip", "cu"})
    if (starts(api) && name.size() > api.size() && std::isupper(static_cast<unsigned char>(name[api.size()])) &&
        all_of(name.substr(api.size()), is_identifier_char))
      return kWholeName;
  // Iterations, and PyTorch's communication ops (whose send/recv the converter reads).
  if (starts("ProfilerStep#") && all_of(name.substr(13), std::isdigit)) return kWholeName;
  if (starts("c10d::") && all_of(name.substr(6), is_identifier_char)) return kWholeName;
  // Kineto's own span ("PyTorch Profiler (0)").
  if (starts("PyTorch Profiler (") && name.back() == ')' && all_of(name.substr(18, name.size() - 19), std::isdigit))
    return kWholeName;
  // The marker of the node listing the process groups ("## process_group:init ##").
  if (name.find("process_group:init") != std::string_view::npos) return kWholeName;
  static constexpr std::string_view kWhole[] = {
      // Markers the converter and the linker read.
      "record_param_comms", "[pytorch|profiler|execution_trace|process]", "[pytorch|profiler|execution_trace|thread]",
      "[pytorch|profiler|execution_graph|process]", "[pytorch|profiler|execution_graph|thread]",
      // The Chrome trace format's metadata events, Kineto's flows and synchronisation events.
      "process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index", "ac2g", "fwdbwd",
      "Stream Sync", "Context Sync", "Event Sync", "Stream Wait Event"};
  for (std::string_view w : kWhole)
    if (name == w) return kWholeName;
  // The converter leaves optimizer steps' own time out; the rest names the optimizer's class.
  if (starts("Optimizer.step#")) return 15;
  return 0;
}

ValuePolicy value_policy(std::string_view attribute) {
  if (attribute == kStallClassAttr || attribute == "stall_evidence") return ValuePolicy::Kept;
  if (attribute == kProfilerStepNamesAttr || attribute == "profiler_steps") return ValuePolicy::Name;
  return ValuePolicy::Text;
}

bool numbers_only(std::string_view text) {
  auto number = [](std::string_view w) {
    if (w == "True" || w == "False" || w == "None" || w == "true" || w == "false" || w == "null") return true;
    if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) return all_of(w.substr(2), std::isxdigit);
    return w.find_first_of("0123456789") != std::string_view::npos &&
           w.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
  };
  // Words between separators, each a number.
  for (size_t i = 0; i < text.size();) {
    const size_t end = std::min(text.find_first_of(" ,[]()", i), text.size());
    if (end > i && !number(text.substr(i, end - i))) return false;
    i = end + 1;
  }
  return true;
}

std::string Anonymizer::name(std::string_view original, AnonymizeReport& report) const {
  if (original.empty()) return {};
  if (options_.keep_name && options_.keep_name(original)) {
    ++report.names_kept;
    return std::string(original);
  }
  const size_t kept = vocabulary_kept(original);
  if (kept == kWholeName) {
    ++report.names_vocabulary;
    return std::string(original);
  }
  (kept ? report.names_vocabulary : report.names) += 1;
  return std::string(original.substr(0, kept)) + token("op", original);
}

std::string Anonymizer::text(std::string_view original, uint64_t& count) const {
  if (numbers_only(original)) return std::string(original);
  ++count;
  return token("str", original);
}

namespace {

// Each quoted literal ('...' or "...", backslash escapes) of a Python-repr value list replaced by
// replace(content); numbers, brackets, True/False/None kept.
std::string replace_literals(std::string_view s, const std::function<std::string(std::string_view)>& replace) {
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
    i = j + 1;
  }
  return out;
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
    count += bucketed_dimension(v) != v;
    out += std::to_string(bucketed_dimension(v));
    i = j;
  }
  return out;
}

}  // namespace

uint64_t bucketed_dimension(uint64_t v) {
  uint64_t p = 1;
  while (p < v && p < (uint64_t{1} << 62)) p <<= 1;
  return v <= 1 ? v : p;
}

void Anonymizer::anonymize(const Trace& in, Trace& out, AnonymizeReport& report) const {
  out = Trace();
  // Names and other strings, each made once per trace; what they added to the report is added
  // again each time one is used.
  struct Made {
    StrId to;
    AnonymizeReport counts;  // names, names_kept, names_vocabulary; or `names` = strings replaced
  };
  std::unordered_map<StrId, Made> names, texts;
  auto name_of = [&](StrId id) {
    auto it = names.find(id);
    if (it == names.end()) {
      Made m;
      m.to = out.intern(name(in.str(id), m.counts));
      it = names.emplace(id, m).first;
    }
    report.names += it->second.counts.names, report.names_kept += it->second.counts.names_kept;
    report.names_vocabulary += it->second.counts.names_vocabulary;
    return it->second.to;
  };
  auto text_of = [&](StrId id, uint64_t& count) {
    auto it = texts.find(id);
    if (it == texts.end()) {
      Made m;
      m.to = out.intern(text(in.str(id), m.counts.names));
      it = texts.emplace(id, m).first;
    }
    count += it->second.counts.names;
    return it->second.to;
  };

  // Attributes of one message into `d`: strings as text() makes them (the metadata's schema
  // version kept), docs dropped.
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
        if (is_list(kind))
          d.add_list(out_name, kind, table.list(a));
        else
          d.add(out_name, kind, table.bits(a));
        continue;
      }
      uint64_t& count = metadata ? report.metadata_strings : report.attributes[name];
      const ValuePolicy policy = metadata && name == "schema" ? ValuePolicy::Kept : value_policy(name);
      auto value = [&](uint64_t v) -> uint64_t {
        if (policy == ValuePolicy::Kept) return out.intern(in.str(static_cast<StrId>(v)));
        if (policy == ValuePolicy::Name) return name_of(static_cast<StrId>(v));
        return text_of(static_cast<StrId>(v), count);
      };
      if (text) {
        d.add(out_name, kind, value(table.bits(a)));
      } else {
        std::vector<uint64_t> values;
        for (uint64_t v : table.list(a)) values.push_back(value(v));
        d.add_list(out_name, kind, values);
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
    d.name = name_of(in.name_id(n));
    const bool metadata_node = in.type(n) == static_cast<int32_t>(NodeType::Metadata);
    auto io = [&](const IoStrings& s, IoStrings& o) {
      const std::string_view values = in.str(s.values);
      uint64_t& count = metadata_node ? report.metadata_strings : report.io_literals;
      const std::optional<std::string> groups = metadata_node ? process_groups(values, report) : std::nullopt;
      auto literal = [&](std::string_view v) { return text(v, count); };
      o.values = out.intern(groups ? *groups : replace_literals(values, literal));
      const std::string_view shapes = in.str(s.shapes);
      o.shapes = out.intern(options_.bucket_shapes ? bucket_shapes(shapes, report.shapes_bucketed) : shapes);
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

std::optional<std::string> Anonymizer::process_groups(std::string_view values, AnonymizeReport& report) const {
  const std::optional<std::string_view> inner = wrapped_process_groups(values);
  using Json = nlohmann::ordered_json;
  // Process groups are a list of flat objects: anything nested deeper is not one (and a walk
  // down a hostile nesting would run out of stack).
  constexpr int kMaxDepth = 16;
  const Json::parser_callback_t shallow = [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxDepth) throw Error("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return true;
  };
  Json groups;
  try {
    groups = Json::parse(inner.value_or(values), shallow);
  } catch (const std::exception&) {  // not JSON, or too deep
    return std::nullopt;
  }
  std::function<void(Json&)> walk = [&](Json& j) {
    if (j.is_structured()) {
      for (Json& e : j) walk(e);
    } else if (j.is_string()) {
      j = text(j.get<std::string>(), report.metadata_strings);
    }
  };
  walk(groups);
  return inner ? "['" + groups.dump() + "']" : groups.dump();
}

}  // namespace chakra
