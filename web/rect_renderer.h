// GPU path for many rectangles: an instance buffer and the shaders in shaders/, drawn from inside
// ImGui's draw list (an ImDrawList callback), clipped like the window that queued them.
#pragma once

#include <deque>
#include <vector>

#include "app.h"

struct ImDrawList;
struct ImDrawCmd;

namespace chakra_web {

class RectRenderer {
 public:
  // Compiles the shaders (needs a current GL ES 3 / GL 3.3 context); false if that failed.
  bool init(const char* version_line);
  // Adds a callback drawing `rects` to the current window's draw list. Call between NewFrame and
  // Render; the data lives until end_frame().
  bool queue(const std::vector<RectInstance>& rects);
  void end_frame();

 private:
  static void draw_callback(const ImDrawList* list, const ImDrawCmd* cmd);
  void draw(const std::vector<RectInstance>& rects, const ImDrawCmd* cmd);

  unsigned program_ = 0, vao_ = 0, buffer_ = 0;
  int view_location_ = -1;
  std::deque<std::vector<RectInstance>> batches_;
};

}  // namespace chakra_web
