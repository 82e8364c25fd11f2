// ASTRA-sim's configuration files, read strictly: the reference silently ignores misspelt keys
// and crashes on missing ones; here both are errors naming the file and the key.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "chakra/astra/config.h"
#include "chakra/format/io.h"
#include "chakra/format/yaml.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra::astra {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& what) { throw Error(name + ": " + what); }

double parse_number(const std::string& text, const std::string& name, const std::string& key) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    fail(name, key + ": " + quoted_excerpt(text) + " is not a number");
  return v;
}

json parse_json(std::string_view text, const std::string& name) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    fail(name, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

uint64_t NetworkConfig::total_npus() const {
  uint64_t n = 1;
  for (uint32_t d : npus) n *= d;
  return npus.empty() ? 0 : n;
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all-reduce";
    case Collective::AllGather: return "all-gather";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllToAll: return "all-to-all";
  }
  return "?";
}

NetworkConfig parse_network(std::string_view yaml, const std::string& name) {
  // The one YAML reader (format/yaml.h); each key's list is kept as text, as the values were written.
  const nlohmann::ordered_json doc = parse_yaml(yaml, name);
  if (!doc.is_object()) fail(name, "expected 'key: [values]' lines (topology, npus_count, bandwidth, latency)");
  std::map<std::string, std::vector<std::string>> lists;
  for (const auto& [key, value] : doc.items()) {
    if (!std::set<std::string>{"topology", "npus_count", "bandwidth", "latency"}.count(key))
      fail(name, "unknown key " + quoted_excerpt(key) +
                     " (the analytical network has topology, npus_count, bandwidth, latency)");
    if (!value.is_array()) fail(name, quoted_excerpt(key) + " must be a list like [ 8, 4 ]");
    for (const auto& item : value) {
      if (item.is_structured()) fail(name, quoted_excerpt(key) + " must be a list of single values like [ 8, 4 ]");
      lists[key].push_back(item.is_string() ? item.get<std::string>() : item.dump());
    }
  }
  for (const char* key : {"topology", "npus_count", "bandwidth", "latency"})
    if (!lists.count(key) || lists[key].empty()) fail(name, "missing " + quoted_excerpt(key));
  size_t dims = lists["topology"].size();
  for (const char* key : {"npus_count", "bandwidth", "latency"})
    if (lists[key].size() != dims)
      fail(name, quoted_excerpt(key) + " has " + std::to_string(lists[key].size()) + " entries but 'topology' has " +
                     std::to_string(dims));
  NetworkConfig net;
  uint64_t total = 1;
  for (size_t d = 0; d < dims; ++d) {
    const std::string& t = lists["topology"][d];
    if (t == "Ring")
      net.topology.push_back(TopologyKind::Ring);
    else if (t == "FullyConnected")
      net.topology.push_back(TopologyKind::FullyConnected);
    else if (t == "Switch")
      net.topology.push_back(TopologyKind::Switch);
    else
      fail(name, "topology " + quoted_excerpt(t) + " is not supported (Ring, FullyConnected or Switch)");
    double n = parse_number(lists["npus_count"][d], name, "npus_count");
    if (n != std::floor(n) || n < 1 || n > (1u << 24))
      fail(name, "npus_count " + quoted_excerpt(lists["npus_count"][d]) + " must be an integer from 1 to 2^24");
    total *= static_cast<uint64_t>(n);
    if (total > (1u << 24)) fail(name, "more than 2^24 NPUs in total");
    net.npus.push_back(static_cast<uint32_t>(n));
    double bw = parse_number(lists["bandwidth"][d], name, "bandwidth");
    if (!(bw > 0)) fail(name, "bandwidth must be positive");
    net.bandwidth.push_back(bw);
    double lat = parse_number(lists["latency"][d], name, "latency");
    if (lat < 0) fail(name, "latency must not be negative");
    net.latency.push_back(lat);
  }
  return net;
}

NetworkConfig load_network(const std::string& path) { return parse_network(read_file(path), path); }

