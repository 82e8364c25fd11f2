#include "chakra/astra/text_workload.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra {
namespace {

constexpr std::string_view kReferenceTypes[] = {
    "MICRO", "DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"};
constexpr std::string_view kExtendedTypes[] = {"HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                               "HYBRID_CUSTOMIZED", "DISTRIBUTED_INFERENCE"};
// Per-layer tokens of HYBRID_CUSTOMIZED files (ASTRA-sim 1.0 accepts any parallelism name).
constexpr std::string_view kLayerParallelisms[] = {"DATA",
                                                   "MODEL",
                                                   "HYBRID_DATA_MODEL",
                                                   "HYBRID_MODEL_DATA",
                                                   "HYBRID_TRANSFORMER",
                                                   "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                                   "HYBRID_DLRM",
                                                   "HYBRID_DLRM_ENHANCED",
                                                   "MICRO",
                                                   "DISTRIBUTED_INFERENCE",
                                                   "HYBRID_CUSTOMIZED"};

template <size_t N>
bool one_of(std::string_view s, const std::string_view (&set)[N]) {
  return std::find(std::begin(set), std::end(set), s) != std::end(set);
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  while (i < line.size()) {
    while (i < line.size() && ws(line[i])) ++i;
    size_t b = i;
    while (i < line.size() && !ws(line[i])) ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

// Python's universal newlines, as the reference reads the file in text mode.
std::string normalise_newlines(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

class Parser {
 public:
  Parser(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(uint32_t line, const std::string& what) const {
    throw Error(source_ + ":" + std::to_string(line) + ": " + what);
  }

  int64_t integer(std::string_view tok, uint32_t line, std::string_view what) const {
    int64_t v = 0;
    std::string_view t = tok;
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || t.empty())
      fail(line, std::string(what) + " is not an integer: " + quoted_excerpt(tok));
    return v;
  }
  uint64_t count(std::string_view tok, uint32_t line, std::string_view what) const {
    int64_t v = integer(tok, line, what);
    if (v < 0) fail(line, std::string(what) + " is negative: " + std::string(tok));
    return static_cast<uint64_t>(v);
  }

 private:
  const std::string& source_;
};

}  // namespace

bool is_reference_text_type(std::string_view type) { return one_of(type, kReferenceTypes); }

TextWorkload parse_text_workload(std::string text, const std::string& source) {
  Parser p(source);
  TextWorkload w;
  w.text = normalise_newlines(std::move(text));
  std::string_view all = w.text;
  const Split pieces(all, '\n');
  std::vector<std::string_view> lines(pieces.begin(), pieces.end());
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // the final newline ends a line
  if (lines.empty() || split_ws(lines[0]).empty()) p.fail(1, "empty file: expected the parallelism type on line 1");

  std::vector<std::string_view> head = split_ws(lines[0]);
  w.type = std::string(head[0]);
  bool reference = is_reference_text_type(w.type);
  if (!reference && !one_of(w.type, kExtendedTypes)) {
    std::string known;
    for (auto t : kReferenceTypes) known += std::string(known.empty() ? "" : ", ") + std::string(t);
    for (auto t : kExtendedTypes) known += ", " + std::string(t);
    if (w.type == "DATA_REORDER")
      p.fail(1,
             "parallelism type DATA_REORDER is not supported: no ASTRA-sim release defines "
             "its training loop (known types: " +
                 known + ")");
    p.fail(1, "unknown parallelism type " + quoted_excerpt(w.type) + " (known types: " + known + ")");
  }
  if (w.type == "HYBRID_DLRM" || w.type == "HYBRID_DLRM_ENHANCED") {
    if (head.size() < 2) p.fail(1, w.type + " needs the last bottom-MLP layer index after the type");
    w.last_bottom_layer = p.integer(head[1], 1, "last bottom layer");
  } else if (w.type.rfind("HYBRID_TRANSFORMER", 0) == 0) {
    // "model_parallel_NPU_group: G [checkpoints: N l1..lN checkpoint_initiates: M l1..lM]"
    for (size_t i = 1; i < head.size(); ++i) {
      std::string_view key = head[i];
      auto need = [&](size_t k) {
        if (i + k >= head.size()) p.fail(1, "missing value after " + quoted_excerpt(key));
        return head[i + k];
      };
      if (key == "model_parallel_NPU_group:") {
        w.model_parallel_group = p.integer(need(1), 1, "model_parallel_NPU_group");
        i += 1;
      } else if (key == "checkpoints:" || key == "checkpoint_initiates:") {
        uint64_t n = p.count(need(1), 1, key.substr(0, key.size() - 1));
        auto& list = key == "checkpoints:" ? w.checkpoints : w.recompute_initiators;
        for (uint64_t k = 0; k < n; ++k) list.push_back(static_cast<uint32_t>(p.count(need(2 + k), 1, "layer index")));
        i += 1 + n;
      } else {
        p.fail(1, "unexpected " + quoted_excerpt(key) + " in the header");
      }
    }
  }

  if (lines.size() < 2 || split_ws(lines[1]).empty()) p.fail(2, "expected the number of layers on line 2");
  w.declared_layers = p.integer(split_ws(lines[1])[0], 2, "the number of layers");

  for (size_t li = 2; li < lines.size(); ++li) {
    uint32_t ln = static_cast<uint32_t>(li + 1);
    std::vector<std::string_view> cols = split_ws(lines[li]);
    if (cols.empty()) continue;  // the reference aborts on blank lines; ASTRA-sim skips them
    if (cols.size() < 12)
      p.fail(ln,
             "a layer needs 12 columns (name, reserved, then compute time, comm type and "
             "comm size for forward, input gradient and weight gradient, then update "
             "time); found " +
                 std::to_string(cols.size()));
    TextLayer layer;
    layer.name = std::string(cols[0]);
    layer.line = ln;
    TextLayer::Phase* phases[] = {&layer.fwd, &layer.ig, &layer.wg};
    const char* labels[] = {"forward", "input-gradient", "weight-gradient"};
    for (int k = 0; k < 3; ++k) {
      phases[k]->compute = p.count(cols[2 + 3 * k], ln, std::string(labels[k]) + " compute time");
      phases[k]->comm = std::string(cols[3 + 3 * k]);
      phases[k]->comm_size = p.count(cols[4 + 3 * k], ln, std::string(labels[k]) + " comm size");
    }
    if (w.type == "HYBRID_CUSTOMIZED") {
      if (cols.size() < 13) p.fail(ln, "HYBRID_CUSTOMIZED layers need their parallelism after the 12 columns");
      layer.parallelism = std::string(cols[12]);
      if (!one_of(cols[12], kLayerParallelisms))
        p.fail(ln, "unknown layer parallelism " + quoted_excerpt(layer.parallelism));
    }
    w.layers.push_back(std::move(layer));
  }
  if (w.layers.empty()) p.fail(static_cast<uint32_t>(lines.size()), "no layers");
  if (w.declared_layers != static_cast<int64_t>(w.layers.size()))
    w.warnings.push_back(source + ": line 2 declares " + std::to_string(w.declared_layers) +
                         " layers but the file has " + std::to_string(w.layers.size()) +
                         (reference ? " (the reference converter uses the declared count in "
                                      "places; so do we, to match its output)"
                                    : ""));
  for (uint32_t l : w.checkpoints)
    if (l >= w.layers.size()) p.fail(1, "checkpoint layer " + std::to_string(l) + " does not exist");
  for (uint32_t l : w.recompute_initiators)
    if (l >= w.layers.size()) p.fail(1, "checkpoint_initiates layer " + std::to_string(l) + " does not exist");
  if (w.type == "HYBRID_DLRM" || w.type == "HYBRID_DLRM_ENHANCED") {
    if (w.last_bottom_layer < 0 || w.last_bottom_layer + 1 >= static_cast<int64_t>(w.layers.size()))
      w.warnings.push_back(source + ": last bottom layer " + std::to_string(w.last_bottom_layer) +
                           " leaves no top layer; the embedding's input-gradient all-to-all is never issued");
  }
  // Collective names: the reference maps anything unknown to ALL_REDUCE; say so.
  for (const TextLayer& l : w.layers)
    for (const TextLayer::Phase* ph : {&l.fwd, &l.ig, &l.wg}) {
      static constexpr std::string_view kKnown[] = {"ALLREDUCE", "ALLTOALL", "ALLGATHER", "REDUCESCATTER", "NONE"};
      if (one_of(ph->comm, kKnown)) continue;
      if (!reference) p.fail(l.line, "unknown collective " + quoted_excerpt(ph->comm));
      w.warnings.push_back(source + ":" + std::to_string(l.line) + ": unknown collective " + quoted_excerpt(ph->comm) +
                           " converted as ALL_REDUCE (as the reference does)");
    }
  return w;
}

// ---------------------------------------------------------------------------------------------
// Graph construction

namespace {

constexpr int64_t kNone = -1;

int64_t comm_type_code(std::string_view s) {
  if (s == "ALLTOALL") return static_cast<int64_t>(CommType::AllToAll);
  if (s == "ALLGATHER") return static_cast<int64_t>(CommType::AllGather);
  if (s == "REDUCESCATTER") return static_cast<int64_t>(CommType::ReduceScatter);
  return static_cast<int64_t>(CommType::AllReduce);  // ALLREDUCE, and the reference's default
}

class Builder {
 public:
  Builder(Trace& t, uint64_t first_id) : t_(t), next_id_(first_id) {
    comm_type_ = t_.intern("comm_type");
    comm_size_ = t_.intern("comm_size");
  }

  int64_t comp(const std::string& layer, std::string_view phase, uint64_t duration,
               std::initializer_list<int64_t> deps) {
    start("COMP_NODE_" + layer + "_" + std::string(phase), NodeType::Comp, deps);
    d_.duration_micros = duration;
    return finish();
  }
  int64_t coll(const std::string& label, const TextLayer::Phase& ph, std::initializer_list<int64_t> deps) {
    start("COMM_COLL_NODE_" + label + "_" + ph.comm, NodeType::CommColl, deps);
    d_.attrs.add_int64(comm_type_, comm_type_code(ph.comm));
    d_.attrs.add_int64(comm_size_, static_cast<int64_t>(ph.comm_size));
    return finish();
  }

 private:
  void start(const std::string& name, NodeType type, std::initializer_list<int64_t> deps) {
    d_.clear();
    d_.id = next_id_++;
    d_.name = t_.intern(name);
    d_.type = static_cast<int32_t>(type);
    for (int64_t dep : deps)
      if (dep != kNone) d_.data_deps.push_back(static_cast<uint64_t>(dep));
  }
  int64_t finish() {
    t_.append(d_);
    return static_cast<int64_t>(d_.id);
  }

  Trace& t_;
  uint64_t next_id_;
  NodeDraft d_;
  StrId comm_type_, comm_size_;
};

// Node ids of one layer, kept across passes (kNone: not created).
struct LayerNodes {
  int64_t fwd = kNone, fwd_comm = kNone, ig = kNone, ig_comm = kNone, wg = kNone, wg_comm = kNone;
};

// ---- the reference converter's graphs ----

void micro(Builder& b, const TextWorkload& w, uint32_t passes) {
  for (uint32_t p = 0; p < passes; ++p)
    for (const TextLayer& l : w.layers) b.coll(l.name, l.wg, {});
}

void data_parallel(Builder& b, const TextWorkload& w, uint32_t passes) {
  const size_t n = w.layers.size();
  std::vector<LayerNodes> s(n);
  for (uint32_t p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i)
      s[i].fwd = b.comp(w.layers[i].name, "FWD", w.layers[i].fwd.compute, {i > 0 ? s[i - 1].fwd : kNone, s[i].wg_comm});
    for (size_t k = 0; k < n; ++k) {
      size_t i = n - 1 - k;
      const TextLayer& l = w.layers[i];
      s[i].wg = b.comp(l.name, "BWD_WG", l.wg.compute, {k == 0 ? s[n - 1].fwd : s[i + 1].ig});
      s[i].wg_comm = b.coll(l.name, l.wg, {s[i].wg});
      if (k != n - 1) s[i].ig = b.comp(l.name, "BWD_IG", l.ig.compute, {s[i].wg});
    }
  }
}

// MODEL and the HYBRID_*_* modes share one loop: forward compute then collective per layer;
// backward input gradient (+ collective except on the reference's "layer 0"), weight gradient.
// MODEL has no weight-gradient collective, and its forward waits on the previous pass's
// weight-gradient compute listed after the previous layer (the hybrids list it first).
enum class ModelLoop { Model, HybridDataModel, HybridModelData };

void model_loop(Builder& b, const TextWorkload& w, uint32_t passes, ModelLoop kind) {
  const size_t n = w.layers.size();
  const int64_t last_k = w.declared_layers - 1;  // the reference's "layer 0" test (see docs)
  const bool hybrid = kind != ModelLoop::Model;
  std::vector<LayerNodes> s(n);
  for (uint32_t p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      const TextLayer& l = w.layers[i];
      int64_t prev_layer = i > 0 ? s[i - 1].fwd_comm : kNone;
      s[i].fwd = hybrid ? b.comp(l.name, "FWD", l.fwd.compute, {s[i].wg_comm, prev_layer})
                        : b.comp(l.name, "FWD", l.fwd.compute, {prev_layer, s[i].wg});
      s[i].fwd_comm = b.coll(l.name, l.fwd, {s[i].fwd});
    }
    for (size_t k = 0; k < n; ++k) {
      size_t i = n - 1 - k;
      const TextLayer& l = w.layers[i];
      if (k == 0)
        s[i].ig = b.comp(l.name, "BWD_IG", l.ig.compute, {s[n - 1].fwd_comm});
      else
        s[i].ig = b.comp(l.name, "BWD_IG", l.ig.compute, {s[i + 1].wg, s[i + 1].ig_comm});
      if (static_cast<int64_t>(k) != last_k)
        s[i].ig_comm = b.coll(kind == ModelLoop::HybridDataModel ? l.name + "_IG_COMM_" : l.name, l.ig, {s[i].ig});
      s[i].wg = b.comp(l.name, "BWD_WG", l.wg.compute, {s[i].ig});
      if (hybrid) s[i].wg_comm = b.coll(l.name, l.wg, {s[i].wg});
    }
  }
}

void hybrid_dlrm(Builder& b, const TextWorkload& w, uint32_t passes) {
  const size_t n = w.layers.size();
  const int64_t bottom = w.last_bottom_layer;
  std::vector<LayerNodes> s(n);
  for (uint32_t p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      const TextLayer& l = w.layers[i];
      int64_t prev_pass = s[i].wg_comm != kNone ? s[i].wg_comm : s[i].wg;
      s[i].fwd =
          b.comp(l.name, "FWD", l.fwd.compute,
                 {prev_pass, i > 0 ? s[i - 1].fwd : kNone, static_cast<int64_t>(i) == bottom ? s[0].fwd_comm : kNone});
      if (l.fwd.comm == "ALLTOALL") s[i].fwd_comm = b.coll(l.name, l.fwd, {s[i].fwd});
    }
    for (size_t k = 0; k < n; ++k) {
      size_t i = n - 1 - k;
      const TextLayer& l = w.layers[i];
      if (k == 0)
        s[i].wg = b.comp(l.name, "BWD_WG", l.wg.compute, {s[n - 1].fwd});
      else
        s[i].wg = b.comp(l.name, "BWD_WG", l.wg.compute, {s[i + 1].ig, s[i].ig_comm});
      if (l.wg.comm != "NONE") s[i].wg_comm = b.coll(l.name, l.wg, {s[i].wg});
      if (k != n - 1) s[i].ig = b.comp(l.name, "BWD_IG", l.ig.compute, {s[i].wg});
      if (static_cast<int64_t>(i) == bottom + 1) s[0].ig_comm = b.coll(w.layers[0].name, w.layers[0].ig, {s[i].ig});
    }
  }
}

// ---- ASTRA-sim 1.0's loops for the types the reference rejects (core/docs/text-workloads.md) ----

// Dependencies the next step waits for: at most a compute node and a collective.
struct Tail {
  int64_t a = kNone, b = kNone;
};

class ExtendedLoop {
 public:
  ExtendedLoop(Builder& b, const TextWorkload& w) : b_(b), w_(w), s_(w.layers.size()) {}

  // A collective is issued only when the file names one (ASTRA-sim skips NONE).
  int64_t comm(const TextLayer& l, std::string_view phase, const TextLayer::Phase& ph, int64_t dep) {
    if (ph.comm == "NONE") return kNone;
    return b_.coll(l.name + "_" + std::string(phase), ph, {dep});
  }

  // Forward of layer i: compute, then the blocking forward collective.
  void forward(size_t i, std::string_view label, int64_t wait_wg_comm) {
    const TextLayer& l = w_.layers[i];
    int64_t f = b_.comp(l.name, label, l.fwd.compute, {wait_wg_comm, tail_.a, tail_.b});
    int64_t c = comm(l, label, l.fwd, f);
    if (label == "FWD") s_[i].fwd = f, s_[i].fwd_comm = c;
    tail_ = {c != kNone ? c : f, kNone};
  }

  void inference(uint32_t passes) {
    for (uint32_t p = 0; p < passes; ++p)
      for (size_t i = 0; i < w_.layers.size(); ++i) forward(i, "FWD", kNone);
  }

  // Forward, then per layer from the last: input gradient (+ its collective), weight gradient
  // (+ its collective). The next layer's input gradient waits for this layer's weight-gradient
  // compute and input-gradient collective; the next pass's forward of a layer waits for its
  // weight-gradient collective.
  void training(uint32_t passes, bool ig_comm_on_layer0, bool recompute) {
    const size_t n = w_.layers.size();
    for (uint32_t p = 0; p < passes; ++p) {
      for (size_t i = 0; i < n; ++i) forward(i, "FWD", s_[i].wg_comm);
      for (size_t k = 0; k < n; ++k) {
        size_t i = n - 1 - k;
        const TextLayer& l = w_.layers[i];
        if (recompute && initiates(i))
          for (size_t r = checkpoint_below(i); r < i; ++r) forward(r, "FWD_RECOMPUTE", kNone);
        s_[i].ig = b_.comp(l.name, "BWD_IG", l.ig.compute, {tail_.a, tail_.b});
        s_[i].ig_comm = i > 0 || ig_comm_on_layer0 ? comm(l, "IG", l.ig, s_[i].ig) : kNone;
        s_[i].wg = b_.comp(l.name, "BWD_WG", l.wg.compute, {s_[i].ig});
        s_[i].wg_comm = comm(l, "WG", l.wg, s_[i].wg);
        tail_ = {s_[i].wg, s_[i].ig_comm};
      }
    }
  }

 private:
  bool initiates(size_t i) const {
    const auto& v = w_.recompute_initiators;
    return std::find(v.begin(), v.end(), i) != v.end();
  }
  // Nearest checkpoint at or below layer i (layer 0 when there is none).
  size_t checkpoint_below(size_t i) const {
    size_t best = 0;
    for (uint32_t c : w_.checkpoints)
      if (c <= i && c > best) best = c;
    return best;
  }

  Builder& b_;
  const TextWorkload& w_;
  std::vector<LayerNodes> s_;
  Tail tail_;
};

}  // namespace

Trace text_workload_trace(const TextWorkload& w, uint32_t num_passes, uint64_t first_id) {
  Trace t;
  AttrDrafts meta;
  meta.add_string(t.intern("schema"), t.intern("1.0.2-chakra.1.0.0"));
  meta.add_string(t.intern("input_file"), t.intern(w.text));
  t.set_metadata(StringPool::kEmpty, meta);

  Builder b(t, first_id);
  const std::string& type = w.type;
  if (type == "MICRO") {
    micro(b, w, num_passes);
  } else if (type == "DATA") {
    data_parallel(b, w, num_passes);
  } else if (type == "MODEL") {
    model_loop(b, w, num_passes, ModelLoop::Model);
  } else if (type == "HYBRID_DATA_MODEL" || type == "HYBRID_MODEL_DATA") {
    model_loop(b, w, num_passes, type == "HYBRID_DATA_MODEL" ? ModelLoop::HybridDataModel : ModelLoop::HybridModelData);
  } else if (type == "HYBRID_DLRM" || type == "HYBRID_DLRM_ENHANCED") {
    hybrid_dlrm(b, w, num_passes);
  } else {
    ExtendedLoop loop(b, w);
    if (type == "DISTRIBUTED_INFERENCE")
      loop.inference(num_passes);
    else
      loop.training(num_passes, /*ig_comm_on_layer0=*/type != "HYBRID_CUSTOMIZED",
                    /*recompute=*/type == "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  }
  return t;
}

}  // namespace chakra
