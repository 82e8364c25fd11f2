// Feeding a trace to a simulator: nodes are handed out once every node they depend on is done
// (the role of Chakra's ETFeeder and ASTRA-sim's feeder_v3; chakra-reference-tools.md §5).
//
// The file is read lazily, in blocks, keeping about `window` unfinished nodes loaded; a block's
// node data is released once all its nodes are done. Per node seen, a small fixed record (state,
// pending count) stays until the end, so a dependency on a long-finished node still resolves.
// Nodes need not be in topological order: a dependency on a node later in the file keeps the
// reader going until that node is read. What the reference feeders get wrong is handled:
//   - a dependency on an id that is not in the file is reported (dangling()) and treated as met
//     at the end of the file (ETFeeder v1 never frees such a node; feeder_v3 aborts);
//   - a parent listed twice counts once (v1 deadlocks);
//   - a node id appearing twice is an error naming both records (v1 silently overwrites);
//   - when nothing can run but nodes remain (a cycle), stalled() says so and stall_report()
//     names a cycle, instead of hanging.
// Issue order is by ascending id among the issuable nodes, which reproduces ETFeeder v1's
// zero-time walk exactly when the trace fits the window (core/docs/feeder.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/trace/graph.h"
#include "chakra/trace/trace.h"

namespace chakra {

// The attributes a simulator reads on every node. The feeder resolves their names to string
// ids once per block of nodes, so that reading one costs no string hashing.
enum class NodeAttr : uint8_t {
  is_cpu_op,
  num_ops,
  tensor_size,
  tensor_loc,
  comm_type,
  comm_priority,
  comm_size,
  comm_src,
  comm_dst,
  comm_tag,
  pg_name,
  tid,
  stream,
  involved_dim,
  count_
};
std::string_view node_attr_name(NodeAttr a);

// A trace without its nodes' inputs and outputs (tensor values, shapes and types), which no
// simulation reads: nodes, times, dependencies, attributes (but their doc strings) and metadata
// kept. A converted PyTorch rank shrinks several times this way, which is what lets a projection
// of it to hundreds of ranks be held in memory.
Trace simulation_copy(const Trace& trace);

// NodeAttr's string ids in one trace (kAbsent: no such string), valid for `pool_size` strings.
struct NodeAttrIds {
  static constexpr StrId kAbsent = UINT32_MAX;
  std::array<StrId, size_t(NodeAttr::count_)> id;
  size_t pool_size = SIZE_MAX;
  // Brings the ids up to date with the trace's strings (which only grow).
  void resolve(const Trace& t);
};

// Read-only view of one loaded node; valid until the node is marked done.
class FeederNode {
 public:
  // `ids`: the trace's resolved NodeAttrIds, or null to look attributes up by name.
  FeederNode(const Trace* trace, uint32_t position, const NodeAttrIds* ids = nullptr)
      : t_(trace), ids_(ids), n_(position) {}

  uint64_t id() const { return t_->id(n_); }
  std::string_view name() const { return t_->name(n_); }
  NodeType type() const { return static_cast<NodeType>(t_->type(n_)); }
  uint64_t duration_micros() const { return t_->duration_micros(n_); }
  uint64_t start_time_micros() const { return t_->start_time_micros(n_); }
  std::span<const uint64_t> data_deps() const { return t_->data_deps(n_); }
  std::span<const uint64_t> ctrl_deps() const { return t_->ctrl_deps(n_); }
  std::string_view inputs_values() const { return t_->str(t_->inputs(n_).values); }
  std::string_view inputs_shapes() const { return t_->str(t_->inputs(n_).shapes); }
  std::string_view inputs_types() const { return t_->str(t_->inputs(n_).types); }
  std::string_view outputs_values() const { return t_->str(t_->outputs(n_).values); }
  std::string_view outputs_shapes() const { return t_->str(t_->outputs(n_).shapes); }
  std::string_view outputs_types() const { return t_->str(t_->outputs(n_).types); }

  // Attributes by name (the first one with that name, as both reference feeders read them).
  // nullopt when absent; chakra::Error naming the node when present with a value that does not
  // convert (a list, a string for a number, a fractional number for an integer). Integer kinds
  // and bool convert into each other when the value fits; integers convert to double.
  std::optional<int64_t> int_attr(std::string_view name) const;
  std::optional<uint64_t> uint_attr(std::string_view name) const;
  std::optional<double> double_attr(std::string_view name) const;
  std::optional<bool> bool_attr(std::string_view name) const;
  std::optional<std::string_view> string_attr(std::string_view name) const;
  // The same for the attributes simulators read on every node.
  std::optional<AttrView> attr(NodeAttr a) const;
  std::optional<int64_t> int_attr(NodeAttr a) const;
  std::optional<uint64_t> uint_attr(NodeAttr a) const;
  std::optional<bool> bool_attr(NodeAttr a) const;
  std::optional<std::string_view> string_attr(NodeAttr a) const;

