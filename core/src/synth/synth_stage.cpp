// One pipeline stage's graph of an LLM step: layers forward (and backward, in training) per
// micro-batch, their collectives and the pipeline's sends and receives (core/docs/synth.md).
#include <algorithm>

#include "synth/synth_parts.h"

namespace chakra::synth {

namespace {

// Builds one stage's graph.
class Builder {
 public:
  Builder(const Workload& w, StageGraph& g) : w_(w), o_(w.o), g_(g) {}

  uint32_t last() const { return static_cast<uint32_t>(g_.nodes.size() - 1); }

  Refs comp(std::string name, Op op, uint64_t ops, uint64_t out, uint64_t in, const std::vector<Refs>& deps) {
    TNode n{};
    n.type = NodeType::Comp;
    n.op = op;
    n.num_ops = op == Op::M && !o_.stage_units ? mul(ops, 2) : ops;
    n.tensor_size = o_.stage_units ? out : mul(out + in, o_.dtype_bytes);
    return add(std::move(name), n, deps);
  }
  // out[m,n] = in1[m,k] · in2[k,n]: m·k·n multiply-adds.
  Refs einsum(std::string name, uint64_t m, uint64_t k, uint64_t n, const std::vector<Refs>& deps) {
    return comp(std::move(name), Op::M, mul(mul(m, k), n), mul(m, n), mul(m, k) + mul(k, n), deps);
  }
  // Element-wise over `n` outputs with `amp` operations each, reading `inputs` tensors of n.
  Refs elementwise(std::string name, Op op, uint64_t amp, uint64_t n, uint64_t inputs, const std::vector<Refs>& deps) {
    return comp(std::move(name), op, mul(amp, n), n, mul(inputs, n), deps);
  }
  // A collective over `dim` with `elems` input elements per rank; none (the consumer depends on
  // the producer directly) when the dimension has degree 1.
  Refs coll(std::string name, CommType type, Dim dim, uint64_t elems, const std::vector<Refs>& deps) {
    if (w_.deg[int(dim)] == 1) return merge(deps);
    TNode n{};
    n.type = NodeType::CommColl;
    n.comm = type;
    n.dim = dim;
    n.comm_size = o_.stage_units ? elems : mul(elems, o_.dtype_bytes);
    return add(std::move(name) + "/" + std::string(comm_type_name(int64_t(type))) + "." + kDimNames[int(dim)], n, deps);
  }
  Refs p2p(std::string name, bool send, int8_t peer, uint32_t tag, uint64_t elems, const std::vector<Refs>& deps) {
    TNode n{};
    n.type = send ? NodeType::CommSend : NodeType::CommRecv;
    n.peer = peer;
    n.tag = tag;
    n.comm_size = o_.stage_units ? elems : mul(elems, o_.dtype_bytes);
    return add(std::move(name) + (send ? "/send" : "/recv"), n, deps);
  }
  void ctrl(uint32_t node, uint32_t after) { g_.nodes[node].ctrl = after + 1; }

  // The union of the lists in first-seen order. Linear: a gradient sync depends on every
  // micro-batch's weight gradients, so lists can be long.
  Refs merge(const std::vector<Refs>& deps) {
    Refs r;
    seen_.resize(g_.nodes.size(), 0);
    ++stamp_;
    for (const Refs& d : deps)
      for (uint32_t x : d)
        if (seen_[x] != stamp_) {
          seen_[x] = stamp_;
          r.push_back(x);
        }
    return r;
  }

 private:
  Refs add(std::string name, TNode n, const std::vector<Refs>& deps) {
    n.name = static_cast<uint32_t>(g_.names.size());
    g_.names.push_back(std::move(name));
    Refs d = merge(deps);
    n.deps_begin = static_cast<uint32_t>(g_.deps.size());
    g_.deps.insert(g_.deps.end(), d.begin(), d.end());
    n.deps_end = static_cast<uint32_t>(g_.deps.size());
    g_.nodes.push_back(n);
    return {last()};
  }

