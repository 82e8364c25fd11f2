// How each kind of file is opened into a workspace: the open_<function> of each importers.def line.
#include <chrono>

#include "chakra/app/suite.h"
#include "chakra/app/workspace.h"
#include "chakra/astra/config.h"
#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "chakra/support/stopwatch.h"
#include "chakra/support/text.h"
#include "importer_parts.h"

namespace chakra::importer_functions {

namespace {
constexpr uint64_t kMaxSweepTableBytes = uint64_t{64} << 20;  // rows are held as JSON values
}  // namespace

std::string open_chakra_et(Workspace& w, WorkspaceFile& file) {
  if (file.is_conversion()) return w.put_converted(file);
  return w.put_file_rank(file.name(), file.size(), file.decode_ms(), file.take_trace());
}

std::string open_chakra_json(Workspace& w, WorkspaceFile& file) {
  const auto start = std::chrono::steady_clock::now();
  Trace trace = read_json_trace(file.text(), file.name());
  return w.put_file_rank(file.name(), file.size(), ms_since(start), std::move(trace));
}

std::string open_pytorch_host(Workspace& w, WorkspaceFile& file) { return w.put_pytorch_file(file); }
std::string open_kineto(Workspace& w, WorkspaceFile& file) { return w.put_pytorch_file(file); }

std::string open_text_workload(Workspace& w, WorkspaceFile& file) {
  return w.put_text_workload(file.name(), parse_text_workload(file.text(), file.name()));
}

std::string open_network_yaml(Workspace& w, WorkspaceFile& file) {
  w.network = astra::parse_network(file.text(), file.name());
  w.network_source = file.name();
  return file.name() + ": network of " + std::to_string(w.network->total_npus()) + " NPUs";
}

std::string open_system_config(Workspace& w, WorkspaceFile& file) {
  w.system = astra::parse_system(file.text(), file.name());
  w.system_source = file.name();
  return file.name() + ": system config";
}

std::string open_comm_groups(Workspace& w, WorkspaceFile& file) {
  w.groups = astra::parse_comm_groups(file.text(), file.name());
  return file.name() + ": " + std::to_string(w.groups.size()) + " communicator groups";
}

std::string open_remote_memory(Workspace& w, WorkspaceFile& file) {
  w.memory = astra::parse_remote_memory(file.text(), file.name());
  return file.name() + ": remote-memory config";
}

std::string open_stablehlo(Workspace& w, WorkspaceFile& file) { return w.put_stablehlo(file.text(), file.name()); }

std::string open_sweep_table(Workspace& w, WorkspaceFile& file) {
  const std::string& name = file.name();
  if (file.size() > kMaxSweepTableBytes)
    throw Error(name + ": a sweep table of " + format_bytes(file.size()) + "; tables up to " +
                format_bytes(kMaxSweepTableBytes) + " are opened here");
  sweep::ReadRows rows = sweep::read_rows(file.text(), name);
  if (rows.rows.empty()) throw Error(name + ": a sweep table with no rows");
  const std::string message = name + ": a sweep table of " + std::to_string(rows.rows.size()) + " rows" +
                              (rows.truncated ? " (its last line was cut short)" : "");
  w.sweep_table = Workspace::SweepTableFile{name, std::move(rows)};
  return message;
}

std::string open_suite_result(Workspace& w, WorkspaceFile& file) {
  if (file.size() > kMaxSweepTableBytes)
    throw Error(file.name() + ": a suite result of " + format_bytes(file.size()) + "; results up to " +
                format_bytes(kMaxSweepTableBytes) + " are opened here");
  if (file.text().find("\"suite_board\"") != std::string_view::npos) {  // a board: its results, best first
    suite::Board board = suite::read_board(file.text(), file.name());
    for (size_t i = 0; i < board.results.size(); ++i)
      w.suite_results.push_back({board.sources[i], std::move(board.results[i])});
    return file.name() + ": a board of " + std::to_string(board.results.size()) + " results of " +
           w.suite_results.back().result["suite"].get<std::string>();
  }
  suite::Json result = suite::read_result(file.text(), file.name());
  const std::string message = file.name() + ": a result of " + result["suite"].get<std::string>() + " on " +
                              result["system"]["name"].get<std::string>();
  w.suite_results.push_back({file.name(), std::move(result)});
  return message;
}

}  // namespace chakra::importer_functions
