// chakra validate: find what makes simulators abort, hang or mis-read a trace.
#include <iostream>

#include <nlohmann/json.hpp>

#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace {

void print_findings(const chakra::ValidationReport& r, chakra::Severity severity) {
  std::map<std::string, uint64_t> listed;
  for (const chakra::Finding& f : r.findings) {
    if (f.severity != severity) continue;
    ++listed[f.code];
    std::cout << "  " << (severity == chakra::Severity::Error ? "error  " : "warning") << " [" << f.code << "] "
              << f.message << "\n";
  }
  for (const auto& [code, n] : listed) {
    uint64_t total = r.counts.at(code);
    if (total > n)
      std::cout << "  " << (severity == chakra::Severity::Error ? "error  " : "warning") << " [" << code << "] ... and "
                << (total - n) << " more\n";
  }
}

int run(const cli::Args& args) {
  cli::TerminalProgress progress;
  chakra::ValidateOptions options;
  options.max_per_code = args.get_uint("--max-per-code");
  const bool json = args.has("--json");
  chakra::StringSink out;
  chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
  if (json) w.begin_array();
  bool failed = false;
  for (const std::string& path : cli::trace_files(args.values("FILE"), cli::shard_option(args))) {
    chakra::Trace trace;
    try {
      trace = chakra::read_et(path, cli::read_options(args, &progress));
    } catch (const chakra::Cancelled&) {
      throw;
    } catch (const chakra::Error& e) {
      progress.clear();
      failed = true;
      if (json) {
        w.begin_object().key("file").value(path).key("ok").value(false).key("read_error").value(e.what()).end_object();
      } else {
        std::cout << path << ": cannot be read\n  error   [unreadable] " << chakra::printable(e.what()) << "\n";
      }
      continue;
    }
    progress.clear();
    chakra::ValidationReport report = chakra::validate(trace, options);
    failed |= !report.ok();
    if (json) {
      w.begin_object().key("file").value(path).key("ok").value(report.ok()).key("nodes").value_uint(trace.size());
      w.key("report");
      chakra::write_report_json(trace, report, w);
      w.end_object();
      continue;
    }
    std::cout << path << ": " << trace.size() << " nodes, " << report.errors << " error"
              << (report.errors == 1 ? "" : "s") << ", " << report.warnings << " warning"
              << (report.warnings == 1 ? "" : "s") << (report.ok() ? " - OK" : "") << "\n";
    print_findings(report, chakra::Severity::Error);
    print_findings(report, chakra::Severity::Warning);
  }
  if (json) {
    w.end_array();
    w.raw("\n");
    w.flush();
    std::cout << out.out;
  }
  return failed ? cli::kFailed : cli::kOk;
}

int run_merge(const cli::Args& args) {
  // Text records are "PATH: N nodes, ..." (or "PATH: cannot be read") with findings under them.
  const cli::JoinedShards j = cli::join_shard_outputs(
      args.values("PART"), "", [](std::string_view line) { return std::string(line.substr(0, line.rfind(": "))); },
      [](std::string_view record, bool json) {
        if (json) return !nlohmann::json::parse(record).at("ok").get<bool>();
        const std::string_view first = record.substr(0, record.find('\n'));
        return first.size() < 5 || first.substr(first.size() - 5) != " - OK";
      });
  std::cout << j.output;
  return j.any_failed ? cli::kFailed : cli::kOk;
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  if (argc > 0 && std::string(argv[0]) == "merge") {
    cli::Args args("chakra validate merge",
                   "Join what shards of `chakra validate PATH... --shard i/K` printed (each saved to a PART file)\n"
                   "into what one unsharded run prints, byte for byte: the files in rank order. Exits 1 if any\n"
                   "file has errors, as the unsharded run does.");
    args.positional("PART", "a shard's saved output (text or --json)", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra validate merge", run_merge, args);
  }
  cli::Args args("chakra validate",
                 "Check Chakra traces for what breaks simulators: duplicate ids, dependencies on missing\n"
                 "nodes, dependency cycles, communication nodes without the attributes ASTRA-sim needs,\n"
                 "attributes of a kind the feeders misread. Exits 1 if any file has errors; warnings\n"
                 "alone exit 0. `chakra validate merge PART...` joins the outputs of --shard i/K runs.");
  args.flag("--json", "print one JSON report per file instead of text");
  args.option("--max-per-code", "N", "list at most N findings of each kind", "20");
  cli::add_shard_option(args);
  cli::add_read_options(args);
  args.positional("FILE", ".et trace (plain or gzip), or a folder of them (its .et and .et.gz files in rank order)",
                  true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra validate", run, args);
}

CHAKRA_COMMAND(20, "validate", cmd_validate, "check traces for what makes simulators abort, hang or misread them");
