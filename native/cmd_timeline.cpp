// chakra timeline and the drop-in chakra_timeline_visualizer: ASTRA-sim issue/callback log →
// Chrome trace JSON.
#include <fstream>
#include <iostream>

#include "chakra/astra/timeline.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace {

int write(const std::string& input, const std::string& output, const chakra::TimelineOptions& o) {
  if (o.num_npus == 0) throw chakra::Error("the number of NPUs must be at least 1");
  if (o.npu_frequency_mhz == 0) throw chakra::Error("the NPU frequency must be at least 1 MHz");
  std::vector<chakra::TimelineSlice> slices =
      chakra::parse_astra_sim_log(chakra::read_file(input), input, o.num_npus, o.reference_units);
  chakra::OutputFile out(output);
  chakra::write_timeline(slices, o, out);
  out.commit();
  return cli::kOk;
}

int run_timeline(const cli::Args& a) {
  chakra::TimelineOptions o;
  o.num_npus = static_cast<uint32_t>(a.get_uint("--num-npus", UINT32_MAX));
  o.npu_frequency_mhz = a.get_uint("--npu-frequency");
  o.reference_units = a.has("--reference-units");
  return write(a.values("LOG")[0], a.get("--output"), o);
}

// The reference logs the command line and any error to its log file as well.
std::ofstream g_log;
std::string g_command;

int run_reference(const cli::Args& a) {
  g_log.open(a.get("--log_filename"), std::ios::app);
  if (!g_log) throw chakra::Error(a.get("--log_filename") + ": cannot open the log file");
  g_log << "DEBUG " << g_command << "\n" << std::flush;
  chakra::TimelineOptions o;
  o.num_npus = static_cast<uint32_t>(a.get_uint("--num_npus", UINT32_MAX));
  o.npu_frequency_mhz = a.get_uint("--npu_frequency");
  o.reference_units = a.has("--reference-units");
  try {
    return write(a.get("--input_filename"), a.get("--output_filename"), o);
  } catch (const chakra::Error& e) {
    g_log << "ERROR " << e.what() << "\n";
    throw;
  }
}

}  // namespace

int cmd_timeline(int argc, char** argv) {
  cli::Args args("chakra timeline",
                 "Turn an ASTRA-sim issue/callback log into a Chrome trace (open it in Perfetto UI or\n"
                 "chrome://tracing): one process per NPU, one track per kind of node (memory, compute,\n"
                 "communication), a slice from each node's issue to its callback, in microseconds.\n"
                 "--reference-units writes chakra_timeline_visualizer's output byte for byte, whose\n"
                 "times are milliseconds in microsecond fields.");
  args.positional("LOG", "ASTRA-sim log with issue/callback lines");
  args.option("--output", "OUT", "Chrome trace JSON to write", "", true);
  args.alias("-o", "--output");
  args.option("--num-npus", "N", "number of NPUs in the log", "", true);
  args.option("--npu-frequency", "MHZ", "NPU clock in MHz (cycles per microsecond)", "", true);
  args.flag("--reference-units", "reproduce the reference's output (milliseconds in µs fields)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra timeline", run_timeline, args);
}

int cmd_reference_timeline(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) g_command += (i ? " " : "chakra_timeline_visualizer ") + std::string(argv[i]);
  cli::Args args("chakra_timeline_visualizer",
                 "Timeline Visualizer. Times are in microseconds, as Chrome traces define them\n"
                 "(--reference-units: the reference's milliseconds, byte for byte).");
  args.allow_abbreviations();
  args.option("--input_filename", "INPUT_FILENAME", "Input timeline filename", "", true);
  args.option("--output_filename", "OUTPUT_FILENAME", "Output trace filename", "", true);
  args.option("--num_npus", "NUM_NPUS", "Number of NPUs in a system", "", true);
  args.option("--npu_frequency", "NPU_FREQUENCY", "NPU frequency in MHz", "", true);
  args.option("--log_filename", "LOG_FILENAME", "Log filename", "debug.log");
  args.flag("--reference-units", "write the reference's output byte for byte");
  args.parse(argc, argv);
  return cli::run_guarded("chakra_timeline_visualizer", run_reference, args);
}

CHAKRA_COMMAND(80, "timeline", cmd_timeline,
               "ASTRA-sim issue/callback log -> Chrome trace JSON (Perfetto, chrome://tracing)");
CHAKRA_ALIAS("chakra_timeline_visualizer", cmd_reference_timeline);
