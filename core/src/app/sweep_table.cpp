// The sweep's tables: CSV and JSON lines, reading rows back, merging shards, grids for charts.
#include <algorithm>
#include <map>
#include <set>

#include "app/sweep_parts.h"

namespace chakra::sweep {

namespace {

void sort_rows(std::vector<Row>& rows) {
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a["point"].get<uint64_t>() < b["point"].get<uint64_t>(); });
}

std::string csv_value(const Json& v) {
  return chakra::csv_field(v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump());
}

}  // namespace

std::string table_csv(const std::vector<std::string>& columns, std::vector<Row> rows) {
  sort_rows(rows);
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + chakra::csv_field(columns[i]);
  out += "\n";
  for (const Row& r : rows) {
    for (size_t i = 0; i < columns.size(); ++i)
      out += (i ? "," : "") + (r.contains(columns[i]) ? csv_value(r[columns[i]]) : std::string());
    out += "\n";
  }
  return out;
}

std::string row_jsonl(const Row& row) { return row.dump() + "\n"; }

std::string table_jsonl(std::vector<Row> rows) {
  sort_rows(rows);
  std::string out;
  for (const Row& r : rows) out += row_jsonl(r);
  return out;
}

ReadRows read_rows(std::string_view jsonl, const std::string& source) {
  ReadRows out;
  size_t pos = 0, line = 0;
  while (pos < jsonl.size()) {
    size_t end = jsonl.find('\n', pos);
    const bool last_cut = end == std::string_view::npos;
    if (last_cut) end = jsonl.size();
    const std::string_view text = jsonl.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (text.empty()) continue;
    Row r;
    try {
      r = Json::parse(text);
    } catch (const Json::exception&) {
      if (last_cut) {  // a write cut short by a kill
        ++out.truncated;
        break;
      }
      fail(source, "line " + std::to_string(line) + ": not a JSON object");
    }
    if (!r.is_object() || !r.contains("point") || !r["point"].is_number_unsigned() || !r.contains("sweep") ||
        !r["sweep"].is_string())
      fail(source, "line " + std::to_string(line) + ": not a row of a sweep table (point and sweep are missing)");
    out.rows.push_back(std::move(r));
  }
  return out;
}

std::vector<Row> merge_rows(const std::vector<std::pair<std::string, ReadRows>>& parts) {
  std::vector<Row> rows;
  std::map<uint64_t, std::string> seen;
  std::string sweep, sweep_file;
  for (const auto& [file, part] : parts)
    for (const Row& r : part.rows) {
      const std::string s = r["sweep"].get<std::string>();
      if (sweep.empty()) sweep = s, sweep_file = file;
      if (s != sweep)
        fail(file, "rows of sweep " + s + ", and " + sweep_file + " has rows of sweep " + sweep + " (another spec)");
      const uint64_t p = r["point"].get<uint64_t>();
      if (auto [it, fresh] = seen.emplace(p, file); !fresh)
        fail(file, "point " + std::to_string(p) + " is also in " + it->second);
      rows.push_back(r);
    }
  sort_rows(rows);
  return rows;
}

std::vector<uint64_t> missing_points(const std::vector<Row>& rows, uint64_t expected) {
  std::vector<bool> have(expected, false);
  for (const Row& r : rows)
    if (const uint64_t p = r["point"].get<uint64_t>(); p < expected) have[p] = true;
  std::vector<uint64_t> out;
  for (uint64_t p = 0; p < expected; ++p)
    if (!have[p]) out.push_back(p);
  return out;
}

std::vector<std::string> axis_columns(const Row& row) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& [key, v] : row.items()) {
    if (key == "npus") break;
    if (in) out.push_back(key);
    if (key == "sweep") in = true;
  }
  return out;
}

std::vector<size_t> point_order(const std::vector<Row>& rows) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return rows[a]["point"].get<uint64_t>() < rows[b]["point"].get<uint64_t>(); });
  return order;
}

Grid grid_of(const std::vector<Row>& rows, const std::string& x, const std::string& split, const std::string& metric) {
  Grid g;
  std::map<std::string, size_t> xi, si;
  auto index = [](std::map<std::string, size_t>& m, std::vector<std::string>& names, const std::string& v) {
    auto [it, fresh] = m.emplace(v, names.size());
    if (fresh) names.push_back(v);
    return it->second;
  };
  struct Sum {
    double total = 0;
    uint64_t n = 0;
  };
  std::map<std::pair<size_t, size_t>, Sum> sums;
  for (const size_t i : point_order(rows)) {
    const Row& r = rows[i];
    if (!r.contains(x) || (!split.empty() && !r.contains(split))) continue;
    const size_t xv = index(xi, g.x_values, describe(r[x]));
    const size_t sv = split.empty() ? index(si, g.split_values, "") : index(si, g.split_values, describe(r[split]));
    if (!r.contains(metric) || !r[metric].is_number() || (r.contains("error") && r["error"] != "")) continue;
    Sum& s = sums[{sv, xv}];
    s.total += r[metric].get<double>();
    s.n += 1;
  }
  g.mean.assign(g.split_values.size() * g.x_values.size(), NAN);
  for (const auto& [key, s] : sums)
    g.mean[key.first * g.x_values.size() + key.second] = s.total / static_cast<double>(s.n);
  return g;
}

}  // namespace chakra::sweep
