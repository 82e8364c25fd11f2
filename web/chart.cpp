#include "chart.h"

#include <algorithm>
#include <cmath>

#include "widgets.h"
#include "chakra/support/text.h"
#include "chakra/viz/timeline_model.h"

namespace chakra_web {

std::string ColumnChart::csv() const {
  std::string out = category_name;
  for (const ChartSeries& s : series) out += "," + s.name;
  out += "\n";
  for (size_t c = 0; c < categories.size(); ++c) {
    out += categories[c];
    for (size_t s = 0; s < series.size(); ++s) out += "," + chakra::format_number(value(c, s));
    out += "\n";
  }
  return out;
}

bool chart_buttons(const std::string& title, const std::function<std::string()>& csv, Platform& platform, bool save) {
  if (ImGui::SmallButton("CSV")) platform.download(title + ".csv", csv());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Download the values drawn as CSV");
  ImGui::SameLine(0, 6);
  if (ImGui::SmallButton("PNG")) save = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Download the chart as a picture");
  return save;
}

std::vector<double> chart_ticks(double lo, double hi, int count, double min_step) {
  if (!(hi > lo) || count < 1 || !std::isfinite(lo) || !std::isfinite(hi)) return {};
  const double step = chakra::round_step(std::max((hi - lo) / count, min_step));
  return chakra::axis_ticks(0, lo, hi + step * 1e-9, step);  // hi itself included
}

int draw_column_chart(const char* id, const ColumnChart& chart, float height, Platform& platform, bool save) {
  ImGui::PushID(id);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  ImGui::TextUnformatted(chart.title.c_str());
  // The legend on the title's line: a swatch and a name per series.
  for (const ChartSeries& s : chart.series) {
    if (chart.series.size() < 2) break;
    ImGui::SameLine(0, 14);
    legend_item(s.colour, s.name);
  }
  ImGui::SameLine(0, 14);
  save = chart_buttons(
      chart.title, [&] { return chart.csv(); }, platform, save);

  const size_t n = chart.categories.size(), k = chart.series.size();
  // The range: stacked sums above zero, and below it for a single signed series.
  double lo = 0, hi = 0;
  for (size_t c = 0; c < n; ++c) {
    double up = 0, down = 0;
    for (size_t s = 0; s < k; ++s) (chart.value(c, s) >= 0 ? up : down) += chart.value(c, s);
    hi = std::max(hi, up);
    lo = std::min(lo, down);
  }
  if (hi == lo) hi = lo + 1;
  std::vector<double> ticks = chart_ticks(lo, hi, 4, chart.min_tick_step);
  // The axis ends on round ticks at or beyond the data, so the tallest column has a tick above it.
  if (ticks.size() >= 2) {
    const double step = ticks[1] - ticks[0];
    if (ticks.back() < hi - step * 1e-9) ticks.push_back(ticks.back() + step);
    if (ticks.front() > lo + step * 1e-9) ticks.insert(ticks.begin(), ticks.front() - step);
    lo = std::min(lo, ticks.front());
    hi = std::max(hi, ticks.back());
  }

  NumberFont numbers(platform);  // axis and category labels
  const float axis_width = 72, label_height = ImGui::GetTextLineHeight() + 2;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  const float column = n ? std::min(60.0f, (avail - axis_width) / static_cast<float>(n)) : 0;
  const float width = axis_width + column * static_cast<float>(n);
  ImGui::InvisibleButton("plot", ImVec2(std::max(width, 100.0f), height + label_height));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = origin.x + axis_width, x1 = origin.x + width, y0 = origin.y + 4, y1 = origin.y + height - 2;
  auto y_of = [&](double v) { return y1 - static_cast<float>((v - lo) / (hi - lo)) * (y1 - y0); };
  const ImU32 grid = IM_COL32(70, 74, 86, 255), text = IM_COL32(190, 192, 200, 255);
  for (double t : ticks) {
    const float y = y_of(t);
    dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), grid);
    const std::string label = chart.format(t);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(x0 - w - 6, y - ImGui::GetTextLineHeight() / 2), text, label.c_str());
  }
  if (lo < 0) dl->AddLine(ImVec2(x0, y_of(0)), ImVec2(x1, y_of(0)), IM_COL32(150, 150, 160, 255));
  int hovered_column = -1;
  if (n > 0) {
    const float gap = column > 5 ? 1.0f : 0.0f;
    // Category labels under the columns, every k-th so that they do not overlap.
    float widest = 0;
    for (const std::string& c : chart.categories) widest = std::max(widest, ImGui::CalcTextSize(c.c_str()).x);
    const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil((widest + 8) / std::max(column, 1.0f))));
    for (size_t c = 0; c < n; c += every)
      dl->AddText(ImVec2(x0 + column * static_cast<float>(c) + 1, y1 + 2), text, chart.categories[c].c_str());
    for (size_t c = 0; c < n; ++c) {
      const float a = x0 + column * static_cast<float>(c), b = std::max(a + 1, a + column - gap);
      double up = 0, down = 0;
      for (size_t s = 0; s < k; ++s) {
        const double v = chart.value(c, s);
        double& base = v >= 0 ? up : down;
        const float ya = y_of(base), yb = y_of(base + v);
        if (v != 0) dl->AddRectFilled(ImVec2(a, std::min(ya, yb)), ImVec2(b, std::max(ya, yb)), chart.series[s].colour);
        base += v;
      }
    }
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (hovered && mouse.x >= x0 && mouse.x < x1) {
      hovered_column = std::clamp(static_cast<int>((mouse.x - x0) / column), 0, static_cast<int>(n) - 1);
      const float a = x0 + column * static_cast<float>(hovered_column);
      dl->AddRect(ImVec2(a, y0), ImVec2(a + std::max(column, 2.0f), y1), IM_COL32(255, 255, 255, 160));
      ImGui::BeginTooltip();
      ImGui::Text("%s %s", chart.category_name.c_str(), chart.categories[hovered_column].c_str());
      double total = 0;
      for (size_t s = 0; s < k; ++s) {
        const double v = chart.value(static_cast<size_t>(hovered_column), s);
        total += v;
        legend_item(chart.series[s].colour, chart.series[s].name + ": " + chart.format(v), 9);
      }
      if (k > 1) ImGui::Text("total: %s", chart.format(total).c_str());
      ImGui::EndTooltip();
    }
  }
  if (save)
    platform.request_image({chart.title, top.x, top.y, origin.x + std::max(width, 100.0f), y1 + label_height + 2});
  ImGui::PopID();
  return hovered_column;
}

