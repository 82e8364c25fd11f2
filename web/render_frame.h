// The end of a frame, the same in both hosts: ImGui's draw data for the frame the app just drew,
// and the instanced rectangles queued during it, rendered into the window's framebuffer.
#pragma once

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>

#include <optional>
#include <string>
#include <utility>

#include "app.h"
#include "png.h"
#include "rect_renderer.h"

namespace chakra_web {

// Call after App::draw(); returns the framebuffer size in pixels. The host swaps buffers.
inline ImVec2 render_frame(GLFWwindow* window, RectRenderer& rects) {
  ImGui::Render();
  int width = 0, height = 0;
  glfwGetFramebufferSize(window, &width, &height);
  glViewport(0, 0, width, height);
  glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  rects.end_frame();
  return ImVec2(static_cast<float>(width), static_cast<float>(height));
}

// The framebuffer's pixels in [x, x + w) × [y, y + h) (pixels, top-left origin, clamped to the
// framebuffer of `fb_width` × `fb_height`), rows top to bottom, opaque: a screenshot or a
// chart's picture. Call after render_frame, before the buffers are swapped.
inline Image read_framebuffer(int x, int y, int w, int h, int fb_width, int fb_height) {
  x = std::clamp(x, 0, fb_width);
  y = std::clamp(y, 0, fb_height);
  w = std::clamp(w, 0, fb_width - x);
  h = std::clamp(h, 0, fb_height - y);
  Image image;
  image.width = static_cast<uint32_t>(w);
  image.height = static_cast<uint32_t>(h);
  image.rgba.resize(size_t(w) * size_t(h) * 4);
  if (image.rgba.empty()) return image;
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, fb_height - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, image.rgba.data());
  const size_t row = size_t(w) * 4;  // GL's rows run bottom to top
  for (int r = 0; r < h / 2; ++r)
    std::swap_ranges(image.rgba.begin() + long(r * row), image.rgba.begin() + long((r + 1) * row),
                     image.rgba.begin() + long((h - 1 - r) * row));
  for (size_t i = 3; i < image.rgba.size(); i += 4) image.rgba[i] = 255;
  return image;
}

// The picture asked for in this frame (Platform::request_image) as PNG bytes with its file
// name, or nothing; the request is taken. ImGui's coordinates become framebuffer pixels by the
// frame's DisplayFramebufferScale. Call after render_frame, before the buffers are swapped.
inline std::optional<std::pair<std::string, std::string>> requested_png(Platform& platform, ImVec2 framebuffer) {
  const Platform::ImageRequest q = platform.take_image_request();
  if (q.name.empty()) return std::nullopt;
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int x0 = static_cast<int>(q.x0 * scale.x), y0 = static_cast<int>(q.y0 * scale.y);
  const Image image =
      read_framebuffer(x0, y0, static_cast<int>(q.x1 * scale.x) - x0, static_cast<int>(q.y1 * scale.y) - y0,
                       static_cast<int>(framebuffer.x), static_cast<int>(framebuffer.y));
  return std::make_pair(q.name + ".png", encode_png(image));
}

}  // namespace chakra_web
