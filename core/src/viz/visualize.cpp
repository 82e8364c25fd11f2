#include "chakra/viz/visualize.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <unordered_map>

#include "chakra/support/error.h"
#include "chakra/trace/graph.h"
#include "chakra/trace/schema.h"

namespace chakra {

std::vector<uint32_t> select_nodes(const Trace& t, const GraphFilter& f) {
  std::optional<std::regex> re;
  if (!f.name_regex.empty()) {
    try {
      re.emplace(f.name_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error("--name: '" + f.name_regex + "' is not a valid regular expression (" + e.what() + ")");
    }
  }
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (f.id_range && (t.id(n) < f.id_range->first || t.id(n) > f.id_range->second)) continue;
    if (!f.types.empty() && std::find(f.types.begin(), f.types.end(), t.type(n)) == f.types.end()) continue;
    if (re) {
      std::string_view name = t.name(n);
      if (!std::regex_search(name.begin(), name.end(), *re)) continue;
    }
    out.push_back(n);
  }
  return out;
}

namespace {

// The dependencies drawn for a selection: to a selected node (its position), to an id that is
// not in the trace (drawn as a bare node), never to a node the filter left out.
class Selection {
 public:
  Selection(const Trace& t, const std::vector<uint32_t>& nodes) : t_(t), index_(t), selected_(t.size(), false) {
    for (uint32_t n : nodes) selected_[n] = true;
  }
  // Calls f(dep id, dep position or nullopt if absent from the trace, is_ctrl) for node n's
  // data deps, then its ctrl deps.
  template <class F>
  void for_each_dep(uint32_t n, F f) const {
    for (int kind = 0; kind < 2; ++kind) {
      for (uint64_t dep : kind == 0 ? t_.data_deps(n) : t_.ctrl_deps(n)) {
        std::optional<uint32_t> p = index_.find(dep);
        if (p && !selected_[*p]) continue;
        f(dep, p, kind == 1);
      }
    }
  }

 private:
  const Trace& t_;
  IdIndex index_;
  std::vector<bool> selected_;
};

// ---------------------------------------------------------------- DOT

bool is_graphviz_id(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (alpha(s[0])) return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || digit(c); });
  size_t i = s[0] == '-' ? 1 : 0;
  size_t digits = 0, dots = 0;
  for (; i < s.size(); ++i) {
    if (digit(s[i]))
      ++digits;
    else if (s[i] == '.' && ++dots == 1)
      continue;
    else
      return false;
  }
  return digits > 0;
}

// Python graphviz's quote(): bare identifiers and numerals stay, keywords and everything else
// are double-quoted with unescaped quotes escaped.
std::string graphviz_quote(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool keyword = lower == "node" || lower == "edge" || lower == "graph" || lower == "digraph" || lower == "subgraph" ||
                 lower == "strict";
  if (!keyword && is_graphviz_id(s)) return std::string(s);
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"' && (i == 0 || s[i - 1] != '\\')) out += '\\';
    out += s[i];
  }
  return out + "\"";
}

// The reference escapes these for Graphviz record labels.
std::string record_label(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::string_view("{}()<>[]|&-").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// ---------------------------------------------------------------- GraphML

// XML escaping. GraphML labels get ElementTree's text escaping (&, <, >; what networkx
// writes); SVG text also gets quotes escaped and control characters blanked, which XML forbids.
void xml_escape(std::string& out, std::string_view s, bool svg) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += svg ? "&quot;" : "\""; break;
      default: out += (svg && static_cast<unsigned char>(c) < 0x20 && c != '\t') ? ' ' : c;
    }
  }
}

}  // namespace

void write_dot(const Trace& t, const std::vector<uint32_t>& nodes, ByteSink& out) {
  Selection sel(t, nodes);
  std::string s = "digraph {\n";
  for (uint32_t n : nodes) {
    std::string id = std::to_string(t.id(n));
    s += "\t" + id + " [label=" + graphviz_quote(record_label(t.name(n))) + " id=" + id + " shape=record]\n";
    sel.for_each_dep(n, [&](uint64_t dep, std::optional<uint32_t>, bool ctrl) {
      s += "\t" + std::to_string(dep) + " -> " + id + (ctrl ? " [arrowhead=tee]\n" : " [arrowhead=normal]\n");
    });
    if (s.size() > (1u << 20)) {
      out.write(s);
      s.clear();
    }
  }
  s += "}\n";
  out.write(s);
}

