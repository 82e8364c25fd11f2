# Dear ImGui and the app's UI (web/, no platform code) on top of it, for both hosts:
#   - wasm: built from Debian's source package (unpacked by .ci/setup-deps into CHAKRA_DEPS_DIR),
#     with 32-bit indices (WebGL2 has no base-vertex draws, so 16-bit ones would cap a window at
#     65536 vertices);
#   - native: Debian's libimgui-dev (the library as Debian built it, 16-bit indices, which desktop
#     GL draws with base vertices) and the backend sources it ships as examples.
if(EMSCRIPTEN)
  chakra_find_source(IMGUI_SOURCE_DIR "imgui-*")  # from wasm_deps.cmake
  add_library(imgui_lib STATIC
    ${IMGUI_SOURCE_DIR}/imgui.cpp ${IMGUI_SOURCE_DIR}/imgui_draw.cpp
    ${IMGUI_SOURCE_DIR}/imgui_tables.cpp ${IMGUI_SOURCE_DIR}/imgui_widgets.cpp
    ${IMGUI_SOURCE_DIR}/misc/cpp/imgui_stdlib.cpp)
  target_include_directories(imgui_lib SYSTEM PUBLIC ${IMGUI_SOURCE_DIR} ${IMGUI_SOURCE_DIR}/misc/cpp)
  target_compile_definitions(imgui_lib PUBLIC "ImDrawIdx=unsigned int")
  target_compile_options(imgui_lib PRIVATE -w)
  set(IMGUI_BACKENDS_DIR ${IMGUI_SOURCE_DIR}/backends)
else()
  find_path(IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui REQUIRED)
  find_library(IMGUI_LIBRARY NAMES libimgui.a imgui REQUIRED)
  find_library(STB_LIBRARY NAMES stb)
  add_library(imgui_lib INTERFACE)
  target_include_directories(imgui_lib SYSTEM INTERFACE ${IMGUI_INCLUDE_DIR})
  target_link_libraries(imgui_lib INTERFACE ${IMGUI_LIBRARY})
  if(STB_LIBRARY)
    target_link_libraries(imgui_lib INTERFACE ${STB_LIBRARY})
  endif()
  set(IMGUI_BACKENDS_DIR /usr/share/doc/libimgui-dev/examples/backends)
endif()

# The GLFW platform and OpenGL (ES) 3 renderer backends, for either host's window.
add_library(imgui_backends STATIC
  ${IMGUI_BACKENDS_DIR}/imgui_impl_glfw.cpp ${IMGUI_BACKENDS_DIR}/imgui_impl_opengl3.cpp)
target_include_directories(imgui_backends SYSTEM PUBLIC ${IMGUI_BACKENDS_DIR} ${IMGUI_INCLUDE_DIR}/backends)
target_link_libraries(imgui_backends PUBLIC imgui_lib)
# -fno-sanitize: imgui 1.86's bundled GL loader indexes one past its table (UBSan, sanitizer
# builds); it is not our code to fix.
target_compile_options(imgui_backends PRIVATE -w $<$<BOOL:${CHAKRA_SANITIZE}>:-fno-sanitize=all>)

# The UI of the app without its platform loop, so each host (main_wasm.cpp, main_glfw.cpp) and
# the headless UI tests drive the same code.
# One file per view (web/view_*.cpp), found by name so a new view needs no line here (only its
# line in views.cpp).
file(GLOB CHAKRA_VIEW_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/web/view_*.cpp)
set(CHAKRA_UI_SOURCES
  ${PROJECT_SOURCE_DIR}/web/app.cpp ${PROJECT_SOURCE_DIR}/web/commands.cpp ${PROJECT_SOURCE_DIR}/web/share_state.cpp
  ${PROJECT_SOURCE_DIR}/web/status.cpp ${PROJECT_SOURCE_DIR}/web/details_pane.cpp ${PROJECT_SOURCE_DIR}/web/views.cpp
  ${PROJECT_SOURCE_DIR}/web/runs.cpp ${PROJECT_SOURCE_DIR}/web/sweeps.cpp ${PROJECT_SOURCE_DIR}/web/suites.cpp
  ${PROJECT_SOURCE_DIR}/web/widgets.cpp
  ${PROJECT_SOURCE_DIR}/web/run_charts.cpp ${PROJECT_SOURCE_DIR}/web/timeline_items.cpp ${PROJECT_SOURCE_DIR}/web/chart.cpp
  ${CHAKRA_VIEW_SOURCES})
add_library(chakra_ui STATIC ${CHAKRA_UI_SOURCES})
target_link_libraries(chakra_ui PUBLIC chakra_core imgui_lib)
target_include_directories(chakra_ui PUBLIC ${PROJECT_SOURCE_DIR}/web)