namespace {

AlgorithmChoice parse_algorithm(const std::string& s, const std::string& name, const std::string& key) {
  AlgorithmChoice a;
  std::string rest = s;
  if (rest.rfind("one", 0) == 0 && rest.size() > 3) {
    a.flat = true;
    rest = rest.substr(3);
    rest[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0])));
  }
  for (const AlgorithmInfo& info : collective_algorithms()) {
    if (a.flat && !info.flat) continue;
    if (rest == info.spelling) {
      a.kind = info.kind;
      return a;
    }
    if (info.windowed && rest.rfind(info.spelling, 0) == 0) {
      a.kind = info.kind;
      std::string w = rest.substr(std::string_view(info.spelling).size());
      if (w.find_first_not_of("0123456789") != std::string::npos || w.size() > 6 || std::stoi(w) < 1)
        fail(name, key + ": " + quoted_excerpt(s) + " is not a collective algorithm");
      a.window = std::stoi(w);
      return a;
    }
  }
  std::string known;
  for (int flat = 0; flat < 2; ++flat)
    for (const AlgorithmInfo& info : collective_algorithms())
      if (!flat || info.flat)
        known +=
            (known.empty() ? "" : ", ") + algorithm_name({info.kind, flat == 1, -1}) + (info.windowed ? "[N]" : "");
  fail(name, key + ": unknown collective algorithm " + quoted_excerpt(s) + " (" + known + ")");
}

}  // namespace

SystemConfig parse_system(std::string_view text, const std::string& name, const std::string& base_dir) {
  json j = parse_json(text, name);
  if (!j.is_object()) fail(name, "the system configuration must be a JSON object");
  SystemConfig c;
  auto number = [&](const std::string& key) -> double {
    const json& v = j[key];
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    if (!v.is_number()) fail(name, quoted_excerpt(key) + " must be a number");
    return v.get<double>();
  };
  auto string = [&](const std::string& key) -> std::string {
    if (!j[key].is_string()) fail(name, quoted_excerpt(key) + " must be a string");
    return j[key].get<std::string>();
  };
  auto count = [&](const std::string& key, double lo, double hi) -> double {
    double v = number(key);
    if (v != std::floor(v) || v < lo || v > hi)
      fail(name, quoted_excerpt(key) + " must be an integer from " + std::to_string(int64_t(lo)) + " to " +
                     std::to_string(int64_t(hi)));
    return v;
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "scheduling-policy") {
      std::string v = string(key);
      if (v == "LIFO")
        c.scheduling = SchedulingPolicy::LIFO;
      else if (v == "FIFO")
        c.scheduling = SchedulingPolicy::FIFO;
      else if (v == "EXPLICIT")
        c.scheduling = SchedulingPolicy::Explicit;
      else
        fail(name, "scheduling-policy " + quoted_excerpt(v) + " is not LIFO, FIFO or EXPLICIT");
    } else if (key == "collective-optimization") {
      std::string v = string(key);
      if (v == "baseline")
        c.optimization = CollectiveOptimization::Baseline;
      else if (v == "localBWAware")
        c.optimization = CollectiveOptimization::LocalBWAware;
      else
        fail(name, "collective-optimization " + quoted_excerpt(v) + " is not baseline or localBWAware");
    } else if (key == "endpoint-delay") {
      c.endpoint_delay = count(key, 0, 1e12);
    } else if (key == "active-chunks-per-dimension") {
      c.active_chunks_per_dimension = static_cast<uint32_t>(count(key, 1, 1e6));
    } else if (key == "preferred-dataset-splits") {
      c.preferred_dataset_splits = static_cast<uint32_t>(count(key, 1, 1e6));
    } else if (key == "local-mem-bw") {
      c.local_mem_bw = number(key);
      if (!(c.local_mem_bw > 0)) fail(name, "'local-mem-bw' must be positive");
    } else if (key == "peak-perf") {
      c.peak_perf = number(key);
      if (!(c.peak_perf > 0)) fail(name, "'peak-perf' must be positive");
    } else if (key == "roofline-enabled") {
      c.roofline = number(key) != 0;
    } else if (key == "replay-only") {
      c.replay_only = number(key) != 0;
    } else if (key == "model-shared-bus") {
      if (number(key) != 0) fail(name, "model-shared-bus: 1 (the LogGP memory-bus model) is not supported");
    } else if (key == "per-node-custom-implementation") {
      fail(name, "per-node-custom-implementation is not supported yet");
    } else if (key == "trace-enabled" || key == "track-local-mem" || key == "local-mem-trace-filename" ||
               key == "boost-mode" || key == "intra-dimension-scheduling" || key == "inter-dimension-scheduling" ||
               key == "L" || key == "o" || key == "g" || key == "G" || key == "local-reduction-delay") {
      c.notes.push_back(quoted_excerpt(key) + " has no effect on the simulated times; ignored");
    } else {
      bool matched = false;
      for (int t = 0; t < kCollectiveTypes; ++t) {
        std::string base = collective_name(static_cast<Collective>(t));
        if (key == base + "-implementation") {
          if (!it->is_array() || it->empty())
            fail(name, quoted_excerpt(key) + " must be a non-empty list of algorithms");
          for (const json& a : *it) {
            if (!a.is_string()) fail(name, quoted_excerpt(key) + " must list algorithm names");
            c.algorithms[t].push_back(parse_algorithm(a.get<std::string>(), name, key));
          }
          matched = true;
        } else if (key == base + "-implementation-custom") {
          if (!it->is_array() || it->size() != 1 || !(*it)[0].is_string())
            fail(name, quoted_excerpt(key) + " must be a list holding one trace prefix");
          std::string prefix = (*it)[0].get<std::string>();
          std::error_code ec;
          bool here = std::filesystem::exists(prefix + ".0.et", ec);
          if (!here && !base_dir.empty() && std::filesystem::path(prefix).is_relative()) {
            // The reference resolves against its working directory; also accept paths
            // relative to the config file or one of its parent folders.
            for (std::filesystem::path dir = base_dir; !dir.empty(); dir = dir.parent_path()) {
              if (std::filesystem::exists((dir / (prefix + ".0.et")), ec)) {
                prefix = (dir / prefix).string();
                break;
              }
              if (dir == dir.parent_path()) break;
            }
          }
          c.custom[t] = prefix;
          matched = true;
        }
      }
      if (!matched) fail(name, "unknown key " + quoted_excerpt(key) + " (ASTRA-sim would silently ignore it)");
    }
  }
  return c;
}

