// A sweep's `project` workload: a measured run, opened from its folder, grown by data
// parallelism (sweep_parts.h).
#include <algorithm>
#include <filesystem>
#include <memory>

#include "chakra/app/workspace.h"
#include "chakra/astra/feeder.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/sha256.h"
#include "chakra/synth/project.h"
#include "app/sweep_parts.h"

namespace chakra::sweep {
namespace {

// The folder's files in name order, documentation (*.md) aside.
std::vector<std::filesystem::path> run_files(const std::string& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw Error("workload.project.traces: " + folder + ": no such folder");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().extension() != ".md") files.push_back(entry.path());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  if (files.empty()) throw Error("workload.project.traces: " + folder + ": no trace files in it");
  return files;
}

std::string hash_of(const std::vector<std::pair<std::string, std::string>>& named_bytes) {
  std::string all;
  for (const auto& [name, bytes] : named_bytes) all += name + "\n" + std::to_string(bytes.size()) + "\n" + bytes;
  return to_hex(sha256(all));
}

std::vector<std::pair<std::string, std::string>> read_run(const std::string& folder) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : run_files(folder)) out.emplace_back(f.filename().string(), read_file(f.string()));
  return out;
}

}  // namespace

std::string folder_sha256(const std::string& folder) { return hash_of(read_run(folder)); }

ProjectedRun projected_run(const Json& v, const std::string& base_dir) {
  const char* usage = "workload.project: {traces: FOLDER, to: NPUS, dp: [group ids], sha256: HEX}";
  if (!v.is_object() || !v.contains("traces") || !v.contains("to")) throw Error(usage);
  std::string folder, sha;
  uint64_t to = 0;
  std::optional<std::vector<int>> dp;
  for (const auto& [key, x] : v.items()) {
    const std::string what = "workload.project." + key;
    if (key == "traces") {
      folder = resolve(base_dir, text_of(x, what));
    } else if (key == "to") {
      to = as_uint(x, what);
      if (to < 1 || to > 65536) throw Error(what + ": " + describe(x) + " ranks (1..65536)");
    } else if (key == "sha256") {
      sha = text_of(x, what);
    } else if (key == "dp") {
      if (!x.is_array() || x.empty()) throw Error(what + ": a list of group ids (0: the collectives without a group)");
      dp.emplace();
      for (const Json& id : x) dp->push_back(static_cast<int>(std::min<uint64_t>(as_uint(id, what), 1'000'000'000)));
    } else {
      throw Error(what + ": unknown field (traces, to, dp, sha256)");
    }
  }
  const std::vector<std::pair<std::string, std::string>> files = read_run(folder);
  if (const std::string found = hash_of(files); !sha.empty() && found != sha)
    throw Error(folder + ": its files' SHA-256 is " + found + ", not the " + sha +
                " the workload names: they are not the run it was defined on");
  Workspace ws;
  for (const auto& [name, bytes] : files)
    ws.add({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
           (std::filesystem::path(folder) / name).string());
  std::vector<const Trace*> ranks = ws.traces();
  for (size_t r = 0; r < ws.ranks().size(); ++r)
    if (ws.ranks()[r]->rank != r)
      throw Error(folder + ": its ranks are not 0.." + std::to_string(ws.ranks().size() - 1) + " (rank " +
                  std::to_string(ws.ranks()[r]->rank) + " from " + ws.ranks()[r]->source + ")");
  const synth::Plan plan = synth::plan_data_parallel(ranks, ws.groups, static_cast<uint32_t>(to), dp);
  // Each traced rank as the simulator reads it, copied into its replicas as they are read.
  auto traced = std::make_shared<std::vector<std::string>>();
  for (const Trace* t : ranks) traced->push_back(encode_et(simulation_copy(*t)));
  ProjectedRun out;
  out.npus = static_cast<uint32_t>(to);
  out.make = [traced, plan, folder](uint32_t r) {
    const std::string& b = (*traced)[r % traced->size()];
    Trace t = read_et(memory_input({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, folder));
    synth::project_rank(t, plan, r);
    return encode_et(t);
  };
  out.groups = synth::projected_groups(plan, ws.groups);
  return out;
}

}  // namespace chakra::sweep
