// In-memory model of one Chakra execution trace (one rank's .et file).
//
// Columnar: each node field is a column indexed by the node's position in file order, strings
// are interned (StrId), dependency and attribute lists are flat arrays addressed by offset
// columns. Appending a node costs no heap allocation beyond amortised column growth, so a
// million-node trace loads into a few dozen large arrays.
//
// Everything the wire format can say is kept, so a trace read from a file writes back to the
// same bytes: field values, presence of inputs/outputs, which oneof member an attribute uses,
// whether the file had a GlobalMetadata record, and unknown fields of nodes, attributes and the
// metadata record.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/trace/column.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/string_pool.h"

namespace chakra {

// ---------------------------------------------------------------------------------------------
// Attribute values
//
// A value is stored as 64 bits: integers sign- or zero-extended per their kind, float and double
// as IEEE bit patterns, bool as 0/1, string and bytes as a StrId. List elements use the same
// encoding. These helpers convert between the stored bits and C++ values.
uint64_t bits_of_double(double v);
uint64_t bits_of_float(float v);
double double_of_bits(uint64_t bits);
float float_of_bits(uint64_t bits);

// Reusable staging area for the attributes of one message.
struct AttrDraft {
  StrId name = StringPool::kEmpty;
  StrId doc = StringPool::kEmpty;
  AttrKind kind = AttrKind::None;
  uint64_t bits = 0;        // scalar value
  uint32_t list_begin = 0;  // list elements: AttrDrafts::elems[list_begin, +list_len)
  uint32_t list_len = 0;
  uint32_t unknown_begin = 0;  // unknown fields: AttrDrafts::unknown[unknown_begin, +len)
  uint32_t unknown_len = 0;
};

struct AttrDrafts {
  std::vector<AttrDraft> attrs;
  std::vector<uint64_t> elems;
  std::string unknown;

  void clear() {
    attrs.clear();
    elems.clear();
    unknown.clear();
  }
  AttrDraft& add(StrId name, AttrKind kind, uint64_t bits) {
    attrs.push_back({name, StringPool::kEmpty, kind, bits});
    return attrs.back();
  }
  AttrDraft& add_list(StrId name, AttrKind list_kind, std::span<const uint64_t> values);
  void add_bool(StrId name, bool v) { add(name, AttrKind::Bool, v ? 1 : 0); }
  void add_int64(StrId name, int64_t v) { add(name, AttrKind::Int64, static_cast<uint64_t>(v)); }
  void add_int32(StrId name, int32_t v) { add(name, AttrKind::Int32, static_cast<uint64_t>(static_cast<int64_t>(v))); }
  void add_uint64(StrId name, uint64_t v) { add(name, AttrKind::Uint64, v); }
  void add_double(StrId name, double v) { add(name, AttrKind::Double, bits_of_double(v)); }
  void add_string(StrId name, StrId v) { add(name, AttrKind::String, v); }
};

struct IoStrings {
  StrId values = StringPool::kEmpty;
  StrId shapes = StringPool::kEmpty;
  StrId types = StringPool::kEmpty;
};

// Staging area for one node; reuse it across nodes to avoid allocations.
struct NodeDraft {
  uint64_t id = 0;
  StrId name = StringPool::kEmpty;
  int32_t type = 0;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;
  std::vector<uint64_t> ctrl_deps;
  std::vector<uint64_t> data_deps;
  // The file listed dependencies one field per id instead of packed (pre-proto3 writers);
  // kept so such files write back unchanged.
  bool ctrl_deps_unpacked = false;
  bool data_deps_unpacked = false;
  bool has_inputs = false;
  bool has_outputs = false;
  IoStrings inputs;
  IoStrings outputs;
  AttrDrafts attrs;
  std::string unknown;  // raw wire bytes of fields this schema does not define

  void clear();
};

// Attributes of many messages, stored column-wise.
class AttrTable {
 public:
  uint32_t size() const { return static_cast<uint32_t>(kind_.size()); }
  StrId name(uint32_t a) const { return name_[a]; }
  StrId doc(uint32_t a) const { return doc_[a]; }
  AttrKind kind(uint32_t a) const { return kind_[a]; }
  uint64_t bits(uint32_t a) const { return bits_[a]; }
  std::span<const uint64_t> list(uint32_t a) const {
    uint64_t b = bits_[a];
    return {list_pool_.data() + static_cast<uint32_t>(b), static_cast<size_t>(b >> 32)};
  }
  std::string_view unknown_fields(uint32_t a) const;
  bool has_unknown_fields() const { return !unknown_.empty(); }