SystemConfig load_system(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_system(read_file(path), path, dir.empty() ? "." : dir);
}

RemoteMemoryConfig parse_remote_memory(std::string_view text, const std::string& name) {
  json j = parse_json(text, name);
  if (!j.is_object() || !j.contains("memory-type") || !j["memory-type"].is_string())
    fail(name, "expected an object with a \"memory-type\" string");
  RemoteMemoryConfig m;
  std::string type = j["memory-type"].get<std::string>();
  if (type == "NO_MEMORY_EXPANSION")
    m.type = MemoryType::None;
  else if (type == "PER_NPU_MEMORY_EXPANSION")
    m.type = MemoryType::PerNpu;
  else if (type == "PER_NODE_MEMORY_EXPANSION")
    m.type = MemoryType::PerNode;
  else if (type == "MEMORY_POOL")
    m.type = MemoryType::Pool;
  else
    fail(name, "memory-type " + quoted_excerpt(type) + " is not known");
  auto number = [&](const char* key, bool required) -> double {
    if (!j.contains(key)) {
      if (required) fail(name, quoted_excerpt(key) + " is required for " + type);
      return 0;
    }
    if (!j[key].is_number()) fail(name, quoted_excerpt(key) + " must be a number");
    return j[key].get<double>();
  };
  bool expanded = m.type != MemoryType::None;
  m.latency = number("remote-mem-latency", expanded);
  m.bandwidth = number("remote-mem-bw", expanded);
  if (expanded && !(m.bandwidth > 0)) fail(name, "'remote-mem-bw' must be positive");
  if (m.latency < 0) fail(name, "'remote-mem-latency' must not be negative");
  if (m.type == MemoryType::PerNode) {
    double n = number("num-npus-per-node", true);
    if (n < 1 || n != std::floor(n)) fail(name, "'num-npus-per-node' must be a positive integer");
    m.npus_per_node = static_cast<uint32_t>(n);
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!std::set<std::string>{"memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes", "num-npus-per-node"}
             .count(it.key()))
      fail(name, "unknown key " + quoted_excerpt(it.key()));
  return m;
}

