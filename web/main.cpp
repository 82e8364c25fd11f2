// Browser entry point: GLFW window (Emscripten's emulation) + WebGL2, one ImGui frame per
// animation frame, and the functions the page's JavaScript calls to hand over files.
#include <emscripten.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <string>

#include "app.h"

namespace {

GLFWwindow* g_window = nullptr;
chakra_web::App g_app;
std::string g_status;  // keeps the string returned to JavaScript alive until the next call

// Matches the canvas's backing store to its CSS size times the device pixel ratio.
void fit_canvas() {
  int width = EM_ASM_INT({ return Math.floor(Module.canvas.clientWidth * (window.devicePixelRatio || 1)); });
  int height = EM_ASM_INT({ return Math.floor(Module.canvas.clientHeight * (window.devicePixelRatio || 1)); });
  int current_w = 0, current_h = 0;
  glfwGetWindowSize(g_window, &current_w, &current_h);
  if (width > 0 && height > 0 && (width != current_w || height != current_h)) glfwSetWindowSize(g_window, width, height);
}

void frame() {
  fit_canvas();
  glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  g_app.draw();
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(g_window, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glfwSwapBuffers(g_window);
}

}  // namespace

extern "C" {

// Takes a copy of `size` bytes at `data` (the page frees them afterwards). Returns 1 on success.
EMSCRIPTEN_KEEPALIVE int app_load_bytes(const uint8_t* data, int size, const char* name) {
  return g_app.load({data, static_cast<size_t>(size)}, name) ? 1 : 0;
}

EMSCRIPTEN_KEEPALIVE const char* app_status_json() {
  g_status = g_app.status_json();
  return g_status.c_str();
}

}  // extern "C"

int main() {
  if (!glfwInit()) {
    std::fprintf(stderr, "glfwInit failed\n");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  g_window = glfwCreateWindow(1280, 720, "chakrakit", nullptr, nullptr);
  if (!g_window) {
    std::fprintf(stderr, "no WebGL2 context\n");
    return 1;
  }
  glfwMakeContextCurrent(g_window);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(g_window, true);
  ImGui_ImplOpenGL3_Init("#version 300 es");
  std::printf("chakrakit web %s: GL %s\n", CHAKRA_VERSION, reinterpret_cast<const char*>(glGetString(GL_VERSION)));
  emscripten_set_main_loop(frame, 0, false);
  return 0;
}
