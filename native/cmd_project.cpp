// chakra project: a workload traced on N ranks as it would run on M (data parallelism:
// chakra/synth/project.h says how; pipeline and tensor parallelism for synthetic traces).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/error.h"
#include "chakra/synth/project.h"
#include "cli.h"
#include "commands.h"

namespace {

// --groups FILE: {"dp": [ids...]}, the data-parallel groups, each one of `groups`.
std::vector<int> data_parallel_ids(const std::string& path, const chakra::astra::CommGroups& groups) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(chakra::read_file(path, {}));
  } catch (const nlohmann::json::exception& e) {
    throw chakra::Error(path + ": not JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("dp") || !j["dp"].is_array())
    throw chakra::Error(path + ": expected {\"dp\": [group ids]} naming the data-parallel groups");
  std::vector<int> ids;
  for (const auto& v : j["dp"]) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1'000'000'000)
      throw chakra::Error(path + ": dp lists group ids (integers >= 0; 0: the collectives without a group), not " +
                          v.dump());
    ids.push_back(v.get<int>());
    if (ids.back() != 0 && !groups.count(ids.back())) {
      std::string known;
      for (const auto& [id, members] : groups) known += (known.empty() ? "" : ", ") + std::to_string(id);
      throw chakra::Error(path + ": dp names group " + std::to_string(ids.back()) +
                          ", which is not among the groups (" + (known.empty() ? "there are none" : known) + ")");
    }
  }
  if (ids.empty()) throw chakra::Error(path + ": dp is an empty list; name the data-parallel groups' ids");
  return ids;
}

// A trace that fails validation (a cycle, duplicate ids, ...) would project into as many
// broken copies: refused with what validation found.
void refuse_invalid(const chakra::Trace& trace, const std::string& path) {
  const chakra::ValidationReport report = chakra::validate(trace, {.max_per_code = 3});
  if (report.ok()) return;
  std::string found;
  for (const chakra::Finding& f : report.findings)
    if (f.severity == chakra::Severity::Error && found.size() < 600) found += "\n  " + f.code + ": " + f.message;
  throw chakra::Error(path + ": fails validation (" + std::to_string(report.errors) + " error" +
                      (report.errors == 1 ? "" : "s") + "), so it is not projected:" + found + "\n(chakra validate " +
                      path + " lists every finding)");
}

// --pp / --tp: only where the layers are known, in traces chakra synth made (their metadata
// names the command): made again with the degree grown M/N times, so the same layers are
// re-staged over more pipeline stages (or each block re-sharded over more tensor ranks).
int reshape_synthetic(const cli::Args& a, const std::string& prefix, uint32_t from, uint32_t to,
                      const std::string& degree) {
  const std::string generator =
      chakra::synth::synth_command(chakra::read_et(prefix + ".0.et", cli::read_options(a, nullptr)));
  const std::string synth = "chakra synth ";
  if (generator.empty())
    throw chakra::Error(
        prefix + ".0.et: " + degree + " re-" + (degree == "--pp" ? "stages layers" : "shards blocks") +
        ", which only traces chakra synth made name (their metadata holds the command); this one names no "
        "generator. Project it by data parallelism (--dp)");
  if (to % from)
    throw chakra::Error("project: --to " + std::to_string(to) + " must be a multiple of the " + std::to_string(from) +
                        " ranks traced");
  std::vector<std::string> words;
  for (size_t at = synth.size(); at < generator.size();) {
    const size_t end = std::min(generator.find(' ', at), generator.size());
    if (end > at) words.push_back(generator.substr(at, end - at));
    at = end + 1;
  }
  auto it = std::find(words.begin(), words.end(), degree);
  if (it == words.end() || it + 1 == words.end())
    throw chakra::Error(prefix + ".0.et: its generator command has no " + degree);
  const uint64_t grown = std::stoull(*(it + 1)) * (to / from);
  std::cerr << "chakra project: " << from << " -> " << to << " ranks: " << degree << " " << *(it + 1) << " -> " << grown
            << ", synthesized again (" << generator.substr(0, 60) << "...)\n";
  *(it + 1) = std::to_string(grown);
  words.insert(words.end(), {"-o", a.get("--output")});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return run_command("synth", static_cast<int>(words.size()), argv.data());
}

