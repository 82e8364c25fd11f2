// Native entry point: the web app's UI (App) in a desktop GLFW window with OpenGL 3.3, the same
// views and shaders as in the browser. Files come from the command line or are dropped on the
// window; simulations run on a thread (SimThread). With --screenshot it renders a few frames
// after everything asked for is done, writes a PNG and exits: the golden-image tests run it
// under Xvfb.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app.h"
#include "chakra/app/suite.h"
#include "chakra/format/io.h"
#include "png.h"
#include "rect_renderer.h"
#include "render_frame.h"
#include "sim_thread.h"

namespace {

const char kUsage[] =
    "usage: chakra-view [options] [FILE...]\n"
    "The chakrakit web app's views in a desktop window. FILEs are what the page takes: Chakra .et or\n"
    "JSON (plain or gzip), PyTorch host ET + Kineto JSON, StableHLO programs (.mlir), ASTRA-sim text\n"
    "workloads and configs, sweep tables (RESULTS.jsonl).\n"
    "  --hash STATE       restore a share link's state (the part after '#')\n"
    "  --do COMMAND       after the files are open: simulate, cancel, synthesize, fit, clear,\n"
    "                     view overview|nodes|graph|timeline|simulation, timeline RUN\n"
    "                     (repeatable; in order, each after the previous simulation finished)\n"
    "  --status FILE      at exit, write the app's state as JSON (what the browser tests read)\n"
    "  --size WxH         window size in pixels (default 1280x800)\n"
    "  --screenshot FILE  when done, draw --frames frames, write FILE (PNG) and exit; wall-clock\n"
    "                     figures are left out and the mouse is ignored, so the image is stable\n"
    "  --frames N         frames drawn before the screenshot (default 4)\n";

class DesktopPlatform : public chakra_web::Platform {
 public:
  GLFWwindow* window = nullptr;
  chakra_web::RectRenderer rects;
  bool gpu_rects = false;
  bool stable = false;
  chakra_web::SimThread runner;

  void copy_text(const std::string& hash) override {
    glfwSetClipboardString(window, ("chakra-view --hash '" + hash + "'").c_str());
  }
  void download(const std::string& name, const std::string& content) override {
    std::ofstream(name, std::ios::binary) << content;
    std::fprintf(stderr, "wrote %s\n", name.c_str());
  }
  bool draw_rects(const std::vector<chakra_web::RectInstance>& r) override { return gpu_rects && rects.queue(r); }
  bool runs_simulations() const override { return true; }
  void start_simulation(chakra::SimJob job) override { runner.start(std::move(job)); }
  void cancel_simulation() override { runner.cancel(); }
  chakra::ConvertedRank convert_here(const chakra::RankConversion& job) override { return chakra::convert_rank(job); }
  bool show_timings() const override { return !stable; }
  std::string suite_dir() const override {
    return chakra::suite::builtin_suite_dir(std::filesystem::canonical("/proc/self/exe").parent_path().string(),
                                            CHAKRA_SOURCE_ASSETS);
  }
};

DesktopPlatform g_platform;
chakra_web::App* g_app = nullptr;

void queue_path(const std::string& path) {
  try {
    std::string bytes = chakra::read_file(path);
    std::string name = path.substr(path.rfind('/') + 1);
    g_app->queue_file(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chakra-view: %s\n", e.what());
  }
}

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) queue_path(paths[i]);
}

bool write_screenshot(const std::string& path, int width, int height) {
  glReadBuffer(GL_BACK);
  const chakra_web::Image image = chakra_web::read_framebuffer(0, 0, width, height, width, height);
  std::ofstream out(path, std::ios::binary);
  out << chakra_web::encode_png(image);
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files, commands;
  std::string hash, screenshot, status_file;
  int width = 1280, height = 800, frames = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "chakra-view: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--hash") {
      hash = value();
    } else if (a == "--do") {
      commands.push_back(value());
    } else if (a == "--size") {
      std::string v = value();
      if (std::sscanf(v.c_str(), "%dx%d", &width, &height) != 2 || width < 200 || height < 200 || width > 8192 ||
          height > 8192) {
        std::fprintf(stderr, "chakra-view: --size wants WxH between 200 and 8192, not '%s'\n", v.c_str());
        return 2;
      }
    } else if (a == "--status") {
      status_file = value();
    } else if (a == "--screenshot") {
      screenshot = value();
    } else if (a == "--frames") {
      frames = std::atoi(value().c_str());
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "chakra-view: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (!glfwInit()) {
    std::fprintf(stderr, "chakra-view: no display (glfwInit failed); set DISPLAY or run under xvfb-run\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  if (!screenshot.empty()) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(width, height, "chakrakit", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "chakra-view: could not open an OpenGL 3.3 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(screenshot.empty() ? 1 : 0);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  g_platform.window = window;
  g_platform.stable = !screenshot.empty();
  g_platform.gpu_rects = g_platform.rects.init("#version 330 core");
  glfwSetDropCallback(window, on_drop);

  chakra_web::App app(g_platform);
  g_app = &app;
  for (const std::string& f : files) queue_path(f);
  if (!hash.empty()) app.apply_hash(hash);  // deferred by the app until the files are open

  size_t next_command = 0;
  int frames_left = frames;
  int status = 0;
  while (!glfwWindowShouldClose(window)) {
    bool working = app.busy() || g_platform.runner.running();
    if (working || !screenshot.empty())
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.25);
    app.work(screenshot.empty() ? 12.0 : 1000.0);
    g_platform.runner.poll(app);
    // Commands run in order, each once the files and the previous simulation are done.
    if (!app.busy() && !g_platform.runner.running() && next_command < commands.size()) {
      if (!app.command(commands[next_command]))
        std::fprintf(stderr, "chakra-view: '%s' failed\n", commands[next_command].c_str());
      ++next_command;
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (!screenshot.empty()) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // no hover effects
    ImGui::NewFrame();
    app.draw();
    ImVec2 framebuffer = chakra_web::render_frame(window, g_platform.rects);
    if (auto png = chakra_web::requested_png(g_platform, framebuffer)) g_platform.download(png->first, png->second);
    bool settled = !app.busy() && !g_platform.runner.running() && next_command == commands.size();
    if (!screenshot.empty() && settled && --frames_left <= 0) {
      status = write_screenshot(screenshot, static_cast<int>(framebuffer.x), static_cast<int>(framebuffer.y)) ? 0 : 1;
      if (status) std::fprintf(stderr, "chakra-view: could not write %s\n", screenshot.c_str());
      break;
    }
    glfwSwapBuffers(window);
  }
  g_platform.runner.cancel();
  if (!status_file.empty() && !(std::ofstream(status_file) << app.status_json())) {
    std::fprintf(stderr, "chakra-view: could not write %s\n", status_file.c_str());
    status = 1;
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}