void write_graphml(const Trace& t, const std::vector<uint32_t>& nodes, bool reference_bytes, ByteSink& out) {
  Selection sel(t, nodes);
  // Nodes in order of first mention (as a node or as a dependency), as networkx keeps them.
  struct GNode {
    uint64_t id;
    std::optional<uint32_t> position;
    std::vector<std::pair<uint64_t, uint8_t>> targets;  // dependant id, kinds (1 data, 2 ctrl)
  };
  std::vector<GNode> order;
  std::unordered_map<uint64_t, size_t> at;
  auto mention = [&](uint64_t id, std::optional<uint32_t> p) -> GNode& {
    auto [it, fresh] = at.try_emplace(id, order.size());
    if (fresh) order.push_back({id, p, {}});
    if (p) order[it->second].position = p;
    return order[it->second];
  };
  bool any_edge = false;
  for (uint32_t n : nodes) {
    mention(t.id(n), n);
    sel.for_each_dep(n, [&](uint64_t dep, std::optional<uint32_t> p, bool ctrl) {
      auto& targets = mention(dep, p).targets;
      auto e = std::find_if(targets.begin(), targets.end(), [&](const auto& x) { return x.first == t.id(n); });
      uint8_t kind = ctrl ? 2 : 1;
      if (e == targets.end())
        targets.push_back({t.id(n), kind});
      else
        e->second = reference_bytes ? kind : (e->second | kind);  // networkx: last write wins
      any_edge = true;
    });
  }
  std::string s =
      "<?xml version='1.0' encoding='utf-8'?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
      "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://graphml.graphdrawing.org/"
      "xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">";
  if (any_edge) s += "<key id=\"d1\" for=\"edge\" attr.name=\"dependency\" attr.type=\"string\"/>\n";
  s += "<key id=\"d0\" for=\"node\" attr.name=\"label\" attr.type=\"string\"/>\n<graph edgedefault=\"directed\">";
  for (const GNode& g : order) {
    s += "<node id=\"" + std::to_string(g.id) + "\"";
    if (!g.position) {
      s += "/>\n";
      continue;
    }
    s += ">\n  <data key=\"d0\">";
    xml_escape(s, t.name(*g.position), false);
    s += "</data>\n</node>\n";
  }
  for (const GNode& g : order) {
    for (const auto& [target, kinds] : g.targets) {
      for (uint8_t kind : {1, 2}) {
        if (!(kinds & kind)) continue;
        s += "<edge source=\"" + std::to_string(g.id) + "\" target=\"" + std::to_string(target) +
             "\">\n  <data key=\"d1\">" + (kind == 1 ? "data" : "control") + "</data>\n</edge>\n";
      }
    }
    if (s.size() > (1u << 20)) {
      out.write(s);
      s.clear();
    }
  }
  s += "</graph></graphml>";
  out.write(s);
}

// ---------------------------------------------------------------- layout

namespace {

constexpr double kBoxW = 190, kBoxH = 24, kGapX = 70, kGapY = 10, kMargin = 20, kBandGap = 40;
constexpr uint32_t kBandColumns = 24;

}  // namespace

