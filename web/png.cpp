#include "png.h"

#include <zlib.h>

#include <cstring>

#include "chakra/support/error.h"

namespace chakra_web {

namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t get_u32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

void put_chunk(std::string& out, const char type[4], std::string_view data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  size_t start = out.size();
  out.append(type, 4);
  out.append(data);
  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(out.data() + start), static_cast<uInt>(out.size() - start));
  put_u32(out, static_cast<uint32_t>(crc));
}

}  // namespace

std::string encode_png(const Image& image) {
  // Each row: filter byte 0 (none), then the pixels.
  size_t row = size_t{image.width} * 4;
  std::string raw;
  raw.reserve((row + 1) * image.height);
  for (uint32_t y = 0; y < image.height; ++y) {
    raw.push_back(0);
    raw.append(reinterpret_cast<const char*>(image.rgba.data() + y * row), row);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), 6) != Z_OK)
    throw chakra::Error("PNG: compression failed");
  packed.resize(packed_size);

  std::string out(reinterpret_cast<const char*>(kSignature), 8);
  std::string header;
  put_u32(header, image.width);
  put_u32(header, image.height);
  header += std::string("\x08\x06\x00\x00\x00", 5);  // 8 bits, RGBA, deflate, no filter set, no interlace
  put_chunk(out, "IHDR", header);
  put_chunk(out, "IDAT", packed);
  put_chunk(out, "IEND", "");
  return out;
}

Image decode_png(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& why) -> chakra::Error { return chakra::Error(name + ": " + why); };
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  if (bytes.size() < 8 || std::memcmp(p, kSignature, 8) != 0) throw fail("not a PNG file");
  p += 8;
  Image image;
  std::string packed;
  bool header = false;
  while (true) {
    if (end - p < 12) throw fail("truncated chunk");
    uint32_t length = get_u32(p);
    if (length > static_cast<size_t>(end - p) - 12) throw fail("chunk runs past the end of the file");
    std::string_view type(reinterpret_cast<const char*>(p + 4), 4);
    const uint8_t* data = p + 8;
    if (type == "IHDR") {
      if (length != 13) throw fail("bad IHDR");
      image.width = get_u32(data);
      image.height = get_u32(data + 4);
      if (data[8] != 8 || data[9] != 6 || data[12] != 0)
        throw fail("only 8-bit RGBA non-interlaced PNGs (as chakra-view writes them) are read");
      if (image.width == 0 || image.height == 0 || uint64_t{image.width} * image.height > (uint64_t{1} << 28))
        throw fail("unreasonable size " + std::to_string(image.width) + "x" + std::to_string(image.height));
      header = true;
    } else if (type == "IDAT") {
      packed.append(reinterpret_cast<const char*>(data), length);
    } else if (type == "IEND") {
      break;
    }
    p = data + length + 4;  // past the CRC
  }
  if (!header) throw fail("no IHDR chunk");
  size_t row = size_t{image.width} * 4;
  std::string raw((row + 1) * image.height, '\0');
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size, reinterpret_cast<const Bytef*>(packed.data()),
                 static_cast<uLong>(packed.size())) != Z_OK ||
      raw_size != raw.size())
    throw fail("damaged or short image data");
  image.rgba.resize(row * image.height);
  for (uint32_t y = 0; y < image.height; ++y) {
    const char* line = raw.data() + y * (row + 1);
    if (line[0] != 0)
      throw fail("row " + std::to_string(y) + " uses PNG filter " + std::to_string(int(line[0])) +
                 "; only unfiltered rows (as chakra-view writes them) are read");
    std::memcpy(image.rgba.data() + y * row, line + 1, row);
  }
  return image;
}

}  // namespace chakra_web