  const Workload& w_;
  const SynthOptions& o_;
  StageGraph& g_;
  std::vector<uint32_t> seen_;  // merge(): node → stamp of the last merge that took it
  uint32_t stamp_ = 0;
};

// Sizes of one micro-batch on one rank.
struct Dims {
  uint64_t b, S, D, F, H, KV, V, E, K, dh, tp, cp, ep;
  uint64_t T;            // tokens inside attention and FFN: b·S/cp, or b when decoding
  uint64_t Tout;         // tokens between them: T/tp with sequence parallel, else T
  uint64_t Hl, KVl, Fl;  // heads, K/V heads and FFN width on one TP rank
  uint64_t qkv() const { return (Hl + 2 * KVl) * dh; }
};

// What a block's forward leaves for its backward.
struct BlockFwd {
  Refs in, norm1, attn, norm2, out;
  Refs xgate, xup, act;  // dense FFN
  Refs yrouter3, y1;     // MoE
  std::vector<Refs> expert_x, expert_gate;
};

class StageBuilder {
 public:
  StageBuilder(const Workload& w, uint32_t stage, StageGraph& g) : o_(w.o), b_(w, g), stage_(stage) {
    const ModelShape& s = o_.shape;
    d_.b = div(s.batch, s.micro_batches * o_.par.dp);
    d_.S = s.seq;
    d_.D = s.hidden;
    d_.F = s.ffn;
    d_.H = s.heads;
    d_.KV = s.kv_heads ? s.kv_heads : s.heads;
    d_.V = s.vocab;
    d_.E = s.experts;
    d_.K = s.top_k;
    d_.dh = div(d_.D, d_.H);
    d_.tp = o_.par.tp;
    d_.cp = o_.par.sp;
    d_.ep = o_.model == ModelKind::Moe ? o_.par.ep : 1;
    d_.T = micro_batch_tokens(o_);
    d_.Tout = o_.par.sequence_parallel ? div(d_.T, d_.tp) : d_.T;
    d_.Hl = div(d_.H, d_.tp);
    d_.KVl = div(d_.KV, d_.tp);
    d_.Fl = div(d_.F, d_.tp);
    const uint64_t P = o_.par.pp, L = s.layers;
    first_layer_ = stage * (L / P) + std::min<uint64_t>(stage, L % P);
    layers_ = L / P + (stage < L % P ? 1 : 0);
  }

  void build() {
    const uint64_t M = o_.shape.micro_batches;
    fwd_.assign(M, {});
    grads_.assign(M, std::vector<Refs>(layers_));
    sync_.assign(layers_, {});
    emb_grads_.clear();
    uint32_t prev_end = 0;
    bool have_prev = false;
    for (auto [backward, mb] : schedule()) {
      auto [start, end] = backward ? backward_unit(mb) : forward_unit(mb);
      if (o_.schedule != Schedule::None && have_prev) b_.ctrl(start, prev_end);
      prev_end = end;
      have_prev = true;
    }
    if (o_.step == Step::Train) update();
  }

 private:
  bool first_stage() const { return stage_ == 0; }
  bool last_stage() const { return stage_ + 1 == o_.par.pp; }
  std::string layer_prefix(uint64_t mb, uint64_t layer) const {
    return "mb" + std::to_string(mb) + ".transformer." + std::to_string(first_layer_ + layer) + ".";
  }
  // Distinct tag per micro-batch, stage boundary and direction, the same on both sides.
  uint32_t tag(uint64_t mb, uint64_t boundary, bool backward) const {
    return static_cast<uint32_t>((mb * (o_.par.pp - 1) + boundary) * 2 + (backward ? 1 : 0));
  }

  // (backward, micro-batch) in this stage's execution order.
  std::vector<std::pair<bool, uint64_t>> schedule() const {
    const uint64_t M = o_.shape.micro_batches;
    std::vector<std::pair<bool, uint64_t>> order;
    if (o_.step != Step::Train) {  // inference: the micro-batches' forwards in turn
      for (uint64_t m = 0; m < M; ++m) order.push_back({false, m});
    } else if (o_.schedule == Schedule::OneFOneB) {
      const uint64_t warmup = std::min<uint64_t>(o_.par.pp - stage_ - 1, M);
      for (uint64_t m = 0; m < warmup; ++m) order.push_back({false, m});
      for (uint64_t m = warmup; m < M; ++m) {
        order.push_back({false, m});
        order.push_back({true, m - warmup});
      }
      for (uint64_t m = M - warmup; m < M; ++m) order.push_back({true, m});
    } else {  // GPipe; also the emission order without a schedule
      for (uint64_t m = 0; m < M; ++m) order.push_back({false, m});
      for (uint64_t m = 0; m < M; ++m) order.push_back({true, m});
    }
    return order;
  }