std::string GridChart::csv() const {
  std::string out = x_name;
  for (const std::string& s : split_labels) out += "," + (s.empty() ? title : split_name + "=" + s);
  out += "\n";
  for (size_t x = 0; x < x_labels.size(); ++x) {
    out += x_labels[x];
    for (size_t s = 0; s < split_labels.size(); ++s)
      out += "," + (std::isnan(value(s, x)) ? std::string() : chakra::format_number(value(s, x)));
    out += "\n";
  }
  return out;
}

namespace {

// The title line of a grid chart: the title, the CSV and PNG buttons.
bool grid_header(const GridChart& chart, Platform& platform, bool save) {
  ImGui::TextUnformatted(chart.title.c_str());
  ImGui::SameLine(0, 14);
  return chart_buttons(
      chart.title, [&] { return chart.csv(); }, platform, save);
}

ImU32 series_colour(size_t i) {
  static const ImU32 palette[] = {IM_COL32(110, 170, 255, 255), IM_COL32(240, 150, 60, 255),
                                  IM_COL32(120, 210, 120, 255), IM_COL32(230, 100, 160, 255),
                                  IM_COL32(180, 140, 250, 255), IM_COL32(90, 210, 210, 255),
                                  IM_COL32(230, 210, 90, 255),  IM_COL32(200, 200, 200, 255)};
  return palette[i % std::size(palette)];
}

}  // namespace