RemoteMemoryConfig load_remote_memory(const std::string& path) { return parse_remote_memory(read_file(path), path); }

CommGroups parse_comm_groups(std::string_view text, const std::string& name) {
  json j = parse_json(text, name);
  if (!j.is_object()) fail(name, "expected an object mapping group ids to rank lists");
  CommGroups groups;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(key) <= 0)
      fail(name, "group id " + quoted_excerpt(key) + " must be an integer > 0 (0 means all NPUs)");
    if (!it->is_array() || it->empty()) fail(name, "group " + key + " must list its ranks");
    std::vector<uint32_t> ranks;
    std::set<uint32_t> seen;
    for (const json& r : *it) {
      if (!r.is_number_unsigned()) fail(name, "group " + key + ": ranks must be integers >= 0");
      uint64_t v = r.get<uint64_t>();
      if (v >= (1u << 24) || !seen.insert(static_cast<uint32_t>(v)).second)
        fail(name, "group " + key + ": rank " + std::to_string(v) + " is repeated or too large");
      ranks.push_back(static_cast<uint32_t>(v));
    }
    groups[std::stoi(key)] = std::move(ranks);
  }
  return groups;
}

std::string format_comm_groups(const std::map<std::string, std::vector<int64_t>>& groups) {
  // Numeric group names sort numerically, as ASTRA-sim users write them.
  std::vector<std::string> names;
  for (const auto& [name, ranks] : groups) names.push_back(name);
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    if (a.size() != b.size() && std::all_of(a.begin(), a.end(), ::isdigit) &&
        std::all_of(b.begin(), b.end(), ::isdigit))
      return a.size() < b.size();
    return a < b;
  });
  std::string out = "{\n";
  for (size_t i = 0; i < names.size(); ++i) {
    out += "  " + nlohmann::json(names[i]).dump() + ": [";
    const auto& ranks = groups.at(names[i]);
    for (size_t k = 0; k < ranks.size(); ++k) out += (k ? ", " : "") + std::to_string(ranks[k]);
    out += i + 1 < names.size() ? "],\n" : "]\n";
  }
  return out + "}\n";
}

std::string format_comm_groups(const CommGroups& groups) {
  std::map<std::string, std::vector<int64_t>> named;
  for (const auto& [id, members] : groups) named[std::to_string(id)].assign(members.begin(), members.end());
  return format_comm_groups(named);
}

CommGroups load_comm_groups(const std::string& path) { return parse_comm_groups(read_file(path), path); }

std::optional<CommGroups> metadata_process_groups(std::string_view inputs_values, uint32_t npus,
                                                  const std::string& where) {
  const std::string text(wrapped_process_groups(inputs_values).value_or(inputs_values));
  if (text.empty()) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    if (j.is_array() && j.size() == 1 && j[0].is_string()) j = nlohmann::json::parse(j[0].get<std::string>());
  } catch (const std::exception&) {
    return std::nullopt;  // not process-group information
  }
  if (!j.is_array()) return std::nullopt;
  CommGroups groups;
  for (const auto& item : j) {
    if (!item.is_object() || !item.contains("pg_name") || !item.contains("ranks")) continue;
    std::string name = item["pg_name"].is_string() ? item["pg_name"].get<std::string>() : item["pg_name"].dump();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9)
      throw Error(where + ": process group name '" + name + "' is not a number");
    std::vector<uint32_t>& members = groups[std::stoi(name)];
    for (const auto& r : item["ranks"]) {
      if (!r.is_number_unsigned() || r.get<uint64_t>() >= npus)
        throw Error(where + ": process group " + name + " has an invalid rank");
      members.push_back(r.get<uint32_t>());
    }
    if (members.empty())
      for (uint32_t i = 0; i < npus; ++i) members.push_back(i);
  }
  return groups;
}

}  // namespace chakra::astra

