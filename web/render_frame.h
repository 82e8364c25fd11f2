// The end of a frame, the same in both hosts: ImGui's draw data for the frame the app just drew,
// and the instanced rectangles queued during it, rendered into the window's framebuffer.
#pragma once

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

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

}  // namespace chakra_web