  // ---- tensor-parallel region boundaries ----
  Refs enter(const std::string& name, const Refs& x) {  // activations into attention/FFN
    if (!o_.par.sequence_parallel) return x;
    return b_.coll(name, CommType::AllGather, Dim::TP, d_.Tout * d_.D, {x});
  }
  Refs leave(const std::string& name, const Refs& y) {  // partial sums out of attention/FFN
    CommType t = o_.par.sequence_parallel ? CommType::ReduceScatter : CommType::AllReduce;
    return b_.coll(name, t, Dim::TP, d_.T * d_.D, {y});
  }

  // ---- FSDP weight gathers (none without FSDP) ----
  Refs gather_weights(const std::string& name) {
    if (!o_.par.fsdp) return {};
    return b_.coll(name, CommType::AllGather, Dim::DP, held_weight_elements(), {});
  }

  std::pair<uint32_t, uint32_t> forward_unit(uint64_t mb) {
    const std::string p = "mb" + std::to_string(mb) + ".";
    Refs x;
    uint32_t start;
    if (first_stage()) {
      x = b_.einsum(p + "in_emb.y", d_.Tout, d_.V, d_.D, {});
    } else {
      x = b_.p2p(p + "stage" + std::to_string(stage_) + ".x", false, -1, tag(mb, stage_ - 1, false), d_.Tout * d_.D,
                 {});
    }
    start = x[0];
    for (uint64_t l = 0; l < layers_; ++l) {
      const std::string lp = layer_prefix(mb, l);
      Refs w = gather_weights(lp + "weights");
      fwd_[mb].push_back(block_forward(lp, x, w, {}));
      x = fwd_[mb].back().out;
    }
    if (last_stage() && o_.step != Step::Train) {  // the next token's logits of each sequence
      Refs logits = b_.einsum(p + "out_emb.y", o_.step == Step::Decode ? d_.Tout : d_.b, d_.D, d_.V, {x});
      return {start, logits[0]};
    }
    if (last_stage()) {
      Refs logits = b_.einsum(p + "out_emb.y", d_.Tout, d_.D, d_.V, {x});
      // STAGE's loss sheet: 5 operations per element of a hidden-sized tensor.
      Refs loss = b_.elementwise(p + "loss.loss", Op::E, 5, d_.Tout * d_.D, 1, {logits});
      last_x_.push_back(x);
      loss_node_.push_back(loss[0]);
      return {start, loss[0]};
    }
    Refs s = b_.p2p(p + "stage" + std::to_string(stage_) + ".y", true, +1, tag(mb, stage_, false), d_.Tout * d_.D, {x});
    return {start, s[0]};
  }

  std::pair<uint32_t, uint32_t> backward_unit(uint64_t mb) {
    const std::string p = "mb" + std::to_string(mb) + ".";
    Refs g;
    uint32_t start;
    if (last_stage()) {
      const Refs& x = last_x_[mb];
      Refs dy = b_.elementwise(p + "loss.dy", Op::E, 5, d_.Tout * d_.D, 1, {Refs{loss_node_[mb]}});
      start = dy[0];
      emb_grads_.push_back({true, b_.einsum(p + "out_emb.dw", d_.D, d_.Tout, d_.V, {x, dy})});
      g = b_.einsum(p + "out_emb.dx", d_.Tout, d_.V, d_.D, {dy});
    } else {
      g = b_.p2p(p + "stage" + std::to_string(stage_) + ".dy", false, +1, tag(mb, stage_, true), d_.Tout * d_.D, {});
      start = g[0];
    }
    const bool last_mb = mb + 1 == o_.shape.micro_batches;
    for (uint64_t l = layers_; l-- > 0;) {
      const std::string lp = layer_prefix(mb, l);
      Refs w = gather_weights(lp + "weights_backward");
      const BlockFwd* f = &fwd_[mb][l];
      BlockFwd again;
      if (o_.recompute) {  // the forward again, started by the gradient's arrival, on the gathered weights
        again = block_forward(lp + "recompute.", f->in, w, g);
        f = &again;
      }
      g = block_backward(lp, *f, g, w, grads_[mb][l]);
      if (o_.grad_sync_per_micro_batch) {
        sync_[l].push_back(sync_block(mb, l, grads_[mb][l]));
      } else if (last_mb) {
        std::vector<Refs> all;
        for (uint64_t m = 0; m < o_.shape.micro_batches; ++m) all.push_back(grads_[m][l]);
        sync_[l].push_back(sync_block(mb, l, b_.merge(all)));
      }
    }
    if (first_stage()) {
      emb_grads_.push_back({false, b_.einsum(p + "in_emb.dw", d_.V, d_.Tout, d_.D, {g})});
      Refs dx = b_.einsum(p + "in_emb.dx", d_.Tout, d_.D, d_.V, {g});
      return {start, dx[0]};
    }
    Refs s =
        b_.p2p(p + "stage" + std::to_string(stage_) + ".dx", true, -1, tag(mb, stage_ - 1, true), d_.Tout * d_.D, {g});
    return {start, s[0]};
  }

