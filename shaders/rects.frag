// Flat colour per rectangle (premultiplication is left to the blend state ImGui set up).
precision mediump float;
in vec4 v_colour;
out vec4 o_colour;

void main() { o_colour = v_colour; }
