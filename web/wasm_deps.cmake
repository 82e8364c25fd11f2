# Libraries for the Emscripten build. Debian ships them for the host only, so they are built
# here from the Debian sources that .ci/setup-deps unpacks into CHAKRA_DEPS_DIR (once per build
# tree; later builds reuse the objects).

# Native wasm exceptions (the core reports errors by throwing); every object must agree.
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -fwasm-exceptions")
set(CMAKE_EXE_LINKER_FLAGS "${CMAKE_EXE_LINKER_FLAGS} -fwasm-exceptions")

function(chakra_find_source var pattern)
  file(GLOB dirs LIST_DIRECTORIES true "${CHAKRA_DEPS_DIR}/${pattern}")
  list(FILTER dirs EXCLUDE REGEX "\\.(tar|dsc|xz|gz|bz2)")
  if(NOT dirs)
    message(FATAL_ERROR "No ${pattern} source in ${CHAKRA_DEPS_DIR}: run .ci/setup-deps all first")
  endif()
  list(GET dirs 0 dir)
  set(${var} "${dir}" PARENT_SCOPE)
endfunction()

# nlohmann-json is header-only: expose just its directory (never all of /usr/include to emcc).
set(CHAKRA_HDR_DIR ${CMAKE_BINARY_DIR}/hdr)
file(MAKE_DIRECTORY ${CHAKRA_HDR_DIR})
if(NOT EXISTS ${CHAKRA_HDR_DIR}/nlohmann)
  file(CREATE_LINK /usr/include/nlohmann ${CHAKRA_HDR_DIR}/nlohmann SYMBOLIC)
endif()
add_library(nlohmann_json INTERFACE)
target_include_directories(nlohmann_json SYSTEM INTERFACE ${CHAKRA_HDR_DIR})
add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)

# zlib
chakra_find_source(ZLIB_SOURCE_DIR "zlib-*")
add_library(zlib_wasm STATIC
  ${ZLIB_SOURCE_DIR}/adler32.c ${ZLIB_SOURCE_DIR}/crc32.c ${ZLIB_SOURCE_DIR}/deflate.c
  ${ZLIB_SOURCE_DIR}/inflate.c ${ZLIB_SOURCE_DIR}/inftrees.c ${ZLIB_SOURCE_DIR}/inffast.c
  ${ZLIB_SOURCE_DIR}/trees.c ${ZLIB_SOURCE_DIR}/zutil.c ${ZLIB_SOURCE_DIR}/compress.c
  ${ZLIB_SOURCE_DIR}/uncompr.c)
target_include_directories(zlib_wasm SYSTEM PUBLIC ${ZLIB_SOURCE_DIR})
target_compile_definitions(zlib_wasm PRIVATE HAVE_UNISTD_H HAVE_STDARG_H)
target_compile_options(zlib_wasm PRIVATE -w)
add_library(ZLIB::ZLIB ALIAS zlib_wasm)

# protobuf-lite runtime (for the wire-format oracle in the tests); only the lite library is built.
if(CHAKRA_BUILD_TESTS)
  chakra_find_source(PROTOBUF_SOURCE_DIR "protobuf-*")
  set(protobuf_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_PROTOC_BINARIES OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_LIBPROTOC OFF CACHE BOOL "" FORCE)
  set(protobuf_WITH_ZLIB OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE)
  set(protobuf_INSTALL OFF CACHE BOOL "" FORCE)
  add_subdirectory(${PROTOBUF_SOURCE_DIR} ${CMAKE_BINARY_DIR}/protobuf EXCLUDE_FROM_ALL)
  target_compile_options(libprotobuf-lite PRIVATE -w)
endif()
