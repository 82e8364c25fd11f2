// Browser entry point: GLFW window (Emscripten's emulation) + WebGL2, one ImGui frame per
// animation frame, the page services the app asks for (URL hash, clipboard, file picker,
// downloads), and the functions the page's JavaScript calls to hand over files and links.
#include <emscripten.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "app.h"
#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"
#include "rect_renderer.h"
#include "render_frame.h"

// The EM_ASM blocks below hold JavaScript, which clang-format would break.
// clang-format off

namespace {

class BrowserPlatform : public chakra_web::Platform {
 public:
  chakra_web::RectRenderer rects;
  bool gpu_rects = false;

  // At most twice a second (the last state wins): panning changes the hash on nearly every
  // frame, and browsers throttle, and charge for, history updates.
  void set_location_hash(const std::string& hash) override {
    EM_ASM({
      Module.chakrakitHash = UTF8ToString($0);
      if (Module.chakrakitHashTimer) return;
      Module.chakrakitHashTimer = setTimeout(() => {
        Module.chakrakitHashTimer = 0;
        history.replaceState(null, document.title, '#' + Module.chakrakitHash);
      }, 500);
    }, hash.c_str());
  }
  void copy_text(const std::string& hash) override {
    EM_ASM({
      const url = location.href.split('#')[0] + '#' + UTF8ToString($0);
      if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
      window.chakrakitLastCopied = url;
    }, hash.c_str());
  }
  void open_file_picker() override { EM_ASM({ document.getElementById('file').click(); }); }
  // Bytes as they are (a ZIP holds NULs, so never through a C string).
  void download(const std::string& name, const std::string& content) override {
    EM_ASM({
      const name = UTF8ToString($0);
      const bytes = HEAPU8.slice($1, $1 + $2);
      // (No object literal: EM_ASM's macro would split its commas.)
      const last = Object.create(null);
      last.name = name;
      last.size = bytes.length;
      last.head = Array.from(bytes.subarray(0, 8));
      window.chakrakitLastDownload = last;
      const options = Object.create(null);
      options.type = name.endsWith('.zip') ? 'application/zip' : name.endsWith('.png') ? 'image/png' : 'text/plain';
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([bytes], options));
      a.download = name;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    }, name.c_str(), content.data(), content.size());
  }
  bool has_toolbar() const override { return true; }  // index.html's header
  ImFont* number_font() const override { return numbers; }
  ImFont* numbers = nullptr;  // rebuilt with the atlas (fit_font)
  bool draw_rects(const std::vector<chakra_web::RectInstance>& r) override { return gpu_rects && rects.queue(r); }
  // In a Web Worker (sim_client.js), which gets the job as bytes; its reports come back through
  // app_sim_* below.
  bool runs_simulations() const override { return EM_ASM_INT({ return typeof Worker !== 'undefined'; }) != 0; }
  void start_simulation(chakra::SimJob job) override {
    std::string bytes = chakra::encode_job(job);
    EM_ASM({ Module.chakrakitSimulation.start(HEAPU8.subarray($0, $0 + $1)); }, bytes.data(), bytes.size());
  }
  void cancel_simulation() override { EM_ASM({ Module.chakrakitSimulation.cancel(); }); }
  // Sweep points in a pool of Web Workers (sim_client.js); reports come back through app_sweep_*.
  bool runs_sweep_points() const override { return runs_simulations(); }
  void start_sweep_point(uint64_t point, uint64_t generation, chakra::SimJob job) override {
    job.options.record_spans = false;
    std::string bytes = chakra::encode_job(job);
    EM_ASM({ Module.chakrakitSweep.start(HEAPU8.subarray($0, $0 + $1), $2, $3); }, bytes.data(), bytes.size(),
           static_cast<double>(point), static_cast<double>(generation));
  }
  void cancel_sweep() override { EM_ASM({ Module.chakrakitSweep.cancel(); }); }
  // Suite entries in a pool of Web Workers (sim_client.js), the measured runs they read fetched
  // from the page's examples/ and put at /examples in each; reports come back through app_suite_*.
  bool runs_suite_entries() const override { return runs_simulations(); }
  void start_suite_entry(uint64_t entry, uint64_t generation, const std::string& job,
                         const std::vector<std::string>& runs) override {
    std::string names;  // the runs' folder names, one a line
    for (const std::string& r : runs) names += r.substr(r.rfind('/') + 1) + "\n";
    EM_ASM({ Module.chakrakitSuite.start(UTF8ToString($0), $1, $2, UTF8ToString($3)); }, job.c_str(),
           static_cast<double>(entry), static_cast<double>(generation), names.c_str());
  }
  void cancel_suite() override { EM_ASM({ Module.chakrakitSuite.cancel(); }); }
  std::string suite_dir() const override { return "/suite"; }
  // In a pool of Web Workers (sim_client.js); reports come back through app_convert_* below.
  bool runs_conversions() const override { return runs_simulations(); }
  void start_conversion(chakra::RankConversion job) override {
    std::string bytes = chakra::encode_conversion(job);
    EM_ASM({ Module.chakrakitConversions.start(HEAPU8.subarray($0, $0 + $1), $2, $3); }, bytes.data(), bytes.size(),
           job.rank, static_cast<double>(job.generation));
  }
  chakra::ConvertedRank convert_here(const chakra::RankConversion&) override {
    throw chakra::Error("this browser has no Web Workers, which the page links and converts PyTorch traces in");
  }
};

