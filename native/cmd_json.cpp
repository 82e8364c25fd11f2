// chakra jsonize / dejsonize, and the drop-in chakra_jsonizer.
#include <iostream>

#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "cli.h"
#include "commands.h"

namespace {

chakra::JsonFormat parse_format(const cli::Args& args) {
  const std::string& f = args.get("--format");
  if (f == "json") return chakra::JsonFormat::Json;
  if (f == "jsonl") return chakra::JsonFormat::Jsonl;
  if (f == "reference") return chakra::JsonFormat::Reference;
  args.fail("--format must be json, jsonl or reference, not '" + f + "'");
}

// Streams node by node, so memory stays flat however large the trace is.
void jsonize(const std::string& in, const std::string& out, chakra::JsonOptions options, const cli::Args& args,
             const std::string& prog) {
  cli::TerminalProgress progress;
  chakra::ReadOptions read = cli::read_options(args, nullptr);
  options.progress = &progress;
  chakra::OutputFile sink(out);
  chakra::JsonizeStats stats = chakra::jsonize_et(chakra::open_input(in, read.input), sink, options, read);
  sink.commit();
  progress.clear();
  if (stats.unknown_fields)
    std::cerr << prog << ": warning: the trace has fields outside the Chakra schema; JSON cannot carry them\n";
  if (!stats.has_metadata) std::cerr << prog << ": note: the trace has no GlobalMetadata record; none is written\n";
}

int run_jsonize(const cli::Args& args) {
  chakra::JsonOptions options;
  options.format = parse_format(args);
  options.compact = args.has("--compact");
  const auto& out = args.values("OUT");
  jsonize(args.values("IN")[0], out.empty() ? "-" : out[0], options, args, "chakra jsonize");
  return cli::kOk;
}

int run_reference_jsonizer(const cli::Args& args) {
  chakra::JsonOptions options;
  options.format = chakra::JsonFormat::Reference;
  jsonize(args.get("--input_filename"), args.get("--output_filename"), options, args, "chakra_jsonizer");
  return cli::kOk;
}

int run_dejsonize(const cli::Args& args) {
  cli::TerminalProgress progress;
  chakra::Trace trace = chakra::read_json_trace_file(args.values("IN")[0]);
  chakra::WriteOptions options;
  options.progress = &progress;
  chakra::write_et(trace, args.values("OUT")[0], options);
  return cli::kOk;
}

}  // namespace

int cmd_jsonize(int argc, char** argv) {
  cli::Args args("chakra jsonize",
                 "Write a Chakra trace as JSON.\n"
                 "  json       one JSON document {\"globalMetadata\": ..., \"nodes\": [...]} (default)\n"
                 "  jsonl      JSON Lines: a globalMetadata line, then one node per line\n"
                 "  reference  byte-identical to mlcommons/chakra's chakra_jsonizer (concatenated\n"
                 "             protobuf JSON objects; not a single valid JSON document)\n"
                 "Nodes use protobuf's JSON field names, so `chakra dejsonize` turns any of these back\n"
                 "into the same .et file.");
  args.option("--format", "FORMAT", "json, jsonl or reference", "json");
  args.flag("--compact", "json format on one line instead of indented");
  cli::add_read_options(args);
  args.positional("IN", ".et trace (plain or gzip)");
  args.positional("OUT", "output file, gzip-compressed if it ends in .gz (default: standard output)", false);
  args.parse(argc, argv);
  return cli::run_guarded("chakra jsonize", run_jsonize, args);
}

int cmd_dejsonize(int argc, char** argv) {
  cli::Args args("chakra dejsonize",
                 "Build a .et trace from JSON written by `chakra jsonize` (any format), e.g. after editing\n"
                 "it as text. The output is written only if the whole input is valid.");
  args.positional("IN", "JSON trace (plain or gzip)");
  args.positional("OUT", ".et output file, gzip-compressed if it ends in .gz");
  args.parse(argc, argv);
  return cli::run_guarded("chakra dejsonize", run_dejsonize, args);
}

int cmd_reference_jsonizer(int argc, char** argv) {
  cli::Args args("chakra_jsonizer",
                 "Drop-in replacement for mlcommons/chakra's chakra_jsonizer: writes the same bytes\n"
                 "(see `chakra jsonize --format reference`).");
  args.allow_abbreviations();
  args.option("--input_filename", "INPUT_FILENAME", "Chakra .et trace to read", "", true);
  args.option("--output_filename", "OUTPUT_FILENAME", "JSON file to write", "", true);
  cli::add_read_options(args);
  args.parse(argc, argv);
  return cli::run_guarded("chakra_jsonizer", run_reference_jsonizer, args);
}

CHAKRA_COMMAND(30, "jsonize", cmd_jsonize,
               "write a trace as JSON (document, JSON Lines, or the reference jsonizer's bytes)", Streams::Yes);
CHAKRA_COMMAND(40, "dejsonize", cmd_dejsonize, "build a .et trace from JSON (edit traces as text)");
CHAKRA_ALIAS("chakra_jsonizer", cmd_reference_jsonizer, Streams::Yes);
