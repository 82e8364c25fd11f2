#include "chakra/astra/feeder.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <queue>
#include <unordered_map>
#include <utility>

#include "chakra/support/error.h"

namespace chakra {

// ---------------------------------------------------------------- FeederNode

std::string_view node_attr_name(NodeAttr a) {
  static constexpr std::string_view names[] = {"is_cpu_op",     "num_ops",   "tensor_size", "tensor_loc",  "comm_type",
                                               "comm_priority", "comm_size", "comm_src",    "comm_dst",    "comm_tag",
                                               "pg_name",       "tid",       "stream",      "involved_dim"};
  static_assert(std::size(names) == size_t(NodeAttr::count_));
  return names[size_t(a)];
}

namespace {

// Attributes [begin, end) of `table` (in trace `t`) appended to `out`'s drafts, their strings
// interned in `to`.
void copy_attrs(const Trace& t, const AttrTable& table, uint32_t begin, uint32_t end, Trace& to, AttrDrafts& out) {
  std::vector<uint64_t> strings;
  for (uint32_t a = begin; a < end; ++a) {
    const StrId name = to.intern(t.str(table.name(a)));
    const AttrKind kind = table.kind(a);
    if (kind == AttrKind::String || kind == AttrKind::Bytes) {
      out.add(name, kind, to.intern(t.str(static_cast<StrId>(table.bits(a)))));
    } else if (kind == AttrKind::StringList || kind == AttrKind::BytesList) {
      strings.clear();
      for (uint64_t s : table.list(a)) strings.push_back(to.intern(t.str(static_cast<StrId>(s))));
      out.add_list(name, kind, strings);
    } else if (is_list(kind)) {
      out.add_list(name, kind, table.list(a));
    } else {
      out.add(name, kind, table.bits(a));
    }
  }
}

}  // namespace

Trace simulation_copy(const Trace& t) {
  Trace out;
  out.reserve(t.size());
  if (t.has_metadata()) {
    AttrDrafts meta;
    copy_attrs(t, t.metadata_attrs(), 0, t.metadata_attrs().size(), out, meta);
    out.set_metadata(out.intern(t.metadata_version()), meta);
  }
  NodeDraft d;
  for (uint32_t n = 0; n < t.size(); ++n) {
    d.clear();
    d.id = t.id(n);
    d.name = out.intern(t.name(n));
    d.type = t.type(n);
    d.start_time_micros = t.start_time_micros(n);
    d.duration_micros = t.duration_micros(n);
    d.ctrl_deps.assign(t.ctrl_deps(n).begin(), t.ctrl_deps(n).end());
    d.data_deps.assign(t.data_deps(n).begin(), t.data_deps(n).end());
    copy_attrs(t, t.node_attrs(), t.attr_begin(n), t.attr_end(n), out, d.attrs);
    out.append(d);
  }
  return out;
}

void NodeAttrIds::resolve(const Trace& t) {
  const StringPool& pool = t.strings();
  if (pool.size() == pool_size) return;
  for (size_t a = 0; a < id.size(); ++a)
    if (pool_size == SIZE_MAX || id[a] == kAbsent)
      if (!pool.find(node_attr_name(NodeAttr(a)), &id[a])) id[a] = kAbsent;
  pool_size = pool.size();
}

namespace {

template <class T>
T converted(const FeederNode& node, std::string_view attr, std::optional<T> value, const char* wanted) {
  if (!value)
    throw Error("node " + std::to_string(node.id()) + " (" + std::string(node.name()) + "): attribute \"" +
                std::string(attr) + "\" does not hold " + wanted);
  return *value;
}

template <class T>
std::optional<T> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a);

template <>
std::optional<int64_t> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a) {
  if (!a) return std::nullopt;
  return converted(node, name, a->as_int64(), "a signed 64-bit integer");
}
template <>
std::optional<uint64_t> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a) {
  if (!a) return std::nullopt;
  return converted(node, name, a->as_uint64(), "an unsigned 64-bit integer");
}
template <>
std::optional<double> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a) {
  if (!a) return std::nullopt;
  return converted(node, name, a->as_double(), "a number");
}
template <>
std::optional<bool> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a) {
  if (!a) return std::nullopt;
  std::optional<bool> b = a->as_bool();
  if (!b)
    if (std::optional<int64_t> i = a->as_int64()) b = *i != 0;  // STAGE writes is_cpu_op as int32
  return converted(node, name, b, "a bool");
}
template <>
std::optional<std::string_view> typed(const FeederNode& node, std::string_view name, std::optional<AttrView> a) {
  if (!a) return std::nullopt;
  return converted(node, name, a->as_string(), "a string");
}

}  // namespace

