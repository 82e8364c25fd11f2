#include "chakra/astra/generate.h"

#include <cctype>
#include <charconv>
#include <vector>

#include "chakra/support/error.h"

namespace chakra {

namespace {

// Appends one node; ids are taken from `next_id`.
class Builder {
 public:
  Builder(Trace& t, uint64_t& next_id) : t_(t), next_id_(next_id) {}

  NodeDraft& start(std::string_view name, NodeType type) {
    d_.clear();
    d_.id = next_id_++;
    d_.name = t_.intern(name);
    d_.type = static_cast<int32_t>(type);
    return d_;
  }
  StrId s(std::string_view text) { return t_.intern(text); }
  uint64_t finish() {
    t_.append(d_);
    return d_.id;
  }

 private:
  Trace& t_;
  uint64_t& next_id_;
  NodeDraft d_;
};

void metadata_version(Trace& t, std::string_view version) { t.set_metadata(t.intern(version), AttrDrafts{}); }

// The METADATA_NODE with one attribute of every value kind; doc strings on the scalar kinds the
// reference documents.
void all_types_node(Builder& b) {
  NodeDraft& d = b.start("METADATA_NODE", NodeType::Metadata);
  AttrDrafts& a = d.attrs;
  auto scalar = [&](const char* name, AttrKind kind, uint64_t bits, bool doc) {
    AttrDraft& x = a.add(b.s(name), kind, bits);
    if (doc) x.doc = b.s(name);
  };
  auto list = [&](const char* name, AttrKind kind, std::vector<uint64_t> values) {
    a.add_list(b.s(name), kind, values);
  };
  auto i64 = [](int64_t v) { return static_cast<uint64_t>(v); };
  scalar("double", AttrKind::Double, bits_of_double(1.2345), true);
  list("double_list", AttrKind::DoubleList, {bits_of_double(1.2345), bits_of_double(2.3456)});
  scalar("float", AttrKind::Float, bits_of_float(1.2345f), true);
  list("float_list", AttrKind::FloatList, {bits_of_float(1.2345f), bits_of_float(2.3456f)});
  scalar("int32", AttrKind::Int32, 12345, true);
  list("int32_list", AttrKind::Int32List, {12345, 23456});
  scalar("int64", AttrKind::Int64, 9876543210, true);
  list("int64_list", AttrKind::Int64List, {9876543210, 1234567890});
  scalar("uint32", AttrKind::Uint32, 12345, true);
  list("uint32_list", AttrKind::Uint32List, {12345, 23456});
  scalar("uint64", AttrKind::Uint64, 9876543210, true);
  list("uint64_list", AttrKind::Uint64List, {9876543210, 1234567890});
  scalar("sint32", AttrKind::Sint32, i64(-12345), true);
  list("sint32_list", AttrKind::Sint32List, {12345, i64(-23456)});
  scalar("sint64", AttrKind::Sint64, i64(-9876543210), true);
  list("sint64_list", AttrKind::Sint64List, {9876543210, i64(-1234567890)});
  scalar("fixed32", AttrKind::Fixed32, 12345, false);
  list("fixed32_list", AttrKind::Fixed32List, {12345, 23456});
  scalar("fixed64", AttrKind::Fixed64, 9876543210, false);
  list("fixed64_list", AttrKind::Fixed64List, {9876543210, 1234567890});
  scalar("sfixed32", AttrKind::Sfixed32, i64(-12345), false);
  list("sfixed32_list", AttrKind::Sfixed32List, {12345, i64(-23456)});
  scalar("sfixed64", AttrKind::Sfixed64, i64(-9876543210), false);
  list("sfixed64_list", AttrKind::Sfixed64List, {9876543210, i64(-1234567890)});
  scalar("bool", AttrKind::Bool, 1, true);
  std::vector<uint64_t> bools;
  for (int k = 0; k < 10; ++k) bools.push_back(k % 2 == 0);
  list("bool_list", AttrKind::BoolList, bools);
  scalar("string", AttrKind::String, b.s("12345"), true);
  std::vector<uint64_t> strings;
  for (int k = 0; k < 10; ++k) strings.push_back(b.s(std::to_string(12345 + k)));
  list("string_list", AttrKind::StringList, strings);
  scalar("bytes", AttrKind::Bytes, b.s("12345"), false);
  list("bytes_list", AttrKind::BytesList, strings);  // the same ten texts, as bytes
  b.finish();
}

constexpr std::pair<const char*, CommType> kReferenceCollectives[] = {
    {"ALL_REDUCE", CommType::AllReduce}, {"ALL_TO_ALL", CommType::AllToAll},
    {"ALL_GATHER", CommType::AllGather}, {"REDUCE_SCATTER", CommType::ReduceScatter},
    {"BROADCAST", CommType::Broadcast},  {"BARRIER", CommType::Barrier},
};

}  // namespace

void generate_microbenchmarks(const MicrobenchmarkOptions& o,
                              const std::function<void(std::string_view, uint32_t, const Trace&)>& emit) {
  uint64_t next_id = 0;
  auto for_each_npu = [&](std::string_view name, const std::function<void(Builder&)>& body) {
    for (uint32_t npu = 0; npu < o.num_npus; ++npu) {
      Trace t;
      metadata_version(t, "1.0.0");
      Builder b(t, next_id);
      body(b);
      emit(name, npu, t);
    }
  };
  auto not_cpu = [](Builder& b, NodeDraft& d) { d.attrs.add_bool(b.s("is_cpu_op"), false); };
  auto sized = [&](const char* case_name, const char* node_name, NodeType type) {
    for_each_npu(case_name, [&](Builder& b) {
      NodeDraft& d = b.start(node_name, type);
      not_cpu(b, d);
      d.attrs.add_uint64(b.s("tensor_size"), o.tensor_size);
      b.finish();
    });
  };
  auto comp = [&](Builder& b, std::optional<uint64_t> dep) {
    NodeDraft& d = b.start("COMP_NODE", NodeType::Comp);
    not_cpu(b, d);
    d.duration_micros = o.runtime;
    if (dep) d.data_deps.push_back(*dep);
    return b.finish();
  };

  for_each_npu("one_metadata_node_all_types", all_types_node);
  sized("one_remote_mem_load_node", "MEM_LOAD_NODE", NodeType::MemLoad);
  sized("one_remote_mem_store_node", "MEM_STORE_NODE", NodeType::MemStore);
  for_each_npu("one_comp_node", [&](Builder& b) { comp(b, std::nullopt); });
  for_each_npu("two_comp_nodes_independent", [&](Builder& b) {
    comp(b, std::nullopt);
    comp(b, std::nullopt);
  });
  for_each_npu("two_comp_nodes_dependent", [&](Builder& b) { comp(b, comp(b, std::nullopt)); });
  for (const auto& entry : kReferenceCollectives) {
    const char* name = entry.first;  // named copies: clang 14 lambdas cannot capture bindings
    const CommType type = entry.second;
    for_each_npu(name, [&](Builder& b) {
      NodeDraft& d = b.start(name, NodeType::CommColl);
      not_cpu(b, d);
      d.attrs.add_int64(b.s("comm_type"), static_cast<int64_t>(type));
      d.attrs.add_int64(b.s("comm_size"), type == CommType::Barrier ? 0 : o.comm_size);
      b.finish();
    });
  }
  sized("one_comm_send_node", "COMM_SEND_NODE", NodeType::CommSend);
  sized("one_comm_recv_node", "COMM_RECV_NODE", NodeType::CommRecv);
}

std::string size_label(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KB", "MB", "GB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

std::optional<uint64_t> parse_size(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    shift = 40;
  else
    return std::nullopt;
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

Trace collective_trace(const CollectiveOptions& o, uint32_t npu) {
  if (o.npus == 0 || npu >= o.npus)
    throw Error("collective_trace: NPU " + std::to_string(npu) + " of " + std::to_string(o.npus));
  if (o.count == 0) throw Error("the number of collectives must be at least 1");
  std::string type_name(comm_type_name(static_cast<int64_t>(o.type)));
  for (char& c : type_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string name = o.name.empty() ? type_name + "_" + std::to_string(o.npus) + "npus_" + size_label(o.size) : o.name;
  Trace t;
  metadata_version(t, "0.0.4");
  // One collective: id = npu, as ASTRA-sim's files; a chain: ids 0..count-1 on every NPU.
  uint64_t next_id = o.count == 1 ? npu : 0;
  Builder b(t, next_id);
  std::optional<uint64_t> previous;
  for (uint32_t k = 0; k < o.count; ++k) {
    NodeDraft& d = b.start(name, NodeType::CommColl);
    if (previous) d.data_deps.push_back(*previous);
    d.attrs.add_bool(b.s("is_cpu_op"), false);
    d.attrs.add_int64(b.s("comm_type"), static_cast<int64_t>(o.type));
    d.attrs.add_int64(b.s("comm_size"), static_cast<int64_t>(o.size));
    previous = b.finish();
  }
  return t;
}

}  // namespace chakra