  // The attributes simulators use, with feeder_v3's defaults where it has one.
  // Asked several times per node issued (its slot, its span kind, its release): read once.
  bool is_cpu_op() const {
    if (cpu_op_ < 0) cpu_op_ = bool_attr(NodeAttr::is_cpu_op).value_or(false);
    return cpu_op_ != 0;
  }
  std::optional<int64_t> num_ops() const { return int_attr(NodeAttr::num_ops); }
  std::optional<uint64_t> tensor_size() const { return uint_attr(NodeAttr::tensor_size); }
  int64_t tensor_loc() const { return int_attr(NodeAttr::tensor_loc).value_or(0); }
  std::optional<int64_t> comm_type() const { return int_attr(NodeAttr::comm_type); }
  int64_t comm_priority() const { return int_attr(NodeAttr::comm_priority).value_or(0); }
  std::optional<int64_t> comm_size() const { return int_attr(NodeAttr::comm_size); }
  std::optional<int64_t> comm_src() const { return int_attr(NodeAttr::comm_src); }
  std::optional<int64_t> comm_dst() const { return int_attr(NodeAttr::comm_dst); }
  std::optional<int64_t> comm_tag() const { return int_attr(NodeAttr::comm_tag); }
  std::optional<std::string_view> pg_name() const { return string_attr(NodeAttr::pg_name); }

  const Trace& trace() const { return *t_; }
  uint32_t position() const { return n_; }

 private:
  const Trace* t_;
  const NodeAttrIds* ids_;
  uint32_t n_;
  mutable int8_t cpu_op_ = -1;  // is_cpu_op(), once read
};

struct FeederOptions {
  // Dependencies that hold a node back: data only (ETFeeder v1) or data and control
  // (feeder_v3, ASTRA-sim's default).
  DepKind gate = DepKind::Data;
  // Unfinished nodes to keep loaded ahead of the simulation (ETFeeder v1: 1,048,576). More are
  // read when nothing is issuable, so a small window never blocks progress.
  uint32_t window = 1u << 20;
  // Dependencies on ids not in the file: met at the end of the file and reported (false), or an
  // error (true).
  bool dangling_is_error = false;
  ReadOptions read;
};

class Feeder {
 public:
  // Opens the trace and reads its first window. Errors throw chakra::Error naming the input.
  Feeder(std::unique_ptr<ByteSource> in, const FeederOptions& options = {});
  explicit Feeder(const std::string& path, const FeederOptions& options = {});
  ~Feeder();
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

  // The smallest-id issuable node, now taken (in flight); nullopt if none is issuable now.
  std::optional<uint64_t> take_next();
  // Every issuable node, ascending, all taken (what ASTRA-sim issues per round).
  std::vector<uint64_t> take_all();
  // The same into `out` (cleared first), whose capacity a caller looping over rounds keeps.
  void take_all(std::vector<uint64_t>& out);
  // A taken node is done: its dependants may become issuable. Its data is released.
  void mark_done(uint64_t id);
  // A taken node goes back to the issuable set (feeder's pushBackIssuableNode).
  void untake(uint64_t id);

  // A loaded, unfinished node. Throws chakra::Error for an id not read yet or already done.
  FeederNode node(uint64_t id) const;
  // The nodes that depend on `id` (gated dependencies), in the order they were read.
  std::vector<uint64_t> dependants(uint64_t id) const;

  // Every node has been read and marked done.
  bool finished() const;
  // Nodes remain but none is issuable or in flight, and the file is read to its end.
  bool stalled() const;
  // For a stalled feeder: how many nodes wait, and one dependency cycle among them by id.
  std::string stall_report() const;

  struct Dangling {
    uint64_t node, missing;  // `node` depends on `missing`, which is not in the file
  };
  // Dangling dependencies found so far (the first 1000; dangling_count() counts all).
  const std::vector<Dangling>& dangling() const;
  uint64_t dangling_count() const;

  uint64_t nodes_read() const;
  uint64_t nodes_done() const;
  uint64_t in_flight() const;
  bool fully_read() const;
  // The file's global metadata (node columns empty).
  const Trace& metadata() const;
  const std::string& name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chakra
