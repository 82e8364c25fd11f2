// chakra visualize and the drop-in chakra_visualizer: a trace's dependency graph as DOT,
// GraphML or SVG.
#include <charconv>
#include <iostream>

#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"
#include "chakra/viz/visualize.h"
#include "cli.h"
#include "commands.h"

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Request {
  std::string input, output;
  chakra::GraphFilter filter;
  chakra::SvgOptions svg;
  chakra::ReadOptions read;
  bool reference_bytes = false;
};

int visualize(const Request& r) {
  cli::TerminalProgress progress;
  chakra::ReadOptions read = r.read;
  read.progress = &progress;
  chakra::Trace t = chakra::read_et(r.input, read);
  progress.clear();
  std::vector<uint32_t> nodes = chakra::select_nodes(t, r.filter);
  chakra::OutputFile out(r.output);
  if (ends_with(r.output, ".dot") || ends_with(r.output, ".gv"))
    chakra::write_dot(t, nodes, out);
  else if (ends_with(r.output, ".graphml"))
    chakra::write_graphml(t, nodes, r.reference_bytes, out);
  else if (ends_with(r.output, ".svg"))
    chakra::write_svg(t, nodes, r.svg, out);
  else
    throw chakra::Error(r.output + ": unknown output kind; the name must end in .dot, .graphml or .svg");
  out.commit();
  return cli::kOk;
}

int run_visualize(const cli::Args& a) {
  Request r;
  r.input = a.values("IN")[0];
  r.output = a.get("--output");
  r.read = cli::read_options(a, nullptr);
  if (a.has("--range")) {
    const std::string& v = a.get("--range");
    uint64_t first = 0, last = 0;
    auto whole = [](std::string_view text, uint64_t& out) {
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
      return !text.empty() && ec == std::errc() && end == text.data() + text.size();
    };
    size_t colon = v.find(':');
    if (colon == std::string::npos || !whole(std::string_view(v).substr(0, colon), first) ||
        !whole(std::string_view(v).substr(colon + 1), last) || first > last)
      a.fail("--range must be FIRST:LAST, node ids with FIRST <= LAST, got '" + v + "'");
    r.filter.id_range = {first, last};
  }
  if (a.has("--types")) {
    const std::string list = a.get("--types");
    for (std::string_view piece : chakra::Split(list, ',')) {
      const std::string name(piece);
      std::optional<int32_t> type = chakra::parse_node_type(name);
      if (!type) type = chakra::parse_node_type(name + "_NODE");
      if (!type) a.fail("--types: unknown node type '" + name + "' (COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, ...)");
      r.filter.types.push_back(*type);
    }
  }
  r.filter.name_regex = a.get("--name");
  r.svg.collapse_chains = static_cast<uint32_t>(a.get_uint("--collapse", UINT32_MAX));
  r.svg.by_time = a.has("--by-time");
  r.svg.ctrl_edges = a.has("--ctrl-edges");
  r.reference_bytes = a.has("--reference-bytes");
  return visualize(r);
}

int run_reference_visualizer(const cli::Args& a) {
  Request r;
  r.input = a.get("--input_filename");
  r.output = a.get("--output_filename");
  r.reference_bytes = true;
  if (ends_with(r.output, ".pdf"))
    throw chakra::Error(r.output +
                        ": PDF output needs Graphviz's layout, which does not finish on real traces; "
                        "write .svg (our own layout) or .dot");
  return visualize(r);
}

}  // namespace

int cmd_visualize(int argc, char** argv) {
  cli::Args args("chakra visualize",
                 "Draw a trace's dependency graph. The output name picks the format:\n"
                 "  .dot      Graphviz source as chakra_visualizer builds it (data edges arrowhead=normal,\n"
                 "            ctrl edges arrowhead=tee)\n"
                 "  .graphml  as chakra_visualizer writes it, but a node pair with both a data and a ctrl\n"
                 "            edge keeps both (--reference-bytes: only 'control', as the reference)\n"
                 "  .svg      our own layered layout, no Graphviz needed: columns by dependency depth\n"
                 "            (--by-time: by earliest start from durations), long chains collapsed\n"
                 "            into one box; hover a box for its id, name, type and duration.");
  args.positional("IN", ".et trace (plain or gzip)");
  args.option("--output", "OUT", "OUT.dot, OUT.graphml or OUT.svg", "", true);
  args.alias("-o", "--output");
  args.option("--range", "FIRST:LAST", "only nodes with ids in this range");
  args.option("--types", "T,T", "only these node types (COMP_NODE, COMM_COLL_NODE, ... or COMP, COMM_COLL, ...)");
  args.option("--name", "REGEX", "only nodes whose name matches (ECMAScript regex, searched)");
  args.option("--collapse", "N", "SVG: draw chains of N or more nodes as one box (0: never)", "8");
  cli::add_read_options(args);
  args.flag("--ctrl-edges", "SVG: also draw control edges (dashed)");
  args.flag("--by-time", "SVG: place nodes by earliest start time (from durations)");
  args.flag("--reference-bytes", "GraphML: collapse data+ctrl pairs into one 'control' edge, as the reference");
  args.parse(argc, argv);
  return cli::run_guarded("chakra visualize", run_visualize, args);
}

int cmd_reference_visualizer(int argc, char** argv) {
  cli::Args args("chakra_visualizer",
                 "Execution Trace Visualizer. .dot: the Graphviz source (not laid out); .graphml: the\n"
                 "reference's bytes; .svg: a layered layout without Graphviz.");
  args.allow_abbreviations();
  args.option("--input_filename", "INPUT_FILENAME", "Input Chakra execution trace filename", "", true);
  args.option("--output_filename", "OUTPUT_FILENAME", "Output graph filename", "", true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra_visualizer", run_reference_visualizer, args);
}

CHAKRA_COMMAND(70, "visualize", cmd_visualize, "dependency graph as DOT, GraphML or SVG (our own layout, no Graphviz)");
CHAKRA_ALIAS("chakra_visualizer", cmd_reference_visualizer);
