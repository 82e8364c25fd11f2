# Dear ImGui from Debian's source package (unpacked by .ci/setup-deps into CHAKRA_DEPS_DIR), as
# a static library, plus the app's UI (web/, no platform code) on top of it.
chakra_find_source(IMGUI_SOURCE_DIR "imgui-*")  # from wasm_deps.cmake
add_library(imgui_lib STATIC
  ${IMGUI_SOURCE_DIR}/imgui.cpp ${IMGUI_SOURCE_DIR}/imgui_draw.cpp
  ${IMGUI_SOURCE_DIR}/imgui_tables.cpp ${IMGUI_SOURCE_DIR}/imgui_widgets.cpp
  ${IMGUI_SOURCE_DIR}/misc/cpp/imgui_stdlib.cpp)
target_include_directories(imgui_lib SYSTEM PUBLIC ${IMGUI_SOURCE_DIR} ${IMGUI_SOURCE_DIR}/backends)
# WebGL2 has no base-vertex draws, so 16-bit indices would cap a window at 65536 vertices.
target_compile_definitions(imgui_lib PUBLIC "ImDrawIdx=unsigned int")
target_compile_options(imgui_lib PRIVATE -w)

# The UI of the app without its platform loop (main_wasm.cpp), so another host can drive it.
set(CHAKRA_UI_SOURCES
  ${PROJECT_SOURCE_DIR}/web/app.cpp ${PROJECT_SOURCE_DIR}/web/view_graph.cpp
  ${PROJECT_SOURCE_DIR}/web/view_timeline.cpp ${PROJECT_SOURCE_DIR}/web/view_simulation.cpp)
add_library(chakra_ui STATIC ${CHAKRA_UI_SOURCES})
target_link_libraries(chakra_ui PUBLIC chakra_core imgui_lib)
target_include_directories(chakra_ui PUBLIC ${PROJECT_SOURCE_DIR}/web)
