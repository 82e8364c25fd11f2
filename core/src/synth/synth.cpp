// chakra synth: per-stage graphs of one LLM training step, instantiated per rank.
//
// The graphs follow STAGE's model (core/docs/synth.md): each block's forward and backward
// tensors, the collectives its sharding implies (tensor parallel with sequence parallel
// all-gathers before and reduce-scatters after attention and FFN; without sequence parallel
// all-reduces; context-parallel K/V gathers; expert-parallel all-to-alls; FSDP weight gathers
// and gradient reduce-scatters; data-parallel gradient all-reduces), pipeline send/recv, and the
// weight update. Zero-cost reshapes are not emitted, so a skipped collective (a degree-1
// dimension) links its consumer straight to its producer.
#include "chakra/synth/synth.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "synth/synth_parts.h"

namespace chakra::synth {

extern const char* const kPresetsJson;  // assets/synth/presets.json, compiled in

namespace {

constexpr uint64_t kMaxNodesPerRank = 50'000'000;

void check_divisible(uint64_t a, const std::string& what_a, uint64_t b, const std::string& what_b) {
  if (b == 0 || a % b)
    throw Error(what_a + " (" + std::to_string(a) + ") is not divisible by " + what_b + " (" + std::to_string(b) + ")");
}

void check_options(const SynthOptions& o) {
  const ModelShape& s = o.shape;
  const Parallelism& p = o.par;
  auto positive = [](uint64_t v, const char* name) {
    if (v == 0) throw Error(std::string(name) + " must be at least 1");
  };
  positive(s.layers, "--layers");
  positive(s.hidden, "--hidden");
  positive(s.ffn, "--ffn");
  positive(s.heads, "--heads");
  positive(s.vocab, "--vocab");
  positive(s.seq, "--seq");
  positive(s.batch, "--batch");
  positive(s.micro_batches, "--micro-batches");
  for (auto [v, name] : {std::pair{p.dp, "--dp"}, {p.tp, "--tp"}, {p.pp, "--pp"}, {p.sp, "--sp"}, {p.ep, "--ep"}})
    positive(v, name);
  positive(o.dtype_bytes, "--dtype-bytes");
  const uint64_t ranks = p.dp * p.tp * p.pp * p.sp * (o.model == ModelKind::Moe ? p.ep : 1);
  if (p.dp > (1u << 24) || p.tp > (1u << 24) || p.pp > (1u << 24) || p.sp > (1u << 24) || p.ep > (1u << 24) ||
      ranks > (uint64_t{1} << 24))
    throw Error("synth: at most 16,777,216 ranks (dp × tp × pp × sp × ep)");
  if (o.model != ModelKind::Moe && p.ep != 1)
    throw Error("--ep applies to --model moe only (STAGE folds it into --tp for dense models; use --tp)");
  if (p.pp > s.layers)
    throw Error("--pp (" + std::to_string(p.pp) + ") exceeds --layers (" + std::to_string(s.layers) + ")");
  if (s.micro_batches > 1u << 20) throw Error("--micro-batches: at most 1,048,576");
  check_divisible(s.batch, "--batch", s.micro_batches * p.dp, "--micro-batches × --dp");
  if (o.step != Step::Train) {
    const char* step = o.step == Step::Prefill ? "--step prefill" : "--step decode";
    if (p.fsdp) throw Error(std::string("--fsdp shards weights for training; ") + step + " holds them whole");
    if (o.recompute) throw Error(std::string("--recompute applies to training, not ") + step);
    if (o.grad_sync_per_micro_batch) throw Error(std::string("gradients are synchronised in training, not ") + step);
  }
  if (o.step == Step::Decode) {
    if (p.sp != 1)
      throw Error("--sp splits a prompt's tokens; --step decode has one new token per sequence (use --sp 1)");
    const uint64_t sequences = s.batch / s.micro_batches / p.dp;
    if (p.sequence_parallel && sequences % p.tp)
      throw Error("--step decode with sequence parallel splits a micro-batch's new tokens over --tp: " +
                  std::to_string(sequences) + " sequences per micro-batch and --dp rank are not divisible by --tp (" +
                  std::to_string(p.tp) + "); use --no-sequence-parallel or a larger --batch");
  } else {
    check_divisible(s.seq, "--seq", p.sp * (p.sequence_parallel ? p.tp : 1),
                    p.sequence_parallel ? "--sp × --tp" : "--sp");
  }
  check_divisible(s.hidden, "--hidden", s.heads, "--heads");
  check_divisible(s.heads, "--heads", p.tp, "--tp");
  const uint64_t kv = s.kv_heads ? s.kv_heads : s.heads;
  check_divisible(kv, "--kv-heads", p.tp, "--tp");
  check_divisible(s.heads, "--heads", kv, "--kv-heads");
  check_divisible(s.ffn, "--ffn", p.tp, "--tp");
  if (o.model == ModelKind::Moe) {
    if (!p.sequence_parallel)
      throw Error("--model moe needs sequence parallel (drop --no-sequence-parallel), as STAGE's MoE sheets");
    positive(s.experts, "--experts");
    positive(s.top_k, "--top-k");
    if (s.top_k > s.experts) throw Error("--top-k exceeds --experts");
    check_divisible(s.experts, "--experts", p.ep, "--ep");
    check_divisible(s.hidden, "--hidden", p.ep, "--ep");
    const uint64_t tokens = micro_batch_tokens(o);
    check_divisible(tokens * s.top_k, "tokens × --top-k per rank",
                    s.experts * p.tp * (o.stage_expert_tokens ? p.ep : 1), "--experts × --tp");
    check_divisible(tokens / p.tp * s.top_k * s.hidden, "routed elements per rank", p.ep, "--ep");
  }
  if (p.fsdp) check_divisible(block_weight_elements(o), "a block's weights per TP rank", p.dp, "--dp");
  // Each rank's trace is held in memory while written: bound it before building anything.
  const uint64_t per_block = o.model == ModelKind::Moe ? 70 + 30 * (s.experts / p.ep) : 60;
  const long double nodes = static_cast<long double>(s.micro_batches) * ((s.layers + p.pp - 1) / p.pp) * per_block;
  if (nodes > kMaxNodesPerRank)
    throw Error("synth: about " + std::to_string(static_cast<uint64_t>(nodes)) +
                " nodes per rank (--micro-batches × layers per stage × nodes per block); at most " +
                std::to_string(kMaxNodesPerRank) + ": use fewer micro-batches or more pipeline stages");
}

const char* step_name(Step step) {
  return step == Step::Train ? "train" : step == Step::Prefill ? "prefill" : "decode";
}

std::string describe(const SynthOptions& o) {
  const ModelShape& s = o.shape;
  const Parallelism& p = o.par;
  const char* model = o.model == ModelKind::Gpt ? "gpt" : o.model == ModelKind::Llama ? "llama" : "moe";
  std::string d = std::string("chakra synth --model ") + model + " --layers " + std::to_string(s.layers) +
                  " --hidden " + std::to_string(s.hidden) + " --ffn " + std::to_string(s.ffn) + " --heads " +
                  std::to_string(s.heads) + " --kv-heads " + std::to_string(s.kv_heads ? s.kv_heads : s.heads) +
                  " --vocab " + std::to_string(s.vocab) + " --seq " + std::to_string(s.seq) + " --batch " +
                  std::to_string(s.batch) + " --micro-batches " + std::to_string(s.micro_batches);
  if (o.model == ModelKind::Moe) d += " --experts " + std::to_string(s.experts) + " --top-k " + std::to_string(s.top_k);
  d += " --dp " + std::to_string(p.dp) + " --tp " + std::to_string(p.tp) + " --pp " + std::to_string(p.pp) + " --sp " +
       std::to_string(p.sp) + " --ep " + std::to_string(p.ep);
  if (p.fsdp) d += " --fsdp";
  if (!p.sequence_parallel) d += " --no-sequence-parallel";
  if (o.recompute) d += " --recompute";
  if (o.step != Step::Train) d += std::string(" --step ") + step_name(o.step);
  if (p.rank_order != Parallelism{}.rank_order) d += " --rank-order " + rank_order_name(p.rank_order);
  d += std::string(" --schedule ") + (o.schedule == Schedule::None    ? "none"
                                      : o.schedule == Schedule::GPipe ? "gpipe"
                                                                      : "1f1b");
  if (o.attention == Attention::Full) d += " --attention full";
  if (o.stage_units)
    d += " --stage-units";
  else
    d += " --dtype-bytes " + std::to_string(o.dtype_bytes);
  if (o.grad_sync_per_micro_batch) d += " --grad-sync-per-micro-batch";
  if (o.stage_expert_tokens) d += " --stage-expert-tokens";
  return d;
}

}  // namespace

std::array<Dim, 4> parse_rank_order(std::string_view text) {
  std::array<Dim, 4> order{};
  bool seen[4] = {false, false, false, false};
  size_t n = 0, begin = 0;
  auto fail = [&] {
    return Error("rank order '" + std::string(text) + "': name dp, tp, sp (or cp) and ep once each, fastest first");
  };
  while (begin <= text.size()) {
    const size_t end = std::min(text.find_first_of(",-", begin), text.size());
    const std::string_view name = text.substr(begin, end - begin);
    const int d = name == "dp" ? 0 : name == "tp" ? 1 : name == "sp" || name == "cp" ? 2 : name == "ep" ? 3 : -1;
    if (d < 0 || seen[d] || n == 4) throw fail();
    seen[d] = true;
    order[n++] = Dim(d);
    begin = end + 1;
  }
  if (n != 4) throw fail();
  return order;
}

std::string rank_order_name(const std::array<Dim, 4>& order) {
  static constexpr const char* kNames[] = {"dp", "tp", "sp", "ep"};
  std::string s;
  for (Dim d : order) s += (s.empty() ? "" : ",") + std::string(kNames[int(d)]);
  return s;
}

uint64_t micro_batch_tokens(const SynthOptions& o) {
  const ModelShape& s = o.shape;
  const uint64_t sequences = std::max<uint64_t>(1, s.batch / std::max<uint64_t>(1, s.micro_batches * o.par.dp));
  return o.step == Step::Decode ? sequences : sequences * s.seq / std::max<uint64_t>(1, o.par.sp);
}

uint64_t block_weight_elements(const SynthOptions& o) {
  const ModelShape& s = o.shape;
  const uint64_t tp = o.par.tp, D = s.hidden, dh = s.hidden / s.heads, kv = s.kv_heads ? s.kv_heads : s.heads;
  const uint64_t attention = mul(D, (s.heads + 2 * kv) * dh) / tp + mul(D, s.heads * dh) / tp;
  switch (o.model) {
    case ModelKind::Gpt: return attention + 2 * (mul(D, s.ffn) / tp);
    case ModelKind::Llama: return attention + 3 * (mul(D, s.ffn) / tp);
    case ModelKind::Moe:  // router (STAGE's D×top_k, sharded over ep) and the local experts
      return attention + mul(D, s.top_k) / o.par.ep + mul(s.experts / o.par.ep, 2 * (mul(D, s.ffn) / tp));
  }
  return attention;
}

MemoryEstimate memory_estimate(const Workload& w, uint32_t stage) {
  const SynthOptions& o = w.o;
  const ModelShape& s = o.shape;
  const Parallelism& p = o.par;
  const uint64_t P = p.pp, L = s.layers, e = o.dtype_bytes;
  const uint64_t layers = L / P + (stage < L % P ? 1 : 0);
  const bool first = stage == 0, last = stage + 1 == P;
  const uint64_t embedding = mul(s.vocab, s.hidden);
  uint64_t params = mul(layers, block_weight_elements(o)) + (first ? embedding : 0) + (last ? embedding : 0);
  if (p.fsdp) params = div(params, p.dp);
  MemoryEstimate m;
  m.weights = mul(params, e);

  // One layer's kept tensors for one micro-batch (names as in StageBuilder's Dims).
  const uint64_t b = std::max<uint64_t>(1, s.batch / std::max<uint64_t>(1, s.micro_batches * p.dp));
  const uint64_t T = micro_batch_tokens(o), Tout = p.sequence_parallel ? std::max<uint64_t>(1, T / p.tp) : T;
  const uint64_t queries = o.step == Step::Decode ? 1 : s.seq / p.sp;  // per sequence, against seq keys
  const uint64_t dh = s.hidden / s.heads, kv = s.kv_heads ? s.kv_heads : s.heads;
  const uint64_t Hl = std::max<uint64_t>(1, s.heads / p.tp), KVl = std::max<uint64_t>(1, kv / p.tp),
                 Fl = std::max<uint64_t>(1, s.ffn / p.tp);
  uint64_t layer = 4 * Tout * s.hidden + T * (Hl + 2 * KVl) * dh + T * Hl * dh;
  if (o.attention == Attention::Full) layer += 2 * b * Hl * queries * s.seq;  // scores and softmax
  const uint64_t ffn = T * Fl * (o.model == ModelKind::Gpt ? 2 : 4);  // GELU in/out; SwiGLU gate, up, act, product
  layer += o.model == ModelKind::Moe ? ffn * s.top_k : ffn;
  layer *= e;
  const uint64_t logits = last ? mul(2 * e * (o.step == Step::Train ? T : b), s.vocab) : 0;
  if (o.step != Step::Train) {  // every sequence's keys and values for the stage's layers, one layer in flight
    const uint64_t cached = o.step == Step::Decode ? s.seq + 1 : s.seq / p.sp;
    m.kv_cache = mul(mul(layers, s.batch / p.dp), mul(cached, 2 * KVl * dh * e));
    m.activations = layer + logits;
    return m;
  }
  m.gradients = mul(params, e);
  m.optimizer = mul(params, 12);
  const uint64_t per_micro_batch = o.recompute ? mul(layers, e * Tout * s.hidden) : mul(layers, layer);
  const uint64_t in_flight =
      o.schedule == Schedule::OneFOneB ? std::min<uint64_t>(s.micro_batches, P - stage) : s.micro_batches;
  m.activations = mul(per_micro_batch, in_flight) + (o.recompute ? layer : 0) + logits;
  return m;
}

uint64_t peak_memory_bytes(const Workload& w) {
  uint64_t peak = 0;
  for (uint32_t s = 0; s < num_stages(w); ++s) peak = std::max(peak, memory_estimate(w, s).total());
  return peak;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  const nlohmann::json all = nlohmann::json::parse(kPresetsJson);
  for (auto it = all.begin(); it != all.end(); ++it)
    if (it.key()[0] != '_') names.push_back(it.key());
  return names;
}

void apply_preset(std::string_view name, SynthOptions& o) {
  const nlohmann::json all = nlohmann::json::parse(kPresetsJson);
  auto it = all.find(std::string(name));
  if (it == all.end() || name.empty() || name[0] == '_') {
    std::string known;
    for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown preset '" + std::string(name) + "' (known: " + known + ")");
  }
  const nlohmann::json& p = *it;
  const std::string model = p.at("model");
  o.model = model == "gpt" ? ModelKind::Gpt : model == "moe" ? ModelKind::Moe : ModelKind::Llama;
  auto set = [&](const char* key, uint64_t& field) {
    if (p.contains(key)) field = p.at(key).get<uint64_t>();
  };
  set("layers", o.shape.layers);
  set("hidden", o.shape.hidden);
  set("ffn", o.shape.ffn);
  set("heads", o.shape.heads);
  set("kv_heads", o.shape.kv_heads);
  set("vocab", o.shape.vocab);
  set("seq", o.shape.seq);
  set("batch", o.shape.batch);
  set("experts", o.shape.experts);
  set("top_k", o.shape.top_k);
}

std::shared_ptr<const Workload> synthesize(const SynthOptions& options) {
  check_options(options);
  auto w = std::make_shared<Workload>();
  w->o = options;
  const Parallelism& p = options.par;
  w->deg[int(Dim::DP)] = p.dp;
  w->deg[int(Dim::TP)] = p.tp;
  w->deg[int(Dim::CP)] = p.sp;
  w->deg[int(Dim::EP)] = options.model == ModelKind::Moe ? p.ep : 1;
  w->stage_ranks = w->deg[0] * w->deg[1] * w->deg[2] * w->deg[3];
  w->description = describe(options);
  w->stages.resize(p.pp);
  for (uint32_t s = 0; s < p.pp; ++s) build_stage(*w, s, w->stages[s]);
  return w;
}

uint32_t num_ranks(const Workload& w) { return static_cast<uint32_t>(w.stage_ranks * w.o.par.pp); }
uint32_t num_stages(const Workload& w) { return static_cast<uint32_t>(w.stages.size()); }
uint32_t stage_of(const Workload& w, uint32_t rank) { return static_cast<uint32_t>(rank / w.stage_ranks); }
uint32_t stage_nodes(const Workload& w, uint32_t stage) {
  return static_cast<uint32_t>(w.stages.at(stage).nodes.size());
}

uint32_t group_id(const Workload& w, Dim dim, uint32_t rank) {
  uint64_t c[5];
  w.coords(rank, c);
  const uint64_t pp = w.o.par.pp;
  const uint64_t sizes[5] = {w.deg[0], w.deg[1], w.deg[2], w.deg[3], pp};
  uint64_t index = 0;
  for (int k : kGroupOrder)
    if (k != int(dim)) index = index * sizes[k] + c[k];
  return static_cast<uint32_t>(w.first_id(dim) + index);
}

uint32_t num_groups(const Workload& w) {
  uint64_t n = 0;
  for (int d = 0; d < 4; ++d) n += w.groups_of(Dim(d));
  return static_cast<uint32_t>(n);
}

std::vector<uint32_t> group_members(const Workload& w, uint32_t id) {
  for (int d = 3; d >= 0; --d) {
    if (!w.has_groups(Dim(d)) || id < w.first_id(Dim(d))) continue;
    uint64_t index = id - w.first_id(Dim(d));
    if (index >= w.groups_of(Dim(d))) break;
    const uint64_t sizes[5] = {w.deg[0], w.deg[1], w.deg[2], w.deg[3], w.o.par.pp};
    uint64_t c[5] = {0, 0, 0, 0, 0};
    for (int i = 4; i >= 0; --i) {
      int k = kGroupOrder[i];
      if (k == d) continue;
      c[k] = index % sizes[k];
      index /= sizes[k];
    }
    std::vector<uint32_t> members;
    for (c[d] = 0; c[d] < w.deg[d]; ++c[d]) members.push_back(w.rank_of(c));
    return members;
  }
  throw Error("synth: no communicator with id " + std::to_string(id));
}

std::map<std::string, std::vector<int64_t>> comm_groups(const Workload& w) {
  std::map<std::string, std::vector<int64_t>> groups;
  for (uint32_t id = 1; id <= num_groups(w); ++id) {
    std::vector<uint32_t> m = group_members(w, id);
    groups.emplace(std::to_string(id), std::vector<int64_t>(m.begin(), m.end()));
  }
  return groups;
}

void rank_trace(const Workload& w, uint32_t rank, Trace& out) {
  if (rank >= num_ranks(w)) throw Error("synth: rank " + std::to_string(rank) + " out of range");
  const StageGraph& g = w.stages[stage_of(w, rank)];
  out.clear_nodes();
  AttrDrafts meta;
  meta.add_string(out.intern("schema"), out.intern("chakrakit synth"));
  meta.add_string(out.intern("generator"), out.intern(w.description));
  out.set_metadata(out.intern("0.0.4"), meta);
  const StrId num_ops = out.intern("num_ops"), tensor_size = out.intern("tensor_size"), op_type = out.intern("op_type"),
              comm_type = out.intern("comm_type"), comm_size = out.intern("comm_size"), pg_name = out.intern("pg_name"),
              is_cpu_op = out.intern("is_cpu_op"), comm_src = out.intern("comm_src"), comm_dst = out.intern("comm_dst"),
              comm_tag = out.intern("comm_tag");
  StrId ops[std::size(kOpNames)], pg[4];
  for (size_t k = 0; k < std::size(kOpNames); ++k) ops[k] = out.intern(kOpNames[k]);
  for (int d = 0; d < 4; ++d) pg[d] = w.has_groups(Dim(d)) ? out.intern(std::to_string(group_id(w, Dim(d), rank))) : 0;
  const int64_t stride = static_cast<int64_t>(w.stage_ranks);
  NodeDraft n;
  out.reserve(g.nodes.size(), 2, 4);
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const TNode& t = g.nodes[i];
    n.clear();
    n.id = i;
    n.name = out.intern(g.names[t.name]);
    n.type = static_cast<int32_t>(t.type);
    n.data_deps.assign(g.deps.begin() + t.deps_begin, g.deps.begin() + t.deps_end);
    if (t.ctrl) n.ctrl_deps.push_back(t.ctrl - 1);
    AttrDrafts& a = n.attrs;
    switch (t.type) {
      case NodeType::Comp:
        a.add_int64(num_ops, static_cast<int64_t>(t.num_ops));
        a.add_uint64(tensor_size, t.tensor_size);
        a.add_string(op_type, ops[int(t.op)]);
        break;
      case NodeType::CommColl:
        a.add_bool(is_cpu_op, false);
        a.add_int64(comm_type, static_cast<int64_t>(t.comm));
        a.add_int64(comm_size, static_cast<int64_t>(t.comm_size));
        a.add_string(pg_name, pg[int(t.dim)]);
        break;
      default: {  // send / recv
        const int64_t peer = int64_t{rank} + t.peer * stride;
        const bool send = t.type == NodeType::CommSend;
        a.add_bool(is_cpu_op, false);
        a.add_int64(comm_size, static_cast<int64_t>(t.comm_size));
        a.add_int32(comm_src, static_cast<int32_t>(send ? rank : peer));
        a.add_int32(comm_dst, static_cast<int32_t>(send ? peer : rank));
        a.add_int32(comm_tag, static_cast<int32_t>(t.tag));
        break;
      }
    }
    out.append(n);
  }
}

}  // namespace chakra::synth
