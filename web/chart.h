// Charts drawn on ImGui's draw lists (Debian has no ImPlot, and no third-party source is copied
// in): columns, stacked when there are several series or signed when one, over an axis in the
// chart's units, with a legend, the hovered column's values in a tooltip, and a CSV of exactly
// what is drawn.
#pragma once

#include <imgui.h>

#include <functional>
#include <string>
#include <vector>

namespace chakra_web {

class Platform;

struct ChartSeries {
  std::string name;
  ImU32 colour;
};

struct ColumnChart {
  std::string title;          // above the chart, and the CSV's file name
  std::string category_name;  // what a column is ("NPU", "size from")
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  std::vector<double> values;                 // categories × series, row by row
  std::function<std::string(double)> format;  // the axis's and the tooltip's values
  double min_tick_step = 0;                   // 1 for counts: no ticks between whole numbers

  double value(size_t category, size_t s) const { return values[category * series.size() + s]; }
  // A header row (category_name, then the series' names), then a row per category, values as
  // exact numbers.
  std::string csv() const;
};

// Draws `chart` across the available width (columns at most 60 px wide), `height` pixels high
// for the plot, with its title, legend, category labels where they fit and a "CSV" button
// (Platform::download). Returns the hovered column, or -1.
// A "PNG" button (or `save`) has the host save the chart's picture (Platform::request_image).
int draw_column_chart(const char* id, const ColumnChart& chart, float height, Platform& platform, bool save = false);

// Values over a grid: x values along the axis, one series per split value (split × x, NaN where
// there is none), as lines or as a heat map.
struct GridChart {
  std::string title, x_name, split_name;  // split_name empty: one unnamed series
  std::vector<std::string> x_labels, split_labels;
  std::vector<double> values;
  std::function<std::string(double)> format;

  double value(size_t split, size_t x) const { return values[split * x_labels.size() + x]; }
  // A header (x_name, then a column per split value), then a row per x value; empty cells for NaN.
  std::string csv() const;
};
// A line per split value over the x values (evenly spaced, in order), with a legend, the hovered
// x value's values in a tooltip, CSV and PNG buttons.
void draw_line_chart(const char* id, const GridChart& chart, float height, Platform& platform, bool save = false);
// A cell per (x, split) value, its colour from the lowest (dark) to the highest value (bright),
// the value written in it where it fits and in a tooltip; CSV and PNG buttons.
void draw_heat_map(const char* id, const GridChart& chart, Platform& platform, bool save = false);

// Horizontal bars, a group per x value with a bar per split value, on one scale from zero, the
// value written after each bar; `marker` > 0 draws a line at that value labelled `marker_label`
// (a reference). Legend, tooltip, CSV and PNG buttons as the others.
void draw_grouped_bars(const char* id, const GridChart& chart, double marker, const std::string& marker_label,
                       Platform& platform, bool save = false);

// A chart's CSV button (downloads TITLE.csv, made by `csv` when pressed) and PNG button; true when
// the picture is to be saved (the PNG button, or `save` already).
bool chart_buttons(const std::string& title, const std::function<std::string()>& csv, Platform& platform, bool save);

// Round axis ticks for [lo, hi]: about `count` multiples of 1, 2 or 5 × 10^k, at least
// `min_step` apart.
std::vector<double> chart_ticks(double lo, double hi, int count, double min_step = 0);

}  // namespace chakra_web