void draw_line_chart(const char* id, const GridChart& chart, float height, Platform& platform, bool save) {
  ImGui::PushID(id);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  save = grid_header(chart, platform, save);
  const size_t nx = chart.x_labels.size(), ns = chart.split_labels.size();
  if (ns > 1) {  // the legend, wrapped to the width there is
    const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
    for (size_t s = 0; s < ns; ++s) {
      const std::string label = chart.split_name + " " + chart.split_labels[s];
      const float w = ImGui::CalcTextSize(label.c_str()).x + 30;
      if (s) {
        ImGui::SameLine(0, 14);
        if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
      }
      legend_item(series_colour(s), label);
    }
  }
  double lo = INFINITY, hi = -INFINITY;
  for (double v : chart.values)
    if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi >= lo)) lo = 0, hi = 1;
  lo = std::min(lo, 0.0);
  if (hi == lo) hi = lo + 1;
  std::vector<double> ticks = chart_ticks(lo, hi, 4);
  if (ticks.size() >= 2 && ticks.back() < hi) ticks.push_back(ticks.back() + (ticks[1] - ticks[0]));
  if (!ticks.empty()) hi = std::max(hi, ticks.back());
  NumberFont numbers(platform);
  const float axis_width = 72, label_height = ImGui::GetTextLineHeight() + 2;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(200.0f, ImGui::GetContentRegionAvail().x - 8);
  ImGui::InvisibleButton("plot", ImVec2(width, height + label_height));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = origin.x + axis_width + 8, x1 = origin.x + width - 16, y0 = origin.y + 4, y1 = origin.y + height - 2;
  auto y_of = [&](double v) { return y1 - static_cast<float>((v - lo) / (hi - lo)) * (y1 - y0); };
  auto x_of = [&](size_t i) {
    return nx > 1 ? x0 + (x1 - x0) * static_cast<float>(i) / static_cast<float>(nx - 1) : (x0 + x1) / 2;
  };
  const ImU32 grid = IM_COL32(70, 74, 86, 255), text = IM_COL32(190, 192, 200, 255);
  for (double t : ticks) {
    const float y = y_of(t);
    dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), grid);
    const std::string label = chart.format(t);
    dl->AddText(ImVec2(x0 - ImGui::CalcTextSize(label.c_str()).x - 14, y - ImGui::GetTextLineHeight() / 2), text,
                label.c_str());
  }
  // x labels, every k-th so that they do not overlap
  float widest = 0;
  for (const std::string& l : chart.x_labels) widest = std::max(widest, ImGui::CalcTextSize(l.c_str()).x);
  const float spacing = nx > 1 ? (x1 - x0) / static_cast<float>(nx - 1) : x1 - x0;
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil((widest + 8) / std::max(spacing, 1.0f))));
  for (size_t i = 0; i < nx; i += every) {
    const float w = ImGui::CalcTextSize(chart.x_labels[i].c_str()).x;
    dl->AddText(ImVec2(x_of(i) - w / 2, y1 + 2), text, chart.x_labels[i].c_str());
  }
  for (size_t s = 0; s < ns; ++s) {
    ImVec2 previous;
    bool has_previous = false;
    for (size_t i = 0; i < nx; ++i) {
      const double v = chart.value(s, i);
      if (std::isnan(v)) {
        has_previous = false;
        continue;
      }
      const ImVec2 p(x_of(i), y_of(v));
      if (has_previous) dl->AddLine(previous, p, series_colour(s), 2.0f);
      dl->AddCircleFilled(p, 3.0f, series_colour(s));
      previous = p;
      has_previous = true;
    }
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && nx > 0) {
    const size_t i =
        nx > 1 ? static_cast<size_t>(std::clamp(std::lround((mouse.x - x0) / spacing), 0L, static_cast<long>(nx) - 1))
               : 0;
    dl->AddLine(ImVec2(x_of(i), y0), ImVec2(x_of(i), y1), IM_COL32(255, 255, 255, 120));
    ImGui::BeginTooltip();
    ImGui::Text("%s %s", chart.x_name.c_str(), chart.x_labels[i].c_str());
    for (size_t s = 0; s < ns; ++s) {
      const double v = chart.value(s, i);
      legend_item(series_colour(s),
                  (ns > 1 ? chart.split_name + " " + chart.split_labels[s] + ": " : "") +
                      (std::isnan(v) ? "-" : chart.format(v)),
                  9);
    }
    ImGui::EndTooltip();
  }
  if (save) platform.request_image({chart.title, top.x, top.y, origin.x + width, y1 + label_height + 2});
  ImGui::PopID();
}