GraphLayout layout_graph(const Trace& t, const std::vector<uint32_t>& nodes, const SvgOptions& o) {
  GraphLayout L;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  Selection sel(t, nodes);
  std::vector<uint32_t> local(t.size(), UINT32_MAX);  // trace position → index in `nodes`
  for (uint32_t k = 0; k < n; ++k) local[nodes[k]] = k;
  // Data edges (the layering) and ctrl edges between selected nodes, as local indices.
  std::vector<std::pair<uint32_t, uint32_t>> data, ctrl;
  for (uint32_t k = 0; k < n; ++k)
    sel.for_each_dep(nodes[k], [&](uint64_t, std::optional<uint32_t> p, bool is_ctrl) {
      if (!p || *p == nodes[k]) return;
      (is_ctrl ? ctrl : data).push_back({local[*p], k});
    });
  std::sort(data.begin(), data.end());
  data.erase(std::unique(data.begin(), data.end()), data.end());

  // Topological order over data edges (Kahn, file order among the free); nodes on cycles follow.
  std::vector<uint32_t> indeg(n, 0), outdeg(n, 0), off(n + 1, 0), succ(data.size());
  for (const auto& [a, b] : data) ++indeg[b], ++outdeg[a], ++off[a + 1];
  for (uint32_t k = 0; k < n; ++k) off[k + 1] += off[k];
  {
    std::vector<uint32_t> fill(off.begin(), off.end() - 1);
    for (const auto& [a, b] : data) succ[fill[a]++] = b;
  }
  std::vector<uint32_t> topo, left = indeg;
  std::vector<uint32_t> queue;
  for (uint32_t k = 0; k < n; ++k)
    if (left[k] == 0) queue.push_back(k);
  for (size_t q = 0; q < queue.size(); ++q) {
    uint32_t a = queue[q];
    topo.push_back(a);
    for (uint32_t e = off[a]; e < off[a + 1]; ++e)
      if (--left[succ[e]] == 0) queue.push_back(succ[e]);
  }
  std::vector<bool> placed(n, false);
  for (uint32_t a : topo) placed[a] = true;
  for (uint32_t k = 0; k < n; ++k)
    if (!placed[k]) topo.push_back(k);  // on or behind a cycle
  std::vector<uint32_t> rank(n);
  for (uint32_t k = 0; k < n; ++k) rank[topo[k]] = k;

  // Chains: v continues u's chain when u → v is u's only dependant and v's only dependency.
  std::vector<uint32_t> only_pred(n, UINT32_MAX);
  for (const auto& [a, b] : data)
    if (indeg[b] == 1) only_pred[b] = a;
  std::vector<uint32_t> head(n), length(n, 0), index(n, 0);
  for (uint32_t a : topo) {
    uint32_t p = only_pred[a];
    bool continues = p != UINT32_MAX && outdeg[p] == 1 && rank[p] < rank[a];
    head[a] = continues ? head[p] : a;
    index[a] = continues ? index[p] + 1 : 0;
    ++length[head[a]];
  }
  // A long chain keeps its first and last node and shows the ones between as one box.
  std::vector<uint32_t> box_of(n), middle_box(n, UINT32_MAX);
  for (uint32_t a : topo) {
    const uint32_t len = length[head[a]];
    bool inner =
        o.collapse_chains > 1 && len >= std::max<uint32_t>(o.collapse_chains, 3) && index[a] > 0 && index[a] + 1 < len;
    if (inner && middle_box[head[a]] != UINT32_MAX) {
      box_of[a] = middle_box[head[a]];
      ++L.boxes[box_of[a]].count;
      continue;
    }
    box_of[a] = static_cast<uint32_t>(L.boxes.size());
    if (inner) middle_box[head[a]] = box_of[a];
    GraphLayout::Box b;
    b.first = nodes[a];
    L.boxes.push_back(b);
  }
  L.box_of.resize(n);
  for (uint32_t k = 0; k < n; ++k) L.box_of[k] = box_of[k];
  // Box edges, without duplicates and self loops (inside a chain).
  std::vector<std::tuple<uint32_t, uint32_t, bool>> be;
  for (const auto& [a, b] : data) be.emplace_back(box_of[a], box_of[b], false);
  if (o.ctrl_edges)
    for (const auto& [a, b] : ctrl) be.emplace_back(box_of[a], box_of[b], true);
  std::sort(be.begin(), be.end());
  be.erase(std::unique(be.begin(), be.end()), be.end());
  for (size_t k = 0; k < be.size(); ++k) {
    auto [a, b, c] = be[k];
    if (a == b) continue;
    if (c && k > 0 && std::get<0>(be[k - 1]) == a && std::get<1>(be[k - 1]) == b) continue;  // data drawn
    L.edges.push_back({a, b, c});
  }

  // Layers: longest path over data edges in topological order (boxes follow their first node).
  const uint32_t nb = static_cast<uint32_t>(L.boxes.size());
  std::vector<uint32_t> box_order;
  for (uint32_t a : topo)
    if (nodes[a] == L.boxes[box_of[a]].first) box_order.push_back(box_of[a]);
  std::vector<uint32_t> box_rank(nb);
  for (uint32_t k = 0; k < nb; ++k) box_rank[box_order[k]] = k;
  std::vector<std::vector<uint32_t>> preds(nb);
  for (const GraphLayout::Edge& e : L.edges)
    if (!e.ctrl) preds[e.to].push_back(e.from);
  std::vector<double> start(nb, 0);  // by_time: earliest start (µs)
  bool timed = false;
  for (uint32_t b : box_order) {
    for (uint32_t p : preds[b]) {
      if (box_rank[p] > box_rank[b]) {
        ++L.cycle_edges;
        continue;
      }
      L.boxes[b].layer = std::max(L.boxes[b].layer, L.boxes[p].layer + 1);
    }
    L.layers = std::max(L.layers, L.boxes[b].layer + 1);
  }
  // Duration of a box: its nodes' durations (a chain runs them one after another).
  std::vector<double> dur(nb, 0);
  for (uint32_t a = 0; a < n; ++a) {
    dur[box_of[a]] += static_cast<double>(t.duration_micros(nodes[a]));
    timed |= t.duration_micros(nodes[a]) > 0;
  }
  if (o.by_time && timed) {
    // Gantt-like: x from the earliest start, rows packed greedily so boxes never overlap.
    double end = 0;
    for (uint32_t b : box_order) {
      for (uint32_t p : preds[b])
        if (box_rank[p] < box_rank[b]) start[b] = std::max(start[b], start[p] + dur[p]);
      end = std::max(end, start[b] + dur[b]);
    }
    const double scale = end > 0 ? std::min(4.0, 16000.0 / end) : 1.0;  // px per µs
    std::vector<double> row_end;
    std::vector<uint32_t> by_start = box_order;
    std::stable_sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) { return start[a] < start[b]; });
    for (uint32_t b : by_start) {
      GraphLayout::Box& x = L.boxes[b];
      x.x = kMargin + start[b] * scale;
      x.w = std::max(6.0, dur[b] * scale);
      x.h = kBoxH;
      size_t row = 0;
      while (row < row_end.size() && row_end[row] > x.x) ++row;
      if (row == row_end.size()) row_end.push_back(0);
      row_end[row] = x.x + x.w + 2;
      x.y = kMargin + static_cast<double>(row) * (kBoxH + kGapY);
      L.width = std::max(L.width, x.x + x.w + kMargin);
      L.height = std::max(L.height, x.y + kBoxH + kMargin);
    }
    return L;
  }
  // Columns by layer; within a column, by the mean row of the predecessors (then file order).
  // Long pipelines are folded like text: kBandColumns columns per band, bands top to bottom.
  std::vector<std::vector<uint32_t>> columns(L.layers);
  for (uint32_t b : box_order) columns[L.boxes[b].layer].push_back(b);
  std::vector<double> row(nb, 0);
  std::vector<double> band_rows((L.layers + kBandColumns - 1) / kBandColumns, 0);
  for (uint32_t layer = 0; layer < L.layers; ++layer) {
    std::vector<std::pair<double, uint32_t>> keyed;
    for (uint32_t b : columns[layer]) {
      double sum = 0;
      uint32_t count = 0;
      for (uint32_t p : preds[b])
        if (L.boxes[p].layer < layer) sum += row[p], ++count;
      keyed.push_back({count ? sum / count : 0.0, b});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t k = 0; k < keyed.size(); ++k) row[keyed[k].second] = static_cast<double>(k);
    double& rows = band_rows[layer / kBandColumns];
    rows = std::max(rows, static_cast<double>(keyed.size()));
  }
  std::vector<double> band_top(band_rows.size(), kMargin);
  for (size_t k = 1; k < band_rows.size(); ++k)
    band_top[k] = band_top[k - 1] + band_rows[k - 1] * (kBoxH + kGapY) + kBandGap;
  for (uint32_t b = 0; b < nb; ++b) {
    GraphLayout::Box& x = L.boxes[b];
    x.x = kMargin + (x.layer % kBandColumns) * (kBoxW + kGapX);
    x.y = band_top[x.layer / kBandColumns] + row[b] * (kBoxH + kGapY);
    x.w = kBoxW;
    x.h = kBoxH;
    L.width = std::max(L.width, x.x + kBoxW + kMargin);
    L.height = std::max(L.height, x.y + kBoxH + kMargin);
  }
  return L;
}