  // Gradient synchronisation of one block: reduce-scatter (FSDP) or all-reduce over dp, then
  // all-reduce over cp, whose ranks also hold partial weight gradients.
  Refs sync_block(uint64_t mb, uint64_t l, const Refs& grads) {
    const std::string name = "mb" + std::to_string(mb) + ".transformer." + std::to_string(first_layer_ + l) + ".grad";
    Refs r = b_.coll(name, o_.par.fsdp ? CommType::ReduceScatter : CommType::AllReduce, Dim::DP,
                     block_weight_elements(o_), {grads});
    return b_.coll(name, CommType::AllReduce, Dim::CP, held_weight_elements(), {r});
  }

  // A block's weights (and synchronised gradients) this rank keeps: a dp shard with FSDP.
  uint64_t held_weight_elements() const {
    return o_.par.fsdp ? div(block_weight_elements(o_), o_.par.dp) : block_weight_elements(o_);
  }

  // Optimizer step: per block, the synchronised gradients merged and added to the weights;
  // per embedding, the micro-batches' gradients merged, all-reduced and added.
  void update() {
    const uint64_t flat = held_weight_elements();
    for (uint64_t l = 0; l < layers_; ++l) {
      const std::string lp = "transformer." + std::to_string(first_layer_ + l) + ".";
      Refs merged = b_.comp(lp + "grad.merge", Op::Custom, flat, flat, flat * sync_[l].size(), {b_.merge(sync_[l])});
      b_.comp(lp + "weights.update", Op::A, flat, flat, 2 * flat, {merged});
    }
    for (bool out : {false, true}) {
      std::vector<Refs> dws;
      for (const auto& [is_out, dw] : emb_grads_)
        if (is_out == out) dws.push_back(dw);
      if (dws.empty()) continue;
      const std::string name = out ? "out_emb." : "in_emb.";
      const uint64_t n = d_.V * d_.D;
      Refs merged = b_.comp(name + "grad.merge", Op::Custom, n, n, n * dws.size(), {b_.merge(dws)});
      Refs r = b_.coll(name + "grad", CommType::AllReduce, Dim::DP, n, {merged});
      // With sequence parallel each TP rank saw a slice of the tokens: partial gradients.
      if (o_.par.sequence_parallel) r = b_.coll(name + "grad", CommType::AllReduce, Dim::TP, n, {r});
      r = b_.coll(name + "grad", CommType::AllReduce, Dim::CP, n, {r});
      b_.comp(name + "weights.update", Op::A, n, n, 2 * n, {r});
    }
  }