std::optional<AttrView> FeederNode::attr(NodeAttr a) const {
  if (!ids_) return t_->find_attr(n_, node_attr_name(a));
  const StrId id = ids_->id[size_t(a)];
  if (id == NodeAttrIds::kAbsent) return std::nullopt;
  return t_->find_attr(n_, id);
}

std::optional<int64_t> FeederNode::int_attr(std::string_view name) const {
  return typed<int64_t>(*this, name, t_->find_attr(n_, name));
}
std::optional<uint64_t> FeederNode::uint_attr(std::string_view name) const {
  return typed<uint64_t>(*this, name, t_->find_attr(n_, name));
}
std::optional<double> FeederNode::double_attr(std::string_view name) const {
  return typed<double>(*this, name, t_->find_attr(n_, name));
}
std::optional<bool> FeederNode::bool_attr(std::string_view name) const {
  return typed<bool>(*this, name, t_->find_attr(n_, name));
}
std::optional<std::string_view> FeederNode::string_attr(std::string_view name) const {
  return typed<std::string_view>(*this, name, t_->find_attr(n_, name));
}
std::optional<int64_t> FeederNode::int_attr(NodeAttr a) const {
  return typed<int64_t>(*this, node_attr_name(a), attr(a));
}
std::optional<uint64_t> FeederNode::uint_attr(NodeAttr a) const {
  return typed<uint64_t>(*this, node_attr_name(a), attr(a));
}
std::optional<bool> FeederNode::bool_attr(NodeAttr a) const { return typed<bool>(*this, node_attr_name(a), attr(a)); }
std::optional<std::string_view> FeederNode::string_attr(NodeAttr a) const {
  return typed<std::string_view>(*this, node_attr_name(a), attr(a));
}

// ---------------------------------------------------------------- Feeder