// ---------------------------------------------------------------- SVG

namespace {

const char* type_color(int32_t type) {
  switch (static_cast<NodeType>(type)) {
    case NodeType::Comp: return "#cfe2f3";
    case NodeType::CommColl: return "#f4cccc";
    case NodeType::CommSend:
    case NodeType::CommRecv: return "#fce5cd";
    case NodeType::MemLoad:
    case NodeType::MemStore: return "#d9ead3";
    case NodeType::Metadata: return "#eeeeee";
    default: return "#ffffff";
  }
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// At most `max` characters of `s`, cut at a UTF-8 boundary, with "…" when cut.
std::string clip(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "\u2026";
}

}  // namespace

void write_svg(const Trace& t, const std::vector<uint32_t>& nodes, const SvgOptions& o, ByteSink& out) {
  GraphLayout L = layout_graph(t, nodes, o);
  std::string s;
  double w = std::max(L.width, 200.0), h = std::max(L.height, 60.0);
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w) +
       "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) + "\">\n";
  s += "<style>text{font:11px sans-serif;dominant-baseline:middle}"
       ".d{fill:none;stroke:#555;stroke-width:1}.c{fill:none;stroke:#aaa;stroke-width:1;stroke-dasharray:4 3}"
       "rect{stroke:#333;stroke-width:1}</style>\n";
  s += "<defs><marker id=\"a\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
       "orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker>"
       "<marker id=\"t\" viewBox=\"0 0 4 10\" refX=\"4\" refY=\"5\" markerWidth=\"4\" markerHeight=\"8\" "
       "orient=\"auto\"><path d=\"M3,0V10\" stroke=\"#aaa\" stroke-width=\"2\"/></marker></defs>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + num(w) + "\" height=\"" + num(h) + "\" fill=\"#fff\" stroke=\"none\"/>\n";
  for (const GraphLayout::Edge& e : L.edges) {
    const GraphLayout::Box& a = L.boxes[e.from];
    const GraphLayout::Box& b = L.boxes[e.to];
    double x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2;
    // Horizontal tangents at both ends; an edge into a later band curves back to its start.
    double bend = std::max(30.0, std::abs(x2 - x1) / 2);
    s += "<path class=\"" + std::string(e.ctrl ? "c" : "d") + "\" d=\"M" + num(x1) + "," + num(y1) + "C" +
         num(x1 + bend) + "," + num(y1) + " " + num(x2 - bend) + "," + num(y2) + " " + num(x2) + "," + num(y2) +
         "\" marker-end=\"url(#" + (e.ctrl ? "t" : "a") + ")\"/>\n";
    if (s.size() > (1u << 20)) {
      out.write(s);
      s.clear();
    }
  }
  for (const GraphLayout::Box& b : L.boxes) {
    uint32_t n = b.first;
    std::string title = std::to_string(t.id(n)) + " " + std::string(t.name(n)) + " (" +
                        std::string(node_type_name(t.type(n))) + ", " + std::to_string(t.duration_micros(n)) + " us)";
    std::string label =
        b.count > 1 ? std::to_string(b.count) + " nodes from " + std::string(t.name(n)) : std::string(t.name(n));
    if (b.count > 1) title += " and the " + std::to_string(b.count - 1) + " nodes chained after it";
    s += "<g><title>";
    xml_escape(s, title, true);
    s += "</title><rect x=\"" + num(b.x) + "\" y=\"" + num(b.y) + "\" width=\"" + num(b.w) + "\" height=\"" + num(b.h) +
         "\" rx=\"" + (b.count > 1 ? "8" : "2") + "\" fill=\"" + type_color(t.type(n)) + "\"/>";
    size_t fits = static_cast<size_t>(std::max(0.0, (b.w - 8) / 6.2));
    if (fits >= 3) {
      s += "<text x=\"" + num(b.x + 4) + "\" y=\"" + num(b.y + b.h / 2) + "\">";
      xml_escape(s, clip(label, fits), true);
      s += "</text>";
    }
    s += "</g>\n";
    if (s.size() > (1u << 20)) {
      out.write(s);
      s.clear();
    }
  }
  s += "</svg>\n";
  out.write(s);
}

}  // namespace chakra

