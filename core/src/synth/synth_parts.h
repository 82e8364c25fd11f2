// The synthesizer's parts (synth.cpp, synth_stage.cpp): the graph of one pipeline stage, the
// workload of every stage, and building a stage. Private to the synth layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chakra/synth/synth.h"
#include "chakra/support/error.h"
#include "chakra/trace/schema.h"

namespace chakra::synth {

using Refs = std::vector<uint32_t>;  // the nodes a consumer depends on

enum class Op : uint8_t { M, E, E2, A, B, R, Slice, Custom };
inline constexpr const char* kOpNames[] = {"M", "E", "E2", "A", "B", "R", "SLICE", "CUSTOM"};
inline constexpr const char* kDimNames[] = {"dp", "tp", "cp", "ep"};

struct TNode {
  uint32_t name;  // index into StageGraph::names
  NodeType type;
  Op op = Op::Custom;
  CommType comm = CommType::AllReduce;
  Dim dim = Dim::DP;
  int8_t peer = 0;  // send/recv: +1 next stage, -1 previous stage
  uint32_t tag = 0;
  uint64_t num_ops = 0, tensor_size = 0, comm_size = 0;
  uint32_t deps_begin = 0, deps_end = 0;
  uint32_t ctrl = 0;  // ctrl dependency: node index + 1, 0 for none
};

struct StageGraph {
  std::vector<TNode> nodes;
  std::vector<uint32_t> deps;
  std::vector<std::string> names;
};

inline uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error("synth: a tensor size overflows 64 bits; reduce the model or batch size");
  return r;
}

// Exact division of a size by a parallel degree; the options were checked beforehand, so a
// remainder here is a bug in the checks.
inline uint64_t div(uint64_t a, uint64_t b) {
  if (b == 0 || a % b)
    throw Error("synth: internal error: " + std::to_string(a) + " is not divisible by " + std::to_string(b));
  return a / b;
}

struct Workload {
  SynthOptions o;
  uint64_t deg[4] = {1, 1, 1, 1};  // DP, TP, CP, EP
  uint64_t stage_ranks = 1;        // ranks per pipeline stage
  std::vector<StageGraph> stages;
  std::string description;

  bool has_groups(Dim d) const { return d != Dim::EP || o.model == ModelKind::Moe; }
  // Rank coordinates, the dimensions of o.par.rank_order varying fastest first, then pp: by
  // default rank = ((((pp·EP + ep)·CP + cp)·TP + tp)·DP + dp).
  void coords(uint32_t rank, uint64_t c[5]) const {  // DP, TP, CP, EP, PP
    uint64_t r = rank;
    for (Dim dim : o.par.rank_order) {
      const int d = int(dim);
      c[d] = r % deg[d];
      r /= deg[d];
    }
    c[4] = r;
  }
  uint32_t rank_of(const uint64_t c[5]) const {
    uint64_t r = c[4];
    for (int i = 3; i >= 0; --i) {
      const int d = int(o.par.rank_order[i]);
      r = r * deg[d] + c[d];
    }
    return static_cast<uint32_t>(r);
  }
  uint64_t groups_of(Dim d) const { return has_groups(d) ? stage_ranks * o.par.pp / deg[int(d)] : 0; }
  uint32_t first_id(Dim d) const {
    uint64_t id = 1;
    for (int k = 0; k < int(d); ++k) id += groups_of(Dim(k));
    return static_cast<uint32_t>(id);
  }
};

// Enumeration order of the other coordinates within a dimension's groups: (pp, dp, tp, cp, ep)
// with the last fastest, as STAGE numbers its groups. Indices into the coords() array.
inline constexpr int kGroupOrder[] = {4, 0, 1, 2, 3};

// Tokens of one micro-batch on one rank inside attention and the FFN (before tensor-parallel
// sequence splitting): sequences × seq / sp, or sequences when decoding one token each.
uint64_t micro_batch_tokens(const SynthOptions& o);

// Builds stage `stage`'s graph of `w` into `g` (synth_stage.cpp).
void build_stage(const Workload& w, uint32_t stage, StageGraph& g);

}  // namespace chakra::synth