  // ---- one transformer block ----
  BlockFwd block_forward(const std::string& p, const Refs& x, const Refs& w, const Refs& after) {
    const Dims& d = d_;
    BlockFwd f;
    f.in = x;
    f.norm1 = b_.elementwise(p + "input_norm.y", Op::E, 5, d.Tout * d.D, 1, {x, after});
    Refs xg = enter(p + "mha.x", f.norm1);
    Refs qkv = b_.einsum(p + "mha.qkv", d.T, d.D, d.qkv(), {xg, w});
    Refs q = b_.elementwise(p + "mha.q", Op::Slice, 1, d.T * d.Hl * d.dh, 1, {qkv});
    Refs k = b_.elementwise(p + "mha.k", Op::Slice, 1, d.T * d.KVl * d.dh, 1, {qkv});
    Refs v = b_.elementwise(p + "mha.v", Op::Slice, 1, d.T * d.KVl * d.dh, 1, {qkv});
    // Context parallel: every rank attends over the whole sequence's keys and values.
    k = b_.coll(p + "mha.k", CommType::AllGather, Dim::CP, d.T * d.KVl * d.dh, {k});
    v = b_.coll(p + "mha.v", CommType::AllGather, Dim::CP, d.T * d.KVl * d.dh, {v});
    const uint64_t attn_out = d.T * d.Hl * d.dh;
    if (o_.step == Step::Decode)  // Q·Kᵀ and P·V of the new tokens over the S cached keys and values, read whole
      f.attn = b_.comp(p + "mha.attn_kernel.qkv", Op::M, mul(2 * d.T * d.S, d.Hl * d.dh), attn_out,
                       attn_out + mul(d.T * d.S, 2 * d.KVl * d.dh), {q, k, v});
    else if (o_.attention == Attention::Full)  // Q·Kᵀ and P·V over all S keys
      f.attn = b_.comp(p + "mha.attn_kernel.qkv", Op::M, mul(2 * d.T * d.S, d.Hl * d.dh), attn_out, d.T * d.qkv(),
                       {q, k, v});
    else  // STAGE's fused kernel: 3 operations per output element
      f.attn = b_.comp(p + "mha.attn_kernel.qkv", Op::Custom, 3 * attn_out, attn_out, d.T * d.qkv(), {q, k, v});
    Refs o1 = b_.einsum(p + "mha.o1", d.T, d.Hl * d.dh, d.D, {f.attn, w});
    Refs o = leave(p + "mha.o", o1);
    Refs res = b_.elementwise(p + "mha_res.y", Op::A, 1, d.Tout * d.D, 2, {o, x});
    f.norm2 = b_.elementwise(p + "post_attn_norm.y", Op::E, 5, d.Tout * d.D, 1, {res});
    Refs y = o_.model == ModelKind::Moe ? moe_forward(p, f) : ffn_forward(p, f, w);
    f.out = b_.elementwise(p + "ffn_res.y", Op::A, 1, d.Tout * d.D, 2, {y, res});
    return f;
  }

  Refs ffn_forward(const std::string& p, BlockFwd& f, const Refs& w) {
    const Dims& d = d_;
    Refs xg = enter(p + "ffn.x", f.norm2);
    f.xgate = b_.einsum(p + "ffn.xgate", d.T, d.D, d.Fl, {xg, w});
    f.act = f.xgate;
    if (o_.model == ModelKind::Llama) {  // SwiGLU: silu(x·Wgate) ⊙ (x·Wup), 4 operations per element
      f.xup = b_.einsum(p + "ffn.xup", d.T, d.D, d.Fl, {xg, w});
      f.act = b_.elementwise(p + "ffn.act", Op::E2, 4, d.T * d.Fl, 2, {f.xgate, f.xup});
    }
    Refs down = b_.einsum(p + "ffn.xdown1", d.T, d.Fl, d.D, {f.act, w});
    return leave(p + "ffn.xdown", down);
  }