GLFWwindow* g_window = nullptr;
BrowserPlatform g_platform;
chakra_web::App* g_app = nullptr;
std::string g_status;  // keeps the string returned to JavaScript alive until the next call
double g_frame_ms = 0;  // CPU time of the last frame (work + UI + render), for the benchmark
// Frames are drawn only when something may have changed: input (the page's listeners call
// app_input), a call from JavaScript, work the app has pending. Each wakes a few frames, so that
// ImGui settles (hover states and sizes measured in the frame before). An idle page draws none.
constexpr int kFramesPerWake = 4;
int g_frames_owed = kFramesPerWake;
uint64_t g_frames_drawn = 0;
// Idle, the animation-frame loop itself is paused (a callback per display refresh costs more
// than it does nothing), and resumed by the next wake.
bool g_loop_paused = false;
// When the user last acted (moved, clicked, scrolled, typed), emscripten_get_now() ms.
double g_last_input_ms = -1e9;
void wake() {
  g_frames_owed = kFramesPerWake;
  if (g_loop_paused) {
    g_loop_paused = false;
    emscripten_resume_main_loop();
  }
}

double device_pixel_ratio() { return EM_ASM_DOUBLE({ return window.devicePixelRatio || 1; }); }

// Matches the canvas's backing store to its CSS size times the device pixel ratio.
void fit_canvas(double ratio) {
  int width = EM_ASM_INT({ return Math.floor(Module.canvas.clientWidth * $0); }, ratio);
  int height = EM_ASM_INT({ return Math.floor(Module.canvas.clientHeight * $0); }, ratio);
  int current_w = 0, current_h = 0;
  glfwGetWindowSize(g_window, &current_w, &current_h);
  if (width > 0 && height > 0 && (width != current_w || height != current_h)) glfwSetWindowSize(g_window, width, height);
}

// Text in device pixels: the UI lays out in CSS pixels (a 14 px font, as a page's text), while
// the font atlas is rasterised at 14 × devicePixelRatio and drawn scaled back, so text is as
// sharp as the screen allows and browser zoom enlarges it. Rebuilt when the ratio changes
// (zoom, another screen).
constexpr float kFontCssPixels = 14.0f;
float g_font_ratio = 0;  // the ratio the atlas was rasterised for
float g_font_pixels = 0;

