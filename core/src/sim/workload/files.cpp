// Where a workload's per-NPU traces are: PREFIX.<npu>.et (or .et.gz), or a folder of them.
#include <filesystem>
#include <map>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "sim/astra_names.h"

namespace chakra::sim {

namespace fs = std::filesystem;

std::string npu_trace_file(const std::string& prefix, uint32_t npu) {
  const std::string et = prefix + "." + std::to_string(npu) + ".et", gz = et + ".gz";
  std::error_code ec;
  const bool plain = fs::exists(et, ec), gzipped = fs::exists(gz, ec);
  if (plain && gzipped)
    throw Error(et + " and " + gz + " both exist: which one NPU " + std::to_string(npu) +
                " reads is unknown; remove one");
  return gzipped ? gz : et;
}

WorkloadFolder workload_folder(const std::string& folder) {
  // Per stem, the NPUs' file names.
  std::map<std::string, std::map<uint32_t, std::string>> stems;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || name.starts_with('.')) continue;
    std::string_view base = name;
    if (base.ends_with(".gz")) base.remove_suffix(3);
    if (!base.ends_with(".et")) continue;
    base.remove_suffix(3);
    const size_t dot = base.rfind('.');
    if (dot == std::string_view::npos || dot == 0) continue;
    const std::string_view digits = base.substr(dot + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      continue;
    const uint32_t npu = static_cast<uint32_t>(std::stoul(std::string(digits)));
    auto [it, fresh] = stems[std::string(base.substr(0, dot))].emplace(npu, name);
    if (!fresh)
      throw Error(folder + ": two traces of NPU " + std::to_string(npu) + ", " + it->second + " and " + name +
                  "; remove one");
  }
  if (ec) throw Error(folder + ": cannot list the folder: " + ec.message());
  if (stems.empty()) throw Error(folder + ": no per-NPU traces (STEM.<npu>.et or .et.gz) in this folder");
  if (stems.size() > 1) {
    std::string each;
    for (const auto& [stem, files] : stems)
      each += (each.empty() ? "" : ", ") + stem + ".<npu>.et (" + std::to_string(files.size()) + ")";
    throw Error(folder + ": traces of " + std::to_string(stems.size()) + " workloads, " + each +
                "; name one by its prefix (" + (fs::path(folder) / stems.begin()->first).string() + ")");
  }
  const auto& [stem, files] = *stems.begin();
  uint32_t expected = 0;
  for (const auto& [npu, name] : files) {
    if (npu != expected)
      throw Error(folder + ": " + stem + ".<npu>.et for NPUs up to " + std::to_string(files.rbegin()->first) +
                  " but none for NPU " + std::to_string(expected));
    ++expected;
  }
  WorkloadFolder w;
  w.prefix = (fs::path(folder) / stem).string();
  w.npus = static_cast<uint32_t>(files.size());
  // `chakra convert` writes STEM.comm_group.json, ASTRA-sim's examples comm_group.json, STAGE
  // STEM.json (taken when it reads as groups: other JSON may have that name).
  std::vector<std::string> groups;
  for (const std::string& name : {stem + ".comm_group.json", std::string("comm_group.json")})
    if (fs::is_regular_file(fs::path(folder) / name, ec)) groups.push_back((fs::path(folder) / name).string());
  if (const std::string stage = (fs::path(folder) / (stem + ".json")).string(); fs::is_regular_file(stage, ec)) {
    try {
      load_comm_groups(stage);
      groups.push_back(stage);
    } catch (const Error&) {}
  }
  if (groups.size() > 1) {
    std::string each;
    for (const std::string& g : groups) each += (each.empty() ? "" : ", ") + g;
    throw Error(folder + ": " + std::to_string(groups.size()) + " comm-group files, " + each + "; name the one to use");
  }
  if (!groups.empty()) w.comm_group = groups[0];
  return w;
}

}  // namespace chakra::sim
