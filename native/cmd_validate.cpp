// chakra validate: find what makes simulators abort, hang or mis-read a trace.
#include <iostream>

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
  for (const std::string& path : args.values("FILE")) {
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

}  // namespace

int cmd_validate(int argc, char** argv) {
  cli::Args args("chakra validate",
                 "Check Chakra traces for what breaks simulators: duplicate ids, dependencies on missing\n"
                 "nodes, dependency cycles, communication nodes without the attributes ASTRA-sim needs,\n"
                 "attributes of a kind the feeders misread. Exits 1 if any file has errors; warnings\n"
                 "alone exit 0.");
  args.flag("--json", "print one JSON report per file instead of text");
  args.option("--max-per-code", "N", "list at most N findings of each kind", "20");
  cli::add_read_options(args);
  args.positional("FILE", ".et trace (plain or gzip)", true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra validate", run, args);
}