namespace chakra {

std::vector<uint32_t> search_nodes(const Trace& trace, std::string_view query) {
  std::vector<uint32_t> out;
  if (query.empty()) {
    out.resize(trace.size());
    for (uint32_t n = 0; n < trace.size(); ++n) out[n] = n;
    return out;
  }
  auto lower = [](unsigned char c) { return static_cast<char>(std::tolower(c)); };
  std::string q(query);
  std::transform(q.begin(), q.end(), q.begin(), lower);
  auto has = [&](std::string_view text) {
    return std::search(text.begin(), text.end(), q.begin(), q.end(),
                       [&](char a, char b) { return lower(static_cast<unsigned char>(a)) == b; }) != text.end();
  };
  // Interned strings are tested once each, not once per node that uses them.
  std::vector<int8_t> string_hit(trace.strings().size(), -1);
  auto str_has = [&](StrId id) {
    if (id >= string_hit.size()) return has(trace.str(id));
    if (string_hit[id] < 0) string_hit[id] = has(trace.str(id)) ? 1 : 0;
    return string_hit[id] == 1;
  };
  bool type_hit[kNodeTypeCount] = {};
  for (int32_t t = 0; t < kNodeTypeCount; ++t) type_hit[t] = has(node_type_name(t));
  for (uint32_t n = 0; n < trace.size(); ++n) {
    int32_t type = trace.type(n);
    bool hit = str_has(trace.name_id(n)) || (type >= 0 && type < kNodeTypeCount && type_hit[type]) ||
               has(std::to_string(trace.id(n)));
    for (uint32_t a = trace.attr_begin(n); !hit && a < trace.attr_end(n); ++a)
      if (is_text(trace.node_attrs().kind(a))) hit = str_has(static_cast<StrId>(trace.node_attrs().bits(a)));
    if (hit) out.push_back(n);
  }
  return out;
}

}  // namespace chakra

