#include "rect_renderer.h"

#include <cstdio>
#include <string>

#include <imgui.h>

#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#endif

#include "shaders.h"

namespace chakra_web {

namespace {
RectRenderer* g_renderer = nullptr;

GLuint compile(GLenum type, const std::string& source) {
  GLuint s = glCreateShader(type);
  const char* text = source.c_str();
  glShaderSource(s, 1, &text, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    std::fprintf(stderr, "rect shader: %s\n", log);
    glDeleteShader(s);
    return 0;
  }
  return s;
}
}  // namespace

bool RectRenderer::init(const char* version_line) {
  GLuint vs = compile(GL_VERTEX_SHADER, std::string(version_line) + "\n" + kRectsVert);
  GLuint fs = compile(GL_FRAGMENT_SHADER, std::string(version_line) + "\n" + kRectsFrag);
  if (!vs || !fs) return false;
  program_ = glCreateProgram();
  glAttachShader(program_, vs);
  glAttachShader(program_, fs);
  glLinkProgram(program_);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program_, GL_LINK_STATUS, &ok);
  if (!ok) return false;
  view_location_ = glGetUniformLocation(program_, "u_view");
  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &buffer_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, buffer_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, sizeof(RectInstance), reinterpret_cast<void*>(0));
  glVertexAttribDivisor(0, 1);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(RectInstance),
                        reinterpret_cast<void*>(offsetof(RectInstance, colour)));
  glVertexAttribDivisor(1, 1);
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  g_renderer = this;
  return true;
}

bool RectRenderer::queue(const std::vector<RectInstance>& rects) {
  if (!program_) return false;
  if (rects.empty()) return true;
  batches_.push_back(rects);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddCallback(&RectRenderer::draw_callback, &batches_.back());
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  return true;
}

void RectRenderer::end_frame() { batches_.clear(); }

void RectRenderer::draw_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  if (g_renderer) g_renderer->draw(*static_cast<const std::vector<RectInstance>*>(cmd->UserCallbackData), cmd);
}

void RectRenderer::draw(const std::vector<RectInstance>& rects, const ImDrawCmd* cmd) {
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!dd) return;
  // The clip rectangle of the window, in framebuffer pixels (GL's origin is bottom-left).
  ImVec2 scale = dd->FramebufferScale;
  int fb_height = static_cast<int>(dd->DisplaySize.y * scale.y);
  ImVec4 clip = cmd->ClipRect;
  float x0 = (clip.x - dd->DisplayPos.x) * scale.x, y0 = (clip.y - dd->DisplayPos.y) * scale.y;
  float x1 = (clip.z - dd->DisplayPos.x) * scale.x, y1 = (clip.w - dd->DisplayPos.y) * scale.y;
  if (x1 <= x0 || y1 <= y0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<int>(x0), fb_height - static_cast<int>(y1), static_cast<int>(x1 - x0),
            static_cast<int>(y1 - y0));
  glUseProgram(program_);
  glUniform4f(view_location_, dd->DisplayPos.x, dd->DisplayPos.y, 2.0f / dd->DisplaySize.x, -2.0f / dd->DisplaySize.y);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, buffer_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(rects.size() * sizeof(RectInstance)), rects.data(),
               GL_STREAM_DRAW);
  glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, static_cast<GLsizei>(rects.size()));
  glBindVertexArray(0);
}

}  // namespace chakra_web
