#include "pytorch/replay_costs.h"

#include <algorithm>
#include <cmath>

namespace chakra::convert {

std::vector<double> interleaved_cpu_costs(const Column<HostNode>& nodes, const std::vector<uint32_t>& parent_pos,
                                          const std::vector<std::vector<uint32_t>>& chains,
                                          const std::vector<BlockedSpan>& blocked,
                                          const std::vector<double>& launch_cut, const std::vector<uint8_t>& waits) {
  constexpr uint32_t kNoParent = UINT32_MAX;
  std::vector<double> cost(nodes.size(), NAN);
  std::vector<uint8_t> has_spans(nodes.size(), 0);
  for (const BlockedSpan& b : blocked) has_spans[b.position] = 1;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].blocked_dur > 0 && !has_spans[i]) return cost;
  auto timed = [&](uint32_t i) { return !std::isnan(nodes[i].ts) && !std::isnan(nodes[i].inclusive_dur); };
  std::vector<std::pair<double, double>> thread_blocked;
  for (const std::vector<uint32_t>& chain : chains) {
    if (chain.empty()) continue;
    const uint32_t root = chain[0];
    // Walks up from i: the first ancestor for which stop(ancestor) holds, or kNoParent.
    auto up = [&](uint32_t i, auto stop) {
      for (uint32_t depth = 0; depth < nodes.size(); ++depth) {
        const uint32_t p = parent_pos[i];
        if (p == kNoParent || p == i) return kNoParent;
        if (stop(p)) return p;
        i = p;
      }
      return kNoParent;
    };
    auto top = [&](uint32_t i) {  // i's ancestor just under the thread's root; i itself at the top
      if (parent_pos[i] == root) return i;
      const uint32_t t = up(i, [&](uint32_t p) { return parent_pos[p] == root; });
      return t == kNoParent ? i : t;
    };
    // The thread's blocked times, merged (each span is inside its op's own time).
    thread_blocked.clear();
    for (uint32_t x : chain) {
      auto it = std::lower_bound(blocked.begin(), blocked.end(), x,
                                 [](const BlockedSpan& b, uint32_t position) { return b.position < position; });
      for (; it != blocked.end() && it->position == x; ++it) thread_blocked.emplace_back(it->begin, it->end);
    }
    std::sort(thread_blocked.begin(), thread_blocked.end());
    size_t merged = 0;
    for (const auto& span : thread_blocked) {
      if (merged > 0 && span.first <= thread_blocked[merged - 1].second)
        thread_blocked[merged - 1].second = std::max(thread_blocked[merged - 1].second, span.second);
      else
        thread_blocked[merged++] = span;
    }
    thread_blocked.resize(merged);
    auto first_span_ending_after = [&](double b) {
      return std::partition_point(thread_blocked.begin(), thread_blocked.end(),
                                  [&](const std::pair<double, double>& span) { return span.second <= b; });
    };
    auto first_block_within = [&](double b, double e) {  // where the thread was first blocked in [b, e), or NaN
      auto it = first_span_ending_after(b);
      return it != thread_blocked.end() && it->first < e ? std::max(b, it->first) : NAN;
    };
    auto own = [&](double b, double e) {  // µs of [b, e) the thread was not blocked
      if (e <= b) return 0.0;
      double blocked = 0;
      for (auto it = first_span_ending_after(b); it != thread_blocked.end() && it->first < e; ++it)
        blocked += std::min(e, it->second) - std::max(b, it->first);
      return (e - b) - blocked;
    };
    double carried = 0;  // the rest of the op before's stretch, after its cut
    for (size_t c = 1; c < chain.size(); ++c) {
      const uint32_t x = chain[c];
      const uint32_t t = top(x);
      if (!timed(x) || !timed(t)) continue;
      const uint32_t next = c + 1 < chain.size() ? chain[c + 1] : x, next_top = top(next);
      const bool has_next = next != x && timed(next) && timed(next_top);
      // The stretch runs to the next op's start, across the gap between two top-level ops too
      // (the interpreter's time between calls), except into the first op of work handed over
      // by another thread (autograd's): that gap is the thread waiting for it.
      const bool handed_over =
          has_next && next_top != t && nodes[next_top].inter_thread_dep && !nodes[t].inter_thread_dep;
      const double from = nodes[x].ts;
      const double until = has_next && !handed_over ? nodes[next].ts : nodes[t].ts + nodes[t].inclusive_dur;
      // What waits for x's node waits for all of its stretch, but the GPU ops x launched
      // started before that ended, time x spent after being blocked came after the wait, and
      // another thread's op waiting for x waited for x's own end. So x's node ends at its cut
      // and the rest of the stretch goes to the next op: the latest start of a GPU op x
      // launched (x's end at the latest) or where x was first blocked, whichever is later;
      // without either, x's end if another thread waits for x. Not when the next op waits for
      // something and x was neither blocked nor waited for: x's rest ran during that wait.
      const double end = nodes[x].ts + nodes[x].inclusive_dur, block = first_block_within(from, until);
      const double launched = std::min(launch_cut[x], end);  // NaN without a launch
      const bool waited_for = waits[x] & kWaitedFor;
      double cut = std::isnan(launched) ? block : std::isnan(block) ? launched : std::max(launched, block);
      if (std::isnan(cut) && waited_for) cut = end;
      // A block right at x's start cuts there too: all of x's stretch then comes after the wait.
      const bool split = has_next && (cut > from || cut == block) && cut < until &&
                         (!(waits[next] & kWaits) || !std::isnan(block) || waited_for);
      cost[x] = (split ? own(from, cut) : own(from, until)) + carried;
      carried = split ? own(cut, until) : 0;
    }
  }
  return cost;
}

}  // namespace chakra::convert
