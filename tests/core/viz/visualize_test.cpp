// Graph pictures: the reference visualizer's DOT source and GraphML byte for byte, the data and
// ctrl edges it merges kept apart, filters, and the SVG layout's invariants on every trace.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "chakra/format/et_io.h"
#include "chakra/support/error.h"
#include "chakra/viz/visualize.h"
#include "test_support.h"

using namespace testing_support;

namespace {

const std::string kOut = "reference/chakra/outputs/";

std::vector<uint32_t> all(const chakra::Trace& t) { return chakra::select_nodes(t, {}); }

std::string graphml(const chakra::Trace& t, bool reference_bytes) {
  chakra::StringSink s;
  chakra::write_graphml(t, all(t), reference_bytes, s);
  return s.out;
}

// (source, target, dependency) of every GraphML edge.
std::multiset<std::tuple<std::string, std::string, std::string>> edges(const std::string& xml) {
  std::multiset<std::tuple<std::string, std::string, std::string>> out;
  std::regex e("<edge source=\"(\\d+)\" target=\"(\\d+)\">\\n  <data key=\"d1\">(\\w+)</data>");
  for (std::sregex_iterator it(xml.begin(), xml.end(), e), end; it != end; ++it)
    out.insert({(*it)[1], (*it)[2], (*it)[3]});
  return out;
}

}  // namespace

TEST(Visualize, ReferenceDotSourceAndGraphmlAreByteIdentical) {
  chakra::Trace pt = chakra::read_et(shared(kOut + "converter_pytorch/1.0.2-chakra.0.0.4.et"));
  chakra::StringSink dot;
  chakra::write_dot(pt, all(pt), dot);
  EXPECT_TRUE(dot.out == read_raw(shared(kOut + "visualizer/1.0.2-chakra.0.0.4.gv-source.txt")));
  for (const auto& [name, et] : std::vector<std::pair<std::string, std::string>>{
           {"1.0.2-chakra.0.0.4", "converter_pytorch/1.0.2-chakra.0.0.4.et"},
           {"MLP_ModelParallel.0", "converter_text/MLP_ModelParallel.0.et"},
           {"two_comp_nodes_dependent.0", "generator/npus2/two_comp_nodes_dependent.0.et"}}) {
    EXPECT_TRUE(graphml(chakra::read_et(shared(kOut + et)), true) ==
                read_raw(shared(kOut + "visualizer/" + name + ".graphml")))
        << name;
  }
  // chakra.0.et references ids that are not in the file: label-less nodes where first named.
  chakra::Trace c0 = chakra::read_et(shared("reference/chakra/inputs/chakra.0.et.gz"));
  EXPECT_TRUE(graphml(c0, true) == read_decompressed(shared(kOut + "visualizer/chakra.0.graphml.gz")));
}

TEST(Visualize, GraphmlKeepsDataAndControlEdgesApart) {
  chakra::Trace t = chakra::read_et(shared(kOut + "converter_pytorch/1.0.2-chakra.0.0.4.et"));
  auto ref = edges(read_raw(shared(kOut + "visualizer/1.0.2-chakra.0.0.4.graphml")));
  auto ours = edges(graphml(t, false));
  // Ours = the reference's edges plus, for every pair it collapsed to "control", the data edge.
  std::multiset<std::tuple<std::string, std::string, std::string>> expected = ref;
  size_t both = 0;
  for (uint32_t n = 0; n < t.size(); ++n)
    for (uint64_t d : t.data_deps(n))
      for (uint64_t c : t.ctrl_deps(n))
        if (c == d) {
          expected.insert({std::to_string(d), std::to_string(t.id(n)), "data"});
          ++both;
        }
  EXPECT_GT(both, 0u);
  EXPECT_EQ(ours, expected);
}

TEST(Visualize, Filters) {
  chakra::Trace t = chakra::read_et(shared(kOut + "converter_text/MLP_ModelParallel.0.et"));
  chakra::GraphFilter f;
  f.types = {static_cast<int32_t>(chakra::NodeType::CommColl)};
  std::vector<uint32_t> comm = chakra::select_nodes(t, f);
  ASSERT_FALSE(comm.empty());
  for (uint32_t n : comm) EXPECT_EQ(t.type(n), static_cast<int32_t>(chakra::NodeType::CommColl));
  f = {};
  f.name_regex = "mlp[0-2]_FWD$";
  for (uint32_t n : chakra::select_nodes(t, f))
    EXPECT_TRUE(std::regex_search(std::string(t.name(n)), std::regex("mlp[0-2]_FWD$")));
  size_t matching = 0;
  for (uint32_t n = 0; n < t.size(); ++n)
    matching += std::regex_search(std::string(t.name(n)), std::regex("mlp[0-2]_FWD$"));
  EXPECT_EQ(chakra::select_nodes(t, f).size(), matching);
  EXPECT_GT(matching, 0u);
  f = {};
  f.id_range = {{2, 5}};
  EXPECT_EQ(chakra::select_nodes(t, f).size(), 4u);
  // Edges to filtered-out nodes are dropped.
  chakra::StringSink dot;
  chakra::write_dot(t, chakra::select_nodes(t, f), dot);
  EXPECT_EQ(dot.out.find("\t1 -> 2"), std::string::npos);
  EXPECT_NE(dot.out.find("\t2 -> 3"), std::string::npos);
  f.name_regex = "(";
  EXPECT_THROW(chakra::select_nodes(t, f), chakra::Error);
}

