#include "chakra/app/sim_presets.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "chakra/app/share_link.h"
#include "chakra/support/error.h"

namespace chakra {

using namespace astra;  // presets are ASTRA-sim configs

extern const char* const kClusterPresetsJson;

namespace {

std::vector<ClusterPreset> parse_presets() {
  std::vector<ClusterPreset> out;
  nlohmann::ordered_json all = nlohmann::ordered_json::parse(kClusterPresetsJson);
  for (auto it = all.begin(); it != all.end(); ++it) {
    if (it.key().empty() || it.key()[0] == '_') continue;
    const auto& p = it.value();
    ClusterPreset c;
    c.name = it.key();
    c.title = p.at("title").get<std::string>();
    c.source = p.at("source").get<std::string>();
    // Through the YAML and JSON readers, so presets obey exactly the rules of dropped files.
    std::string yaml;
    for (const char* key : {"topology", "npus_count", "bandwidth", "latency"}) {
      yaml += std::string(key) + ": [";
      for (const auto& v : p.at("network").at(key))
        yaml +=
            (yaml.back() == '[' ? "" : ", ") + (v.is_string() ? v.get<std::string>() : format_number(v.get<double>()));
      yaml += "]\n";
    }
    std::string where = "presets.json: " + c.name;
    c.network = parse_network(yaml, where);
    c.system = parse_system(p.at("system").dump(), where);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

const std::vector<ClusterPreset>& cluster_presets() {
  static const std::vector<ClusterPreset> presets = parse_presets();
  return presets;
}

const ClusterPreset& cluster_preset(std::string_view name) {
  std::string known;
  for (const ClusterPreset& p : cluster_presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error("unknown cluster preset '" + std::string(name) + "' (known: " + known + ")");
}

NetworkConfig fit_network(const NetworkConfig& net, uint64_t npus) {
  if (npus < 2) throw Error("a simulated network needs at least 2 NPUs, not " + std::to_string(npus));
  if (net.total_npus() == npus) return net;
  NetworkConfig out;
  uint64_t left = npus;
  for (size_t d = 0; d + 1 < net.topology.size(); ++d) {
    if (left % net.npus[d] != 0 || left / net.npus[d] < 2) break;
    out.topology.push_back(net.topology[d]);
    out.npus.push_back(net.npus[d]);
    out.bandwidth.push_back(net.bandwidth[d]);
    out.latency.push_back(net.latency[d]);
    left /= net.npus[d];
  }
  if (net.topology.empty()) {
    out.topology.push_back(TopologyKind::Ring);
    out.bandwidth.push_back(50);
    out.latency.push_back(500);
  } else {
    // The remaining NPUs form one more dimension with the next dimension's links (the outer
    // network when the inner dimensions were kept, the first otherwise).
    size_t from = out.topology.empty() ? 0 : net.topology.size() - 1;
    out.topology.push_back(net.topology[from]);
    out.bandwidth.push_back(net.bandwidth[from]);
    out.latency.push_back(net.latency[from]);
  }
  out.npus.push_back(static_cast<uint32_t>(left));
  return out;
}

void fit_system(SystemConfig& sys, size_t dims) {
  for (auto& list : sys.algorithms) {
    if (list.empty()) continue;
    while (list.size() < dims) list.push_back(list.back());
    list.resize(dims);
  }
}

}  // namespace chakra
