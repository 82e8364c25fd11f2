// Small drawing helpers every view uses: colours per node type and span kind, legends, the number
// font, table rows, durations. Private to web/.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <imgui.h>

#include "app.h"

namespace chakra_web {

inline const ImVec4 kErrorColour(1.0f, 0.45f, 0.45f, 1.0f);
inline const ImVec4 kWarningColour(1.0f, 0.8f, 0.3f, 1.0f);

// Colours per node type and span kind, shared by all views.
ImU32 node_type_colour(int32_t type, float alpha = 1.0f);
ImU32 span_kind_colour(int kind, float alpha = 1.0f);
ImU32 activity_colour(int kind, float alpha = 1.0f);  // chakra::TimelineActivity

// A colour swatch and its label on the current line: the key of legends and tooltips.
void legend_item(ImU32 colour, const std::string& label, float swatch = 10);

// Numbers drawn in the platform's number font while it lives (digits line up in columns).
class NumberFont {
 public:
  explicit NumberFont(const Platform& p) : font_(p.number_font()) {
    if (font_) ImGui::PushFont(font_);
  }
  ~NumberFont() {
    if (font_) ImGui::PopFont();
  }
  NumberFont(const NumberFont&) = delete;
  NumberFont& operator=(const NumberFont&) = delete;

 private:
  ImFont* font_;
};

// A selectable spanning a table row that shows `text` exactly as it is (in an ImGui label, "##"
// would hide the rest, and names such as "## backward ##" have it); `id` tells rows apart.
bool selectable_row(const std::string& text, int id, bool selected = false);
std::string format_duration(double value, const std::string& unit);
// Each text in the next column of the table's current row.
void text_cells(std::initializer_list<std::string> cells);

}  // namespace chakra_web