namespace chakra {

GraphLayoutIndex index_layout(const GraphLayout& layout) {
  GraphLayoutIndex index;
  const size_t n = layout.boxes.size();
  index.by_x.resize(n);
  for (uint32_t b = 0; b < n; ++b) {
    index.by_x[b] = b;
    index.widest = std::max(index.widest, layout.boxes[b].w);
  }
  std::stable_sort(index.by_x.begin(), index.by_x.end(),
                   [&](uint32_t a, uint32_t b) { return layout.boxes[a].x < layout.boxes[b].x; });
  index.edge_begin.assign(n + 1, 0);
  for (const GraphLayout::Edge& e : layout.edges) {
    ++index.edge_begin[e.from + 1];
    if (e.to != e.from) ++index.edge_begin[e.to + 1];
  }
  for (size_t b = 0; b < n; ++b) index.edge_begin[b + 1] += index.edge_begin[b];
  index.edges.resize(index.edge_begin[n]);
  std::vector<uint32_t> fill(index.edge_begin.begin(), index.edge_begin.end() - 1);
  for (uint32_t i = 0; i < layout.edges.size(); ++i) {
    const GraphLayout::Edge& e = layout.edges[i];
    index.edges[fill[e.from]++] = i;
    if (e.to != e.from) index.edges[fill[e.to]++] = i;
  }
  return index;
}

void GraphLayoutIndex::boxes_in(const GraphLayout& layout, double x0, double x1, double y0, double y1,
                                std::vector<uint32_t>& out) const {
  // Boxes starting in [x0 - widest, x1] are the only ones that can reach into [x0, x1].
  auto first = std::lower_bound(by_x.begin(), by_x.end(), x0 - widest,
                                [&](uint32_t b, double x) { return layout.boxes[b].x < x; });
  for (auto it = first; it != by_x.end() && layout.boxes[*it].x <= x1; ++it) {
    const GraphLayout::Box& b = layout.boxes[*it];
    if (b.x + b.w >= x0 && b.y <= y1 && b.y + b.h >= y0) out.push_back(*it);
  }
}

}  // namespace chakra