// Every trace in the corpus lays out: each data dependency points from an earlier column (or an
// earlier band) to a later one, unless on a cycle; boxes in one column never overlap; every
// node is in exactly one box.
TEST(Visualize, LayoutInvariantsOnEveryTrace) {
  size_t traces = 0;
  for (const std::string& path : all_shared_traces()) {
    chakra::Trace t = chakra::read_et(path);
    chakra::GraphLayout L = chakra::layout_graph(t, all(t), {});
    uint64_t nodes = 0;
    for (const auto& b : L.boxes) nodes += b.count;
    EXPECT_EQ(nodes, t.size()) << path;
    uint64_t backwards = 0;
    for (const auto& e : L.edges) backwards += L.boxes[e.from].layer >= L.boxes[e.to].layer;
    EXPECT_EQ(backwards, L.cycle_edges) << path;
    std::set<std::pair<double, double>> corners;
    for (const auto& b : L.boxes) EXPECT_TRUE(corners.insert({b.x, b.y}).second) << path;
    chakra::StringSink svg;
    chakra::write_svg(t, all(t), {}, svg);
    EXPECT_EQ(svg.out.rfind("</svg>\n"), svg.out.size() - 7) << path;
    ++traces;
  }
  EXPECT_GT(traces, 20u);
}

// The layout index finds exactly the boxes a window overlaps, and every edge of each box.
TEST(Visualize, LayoutIndexFindsWhatAWindowShows) {
  chakra::Trace t =
      chakra::read_et(testing_support::shared("data/chakra_et/ericding_pytorch_converted_2rank/chakra_trace.0.et"));
  chakra::GraphLayout L = chakra::layout_graph(t, all(t), {});
  const chakra::GraphLayoutIndex index = chakra::index_layout(L);
  for (double f : {0.0, 0.2, 0.45, 0.9}) {
    const double x0 = L.width * f, x1 = x0 + L.width * 0.1, y0 = L.height * f / 2, y1 = y0 + L.height * 0.3;
    std::vector<uint32_t> found;
    index.boxes_in(L, x0, x1, y0, y1, found);
    std::set<uint32_t> want;
    for (uint32_t b = 0; b < L.boxes.size(); ++b) {
      const auto& x = L.boxes[b];
      if (x.x + x.w >= x0 && x.x <= x1 && x.y + x.h >= y0 && x.y <= y1) want.insert(b);
    }
    EXPECT_EQ(std::set<uint32_t>(found.begin(), found.end()), want) << f;
    EXPECT_EQ(found.size(), want.size());
  }
  size_t touching = 0;
  for (uint32_t b = 0; b < L.boxes.size(); ++b)
    for (uint32_t e : index.edges_of(b)) {
      EXPECT_TRUE(L.edges[e].from == b || L.edges[e].to == b);
      ++touching;
    }
  size_t loops = 0;
  for (const auto& e : L.edges) loops += e.from == e.to;
  EXPECT_EQ(touching, 2 * L.edges.size() - loops);
  EXPECT_GT(L.edges.size(), 100u);
}

TEST(Visualize, ChainsCollapseAndTimeLayout) {
  // 20 nodes in a chain and one side branch: the chain keeps its ends, the middle is one box.
  chakra::Trace t;
  chakra::NodeDraft d;
  for (uint64_t id = 0; id < 20; ++id) {
    d.clear();
    d.id = id;
    d.name = t.intern("n" + std::to_string(id));
    d.type = static_cast<int32_t>(chakra::NodeType::Comp);
    d.duration_micros = 10;
    if (id) d.data_deps = {id - 1};
    t.append(d);
  }
  chakra::SvgOptions o;
  o.collapse_chains = 8;
  chakra::GraphLayout L = chakra::layout_graph(t, all(t), o);
  ASSERT_EQ(L.boxes.size(), 3u);
  EXPECT_EQ(L.boxes[1].count, 18u);
  EXPECT_EQ(L.edges.size(), 2u);
  o.collapse_chains = 0;
  EXPECT_EQ(chakra::layout_graph(t, all(t), o).boxes.size(), 20u);
  // Ctrl edges are drawn only on request, and not where a data edge joins the same pair.
  chakra::Trace c = chakra::read_et(shared(kOut + "converter_pytorch/1.0.2-chakra.0.0.4.et"));
  chakra::SvgOptions plain, with_ctrl;
  with_ctrl.ctrl_edges = true;
  chakra::GraphLayout without = chakra::layout_graph(c, all(c), plain);
  chakra::GraphLayout with = chakra::layout_graph(c, all(c), with_ctrl);
  for (const auto& e : without.edges) EXPECT_FALSE(e.ctrl);
  size_t ctrl = 0;
  std::set<std::pair<uint32_t, uint32_t>> data_pairs;
  for (const auto& e : with.edges)
    if (!e.ctrl) data_pairs.insert({e.from, e.to});
  for (const auto& e : with.edges) {
    ctrl += e.ctrl;
    if (e.ctrl) {
      EXPECT_FALSE(data_pairs.count({e.from, e.to}));
    }
  }
  EXPECT_GT(ctrl, 0u);
  EXPECT_EQ(with.edges.size(), without.edges.size() + ctrl);
  // By time: each node starts where the previous one ended.
  o.by_time = true;
  L = chakra::layout_graph(t, all(t), o);
  for (size_t k = 1; k < L.boxes.size(); ++k) EXPECT_NEAR(L.boxes[k].x, L.boxes[k - 1].x + L.boxes[k - 1].w, 1e-9);
}
