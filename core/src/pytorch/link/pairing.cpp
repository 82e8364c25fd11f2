// The linker's part: pairing host ops with Kineto ops, and the two files with each other (link_parts.h).
#include "pytorch/link/link_parts.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::link {

Pairing pair_by_rf(const Host& h, const Device& d) {
  Pairing pair(h.nodes.size(), kNone);
  for (size_t i = 0; i < h.nodes.size(); ++i) {
    if (!h.nodes[i].has_rf) continue;
    auto it = d.cpu_by_rf.find(h.nodes[i].rf_id);
    if (it != d.cpu_by_rf.end()) pair[i] = it->second;
  }
  return pair;
}

bool same_name(const Host& h, const HostNode& n, const Device& d, const KinetoOp& k) {
  return h.strings.view(n.name) == d.strings.view(k.name);
}

Pairing pair_by_offset(const Host& h, const Device& d, const std::vector<int32_t>& window, bool ev_idx, int64_t* offset,
                       uint64_t* agreeing) {
  auto id_of = [&](const KinetoOp& k) { return ev_idx ? k.ev_idx : k.external_id; };
  std::unordered_map<int64_t, int32_t> host_by_rf;
  std::unordered_map<std::string_view, std::vector<int64_t>> rfs_by_name;
  for (size_t i = 0; i < h.nodes.size(); ++i) {
    const HostNode& n = h.nodes[i];
    if (!n.has_rf || is_et_annotation(h.strings.view(n.name))) continue;
    host_by_rf.emplace(n.rf_id, static_cast<int32_t>(i));
    auto& v = rfs_by_name[h.strings.view(n.name)];
    if (v.size() < 8) v.push_back(n.rf_id);
  }
  // Candidate offsets from ops whose name is rare on the host side, then an exact count.
  std::unordered_map<int64_t, uint32_t> votes;
  for (size_t s = 0; s < window.size() && s < 4096; ++s) {
    const KinetoOp& k = d.ops[window[s]];
    if (id_of(k) < 0) continue;
    auto it = rfs_by_name.find(d.strings.view(k.name));
    if (it == rfs_by_name.end()) continue;
    for (int64_t rf : it->second) ++votes[id_of(k) - rf];
  }
  std::vector<std::pair<uint32_t, int64_t>> ranked;
  for (const auto& [off, n] : votes) ranked.emplace_back(n, off);
  std::sort(ranked.rbegin(), ranked.rend());
  if (ranked.size() > 16) ranked.resize(16);

  Pairing best(h.nodes.size(), kNone);
  *agreeing = 0;
  for (const auto& [votes_n, off] : ranked) {
    Pairing pair(h.nodes.size(), kNone);
    uint64_t n = 0;
    for (int32_t ki : window) {
      const KinetoOp& k = d.ops[ki];
      if (id_of(k) < 0) continue;
      auto it = host_by_rf.find(id_of(k) - off);
      if (it == host_by_rf.end() || !same_name(h, h.nodes[it->second], d, k)) continue;
      if (pair[it->second] == kNone) ++n;
      pair[it->second] = ki;
    }
    if (n > *agreeing || (n == *agreeing && n > 0 && std::abs(off) < std::abs(*offset))) {
      *agreeing = n;
      *offset = off;
      best = std::move(pair);
    }
  }
  return best;
}

Pairing pair_in_order(const Host& h, const std::vector<int32_t>& by_id, const Device& d,
                      const std::vector<int32_t>& window, uint64_t* matched, Number* window_start) {
  constexpr size_t kLookAhead = 48;
  std::vector<int64_t> host_tids;
  std::unordered_map<int64_t, std::vector<int32_t>> host_by_tid;
  for (int32_t i : by_id) {
    const HostNode& n = h.nodes[i];
    if (is_et_annotation(h.strings.view(n.name))) continue;
    auto [it, fresh] = host_by_tid.try_emplace(n.tid);
    if (fresh) host_tids.push_back(n.tid);
    it->second.push_back(i);
  }
  std::sort(host_tids.begin(), host_tids.end(),
            [&](int64_t a, int64_t b) { return host_by_tid[a].size() > host_by_tid[b].size(); });
  std::vector<TidKey> kineto_tids;
  std::unordered_map<TidKey, std::vector<int32_t>> kineto_by_tid;
  for (int32_t k : window) {
    auto [it, fresh] = kineto_by_tid.try_emplace(d.ops[k].tid);
    if (fresh) kineto_tids.push_back(d.ops[k].tid);
    it->second.push_back(k);
  }

  // Host names as Kineto string ids (names the device trace never has cannot match anyway).
  auto kname = [&](int32_t host_index) -> int64_t {
    StrId id;
    return d.strings.find(h.strings.view(h.nodes[host_index].name), &id) ? id : -1;
  };
  // Greedy alignment from Kineto position `start`; fills `out` when non-null.
  auto align = [&](const std::vector<int32_t>& hs, const std::vector<int64_t>& hn, const std::vector<int32_t>& ks,
                   size_t start, Pairing* out) {
    uint64_t n = 0;
    size_t i = 0, j = start;
    while (i < hs.size() && j < ks.size()) {
      if (hn[i] == d.ops[ks[j]].name) {
        if (out) (*out)[hs[i]] = ks[j];
        ++n, ++i, ++j;
        continue;
      }
      size_t skip_k = 0, skip_h = 0;
      for (size_t s = 1; s <= kLookAhead && !skip_k && j + s < ks.size(); ++s)
        if (d.ops[ks[j + s]].name == hn[i]) skip_k = s;
      for (size_t s = 1; s <= kLookAhead && !skip_h && i + s < hs.size(); ++s)
        if (hn[i + s] == d.ops[ks[j]].name) skip_h = s;
      if (skip_k && (!skip_h || skip_k <= skip_h))
        j += skip_k;
      else if (skip_h)
        i += skip_h;
      else
        ++i, ++j;
    }
    return n;
  };

  Pairing pair(h.nodes.size(), kNone);
  *matched = 0;
  std::vector<bool> used(kineto_tids.size(), false);
  bool first_thread = true;
  for (int64_t ht : host_tids) {
    const std::vector<int32_t>& hs = host_by_tid[ht];
    std::vector<int64_t> hn;
    for (int32_t i : hs) hn.push_back(kname(i));
    uint64_t best = 0;
    size_t best_thread = 0, best_start = 0;
    for (size_t t = 0; t < kineto_tids.size(); ++t) {
      if (used[t]) continue;
      const std::vector<int32_t>& ks = kineto_by_tid[kineto_tids[t]];
      size_t tried = 0;
      for (size_t s = 0; s < ks.size() && tried < 256; ++s) {
        if (d.ops[ks[s]].name != hn[0]) continue;
        ++tried;
        uint64_t n = align(hs, hn, ks, s, nullptr);
        if (n > best) best = n, best_thread = t, best_start = s;
        if (n == hs.size()) break;
      }
    }
    if (best == 0) continue;
    used[best_thread] = true;
    const std::vector<int32_t>& ks = kineto_by_tid[kineto_tids[best_thread]];
    align(hs, hn, ks, best_start, &pair);
    if (first_thread) *window_start = d.ops[ks[best_start]].ts;
    first_thread = false;
    *matched += best;
  }
  return pair;
}

