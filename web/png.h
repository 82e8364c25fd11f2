// PNG files of RGBA pixels, for the native host's screenshots and the golden-image tests. Writes
// 8-bit RGBA without filtering; reads that form back (and refuses anything else by name).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chakra_web {

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba;  // rows top to bottom, 4 bytes per pixel
};

std::string encode_png(const Image& image);
// Throws chakra::Error naming `name` for damaged files or PNG features this reader lacks.
Image decode_png(std::string_view bytes, const std::string& name);

}  // namespace chakra_web