int run(const cli::Args& a) {
  if (a.has("--tp") + a.has("--pp") + a.has("--dp") > 1) a.fail("give one of --dp, --tp, --pp");
  const std::string prefix = a.values("IN_PREFIX")[0];
  const uint32_t to = static_cast<uint32_t>(a.get_uint("--to", 1u << 20));
  uint32_t from = 0;
  if (a.has("--from")) {
    from = static_cast<uint32_t>(a.get_uint("--from", 1u << 20));
  } else {
    while (std::filesystem::exists(prefix + "." + std::to_string(from) + ".et")) ++from;
    if (!from) throw chakra::Error(prefix + ".0.et: no such trace (give IN_PREFIX of IN_PREFIX.<rank>.et)");
  }
  if (!from) a.fail("--from must be at least 1");
  if (a.has("--tp") || a.has("--pp")) {
    if (a.has("--explain")) a.fail("--explain is for --dp");
    return reshape_synthetic(a, prefix, from, to, a.has("--tp") ? "--tp" : "--pp");
  }
  // The traced ranks: their bytes, each rank projected decodes its own copy.
  std::vector<std::string> bytes(from);
  std::vector<chakra::Trace> traces(from);
  const chakra::ReadOptions read = cli::read_options(a, nullptr);
  cli::run_jobs(
      from,
      [&](size_t r) {
        const std::string path = prefix + "." + std::to_string(r) + ".et";
        bytes[r] = chakra::read_file(path, read.input);
        traces[r] =
            chakra::read_et(chakra::memory_input({reinterpret_cast<const uint8_t*>(bytes[r].data()), bytes[r].size()},
                                                 path, read.input),
                            read);
        refuse_invalid(traces[r], path);
      },
      "reading");
  chakra::astra::CommGroups groups;
  std::string groups_source = a.has("--comm-group") ? a.get("--comm-group") : prefix + ".comm_group.json";
  if (std::filesystem::exists(groups_source))
    groups = chakra::astra::load_comm_groups(groups_source);
  else if (a.has("--comm-group"))
    throw chakra::Error(groups_source + ": no such file");
  else
    groups = chakra::synth::metadata_groups(traces[0]),
    groups_source = groups.empty() ? "" : prefix + ".0.et's METADATA nodes";
  std::vector<const chakra::Trace*> ranks;
  for (const auto& t : traces) ranks.push_back(&t);
  std::optional<std::vector<int>> given;
  if (a.has("--groups")) given = data_parallel_ids(a.get("--groups"), groups);
  const chakra::synth::Plan plan = chakra::synth::plan_data_parallel(ranks, groups, to, given);
  traces.clear();
  std::cerr << "chakra project: " << from << " -> " << to << " ranks, " << plan.factor() << " data-parallel replica"
            << (plan.factor() == 1 ? "" : "s") << (groups_source.empty() ? "" : " (groups from " + groups_source + ")")
            << "\n"
            << plan.explanation;
  if (a.has("--explain")) return cli::kOk;
  const std::string out = a.get("--output");
  std::map<std::string, std::vector<int64_t>> projected;
  for (const auto& [id, members] : chakra::synth::projected_groups(plan, groups))
    projected[std::to_string(id)] = std::vector<int64_t>(members.begin(), members.end());
  cli::write_rank_traces(
      out, to,
      [&](size_t r, chakra::Trace& trace) {
        const std::string& b = bytes[r % from];
        trace = chakra::read_et(
            chakra::memory_input({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, prefix, read.input), read);
        chakra::synth::project_rank(trace, plan, static_cast<uint32_t>(r));
      },
      projected.empty() ? "" : out + ".comm_group.json", projected);
  std::cerr << "  -> " << out << ".{0.." << to - 1 << "}.et"
            << (projected.empty() ? "" : ", " + out + ".comm_group.json") << "\n";
  return cli::kOk;
}

}  // namespace

int cmd_project(int argc, char** argv) {
  cli::Args args("chakra project",
                 "Project a workload traced on N ranks to M ranks by data parallelism: M/N replicas of the traced\n"
                 "ranks, the data-parallel groups grown across them (the same per-rank gradient sizes, a larger\n"
                 "ring), every other group kept inside each replica, compute and memory unchanged. Which groups\n"
                 "are data-parallel is inferred from evidence in the traces (the chakra synth command in their\n"
                 "metadata, flat gradient buckets against activation-shaped tensors, how often each family\n"
                 "synchronises) and said; without it the command stops and asks for --groups. Traces failing\n"
                 "validation are refused. --pp / --tp re-stage the layers (re-shard the blocks) of traces chakra\n"
                 "synth made. Then chakra simulate.");
  args.positional("IN_PREFIX", "the traced ranks, IN_PREFIX.<rank>.et (and IN_PREFIX.comm_group.json)");
  args.option("--from", "N", "ranks traced (default: as many IN_PREFIX.<rank>.et as exist)");
  args.option("--to", "M", "ranks to project to, a multiple of N", "", true);
  args.flag("--dp", "grow data parallelism (the default, and for now the only one)");
  args.flag("--tp", "grow tensor parallelism: re-shard each block (traces chakra synth made)");
  args.flag("--pp", "grow pipeline parallelism: re-stage the layers over more stages (traces chakra synth made)");
  args.option("--output", "OUT_PREFIX", "write OUT_PREFIX.<rank>.et and OUT_PREFIX.comm_group.json");
  args.alias("-o", "--output");
  args.option("--comm-group", "FILE",
              "the traced ranks' groups (default: IN_PREFIX.comm_group.json, else the traces' METADATA)");
  args.option("--groups", "FILE",
              "{\"dp\": [ids]}: the data-parallel groups, instead of inferring them (0: the collectives without a "
              "group, the whole world)");
  args.flag("--explain", "say what would be projected and write nothing");
  cli::add_read_options(args);
  args.parse(argc, argv);
  if (!args.has("--output") && !args.has("--explain")) args.fail("--output OUT_PREFIX is required (or --explain)");
  return cli::run_guarded("chakra project", run, args);
}

CHAKRA_COMMAND(110, "project", cmd_project,
               "a workload traced on N ranks as it would run on M (data parallelism), to simulate");
