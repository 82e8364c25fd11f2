// Instanced rectangles (timeline events): one instance per rectangle, four strip vertices each,
// corners picked from gl_VertexID so no vertex buffer is needed beyond the instances.
// The host prepends the #version line (GLSL ES 3.00 in browsers, 3.30 natively).
layout(location = 0) in vec4 a_rect;    // x0, y0, x1, y1 in ImGui pixels
layout(location = 1) in vec4 a_colour;  // RGBA, normalised from the packed ImGui colour
uniform vec4 u_view;                    // left, top, 2 / width, -2 / height of the ImGui display
out vec4 v_colour;

void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
  vec2 p = mix(a_rect.xy, a_rect.zw, corner);
  v_colour = a_colour;
  gl_Position = vec4((p.x - u_view.x) * u_view.z - 1.0, (p.y - u_view.y) * u_view.w + 1.0, 0.0, 1.0);
}