void check_pairing(const Host& h, const Device& d, const LinkOptions& o, LinkReport& report) {
  struct Claim {
    uint32_t rank;
    std::string source;
    int side;  // 0 host, 1 Kineto, 2 the caller
  };
  std::vector<Claim> claims;
  if (std::optional<uint32_t> r = rank_from_file_name(h.name)) claims.push_back({*r, "the host ET's file name", 0});
  if (d.stated_rank) claims.push_back({*d.stated_rank, "the Kineto trace's distributedInfo", 1});
  if (std::optional<uint32_t> r = rank_from_file_name(d.name))
    claims.push_back({*r, "the Kineto trace's file name", 1});
  if (o.rank) claims.push_back({*o.rank, o.rank_source.empty() ? "the rank given" : o.rank_source, 2});
  // "rank 3 by A and B; rank 5 by C": the claims grouped by the rank they state.
  std::map<uint32_t, std::vector<std::string>> by_rank;
  for (const Claim& c : claims) by_rank[c.rank].push_back(c.source);
  std::string ranks;
  for (const auto& [rank, sources] : by_rank) {
    ranks += (ranks.empty() ? "rank " : "; rank ") + std::to_string(rank) + " by ";
    for (size_t i = 0; i < sources.size(); ++i)
      ranks += (i == 0 ? "" : i + 1 == sources.size() ? " and " : ", ") + sources[i];
  }
  std::string kineto_pids;
  for (int64_t pid : d.cpu_pids) kineto_pids += (kineto_pids.empty() ? "" : ", ") + std::to_string(pid);
  const bool both_pids = h.pid && !d.cpu_pids.empty();
  const bool pids_differ = both_pids && std::find(d.cpu_pids.begin(), d.cpu_pids.end(), *h.pid) == d.cpu_pids.end();
  if (by_rank.size() > 1 || pids_differ) {
    std::string what = by_rank.size() > 1 ? ranks : "";
    if (pids_differ)
      what += (what.empty() ? "" : "; ") + std::string("process ") + std::to_string(*h.pid) +
              " by the host ET's \"pid\", " + kineto_pids + " by the Kineto trace's CPU ops";
    const std::string message = h.name + " and " + d.name + " are not one rank's recording: " + what;
    if (!o.force)
      throw Error(message + ". Pair each host ET with the Kineto trace recorded with it (--force links them anyway)");
    report.warnings.push_back(message + "; linked anyway (--force)");
    report.pairing = "contradicted (" + what + "), linked anyway (--force)";
    return;
  }
  const bool host_rank = std::any_of(claims.begin(), claims.end(), [](const Claim& c) { return c.side == 0; });
  const bool device_rank = std::any_of(claims.begin(), claims.end(), [](const Claim& c) { return c.side == 1; });
  report.pairing_verified = (host_rank && device_rank) || both_pids;
  std::string process;
  if (both_pids)
    process = std::to_string(*h.pid) + " in both";
  else if (h.pid)
    process = std::to_string(*h.pid) + " by the host ET only";
  else if (!d.cpu_pids.empty())
    process = kineto_pids + " by the Kineto trace only";
  const std::string said = ranks + (process.empty() ? "" : (ranks.empty() ? "process " : "; process ") + process);
  if (report.pairing_verified)
    report.pairing = said;
  else if (said.empty())
    report.pairing = "unverified: neither trace states a rank or a process id";
  else
    report.pairing = "unverified: " + said + ", which the other trace does not confirm";
}

}  // namespace chakra::link