  // Mixture of experts (STAGE's moe_frame): tokens broadcast to top_k copies, routed over ep by
  // an all-to-all with uniform routing, E/ep local experts (each a tensor-parallel 2-matrix FFN),
  // the combine all-to-all, and the weighting by the router.
  Refs moe_forward(const std::string& p, BlockFwd& f) {
    const Dims& d = d_;
    const uint64_t routed = div(d.Tout * d.K * d.D, d.ep);
    const uint64_t tokens = expert_tokens();
    const uint64_t shard = div(tokens * d.D, d.tp);
    Refs wr = b_.coll(p + "moe.router.w", CommType::AllGather, Dim::EP, div(d.D * d.K, d.ep), {});
    Refs yrouter = b_.einsum(p + "moe.yrouter", d.Tout, d.D, d.K, {wr, f.norm2});
    Refs yrouter2 = b_.elementwise(p + "moe.yrouter2", Op::R, 1, d.Tout * d.K, 1, {yrouter});
    Refs x1 = b_.elementwise(p + "moe.x1", Op::B, 1, routed, 1, {f.norm2});
    Refs xr = b_.coll(p + "moe.xrouted", CommType::AllToAll, Dim::EP, routed, {x1});
    std::vector<Refs> ys;
    for (uint64_t e = 0; e < div(d.E, d.ep); ++e) {
      const std::string ep = p + "moe." + std::to_string(e) + ".";
      f.expert_x.push_back(b_.elementwise(ep + "ldis.x_expert", Op::Slice, 1, shard, 1, {xr}));
      Refs xg = b_.coll(ep + "ffn.x", CommType::AllGather, Dim::TP, shard, {f.expert_x.back()});
      f.expert_gate.push_back(b_.einsum(ep + "ffn.xgate", tokens, d.D, d.Fl, {xg}));
      Refs down = b_.einsum(ep + "ffn.xdown1", tokens, d.Fl, d.D, {f.expert_gate.back()});
      Refs y = b_.coll(ep + "ffn.xdown", CommType::ReduceScatter, Dim::TP, tokens * d.D, {down});
      ys.push_back(b_.elementwise(ep + "ldis.y", Op::Slice, 1, routed, 1, {y}));
    }
    Refs yr = ys.size() > 1 ? b_.elementwise(p + "moe.yrouted_r", Op::E2, 1, routed, ys.size(), ys) : ys[0];
    f.y1 = b_.coll(p + "moe.y1", CommType::AllToAll, Dim::EP, routed, {yr});
    f.yrouter3 = b_.elementwise(p + "moe.yrouter3", Op::Slice, 1, routed, 1, {yrouter2});
    Refs y2 = b_.elementwise(p + "moe.y2", Op::E2, 1, routed, 2, {f.yrouter3, f.y1});
    Refs y = b_.elementwise(p + "moe.y", Op::B, 1, div(d.Tout * d.D, d.ep), d.K, {y2});
    return b_.coll(p + "ffn_res.x1", CommType::AllGather, Dim::EP, div(d.Tout * d.D, d.ep), {y});
  }

  // Tokens each local expert processes (gathered over tp), with uniform routing.
  uint64_t expert_tokens() const { return div(d_.T * d_.K, d_.E * (o_.stage_expert_tokens ? d_.ep : 1)); }

