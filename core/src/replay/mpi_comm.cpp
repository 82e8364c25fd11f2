#include "chakra/replay/mpi_comm.h"

#define OMPI_SKIP_MPICXX 1  // the C API only: Open MPI's deprecated C++ bindings need their own library
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <map>
#include <vector>

#include "chakra/support/error.h"

namespace chakra::replay {
namespace {

// Buffers hold no data that matters: sums of floats where the size is a whole number of them
// (the common case, and what NCCL reduces), bitwise or of bytes otherwise.
struct Elements {
  MPI_Datatype type;
  MPI_Op op;
  uint64_t count;
};
Elements elements_of(uint64_t bytes) {
  if (bytes % 4 == 0) return {MPI_FLOAT, MPI_SUM, bytes / 4};
  return {MPI_BYTE, MPI_BOR, bytes};
}

int as_count(uint64_t n) {
  if (n > uint64_t(INT_MAX))
    throw Error("an MPI operation of " + std::to_string(n) + " elements: MPI counts end at 2^31-1");
  return static_cast<int>(n);
}

class MpiLayer final : public CommLayer {
 public:
  MpiLayer() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw Error("MPI_Init failed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_dup(MPI_COMM_WORLD, &data_);
    MPI_Comm_dup(MPI_COMM_WORLD, &control_);
    MPI_Comm_dup(MPI_COMM_WORLD, &end_);
    int r = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    rank_ = static_cast<uint32_t>(r), size_ = static_cast<uint32_t>(n);
    int* ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
    max_tag_ = found && ub ? *ub : 32767;
  }
  ~MpiLayer() override {
    for (auto& [id, c] : groups_)
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Comm_free(&data_);
    MPI_Comm_free(&control_);
    MPI_Comm_free(&end_);
    MPI_Finalize();
  }

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  int max_tag() const override { return max_tag_; }

  void add_group(int id, std::span<const uint32_t> members) override {
    int place = MPI_UNDEFINED;
    for (size_t i = 0; i < members.size(); ++i)
      if (members[i] == rank_) place = static_cast<int>(i);
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(data_, place == MPI_UNDEFINED ? MPI_UNDEFINED : 1, place == MPI_UNDEFINED ? 0 : place, &c);
    groups_[id] = c;
  }

  void prepare(uint64_t send_bytes, uint64_t recv_bytes, uint32_t operations) override {
    std::vector<Request> taken;
    for (uint32_t i = 0; i < operations; ++i) {
      taken.push_back(take_slot());
      Slot& s = slots_[taken.back()];
      s.send.resize(std::max<size_t>(s.send.size(), send_bytes));  // zero-filled: every page touched
      s.recv.resize(std::max<size_t>(s.recv.size(), recv_bytes));
    }
    free_.insert(free_.end(), taken.rbegin(), taken.rend());
  }

  Request start(const CommOp& op) override {
    const Request r = take_slot();
    Slot& s = slots_[r];
    MPI_Comm comm = data_;
    int n = static_cast<int>(size_);
    if (op.kind != OpKind::Send && op.kind != OpKind::Recv && op.group >= 0) {
      comm = groups_.at(op.group);
      MPI_Comm_size(comm, &n);
    }
    const Elements e = elements_of(op.bytes);
    const int count = as_count(e.count);
    const uint64_t element_bytes = e.type == MPI_FLOAT ? 4 : 1;
    auto sized = [&](std::vector<char>& v, uint64_t elements) {
      if (v.size() < elements * element_bytes) v.resize(elements * element_bytes);
      return v.data();
    };
    switch (op.kind) {
      case OpKind::AllReduce:
        MPI_Iallreduce(sized(s.send, e.count), sized(s.recv, e.count), count, e.type, e.op, comm, &s.request);
        break;
      case OpKind::AllGather:
        MPI_Iallgather(sized(s.send, e.count), count, e.type, sized(s.recv, e.count * uint64_t(n)), count, e.type, comm,
                       &s.request);
        break;
      case OpKind::ReduceScatter: {
        const int part = std::max(1, count / n);
        MPI_Ireduce_scatter_block(sized(s.send, uint64_t(part) * n), sized(s.recv, part), part, e.type, e.op, comm,
                                  &s.request);
        break;
      }
      case OpKind::AllToAll: {
        const int part = std::max(1, count / n);
        MPI_Ialltoall(sized(s.send, uint64_t(part) * n), part, e.type, sized(s.recv, uint64_t(part) * n), part, e.type,
                      comm, &s.request);
        break;
      }
      case OpKind::Broadcast:
        MPI_Ibcast(sized(s.send, e.count), count, e.type, static_cast<int>(op.peer) % n, comm, &s.request);
        break;
      case OpKind::Barrier: MPI_Ibarrier(comm, &s.request); break;
      case OpKind::Send:
        MPI_Isend(sized(s.send, e.count), count, e.type, static_cast<int>(op.peer), op.tag, data_, &s.request);
        break;
      case OpKind::Recv:
        MPI_Irecv(sized(s.recv, e.count), count, e.type, static_cast<int>(op.peer), op.tag, data_, &s.request);
        break;
    }
    return r;
  }

  bool test(Request r) override {
    int done = 0;
    MPI_Test(&slots_[r].request, &done, MPI_STATUS_IGNORE);
    if (done) free_.push_back(r);
    return done != 0;
  }

  Request start_end_barrier() override {
    const Request r = take_slot();
    MPI_Ibarrier(end_, &slots_[r].request);
    return r;
  }

  std::vector<std::string> all_gather_text(const std::string& mine) override {
    const int len = as_count(mine.size());
    std::vector<int> lens(size_), offsets(size_);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, control_);
    uint64_t total = 0;
    for (uint32_t i = 0; i < size_; ++i) offsets[i] = as_count(total), total += uint64_t(lens[i]);
    std::string all(total, '\0');
    MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, control_);
    std::vector<std::string> out;
    for (uint32_t i = 0; i < size_; ++i) out.push_back(all.substr(offsets[i], lens[i]));
    return out;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  struct Slot {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<char> send, recv;  // kept for the next operation of the slot
  };
  Request take_slot() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<Request>(slots_.size() - 1);
    }
    const Request r = free_.back();
    free_.pop_back();
    return r;
  }

  MPI_Comm data_ = MPI_COMM_NULL, control_ = MPI_COMM_NULL, end_ = MPI_COMM_NULL;
  std::map<int, MPI_Comm> groups_;
  std::vector<Slot> slots_;
  std::vector<Request> free_;
  uint32_t rank_ = 0, size_ = 1;
  int max_tag_ = 32767;
};

}  // namespace

std::unique_ptr<CommLayer> make_mpi_layer() { return std::make_unique<MpiLayer>(); }

}  // namespace chakra::replay
