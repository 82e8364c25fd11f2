// chakra info: what is in a trace.
#include <cstdio>
#include <iostream>

#include "chakra/analysis/summary.h"
#include "chakra/format/et_io.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace {

struct Loaded {
  std::string path;
  uint64_t file_bytes;
  bool gzip;
  chakra::Trace trace;
};

Loaded load(const std::string& path, const cli::Args& args, chakra::Progress* progress) {
  cli::require_chakra_et(path, "chakra info reads Chakra .et traces");
  chakra::ReadOptions options = cli::read_options(args, progress);
  auto in = chakra::open_input(path, options.input);
  Loaded l{path, in->raw_size(), in->compressed(), {}};
  l.trace = chakra::read_et(std::move(in), options);
  return l;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

void print_text(const Loaded& l, const chakra::TraceSummary& s) {
  using chakra::format_bytes;
  std::cout << l.path << "  (" << format_bytes(l.file_bytes) << (l.gzip ? ", gzip" : "") << ")\n";
  auto row = [](const std::string& label) { return "  " + pad(label, 16); };

  std::cout << row("metadata");
  if (!s.has_metadata) {
    std::cout << "none (no GlobalMetadata record: an older ASTRA-sim trace)\n";
  } else {
    std::cout << "version \"" << s.version << "\"";
    if (!s.schema.empty()) std::cout << ", schema \"" << s.schema << "\"";
    std::cout << "\n";
  }
  if (s.legacy_schema)
    std::cout << row("schema") << "pre-0.0.4 Chakra execution graph (.eg): its field numbers differ from today's\n"
              << row("") << "schema, so the types and fields below are misread; regenerate the trace\n";
  std::cout << row("nodes") << s.nodes;
  if (s.nodes)
    std::cout << "  (ids " << s.min_id << ".." << s.max_id
              << (s.ids_ascending ? ", ascending" : ", not in ascending order") << ")";
  std::cout << "\n";

  bool first = true;
  auto type_row = [&](std::string_view name, const chakra::TraceSummary::PerType& p) {
    if (!p.nodes) return;
    std::cout << (first ? row("node types") : row("")) << pad(std::string(name), 16) << pad(std::to_string(p.nodes), 9);
    if (p.duration_micros) std::cout << p.duration_micros << " us";
    std::cout << "\n";
    first = false;
  };
  for (int32_t t = 0; t < chakra::kNodeTypeCount; ++t) type_row(chakra::node_type_name(t), s.by_type[t]);
  type_row("(unknown type)", s.other_types);

  auto comm_row = [&](const std::string& label, bool& first_row, const std::string& name,
                      const chakra::TraceSummary::Comm& c) {
    std::cout << (first_row ? row(label) : row("")) << pad(name, 16) << pad(std::to_string(c.count), 9)
              << format_bytes(c.bytes) << " (" << c.bytes << " bytes)";
    if (c.missing_size) std::cout << ", " << c.missing_size << " without comm_size";
    std::cout << "\n";
    first_row = false;
  };
  bool first_coll = true;
  for (const auto& [type, c] : s.collectives) {
    std::string name(chakra::comm_type_name(type));
    if (name.empty()) name = type < 0 ? "(no comm_type)" : "comm_type " + std::to_string(type);
    comm_row("collectives", first_coll, name, c);
  }
  bool first_p2p = true;
  if (s.sends.count) comm_row("point-to-point", first_p2p, "send", s.sends);
  if (s.recvs.count) comm_row("point-to-point", first_p2p, "recv", s.recvs);
  bool first_pg = true;
  for (const auto& [group, count] : s.process_groups) {
    std::cout << (first_pg ? row("process groups") : row(""))
              << pad(group.empty() ? "(default)" : "\"" + group + "\"", 16) << count << " communication nodes\n";
    first_pg = false;
  }
  std::cout << row("dependencies") << s.data_deps << " data, " << s.ctrl_deps << " ctrl; " << s.nodes_without_data_deps
            << " node" << (s.nodes_without_data_deps == 1 ? "" : "s") << " without data deps\n";
  std::cout << row("duration") << s.total_duration_micros << " us in total (sum of duration_micros)\n";
  first = true;
  for (const auto& a : s.attrs) {
    std::cout << (first ? row("attributes") : row("")) << pad(a.name, 16)
              << pad(a.kind == chakra::AttrKind::None ? std::string("(no value)")
                                                      : std::string(chakra::attr_kind_proto_name(a.kind)),
                     14)
              << a.nodes << " nodes\n";
    first = false;
  }
  if (s.nodes_with_unknown_fields)
    std::cout << row("unknown fields") << s.nodes_with_unknown_fields
              << " nodes carry fields outside the Chakra schema (see chakra validate)\n";
}

int run(const cli::Args& args) {
  cli::TerminalProgress progress;
  const bool json = args.has("--json");
  chakra::StringSink out;
  chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
  if (json) w.begin_array();
  const std::vector<std::string> files = cli::trace_files(args.values("FILE"), cli::shard_option(args));
  for (size_t i = 0; i < files.size(); ++i) {
    Loaded l = load(files[i], args, &progress);
    progress.clear();
    chakra::TraceSummary s = chakra::summarize(l.trace);
    if (json) {
      w.begin_object();
      w.key("file").value(l.path);
      w.key("file_bytes").value_uint(l.file_bytes);
      w.key("gzip").value(l.gzip);
      w.key("summary");
      chakra::write_summary_json(s, w);
      w.end_object();
    } else {
      if (i) std::cout << "\n";
      print_text(l, s);
    }
  }
  if (json) {
    w.end_array();
    w.raw("\n");
    w.flush();
    std::cout << out.out;
  }
  return cli::kOk;
}

int run_merge(const cli::Args& args) {
  // Text records are "PATH  (SIZE...)" lines with indented rows under them, a blank line between.
  const cli::JoinedShards j = cli::join_shard_outputs(
      args.values("PART"), "\n", [](std::string_view line) { return std::string(line.substr(0, line.rfind("  ("))); },
      [](std::string_view, bool) { return false; });
  std::cout << j.output;
  return cli::kOk;
}

}  // namespace

int cmd_info(int argc, char** argv) {
  if (argc > 0 && std::string(argv[0]) == "merge") {
    cli::Args args("chakra info merge",
                   "Join what shards of `chakra info PATH... --shard i/K` printed (each saved to a PART file) into\n"
                   "what one unsharded run prints, byte for byte: the files in rank order.");
    args.positional("PART", "a shard's saved output (text or --json)", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra info merge", run_merge, args);
  }
  cli::Args args("chakra info",
                 "Summarise Chakra traces: node counts and durations per type, collectives and bytes\n"
                 "moved, process groups, attribute names and value kinds, dependency counts.\n"
                 "`chakra info merge PART...` joins the outputs of --shard i/K runs.");
  args.flag("--json", "print one JSON object per file instead of text");
  cli::add_shard_option(args);
  cli::add_read_options(args);
  args.positional("FILE", ".et trace (plain or gzip), or a folder of them (its .et and .et.gz files in rank order)",
                  true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra info", run, args);
}

CHAKRA_COMMAND(10, "info", cmd_info, "summarise traces: node types, collectives, bytes, attributes, dependencies");
