# Turns shaders/*.vert|frag into a C++ header of string constants (kRectsVert, kRectsFrag), so the
# web app needs no shader files at run time. Usage: cmake -DOUT=<header> -DDIR=<shaders> -P embed.cmake
file(READ ${DIR}/rects.vert VERT)
file(READ ${DIR}/rects.frag FRAG)
file(WRITE ${OUT} "// Generated from shaders/ by shaders/embed.cmake; edit those files.\n#pragma once\n"
  "inline const char* const kRectsVert = R\"glsl(${VERT})glsl\";\n"
  "inline const char* const kRectsFrag = R\"glsl(${FRAG})glsl\";\n")