void fit_font(float ratio) {
  if (ratio == g_font_ratio) return;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig config;
  config.OversampleH = 2;
  config.OversampleV = 1;
  g_font_pixels = std::round(kFontCssPixels * ratio);
  if (!io.Fonts->AddFontFromFileTTF("/fonts/ui.otf", g_font_pixels, &config)) {
    config.SizePixels = std::round(13.0f * ratio);  // the embedded font missing: ImGui's own
    g_font_pixels = config.SizePixels;
    io.Fonts->AddFontDefault(&config);
  }
  ImFontConfig number_config = config;  // a little smaller: monospace digits are wider
  g_platform.numbers = io.Fonts->AddFontFromFileTTF("/fonts/numbers.ttf", std::round(13.0f * ratio), &number_config);
  io.FontGlobalScale = 1.0f / ratio;
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  g_font_ratio = ratio;
}

void frame() {
  // Idle, or waiting for workers (whose reports wake the loop): nothing can have changed, and
  // the cores are left to the workers.
  if (g_frames_owed == 0 && !g_app->working_here()) {
    g_loop_paused = true;
    emscripten_pause_main_loop();
    return;
  }
  if (g_frames_owed > 0) --g_frames_owed;
  ++g_frames_drawn;
  auto start = std::chrono::steady_clock::now();
  const double ratio = device_pixel_ratio();
  fit_canvas(ratio);
  glfwPollEvents();
  // Files open a slice of work per frame so the page keeps drawing: 12 ms while the user acts
  // (the page follows them at full rate), else 32 ms, since each frame also costs the browser its
  // drawing (under SwiftShader tens of ms): a 1 GB .et opened in 22 s with 12 ms slices, 15 s
  // with 32 ms ones, its progress still redrawn many times a second.
  const bool user_acting = emscripten_get_now() - g_last_input_ms < 500;
  g_app->work(user_acting ? 12.0 : 32.0);
  fit_font(static_cast<float>(ratio));
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // GLFW's window and cursor are in the canvas's device pixels; ImGui lays out in CSS pixels
  // and renders at the ratio.
  ImGuiIO& io = ImGui::GetIO();
  const float r = static_cast<float>(ratio);
  io.DisplaySize = ImVec2(io.DisplaySize.x / r, io.DisplaySize.y / r);
  io.DisplayFramebufferScale = ImVec2(r, r);
  if (io.MousePos.x != -FLT_MAX) io.MousePos = ImVec2(io.MousePos.x / r, io.MousePos.y / r);
  // Emscripten's GLFW hands over the DOM's deltaY (pixels, positive = down) where GLFW means
  // notches, positive = up: about 100 pixels per notch in Chromium and Firefox.
  io.MouseWheel = -io.MouseWheel / 100.0f;
  io.MouseWheelH = -io.MouseWheelH / 100.0f;
  ImGui::NewFrame();
  g_app->draw();
  const ImVec2 framebuffer = chakra_web::render_frame(g_window, g_platform.rects);
  if (auto png = chakra_web::requested_png(g_platform, framebuffer)) g_platform.download(png->first, png->second);  // a chart's picture
  glfwSwapBuffers(g_window);
  g_frame_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

extern "C" {

// Takes a copy of `size` bytes at `data` (the page frees them afterwards); opened over the next frames.
EMSCRIPTEN_KEEPALIVE void app_queue_file(const uint8_t* data, int size, const char* name) {
  wake();
  g_app->queue_file(std::span(data, static_cast<size_t>(size)), name);
}

// The page is about to hand over `delta` more files (negative: fewer than it said).
EMSCRIPTEN_KEEPALIVE void app_expect_files(int delta) {
  wake();
  g_app->expect_files(delta);
}

// A large file handed over in slices (the page never holds it whole): queued now, its id back.
EMSCRIPTEN_KEEPALIVE double app_file_begin(const char* name, double size) {
  wake();
  return g_app->begin_file(name, static_cast<uint64_t>(size));
}
// Its next slice (copied); 0 when the file was refused (the status says why) or is gone.
EMSCRIPTEN_KEEPALIVE int app_file_piece(double id, const uint8_t* data, double size) {
  wake();
  return g_app->file_piece(static_cast<uint32_t>(id), std::span(data, static_cast<size_t>(size))) ? 1 : 0;
}
// The page could not read the rest of it: dropped, the reason shown.
EMSCRIPTEN_KEEPALIVE void app_file_abandon(double id, const char* reason) {
  wake();
  g_app->abandon_file(static_cast<uint32_t>(id), reason);
}
// Bytes it takes now (0: ask again after a frame), -1 when it was refused or is gone.
EMSCRIPTEN_KEEPALIVE double app_file_wanted(double id) {
  return static_cast<double>(g_app->file_bytes_wanted(static_cast<uint32_t>(id)));
}

EMSCRIPTEN_KEEPALIVE const char* app_status_json() {
  g_status = g_app->status_json();
  return g_status.c_str();
}
// What the page's status line needs, cheap enough to poll.
EMSCRIPTEN_KEEPALIVE const char* app_brief_status_json() {
  g_status = g_app->brief_status_json();
  return g_status.c_str();
}

EMSCRIPTEN_KEEPALIVE void app_apply_hash(const char* hash) {
  wake();
  g_app->apply_hash(hash);
}

// How the canvas is drawn (tests check text follows the device pixel ratio).
EMSCRIPTEN_KEEPALIVE const char* app_display_json() {
  const ImGuiIO& io = ImGui::GetIO();
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  w.key("device_pixel_ratio").value_double(g_font_ratio);
  w.key("font_pixels").value_double(g_font_pixels);
  w.key("font_css_pixels").value_double(g_font_pixels * io.FontGlobalScale);
  w.key("display").begin_array();
  w.value_double(io.DisplaySize.x);
  w.value_double(io.DisplaySize.y);
  w.end_array();
  w.end_object();
  w.flush();
  g_status = sink.out;
  return g_status.c_str();
}

// Text pasted into the page (its paste listener: the system clipboard), typed into the field
// being edited.
EMSCRIPTEN_KEEPALIVE void app_paste(const char* text) {
  wake();
  ImGui::GetIO().AddInputCharactersUTF8(text);
}

// Something may have changed what the page shows: draw the next frames.
EMSCRIPTEN_KEEPALIVE void app_wake() { wake(); }
// The user's input reached the page (its listeners call this): draw the next frames, and keep
// background work's slices short for a while.
EMSCRIPTEN_KEEPALIVE void app_input() {
  g_last_input_ms = emscripten_get_now();
  wake();
}
// Frames drawn so far (tests check that an idle page draws none).
EMSCRIPTEN_KEEPALIVE double app_frames_drawn() { return static_cast<double>(g_frames_drawn); }

// The buttons' actions, for scripted use (tests); see App::command.
EMSCRIPTEN_KEEPALIVE int app_command(const char* command) {
  wake();
  return g_app->command(command) ? 1 : 0;
}

EMSCRIPTEN_KEEPALIVE double app_frame_ms() { return g_frame_ms; }

// Reports of the simulation worker (sim_client.js).
EMSCRIPTEN_KEEPALIVE void app_sim_progress(double done, double total) {
  wake();
  g_app->simulation_progress(static_cast<uint64_t>(done), static_cast<uint64_t>(total));
}
EMSCRIPTEN_KEEPALIVE void app_sim_finished(const char* data, int size) {
  wake();
  chakra::sim::SimResult result;
  try {
    result = chakra::decode_result(std::string_view(data, static_cast<size_t>(size)));
  } catch (const std::exception& e) {
    g_app->simulation_failed(e.what());
    return;
  }
  g_app->simulation_finished(std::move(result));
}
EMSCRIPTEN_KEEPALIVE void app_sweep_finished(const char* data, int size, double point, double generation, double ms) {
  wake();
  chakra::sim::SimResult result;
  try {
    result = chakra::decode_result(std::string_view(data, static_cast<size_t>(size)));
  } catch (const std::exception& e) {
    g_app->sweep_point_failed(static_cast<uint64_t>(point), static_cast<uint64_t>(generation), e.what());
    return;
  }
  g_app->sweep_point_finished(static_cast<uint64_t>(point), static_cast<uint64_t>(generation), result, ms);
}
EMSCRIPTEN_KEEPALIVE void app_sweep_failed(double point, double generation, const char* message) {
  wake();
  g_app->sweep_point_failed(static_cast<uint64_t>(point), static_cast<uint64_t>(generation), message);
}
EMSCRIPTEN_KEEPALIVE void app_suite_finished(const char* rows, double entry, double generation) {
  wake();
  g_app->suite_entry_finished(static_cast<uint64_t>(entry), static_cast<uint64_t>(generation), rows);
}
EMSCRIPTEN_KEEPALIVE void app_suite_failed(double entry, double generation, const char* message) {
  wake();
  g_app->suite_entry_failed(static_cast<uint64_t>(entry), static_cast<uint64_t>(generation), message);
}
EMSCRIPTEN_KEEPALIVE void app_sim_failed(const char* message) {
  wake();
  g_app->simulation_failed(message);
}

// Reports of the conversion workers (sim_client.js).
EMSCRIPTEN_KEEPALIVE void app_convert_finished(const char* data, int size, double rank, double generation) {
  wake();
  chakra::ConvertedRank result;
  try {
    result = chakra::decode_converted(std::string_view(data, static_cast<size_t>(size)));
  } catch (const std::exception& e) {
    g_app->conversion_failed(static_cast<uint32_t>(rank), static_cast<uint64_t>(generation), e.what());
    return;
  }
  g_app->conversion_finished(std::move(result));
}
EMSCRIPTEN_KEEPALIVE void app_convert_failed(double rank, double generation, const char* message) {
  wake();
  g_app->conversion_failed(static_cast<uint32_t>(rank), static_cast<uint64_t>(generation), message);
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
  // Controls sized like the page header's buttons around the canvas.
  ImGuiStyle& style = ImGui::GetStyle();
  style.FramePadding = ImVec2(6, 4);
  style.FrameRounding = 3;
  style.FrameBorderSize = 1;  // checkboxes and fields read as controls, not blank boxes
  ImGui_ImplGlfw_InitForOpenGL(g_window, true);
  // The system clipboard: what ImGui copies (Ctrl+C in a field or a table) goes there; pasting
  // comes from the page's paste event (app_paste), so ImGui's own Ctrl+V pastes nothing twice.
  ImGui::GetIO().SetClipboardTextFn = [](void*, const char* text) {
    EM_ASM({
      const text = UTF8ToString($0);
      window.chakrakitClipboard = text;
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
    }, text);
  };
  ImGui::GetIO().GetClipboardTextFn = [](void*) -> const char* { return ""; };
  ImGui_ImplOpenGL3_Init("#version 300 es");
  g_platform.gpu_rects = g_platform.rects.init("#version 300 es");
  g_app = new chakra_web::App(g_platform);
  std::printf("chakrakit web %s: GL %s, instanced rects %s\n", CHAKRA_VERSION,
              reinterpret_cast<const char*>(glGetString(GL_VERSION)), g_platform.gpu_rects ? "on" : "off");
  // A share link opened: restore its state (settings now; node selection once files are dropped).
  std::string hash = emscripten_run_script_string("location.hash.slice(1)");
  if (!hash.empty()) g_app->apply_hash(hash);
  EM_ASM({ if (Module.onAppReady) Module.onAppReady(); });
  emscripten_set_main_loop(frame, 0, false);
  return 0;
}