void draw_heat_map(const char* id, const GridChart& chart, Platform& platform, bool save) {
  ImGui::PushID(id);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  save = grid_header(chart, platform, save);
  const size_t nx = chart.x_labels.size(), ns = chart.split_labels.size();
  double lo = INFINITY, hi = -INFINITY;
  for (double v : chart.values)
    if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  NumberFont numbers(platform);
  const float line = ImGui::GetTextLineHeight();
  float label_w = ImGui::CalcTextSize(chart.split_name.c_str()).x;
  for (const std::string& l : chart.split_labels) label_w = std::max(label_w, ImGui::CalcTextSize(l.c_str()).x);
  label_w += 10;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail = std::max(200.0f, ImGui::GetContentRegionAvail().x - 8);
  const float cell_w = nx ? std::min(110.0f, (avail - label_w) / static_cast<float>(nx)) : 0, cell_h = line + 8;
  const float width = label_w + cell_w * static_cast<float>(nx), height = cell_h * static_cast<float>(ns) + line + 4;
  ImGui::InvisibleButton("map", ImVec2(std::max(width, 100.0f), height));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = IM_COL32(190, 192, 200, 255);
  const float x0 = origin.x + label_w, y0 = origin.y;
  for (size_t i = 0; i < nx; ++i) {
    const std::string& l = chart.x_labels[i];
    if (ImGui::CalcTextSize(l.c_str()).x < cell_w - 2)
      dl->AddText(ImVec2(x0 + cell_w * static_cast<float>(i) + 2, y0 + cell_h * static_cast<float>(ns) + 2), text,
                  l.c_str());
  }
  for (size_t s = 0; s < ns; ++s) {
    const float y = y0 + cell_h * static_cast<float>(s);
    dl->AddText(ImVec2(origin.x, y + 4), text, chart.split_labels[s].c_str());
    for (size_t i = 0; i < nx; ++i) {
      const double v = chart.value(s, i);
      const float x = x0 + cell_w * static_cast<float>(i);
      if (std::isnan(v)) {
        dl->AddRect(ImVec2(x + 1, y + 1), ImVec2(x + cell_w - 1, y + cell_h - 1), IM_COL32(70, 74, 86, 255));
        continue;
      }
      // Dark blue (lowest) to bright yellow (highest).
      const float f = hi > lo ? static_cast<float>((v - lo) / (hi - lo)) : 0.5f;
      const ImU32 c =
          IM_COL32(static_cast<int>(40 + 215 * f), static_cast<int>(60 + 170 * f), static_cast<int>(140 - 90 * f), 255);
      dl->AddRectFilled(ImVec2(x + 1, y + 1), ImVec2(x + cell_w - 1, y + cell_h - 1), c);
      const std::string label = chart.format(v);
      if (ImGui::CalcTextSize(label.c_str()).x < cell_w - 6)
        dl->AddText(ImVec2(x + 4, y + 4), f > 0.55f ? IM_COL32(20, 20, 20, 255) : IM_COL32(235, 235, 235, 255),
                    label.c_str());
    }
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && mouse.x >= x0 && cell_w > 0) {
    const size_t i = std::min(nx - 1, static_cast<size_t>((mouse.x - x0) / cell_w)),
                 s = static_cast<size_t>((mouse.y - y0) / cell_h);
    if (i < nx && s < ns) {
      ImGui::BeginTooltip();
      ImGui::Text("%s %s, %s %s", chart.x_name.c_str(), chart.x_labels[i].c_str(), chart.split_name.c_str(),
                  chart.split_labels[s].c_str());
      ImGui::Text("%s", std::isnan(chart.value(s, i)) ? "-" : chart.format(chart.value(s, i)).c_str());
      ImGui::EndTooltip();
    }
  }
  if (save) platform.request_image({chart.title, top.x, top.y, origin.x + std::max(width, 100.0f), origin.y + height});
  ImGui::PopID();
}

