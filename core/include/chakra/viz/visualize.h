// Pictures of a trace's dependency graph: DOT and GraphML as mlcommons/chakra's
// `chakra_visualizer` writes them (chakra-reference-tools.md §7), and SVG from a layered layout
// of our own (no Graphviz), readable at thousands of nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <span>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct GraphFilter {
  std::optional<std::pair<uint64_t, uint64_t>> id_range;  // inclusive
  std::vector<int32_t> types;                             // node types kept; empty: all
  std::string name_regex;                                 // ECMAScript, searched in names; empty: all
};

// Positions of the nodes the filter keeps, in file order. A bad regex throws chakra::Error.
// Edges are drawn between kept nodes; a dependency on an id that is not in the trace at all
// shows as a label-less node (as the reference does), one on a filtered-out node is dropped.
std::vector<uint32_t> select_nodes(const Trace& trace, const GraphFilter& filter);

// Positions of the nodes whose name, type name, id or a string attribute's value contains `query`
// (ASCII case-insensitive), in file order; every node for an empty query.
std::vector<uint32_t> search_nodes(const Trace& trace, std::string_view query);

// Graphviz source as the reference builds it before layout: `<id> [label=<escaped name> id=<id>
// shape=record]` per node, then its data edges (arrowhead=normal) and ctrl edges
// (arrowhead=tee). (The reference then runs `dot`, which never finishes on a few hundred nodes.)
void write_dot(const Trace& trace, const std::vector<uint32_t>& nodes, ByteSink& out);

// GraphML as networkx writes the reference's DiGraph: node `label`, edge `dependency`
// (data|control). The reference keeps one edge per node pair, so a pair with a data and a ctrl
// edge shows only "control"; here both are written, unless `reference_bytes`.
void write_graphml(const Trace& trace, const std::vector<uint32_t>& nodes, bool reference_bytes, ByteSink& out);

struct SvgOptions {
  // Chains of at least this many nodes (each the only dependant of the one before, and
  // depending on nothing else) are drawn as one box; 0 = never.
  uint32_t collapse_chains = 8;
  // Columns by earliest start time from durations (when the trace has any) instead of by
  // dependency depth.
  bool by_time = false;
  // Also draw ctrl edges (dashed). Off by default: in converted PyTorch traces they are the call
  // tree, thousands of edges from a few parents that hide the data flow.
  bool ctrl_edges = false;
};

// The layout behind the SVG (also what a viewer draws): boxes in columns (x = layer or time),
// edges between boxes.
struct GraphLayout {
  struct Box {
    double x = 0, y = 0, w = 0, h = 0;
    uint32_t first = 0;  // node position (of the first node, for a collapsed chain)
    uint32_t count = 1;  // nodes in the box
    uint32_t layer = 0;
  };
  struct Edge {
    uint32_t from = 0, to = 0;  // box indices; `from` must finish before `to`
    bool ctrl = false;
  };
  std::vector<Box> boxes;
  std::vector<Edge> edges;
  std::vector<uint32_t> box_of;  // box of each entry of the `nodes` the layout was made for
  double width = 0, height = 0;
  uint32_t layers = 0;
  uint64_t cycle_edges = 0;  // dependency edges against the layering (cycles), drawn anyway
};
GraphLayout layout_graph(const Trace& trace, const std::vector<uint32_t>& nodes, const SvgOptions& options);

// What a window onto a layout shows, found without visiting the rest (a view of a 250k-box graph
// pans in the time of the boxes on screen): boxes sorted by x, and the edges touching each box.
// Built once per layout in O(boxes log boxes + edges).
struct GraphLayoutIndex {
  std::vector<uint32_t> by_x;        // box indices, by x
  double widest = 0;                 // the widest box's w
  std::vector<uint32_t> edge_begin;  // edges of box b: edges[edge_begin[b], edge_begin[b + 1])
  std::vector<uint32_t> edges;       // indices into GraphLayout::edges
  // Appends the boxes overlapping [x0, x1] × [y0, y1], by x.
  void boxes_in(const GraphLayout& layout, double x0, double x1, double y0, double y1,
                std::vector<uint32_t>& out) const;
  std::span<const uint32_t> edges_of(uint32_t box) const {
    return {edges.data() + edge_begin[box], edge_begin[box + 1] - edge_begin[box]};
  }
};
GraphLayoutIndex index_layout(const GraphLayout& layout);

void write_svg(const Trace& trace, const std::vector<uint32_t>& nodes, const SvgOptions& options, ByteSink& out);

}  // namespace chakra