  // Appends the drafts; returns the index of the first appended attribute.
  uint32_t append(const AttrDrafts& d);
  // Replaces a scalar attribute's value, its kind kept (ids rewritten in place).
  void set_bits(uint32_t a, uint64_t bits) { bits_[a] = bits; }
  void reserve(size_t attrs, size_t list_elems);
  void reserve_scaled(double factor);  // as Trace::reserve_scaled
  void clear();
  size_t memory_bytes() const;

 private:
  Column<StrId> name_;
  Column<StrId> doc_;
  Column<AttrKind> kind_;
  Column<uint64_t> bits_;  // scalar bits, or list position: begin | count << 32
  Column<uint64_t> list_pool_;
  std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>> unknown_;  // attr → blob range
  std::string unknown_blob_;
};

class Trace;

// A read-only handle on one attribute.
class AttrView {
 public:
  AttrView(const Trace* trace, const AttrTable* table, uint32_t index) : trace_(trace), table_(table), index_(index) {}

  std::string_view name() const;
  std::string_view doc() const;
  AttrKind kind() const { return table_->kind(index_); }
  uint64_t bits() const { return table_->bits(index_); }
  std::span<const uint64_t> list() const { return table_->list(index_); }
  std::string_view unknown_fields() const { return table_->unknown_fields(index_); }

  // Typed reads. An integer read succeeds for every integer kind and bool (the way ASTRA-sim's
  // feeder converts between integer cases) when the value fits; a floating read also accepts
  // integers; a text read accepts string and bytes. Anything else returns nullopt.
  std::optional<int64_t> as_int64() const;
  std::optional<uint64_t> as_uint64() const;
  std::optional<double> as_double() const;
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;

 private:
  const Trace* trace_;
  const AttrTable* table_;
  uint32_t index_;
};

class Trace {
 public:
  Trace() = default;
  Trace(Trace&&) = default;
  Trace& operator=(Trace&&) = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // ---- strings ----
  StrId intern(std::string_view s) { return strings_.intern(s); }
  std::string_view str(StrId id) const { return strings_.view(id); }
  const StringPool& strings() const { return strings_; }
  StringPool& strings() { return strings_; }

  // ---- global metadata (record 0; absent in some older ASTRA-sim traces) ----
  bool has_metadata() const { return has_metadata_; }
  std::string_view metadata_version() const { return str(metadata_version_); }
  const AttrTable& metadata_attrs() const { return metadata_attrs_; }
  AttrView metadata_attr(uint32_t a) const { return {this, &metadata_attrs_, a}; }
  std::string_view metadata_unknown_fields() const { return metadata_unknown_; }
  void set_metadata(StrId version, const AttrDrafts& attrs, std::string_view unknown = {});
  // Sets one string attribute of the metadata (replacing one of that name), the rest kept; adds
  // a metadata record to a trace without one.
  void set_metadata_string(std::string_view name, std::string_view value);
  void set_metadata_uint64(std::string_view name, uint64_t value);
  // Drops the metadata attributes of that name (none: nothing changes).
  void remove_metadata(std::string_view name);
  void clear_metadata();

  // ---- nodes, by position in file order ----
  uint32_t size() const { return static_cast<uint32_t>(id_.size()); }
  bool empty() const { return id_.empty(); }
  uint64_t id(uint32_t n) const { return id_[n]; }
  StrId name_id(uint32_t n) const { return name_[n]; }
  std::string_view name(uint32_t n) const { return str(name_[n]); }
  int32_t type(uint32_t n) const { return type_[n]; }
  uint64_t start_time_micros(uint32_t n) const { return start_[n]; }
  uint64_t duration_micros(uint32_t n) const { return duration_[n]; }
  std::span<const uint64_t> ctrl_deps(uint32_t n) const {
    return {ctrl_.data() + ctrl_off_[n], ctrl_off_[n + 1] - ctrl_off_[n]};
  }
  std::span<const uint64_t> data_deps(uint32_t n) const {
    return {data_.data() + data_off_[n], data_off_[n + 1] - data_off_[n]};
  }
  bool ctrl_deps_unpacked(uint32_t n) const { return flags_[n] & kCtrlUnpacked; }
  bool data_deps_unpacked(uint32_t n) const { return flags_[n] & kDataUnpacked; }
  bool has_inputs(uint32_t n) const { return flags_[n] & kHasInputs; }
  bool has_outputs(uint32_t n) const { return flags_[n] & kHasOutputs; }
  const IoStrings& inputs(uint32_t n) const { return inputs_[n]; }
  const IoStrings& outputs(uint32_t n) const { return outputs_[n]; }