// Horizontal bars, one group per x value, a bar per split value in its colour, all on one scale
// from zero; `marker` (when > 0) drawn as a line across every group, labelled.
void draw_grouped_bars(const char* id, const GridChart& chart, double marker, const std::string& marker_label,
                       Platform& platform, bool save) {
  ImGui::PushID(id);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  save = grid_header(chart, platform, save);
  for (size_t s = 0; s < chart.split_labels.size() && chart.split_labels.size() > 1; ++s) {
    if (s) ImGui::SameLine(0, 14);
    legend_item(series_colour(s), chart.split_labels[s]);
  }
  double hi = marker;
  for (double v : chart.values)
    if (std::isfinite(v)) hi = std::max(hi, v);
  if (!(hi > 0)) hi = 1;
  NumberFont numbers(platform);
  const float label_w = 130, value_w = 56, bar_h = ImGui::GetTextLineHeight(), gap = 8;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(120.0f, std::min(ImGui::GetContentRegionAvail().x, 760.0f) - label_w - value_w);
  const size_t k = std::max<size_t>(1, chart.split_labels.size());
  const float group_h = static_cast<float>(k) * bar_h + gap;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float x0 = origin.x + label_w;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t x = 0; x < chart.x_labels.size(); ++x) {
    const float y = origin.y + static_cast<float>(x) * group_h;
    dl->AddText(ImVec2(origin.x, y + (static_cast<float>(k) * bar_h - bar_h) / 2), text, chart.x_labels[x].c_str());
    for (size_t s = 0; s < k; ++s) {
      const double v = chart.value(s, x);
      const float yb = y + static_cast<float>(s) * bar_h;
      if (!std::isfinite(v)) continue;
      const float x1 = x0 + width * static_cast<float>(v / hi);
      dl->AddRectFilled(ImVec2(x0, yb + 1), ImVec2(x1, yb + bar_h - 1), series_colour(s));
      const std::string shown = chart.format(v);
      dl->AddText(ImVec2(x1 + 4, yb), text, shown.c_str());
      if (mouse.x >= x0 && mouse.x < x1 + value_w && mouse.y >= yb && mouse.y < yb + bar_h && ImGui::IsWindowHovered())
        ImGui::SetTooltip("%s, %s: %s", chart.x_labels[x].c_str(),
                          chart.split_labels.empty() ? "" : chart.split_labels[s].c_str(), shown.c_str());
    }
  }
  const float bottom = origin.y + static_cast<float>(chart.x_labels.size()) * group_h;
  if (marker > 0) {
    const float xm = x0 + width * static_cast<float>(marker / hi);
    dl->AddLine(ImVec2(xm, origin.y), ImVec2(xm, bottom), faint, 1.0f);
    dl->AddText(ImVec2(xm + 3, bottom), faint, marker_label.c_str());
  }
  ImGui::Dummy(ImVec2(label_w + width + value_w, bottom - origin.y + ImGui::GetTextLineHeight() + 4));
  if (save) platform.request_image({chart.title, top.x, top.y, x0 + width + value_w, ImGui::GetCursorScreenPos().y});
  ImGui::PopID();
}

}  // namespace chakra_web
