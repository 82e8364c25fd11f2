// A collective algorithm given as Chakra traces (ASTRA-sim's *-implementation-custom), one per
// rank of the group: its SEND, RECV and COMP nodes run as soon as their dependencies are done;
// the phase ends with the last.
#include <filesystem>
#include <map>

#include "chakra/format/io.h"
#include "sim/collectives/collective.h"

namespace chakra::sim {
namespace {

class Custom final : public CollectiveAlgorithm {
 public:
  void init(CollectiveContext& c, uint32_t si) override {
    Stream& s = c.stream(si);
    auto it = bytes_.find(s.cur.custom_file);
    if (it == bytes_.end()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(s.cur.custom_file, ec))
        throw Error(s.cur.custom_file +
                    ": custom collective trace does not exist (paths are "
                    "relative to the working directory or the system configuration)");
      it = bytes_.emplace(s.cur.custom_file, read_file(s.cur.custom_file)).first;
    }
    FeederOptions fo;
    fo.gate = DepKind::Both;
    fo.dangling_is_error = true;
    const std::string& bytes = it->second;
    s.custom = std::make_unique<Feeder>(
        memory_input({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, it->first), fo);
    issue(c, si);
  }

  void on_bundle(CollectiveContext&, uint32_t) override {
    throw Error("internal error: a custom collective got a bundle it never started");
  }
  void on_message(CollectiveContext&, uint32_t) override {
    throw Error("internal error: a custom collective got a message for no node");
  }

  void on_node_done(CollectiveContext& c, uint32_t si, uint64_t id) override {
    c.stream(si).custom->mark_done(id);
    issue(c, si);
    Stream& t = c.stream(si);
    if (t.custom->finished()) {
      t.custom.reset();
      c.phase_done(si);
    } else if (t.custom->in_flight() == 0 && t.custom->stalled()) {
      throw Error(t.cur.custom_file + ": custom collective cannot finish: " + t.custom->stall_report());
    }
  }

 private:
  // The NPU a rank of the algorithm's trace names: a group position, or an NPU without group.
  static uint32_t npu_of(CollectiveContext& c, const Stream& s, int64_t algo_rank, const Where& what) {
    if (s.cur.group < 0) {
      if (algo_rank < 0 || algo_rank >= int64_t(c.npus()))
        throw Error(what() + ": rank " + std::to_string(algo_rank) + " is not an NPU");
      return static_cast<uint32_t>(algo_rank);
    }
    const auto& m = c.group_members(s.cur.group);
    if (algo_rank < 0 || algo_rank >= int64_t(m.size()))
      throw Error(what() + ": rank " + std::to_string(algo_rank) + " is not in the group");
    return m[algo_rank];
  }

  static void issue(CollectiveContext& c, uint32_t si) {
    std::vector<uint64_t> ready = c.stream(si).custom->take_all();
    for (uint64_t id : ready) {
      Stream& s = c.stream(si);
      FeederNode node = s.custom->node(id);
      Where what{s.cur.custom_file, node};
      if (id > 0xffffffffu) throw Error(what() + ": node ids of custom collectives must fit 32 bits");
      int64_t size = node.comm_size().value_or(0);
      int64_t tag = node.comm_tag().value_or(0);
      switch (node.type()) {
        case NodeType::CommSend: {
          auto dst = node.comm_dst();
          if (!dst) throw Error(what() + ": a send needs comm_dst");
          c.node_send(si, id, npu_of(c, s, *dst, what), uint64_t(size), tag);
          break;
        }
        case NodeType::CommRecv: {
          auto src = node.comm_src();
          if (!src) throw Error(what() + ": a recv needs comm_src");
          c.node_recv(si, id, npu_of(c, s, *src, what), uint64_t(size), tag);
          break;
        }
        case NodeType::Comp: c.node_after(si, id, replay_time(what)); break;
        default:
          // the reference takes other nodes and never finishes them; they finish at once here
          c.node_after(si, id, 0);
          break;
      }
    }
  }

  std::map<std::string, std::string> bytes_;  // custom collective traces, read once
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_custom_algorithm() { return std::make_unique<Custom>(); }

}  // namespace chakra::sim