  // Attributes of node n are node_attrs() indices [attr_begin(n), attr_end(n)).
  uint32_t attr_begin(uint32_t n) const { return attr_off_[n]; }
  uint32_t attr_end(uint32_t n) const { return attr_off_[n + 1]; }
  const AttrTable& node_attrs() const { return attrs_; }
  AttrView attr(uint32_t a) const { return {this, &attrs_, a}; }
  // First attribute of node n with this name (what the feeders return).
  std::optional<AttrView> find_attr(uint32_t n, std::string_view name) const;
  std::optional<AttrView> find_attr(uint32_t n, StrId name) const;

  std::string_view unknown_fields(uint32_t n) const;
  bool has_unknown_fields() const;

  // Unknown fields inside inputs/outputs or list messages cannot be kept; they are counted.
  uint64_t dropped_unknown_fields() const { return dropped_unknown_; }
  void add_dropped_unknown_fields(uint64_t n) { dropped_unknown_ += n; }

  // ---- building ----
  // Appends a node; returns its position. Throws chakra::Error past 2^32-2 nodes.
  uint32_t append(const NodeDraft& d);
  void reserve(size_t nodes, size_t deps_per_node = 2, size_t attrs_per_node = 8);
  // Room for `factor` times what each column holds now: a reader that has decoded part of its
  // input and knows the rest's size grows the columns once, not in steps (in wasm each step is
  // a copy of the whole column: a 1 GB trace's last ones took 0.3-0.9 s of a frame).
  void reserve_scaled(double factor);
  // Replaces a node's recorded times (a simulation's, written back into its trace).
  void set_times(uint32_t n, uint64_t start_micros, uint64_t duration_micros) {
    start_[n] = start_micros;
    duration_[n] = duration_micros;
  }
  // Replaces a scalar node attribute's value (kind kept) and a node's inputs values: ids
  // rewritten in place (chakra project).
  void set_attr_bits(uint32_t a, uint64_t bits) { attrs_.set_bits(a, bits); }
  // Appends data dependencies: (node position, id it depends on) pairs, in any order; each node's
  // new ones follow its own in the order given. One pass over the dependency column.
  void add_data_deps(std::span<const std::pair<uint32_t, uint64_t>> extra);
  void set_input_values(uint32_t n, StrId values) { inputs_[n].values = values; }
  // Removes every node, keeping the strings, the metadata and the allocated capacity (for
  // streaming: a Trace reused as a one-node window).
  void clear_nodes();

  size_t memory_bytes() const;

 private:
  // The metadata with the attributes named `name` replaced by one of `kind` (None: by none).
  void replace_metadata(std::string_view name, AttrKind kind, uint64_t bits);

  static constexpr uint8_t kHasInputs = 1, kHasOutputs = 2, kCtrlUnpacked = 4, kDataUnpacked = 8;

  StringPool strings_;

  bool has_metadata_ = false;
  StrId metadata_version_ = StringPool::kEmpty;
  AttrTable metadata_attrs_;
  std::string metadata_unknown_;

  Column<uint64_t> id_;
  Column<StrId> name_;
  Column<int32_t> type_;
  Column<uint64_t> start_;
  Column<uint64_t> duration_;
  Column<uint32_t> ctrl_off_{0};
  Column<uint32_t> data_off_{0};
  Column<uint32_t> attr_off_{0};
  Column<uint64_t> ctrl_;
  Column<uint64_t> data_;
  Column<uint8_t> flags_;
  Column<IoStrings> inputs_;
  Column<IoStrings> outputs_;
  AttrTable attrs_;

  std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>> unknown_;  // node → blob range
  std::string unknown_blob_;
  uint64_t dropped_unknown_ = 0;
};

// Whether two traces are the same up to how their nodes are numbered: node for node in file
// order the same fields, attributes, inputs, outputs and unknown fields, and the same metadata,
// where each node id and each dependency is compared by its rank among its trace's node ids (a
// dependency on a node the trace lacks must be the same id in both). Traces with a repeated node
// id are never the same. Simulating one is then simulating the other: the simulator orders
// nodes by id and file order only (chakra simulate runs one NPU for many alike ones).
//
// With a `pairing`, node attributes it names (same name, kind and doc in both) are not compared:
// each pair of values, a's then b's, is given to `pair`, which says whether they may stand for
// each other (the simulator pairs the communicator groups and peers of NPUs that are alike but
// for who they talk to). Metadata attributes are always compared.
struct AttrPairing {
  std::vector<std::string_view> names;
  std::function<bool(std::string_view name, const AttrView& a, const AttrView& b)> pair;
};
bool same_up_to_node_ids(const Trace& a, const Trace& b, const AttrPairing* pairing = nullptr);

}  // namespace chakra
