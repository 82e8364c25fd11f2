#include "chart.h"

#include <algorithm>
#include <cmath>

#include "app_state.h"
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
  if (ImGui::SmallButton("CSV")) platform.download(chart.title + ".csv", chart.csv());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Download the values drawn as CSV");
  ImGui::SameLine(0, 6);
  if (ImGui::SmallButton("PNG")) save = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Download the chart as a picture");

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
  if (save) platform.request_image({chart.title, top.x, top.y, origin.x + std::max(width, 100.0f), y1 + label_height + 2});
  ImGui::PopID();
  return hovered_column;
}

}  // namespace chakra_web