namespace {

constexpr uint32_t kBlockNodes = 4096;
constexpr uint32_t kReleased = UINT32_MAX;  // Entry::block once the node's data is freed
constexpr int32_t kNoEdge = -1;
constexpr size_t kMaxDanglingKept = 1000;

enum class State : uint8_t { Absent, Waiting, Ready, Taken, Done };  // Absent: a free slot of EntryTable

// Per node seen: where its data is and how many gated dependencies are not done yet.
// Singly linked lists of dependants in one pool, with a free list: no allocation per node.
struct Edge {
  uint64_t dependant;
  int32_t next;
};
struct EdgeList {
  int32_t first = kNoEdge, last = kNoEdge;
};

// Per node seen: where its data is and how many gated dependencies are not done yet.
struct Entry {
  uint32_t block = 0;
  uint32_t position = 0;
  uint32_t pending = 0;
  EdgeList dependants;  // in the order they were read
  State state = State::Absent;
};

// Entries by node id. Traces number their nodes densely from about 0, so ids below a few times
// the count read so far sit in a vector indexed by id, any others in a hash map: a lookup is an
// index and nothing is allocated per node. Adding may move entries (the vector grows).
class EntryTable {
 public:
  const Entry* find(uint64_t id) const {
    if (id < dense_.size()) return dense_[id].state == State::Absent ? nullptr : &dense_[id];
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  Entry* find(uint64_t id) { return const_cast<Entry*>(std::as_const(*this).find(id)); }
  // A new entry for `id` (Waiting), or nullptr when `id` has one already.
  Entry* add(uint64_t id, uint64_t read_so_far) {
    if (id >= dense_.size() && id < 4 * read_so_far + 4096) grow(id);
    Entry* e;
    if (id < dense_.size()) {
      e = &dense_[id];
      if (e->state != State::Absent) return nullptr;
    } else {
      auto [it, fresh] = sparse_.try_emplace(id);
      if (!fresh) return nullptr;
      e = &it->second;
    }
    e->state = State::Waiting;
    return e;
  }
  template <class F>
  void for_each(F&& f) const {
    for (uint64_t id = 0; id < dense_.size(); ++id)
      if (dense_[id].state != State::Absent) f(id, dense_[id]);
    for (const auto& [id, e] : sparse_) f(id, e);
  }

 private:
  void grow(uint64_t id) {
    const uint64_t n = std::max<uint64_t>(id + 1, 2 * dense_.size());
    dense_.resize(n);
    for (auto it = sparse_.begin(); it != sparse_.end();) {  // ids the vector covers now
      if (it->first < n) {
        dense_[it->first] = it->second;
        it = sparse_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<Entry> dense_;
  std::unordered_map<uint64_t, Entry> sparse_;
};

}  // namespace

struct Feeder::Impl {
  FeederOptions options;
  std::unique_ptr<EtReader> reader;
  Trace metadata;
  NodeDraft draft;
  std::vector<uint64_t> gated;  // scratch: one node's gated dependencies, deduplicated

  struct Block {
    Trace trace;
    uint32_t unfinished = 0;
    NodeAttrIds attr_ids;  // resolved when a node is handed out (the block's strings grow)
  };
  std::vector<std::unique_ptr<Block>> blocks;  // released blocks stay as null

  EntryTable entries;
  std::unordered_map<uint64_t, EdgeList> unseen;  // dependants of ids not read yet
  std::vector<Edge> edges;
  int32_t free_edge = kNoEdge;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> ready;

  std::vector<Dangling> dangling;
  uint64_t dangling_count = 0;
  uint64_t read = 0, done = 0, taken = 0, loaded_unfinished = 0;
  uint64_t first_block_hint = 0;  // nodes the input's size suggests, for the first block
  bool eof = false;

  int32_t new_edge(uint64_t dependant) {
    int32_t e;
    if (free_edge != kNoEdge) {
      e = free_edge;
      free_edge = edges[e].next;
      edges[e] = {dependant, kNoEdge};
    } else {
      e = static_cast<int32_t>(edges.size());
      edges.push_back({dependant, kNoEdge});
    }
    return e;
  }
  void append_edge(EdgeList& list, uint64_t dependant) {
    int32_t e = new_edge(dependant);
    if (list.last == kNoEdge)
      list.first = e;
    else
      edges[list.last].next = e;
    list.last = e;
  }
  void free_edges(int32_t first) {
    while (first != kNoEdge) {
      int32_t next = edges[first].next;
      edges[first].next = free_edge;
      free_edge = first;
      first = next;
    }
  }

  const Entry& entry(uint64_t id) const {
    const Entry* e = entries.find(id);
    if (!e) throw Error(reader->name() + ": node " + std::to_string(id) + " has not been read");
    return *e;
  }
  Entry& entry(uint64_t id) { return const_cast<Entry&>(std::as_const(*this).entry(id)); }

  void make_ready(uint64_t id, Entry& e) {
    e.state = State::Ready;
    ready.push(id);
  }

  // One dependency of `id` is met.
  void satisfy(uint64_t id) {
    Entry& e = entry(id);
    if (--e.pending == 0 && e.state == State::Waiting) make_ready(id, e);
  }

  bool read_one() {
    if (eof) return false;
    // Nodes are read straight into the last block (its strings interned there), so a block's
    // memory goes away whole once its nodes are done.
    if (blocks.empty() || !blocks.back() || blocks.back()->trace.size() == kBlockNodes) {
      if (!blocks.empty() && blocks.back() && blocks.back()->unfinished == 0) blocks.back().reset();
      blocks.push_back(std::make_unique<Block>());
      // Sized from the input (a node takes a hundred bytes or more: the estimate errs low), so
      // that a block's columns do not grow by doubling, and small for small inputs: a simulator
      // opens thousands of one-collective traces at once.
      blocks.back()->trace.reserve(std::clamp<uint64_t>(first_block_hint, 64, kBlockNodes), 2, 6);
      first_block_hint = 0;
    }
    Block& b = *blocks.back();
    if (!reader->next_node(b.trace, draft)) {
      end_of_file();
      return false;
    }
    const uint64_t id = draft.id;
    Entry* self = entries.add(id, read);
    if (!self)
      throw Error(reader->name() + ": node id " + std::to_string(id) + " appears twice (record " +
                  std::to_string(reader->records_read()) + " repeats an earlier node)");
    ++read;
    self->block = static_cast<uint32_t>(blocks.size() - 1);
    self->position = b.trace.append(draft);
    ++b.unfinished;
    ++loaded_unfinished;
    // Dependants that named this id before it was read.
    if (auto u = unseen.find(id); u != unseen.end()) {
      self->dependants = u->second;
      unseen.erase(u);
    }

    gated.assign(draft.data_deps.begin(), draft.data_deps.end());
    if (options.gate == DepKind::Both) gated.insert(gated.end(), draft.ctrl_deps.begin(), draft.ctrl_deps.end());
    std::sort(gated.begin(), gated.end());
    gated.erase(std::unique(gated.begin(), gated.end()), gated.end());
    uint32_t pending = 0;
    for (uint64_t parent : gated) {
      Entry* p = entries.find(parent);
      if (!p) {
        append_edge(unseen[parent], id);
        ++pending;
      } else if (p->state != State::Done) {
        append_edge(p->dependants, id);
        ++pending;
      }
    }
    self->pending = pending;
    if (pending == 0) make_ready(id, *self);
    return true;
  }

  void end_of_file() {
    eof = true;
    // Whatever is still unseen is not in the file: report, then release (or refuse).
    std::vector<std::pair<uint64_t, EdgeList>> missing(unseen.begin(), unseen.end());
    std::sort(missing.begin(), missing.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    unseen.clear();
    for (const auto& [parent, list] : missing) {
      for (int32_t x = list.first; x != kNoEdge; x = edges[x].next) {
        ++dangling_count;
        if (dangling.size() < kMaxDanglingKept) dangling.push_back({edges[x].dependant, parent});
      }
    }
    if (options.dangling_is_error && dangling_count)
      throw Error(reader->name() + ": " + std::to_string(dangling_count) + " dependencies name nodes that are not in " +
                  "the file (node " + std::to_string(dangling[0].node) + " depends on " +
                  std::to_string(dangling[0].missing) + ")");
    for (const auto& [parent, list] : missing) {
      for (int32_t x = list.first; x != kNoEdge; x = edges[x].next) satisfy(edges[x].dependant);
      free_edges(list.first);
    }
  }

  // Reads until the window is full and something is issuable (or the file ends).
  void fill() {
    while (!eof && (loaded_unfinished < options.window || ready.empty())) read_one();
  }

  Block& block_of(uint64_t id, const Entry& e) const {
    if (e.state == State::Done || e.block == kReleased || !blocks[e.block])
      throw Error(reader->name() + ": node " + std::to_string(id) + " is done; its data was released");
    return *blocks[e.block];
  }
};

Feeder::Feeder(std::unique_ptr<ByteSource> in, const FeederOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (impl_->options.window == 0) impl_->options.window = 1;
  if (!in->compressed()) impl_->first_block_hint = in->raw_size() / 128;
  impl_->reader = std::make_unique<EtReader>(std::move(in), options.read);
  impl_->reader->read_metadata(impl_->metadata);
  impl_->fill();
}

Feeder::Feeder(const std::string& path, const FeederOptions& options)
    : Feeder(open_input(path, options.read.input), options) {}

Feeder::~Feeder() = default;

std::optional<uint64_t> Feeder::take_next() {
  Impl& m = *impl_;
  if (m.ready.empty()) m.fill();
  if (m.ready.empty()) return std::nullopt;
  uint64_t id = m.ready.top();
  m.ready.pop();
  m.entry(id).state = State::Taken;
  ++m.taken;
  return id;
}

std::vector<uint64_t> Feeder::take_all() {
  std::vector<uint64_t> out;
  take_all(out);
  return out;
}

void Feeder::take_all(std::vector<uint64_t>& out) {
  out.clear();
  Impl& m = *impl_;
  if (m.ready.empty()) m.fill();
  while (!m.ready.empty()) {
    uint64_t id = m.ready.top();
    m.ready.pop();
    m.entry(id).state = State::Taken;
    ++m.taken;
    out.push_back(id);
  }
}

void Feeder::mark_done(uint64_t id) {
  Impl& m = *impl_;
  Entry& e = m.entry(id);
  if (e.state != State::Taken)
    throw Error(m.reader->name() + ": node " + std::to_string(id) + " was marked done without being taken");
  e.state = State::Done;
  --m.taken;
  ++m.done;
  --m.loaded_unfinished;
  int32_t first = e.dependants.first;
  e.dependants = {};
  Impl::Block& b = *m.blocks[e.block];
  // A full block whose nodes are all done is freed (the block being filled stays).
  if (--b.unfinished == 0 && (e.block + 1 < m.blocks.size() || m.eof)) m.blocks[e.block].reset();
  e.block = kReleased;
  for (int32_t x = first; x != kNoEdge; x = m.edges[x].next) m.satisfy(m.edges[x].dependant);
  m.free_edges(first);
  if (m.loaded_unfinished < m.options.window) m.fill();
}

void Feeder::untake(uint64_t id) {
  Impl& m = *impl_;
  Entry& e = m.entry(id);
  if (e.state != State::Taken)
    throw Error(m.reader->name() + ": node " + std::to_string(id) + " was given back without being taken");
  --m.taken;
  m.make_ready(id, e);
}

FeederNode Feeder::node(uint64_t id) const {
  const Entry& e = impl_->entry(id);
  Impl::Block& b = impl_->block_of(id, e);
  b.attr_ids.resolve(b.trace);
  return {&b.trace, e.position, &b.attr_ids};
}

std::vector<uint64_t> Feeder::dependants(uint64_t id) const {
  std::vector<uint64_t> out;
  for (int32_t x = impl_->entry(id).dependants.first; x != kNoEdge; x = impl_->edges[x].next)
    out.push_back(impl_->edges[x].dependant);
  return out;
}

bool Feeder::finished() const { return impl_->eof && impl_->done == impl_->read; }

bool Feeder::stalled() const {
  const Impl& m = *impl_;
  return m.eof && m.ready.empty() && m.taken == 0 && m.done < m.read;
}

std::string Feeder::stall_report() const {
  const Impl& m = *impl_;
  if (!stalled()) return "";
  // Walk from the smallest waiting id along not-done dependencies until a node repeats.
  uint64_t start = UINT64_MAX;
  m.entries.for_each([&](uint64_t id, const Entry& e) {
    if (e.state == State::Waiting) start = std::min(start, id);
  });
  std::vector<uint64_t> path;
  std::unordered_map<uint64_t, size_t> at;
  uint64_t cur = start;
  while (at.emplace(cur, path.size()).second) {
    path.push_back(cur);
    const Entry& e = m.entry(cur);
    FeederNode n(&m.block_of(cur, e).trace, e.position);
    std::optional<uint64_t> next;
    auto consider = [&](std::span<const uint64_t> deps) {
      for (uint64_t d : deps)
        if (!next)
          if (const Entry* p = m.entries.find(d); p && p->state != State::Done) next = d;
    };
    consider(n.data_deps());
    if (m.options.gate == DepKind::Both) consider(n.ctrl_deps());
    if (!next) break;
    cur = *next;
  }
  std::string cycle;
  for (size_t k = at.count(cur) ? at[cur] : 0; k < path.size(); ++k) cycle += std::to_string(path[k]) + " -> ";
  cycle += std::to_string(cur);
  return m.reader->name() + ": " + std::to_string(m.read - m.done) +
         " nodes can never run: they wait on each other (node " + cycle + ", each waiting for the next)";
}

const std::vector<Feeder::Dangling>& Feeder::dangling() const { return impl_->dangling; }
uint64_t Feeder::dangling_count() const { return impl_->dangling_count; }
uint64_t Feeder::nodes_read() const { return impl_->read; }
uint64_t Feeder::nodes_done() const { return impl_->done; }
uint64_t Feeder::in_flight() const { return impl_->taken; }
bool Feeder::fully_read() const { return impl_->eof; }
const Trace& Feeder::metadata() const { return impl_->metadata; }
const std::string& Feeder::name() const { return impl_->reader->name(); }

}  // namespace chakra