  // Returns the gradient of the block input; appends the weight gradients to `grads`.
  Refs block_backward(const std::string& p, const BlockFwd& f, const Refs& g, const Refs& w, Refs& grads) {
    const Dims& d = d_;
    Refs dffn = o_.model == ModelKind::Moe ? moe_backward(p, f, g, grads) : ffn_backward(p, f, g, w, grads);
    Refs dy2 = b_.elementwise(p + "post_attn_norm.dy", Op::A, 1, d.Tout * d.D, 2, {dffn, g});
    Refs dn2 = b_.elementwise(p + "post_attn_norm.dx", Op::E, 5, d.Tout * d.D, 1, {dy2});
    // Attention.
    Refs dout =
        o_.par.sequence_parallel ? b_.coll(p + "mha.do", CommType::AllGather, Dim::TP, d.Tout * d.D, {dn2}) : dn2;
    Refs dattn = b_.einsum(p + "mha.dattn", d.T, d.D, d.Hl * d.dh, {dout, w});
    Refs dwo = b_.einsum(p + "mha.dwo", d.Hl * d.dh, d.T, d.D, {f.attn, dout});
    const uint64_t q_out = d.T * d.Hl * d.dh, kv_out = mul(d.b * d.S, d.KVl * d.dh);
    const bool full = o_.attention == Attention::Full;
    const uint64_t x = mul(d.T * d.S, d.Hl * d.dh);  // one S×S-sized matmul pass
    auto kernel = [&](const std::string& name, uint64_t full_macs, uint64_t out) {
      return full ? b_.comp(p + "mha.attn_kernel." + name, Op::M, full_macs, out, 3 * q_out, {dattn})
                  : b_.comp(p + "mha.attn_kernel." + name, Op::Custom, 6 * q_out, out, 3 * q_out, {dattn});
    };
    Refs dq = kernel("dq", 2 * x, q_out);
    Refs dk, dv;
    if (o_.model == ModelKind::Moe) {  // STAGE's MoE kernel sheet slices dk and dv once more
      dk = b_.elementwise(p + "mha.attn_kernel.dk", Op::Slice, 1, q_out, 1, {kernel("dk1", x, kv_out)});
      dv = b_.elementwise(p + "mha.attn_kernel.dv", Op::Slice, 1, q_out, 1, {kernel("dv1", x, kv_out)});
    } else {
      dk = kernel("dk", x, kv_out);
      dv = kernel("dv", x, kv_out);
    }
    // Context parallel: each rank's K/V gradients cover the whole sequence.
    dk = b_.coll(p + "mha.dk", CommType::ReduceScatter, Dim::CP, kv_out, {dk});
    dv = b_.coll(p + "mha.dv", CommType::ReduceScatter, Dim::CP, kv_out, {dv});
    Refs dkv = b_.elementwise(p + "mha.dkv", Op::Slice, 1, d.T * 2 * d.KVl * d.dh, 2, {dv, dk});
    Refs dqkv = b_.elementwise(p + "mha.dqkv", Op::Slice, 1, d.T * d.qkv(), 2, {dkv, dq});
    Refs xg = enter(p + "mha.dwqkv.x", f.norm1);  // the norm output gathered again for dWqkv
    grads.push_back(b_.einsum(p + "mha.dwqkv", d.D, d.T, d.qkv(), {xg, dqkv})[0]);
    grads.push_back(dwo[0]);
    Refs dx1 = b_.einsum(p + "mha.dx1", d.T, d.qkv(), d.D, {dqkv, w});
    Refs dx = leave(p + "mha.dx", dx1);
    Refs dy1 = b_.elementwise(p + "input_norm.dy", Op::A, 1, d.Tout * d.D, 2, {dx, dn2});
    return b_.elementwise(p + "input_norm.dx", Op::E, 5, d.Tout * d.D, 1, {dy1});
  }

  Refs ffn_backward(const std::string& p, const BlockFwd& f, const Refs& g, const Refs& w, Refs& grads) {
    const Dims& d = d_;
    Refs dg = enter(p + "ffn.dy", g);
    Refs ddown = b_.einsum(p + "ffn.dwdown", d.Fl, d.T, d.D, {f.act, dg});
    Refs dact = b_.einsum(p + "ffn.dxgate", d.T, d.D, d.Fl, {dg, w});
    Refs xg = enter(p + "ffn.dw.x", f.norm2);  // the norm output gathered again for the weight gradients
    Refs dx;
    if (o_.model == ModelKind::Llama) {
      Refs dgate = b_.elementwise(p + "ffn.dgate", Op::E2, 4, d.T * d.Fl, 3, {dact, f.xgate, f.xup});
      Refs dup = b_.elementwise(p + "ffn.dup", Op::E2, 2, d.T * d.Fl, 2, {dact, f.xgate});
      grads.push_back(b_.einsum(p + "ffn.dwgate", d.D, d.T, d.Fl, {dgate, xg})[0]);
      grads.push_back(b_.einsum(p + "ffn.dwup", d.D, d.T, d.Fl, {dup, xg})[0]);
      Refs a = b_.einsum(p + "ffn.dx_gate", d.T, d.Fl, d.D, {dgate, w});
      Refs c = b_.einsum(p + "ffn.dx_up", d.T, d.Fl, d.D, {dup, w});
      dx = b_.elementwise(p + "ffn.dx000", Op::A, 1, d.T * d.D, 2, {a, c});
    } else {
      grads.push_back(b_.einsum(p + "ffn.dwgate", d.D, d.T, d.Fl, {dact, xg})[0]);
      dx = b_.einsum(p + "ffn.dx000", d.T, d.Fl, d.D, {dact, w});
    }
    grads.push_back(ddown[0]);
    return leave(p + "ffn.dx0", dx);
  }

