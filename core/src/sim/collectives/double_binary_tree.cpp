// Double binary tree all-reduce: chunks alternate between two trees over the phase's NPUs
// (per NPU, per collective type and dimension); every message carries the whole chunk, reduced
// on its way up to the root and broadcast back down. Whatever the phase asked for, the
// reference runs a tree all-reduce, and so does this. Needs a power-of-two number of NPUs.
#include <map>

#include "sim/collectives/collective.h"

namespace chakra::sim {
namespace {

// Double binary tree over positions 0..n-1 (in-order numbering, as the reference builds it):
// the "max" tree's root is the last position, the "min" tree's the first; each root has a
// single child, the root of a complete tree over the remaining positions.
struct Tree {
  std::vector<int32_t> parent, left, right;
};
void build_subtree(Tree& t, int32_t lo, int32_t count, int32_t parent, bool is_left) {
  if (count <= 0) return;
  int32_t mid = lo + count / 2;
  t.parent[mid] = parent;
  if (parent >= 0) (is_left ? t.left[parent] : t.right[parent]) = mid;
  build_subtree(t, lo, count / 2, mid, true);
  build_subtree(t, mid + 1, count / 2, mid, false);
}
Tree make_tree(uint32_t n, bool root_max) {
  Tree t;
  t.parent.assign(n, -1), t.left.assign(n, -1), t.right.assign(n, -1);
  int32_t root = root_max ? int32_t(n) - 1 : 0;
  int32_t lo = root_max ? 0 : 1;
  // the complete subtree has n - 1 = 2^k - 1 positions; its root hangs left (max) or right (min)
  int32_t count = int32_t(n) - 1;
  int32_t mid = lo + count / 2;
  if (count > 0) {
    t.parent[mid] = root;
    (root_max ? t.left[root] : t.right[root]) = mid;
    build_subtree(t, lo, count / 2, mid, true);
    build_subtree(t, mid + 1, count / 2, mid, false);
  }
  return t;
}

class DoubleBinaryTree final : public CollectiveAlgorithm {
 public:
  DoubleBinaryTree(uint32_t npus, uint32_t dims) : npus_(npus), dims_(dims) {}

  void configure(PhaseSpec& p, const PhaseSite& site) override {
    uint64_t n = p.ring.n;
    if ((n & (n - 1)) != 0)
      throw Error(site.what() + ": doubleBinaryTree needs a power-of-two number of NPUs, not " + std::to_string(n));
    p.type = Collective::AllReduce;
    if (counters_.empty()) counters_.assign(size_t(npus_) * kCollectiveTypes * dims_, 0);
    uint32_t& counter = counters_[(size_t(site.npu) * kCollectiveTypes + int(site.collective)) * dims_ + site.dim];
    bool root_max = counter++ % 2 == 0;
    auto key = std::make_pair(uint32_t(n), root_max);
    auto it = trees_.find(key);
    if (it == trees_.end()) it = trees_.emplace(key, make_tree(uint32_t(n), root_max)).first;
    const Tree& t = it->second;
    uint32_t pos = p.ring.index(site.npu);
    auto id = [&](int32_t q) { return q < 0 ? int64_t{-1} : int64_t{p.ring.at(q)}; };
    p.parent = id(t.parent[pos]);
    p.left = id(t.left[pos]);
    p.right = id(t.right[pos]);
    p.role = t.parent[pos] < 0                       ? TreeRole::Root
             : (t.left[pos] < 0 && t.right[pos] < 0) ? TreeRole::Leaf
                                                     : TreeRole::Intermediate;
  }

  void init(CollectiveContext& c, uint32_t si) override { run(c, si, false); }
  void on_bundle(CollectiveContext& c, uint32_t si) override { run(c, si, false); }
  void on_message(CollectiveContext& c, uint32_t si) override { run(c, si, true); }

 private:
  // The state machine of one NPU's place in the tree; `message`: a message arrived (else a
  // bundle finished, or the phase starts).
  static void run(CollectiveContext& c, uint32_t si, bool message) {
    Stream& s = c.stream(si);
    const PhaseSpec& p = s.cur;
    uint64_t bytes = p.size;
    auto send_to = [&](int64_t peer) { c.send(si, static_cast<uint32_t>(peer), bytes); };
    auto recv_from = [&](int64_t peer) { c.recv(si, static_cast<uint32_t>(peer), bytes); };
    switch (p.role) {
      case TreeRole::Leaf:
        switch (s.tree_state) {
          case TreeState::Begin:
            c.bundle(si, false, bytes, true);
            s.tree_state = TreeState::SendingToParent;
            return;
          case TreeState::SendingToParent:
            send_to(p.parent);
            s.tree_state = TreeState::WaitingFromParent;  // before the recv: it may complete now
            recv_from(p.parent);
            return;
          case TreeState::WaitingFromParent:
            c.bundle(si, false, bytes, true);
            s.tree_state = TreeState::End;
            return;
          case TreeState::End: c.phase_done(si); return;
          default: return;
        }
      case TreeRole::Intermediate:
        if (s.tree_state == TreeState::Begin) {
          s.tree_state = TreeState::WaitingTwoChildren;
          recv_from(p.left);
          recv_from(p.right);
        } else if (s.tree_state == TreeState::WaitingTwoChildren && message) {
          c.bundle(si, true, bytes, true);
          s.tree_state = TreeState::WaitingOneChild;
        } else if (s.tree_state == TreeState::WaitingOneChild && message) {
          c.bundle(si, true, bytes, true);
          s.tree_state = TreeState::SendingToParent;
        } else if (s.reductions < 1 && !message) {
          ++s.reductions;
        } else if (s.tree_state == TreeState::SendingToParent) {
          s.tree_state = TreeState::WaitingFromParent;
          send_to(p.parent);
          recv_from(p.parent);
        } else if (s.tree_state == TreeState::WaitingFromParent && message) {
          c.bundle(si, true, bytes, true);
          s.tree_state = TreeState::SendingToChildren;
        } else if (s.tree_state == TreeState::SendingToChildren) {
          send_to(p.left);
          send_to(p.right);
          c.phase_done(si);
        }
        return;
      case TreeRole::Root: {
        int64_t child = p.left >= 0 ? p.left : p.right;
        if (s.tree_state == TreeState::Begin) {
          s.tree_state = TreeState::WaitingOneChild;
          recv_from(child);
        } else if (s.tree_state == TreeState::WaitingOneChild) {
          c.bundle(si, true, bytes, true);
          s.tree_state = TreeState::SendingToChildren;
        } else if (s.tree_state == TreeState::SendingToChildren) {
          send_to(child);
          c.phase_done(si);
        }
        return;
      }
    }
  }

  uint32_t npus_, dims_;
  std::vector<uint32_t> counters_;  // per (NPU, collective type, dimension): trees picked
  std::map<std::pair<uint32_t, bool>, Tree> trees_;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_DoubleBinaryTree_algorithm(uint32_t npus, uint32_t dims) {
  return std::make_unique<DoubleBinaryTree>(npus, dims);
}

}  // namespace chakra::sim