namespace chakra::astra {

const char* topology_name(TopologyKind t) {
  switch (t) {
    case TopologyKind::Ring: return "Ring";
    case TopologyKind::FullyConnected: return "FullyConnected";
    case TopologyKind::Switch: return "Switch";
  }
  return "?";
}

std::string format_network(const NetworkConfig& net) {
  auto list = [&](auto&& item) {
    std::string out = "[ ";
    for (size_t d = 0; d < net.topology.size(); ++d) out += (d ? ", " : "") + item(d);
    return out + " ]";
  };
  return "topology: " + list([&](size_t d) { return std::string(topology_name(net.topology[d])); }) + "\n" +
         "npus_count: " + list([&](size_t d) { return std::to_string(net.npus[d]); }) + "\n" +
         "bandwidth: " + list([&](size_t d) { return format_number(net.bandwidth[d]); }) + "  # GB/s\n" +
         "latency: " + list([&](size_t d) { return format_number(net.latency[d]); }) + "  # ns\n";
}

std::span<const AlgorithmInfo> collective_algorithms() {
  static constexpr AlgorithmInfo kAlgorithms[] = {
#define CHAKRA_COLLECTIVE_ALGORITHM(Name, spelling, flat, windowed) {Algorithm::Name, spelling, flat, windowed},
#include "chakra/astra/collective_algorithms.def"
#undef CHAKRA_COLLECTIVE_ALGORITHM
  };
  return kAlgorithms;
}

std::string algorithm_name(const AlgorithmChoice& a) {
  std::string base = collective_algorithms()[size_t(a.kind)].spelling;
  if (a.window > 0 && collective_algorithms()[size_t(a.kind)].windowed) base += std::to_string(a.window);
  if (a.flat)
    base =
        "one" + std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(base[0])))) + base.substr(1);
  return base;
}

namespace {
// Integral values as JSON integers (what ASTRA-sim's own files use), others as doubles.
json number_value(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}
}  // namespace

std::string format_system(const SystemConfig& sys) {
  json j = json::object();
  j["scheduling-policy"] = sys.scheduling == SchedulingPolicy::LIFO   ? "LIFO"
                           : sys.scheduling == SchedulingPolicy::FIFO ? "FIFO"
                                                                      : "EXPLICIT";
  j["endpoint-delay"] = number_value(sys.endpoint_delay);
  j["active-chunks-per-dimension"] = sys.active_chunks_per_dimension;
  if (sys.preferred_dataset_splits > 0) j["preferred-dataset-splits"] = sys.preferred_dataset_splits;
  for (int t = 0; t < kCollectiveTypes; ++t) {
    const std::string base = collective_name(static_cast<Collective>(t));
    if (!sys.custom[t].empty()) j[base + "-implementation-custom"] = json::array({sys.custom[t]});
    if (sys.algorithms[t].empty()) continue;
    json names = json::array();
    for (const AlgorithmChoice& a : sys.algorithms[t]) names.push_back(algorithm_name(a));
    j[base + "-implementation"] = names;
  }
  j["collective-optimization"] = sys.optimization == CollectiveOptimization::Baseline ? "baseline" : "localBWAware";
  if (sys.local_mem_bw > 0) j["local-mem-bw"] = number_value(sys.local_mem_bw);
  if (sys.peak_perf > 0) j["peak-perf"] = number_value(sys.peak_perf);
  if (sys.roofline) j["roofline-enabled"] = 1;
  if (sys.replay_only) j["replay-only"] = 1;
  return j.dump(4) + "\n";
}

}  // namespace chakra::astra