  Refs moe_backward(const std::string& p, const BlockFwd& f, const Refs& g, Refs& grads) {
    const Dims& d = d_;
    const uint64_t routed = div(d.Tout * d.K * d.D, d.ep);
    const uint64_t tokens = expert_tokens();
    const uint64_t shard = div(tokens * d.D, d.tp);
    Refs dy2 = b_.elementwise(p + "moe.dy2", Op::B, 1, routed, 1, {g});
    Refs dy1 = b_.elementwise(p + "moe.dy1", Op::E2, 1, routed, 2, {dy2, f.yrouter3});
    Refs dyr3 = b_.elementwise(p + "moe.dyrouter3", Op::E2, 1, routed, 2, {dy2, f.y1});
    Refs dyr2 = b_.elementwise(p + "moe.dyrouter2", Op::Slice, 1, d.Tout * d.K, 1, {dyr3});
    Refs dyrouted = b_.coll(p + "moe.dyrouted", CommType::AllToAll, Dim::EP, routed, {dy1});
    Refs dyr = b_.elementwise(p + "moe.dyrouter", Op::R, 1, d.Tout * d.K, 1, {dyr2});
    Refs dwr = b_.einsum(p + "moe.dwrouter", div(d.D, d.ep), d.Tout, d.K, {dyr, f.norm2});
    Refs dx01 = b_.einsum(p + "moe.dx01", d.Tout, d.K, div(d.D, d.ep), {dyr});
    grads.push_back(dwr[0]);
    std::vector<Refs> dxs;
    for (uint64_t e = 0; e < f.expert_x.size(); ++e) {
      const std::string ep = p + "moe." + std::to_string(e) + ".";
      Refs dye = b_.elementwise(ep + "ldis.dy_expert", Op::Slice, 1, shard, 1, {dyrouted});
      Refs dg = b_.coll(ep + "ffn.dy", CommType::AllGather, Dim::TP, shard, {dye});
      Refs ddown = b_.einsum(ep + "ffn.dwdown", d.Fl, tokens, d.D, {f.expert_gate[e], dg});
      Refs dgate = b_.einsum(ep + "ffn.dxgate", tokens, d.D, d.Fl, {dg});
      Refs xg = b_.coll(ep + "ffn.dw.x", CommType::AllGather, Dim::TP, shard, {f.expert_x[e]});
      grads.push_back(b_.einsum(ep + "ffn.dwgate", d.D, tokens, d.Fl, {dgate, xg})[0]);
      grads.push_back(ddown[0]);
      Refs dx = b_.einsum(ep + "ffn.dx000", tokens, d.Fl, d.D, {dgate});
      dx = b_.coll(ep + "ffn.dx0", CommType::ReduceScatter, Dim::TP, tokens * d.D, {dx});
      dxs.push_back(b_.elementwise(ep + "ldis.dx", Op::Slice, 1, routed, 1, {dx}));
    }
    Refs dxr = dxs.size() > 1 ? b_.elementwise(p + "moe.dxrouted_r", Op::E2, 1, routed, dxs.size(), dxs) : dxs[0];
    Refs dx1 = b_.coll(p + "moe.dx1", CommType::AllToAll, Dim::EP, routed, {dxr});
    Refs dx02 = b_.elementwise(p + "moe.dx02", Op::B, 1, div(d.Tout * d.D, d.ep), d.K, {dx1});
    Refs dx = b_.elementwise(p + "moe.dx", Op::A, 1, div(d.Tout * d.D, d.ep), 2, {dx01, dx02});
    return b_.coll(p + "moe.dx", CommType::AllGather, Dim::EP, div(d.Tout * d.D, d.ep), {dx});
  }

  const SynthOptions& o_;
  Builder b_;
  uint32_t stage_;
  Dims d_{};
  uint64_t first_layer_ = 0, layers_ = 0;
  std::vector<std::vector<BlockFwd>> fwd_;        // [micro-batch][layer]
  std::vector<std::vector<Refs>> grads_;          // [micro-batch][layer]: weight gradients
  std::vector<std::vector<Refs>> sync_;           // [layer]: synchronised gradients
  std::vector<std::pair<bool, Refs>> emb_grads_;  // (output embedding?, dW)
  std::vector<Refs> last_x_;                      // [micro-batch]: last block output
  std::vector<uint32_t> loss_node_;
};

}  // namespace

void build_stage(const Workload& w, uint32_t stage, StageGraph& g) { StageBuilder(w, stage, g).build(); }

}  // namespace chakra::synth
