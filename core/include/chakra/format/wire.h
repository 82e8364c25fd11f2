// Protocol-buffer wire primitives shared by the .et reader and writer (internal header).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "chakra/trace/schema.h"

namespace chakra::wire {

enum WireType : uint32_t { kVarint = 0, kI64 = 1, kLen = 2, kStartGroup = 3, kEndGroup = 4, kI32 = 5 };

// Thrown by the decoding helpers; the reader adds the file name and byte offset.
struct DecodeError {
  const char* what;
  const uint8_t* at;
};

// The wire type a scalar attribute kind uses (lists are always length-delimited).
inline WireType scalar_wire_type(AttrKind k) {
  switch (k) {
    case AttrKind::Double:
    case AttrKind::Fixed64:
    case AttrKind::Sfixed64: return kI64;
    case AttrKind::Float:
    case AttrKind::Fixed32:
    case AttrKind::Sfixed32: return kI32;
    case AttrKind::String:
    case AttrKind::Bytes: return kLen;
    default: return kVarint;
  }
}

inline uint64_t read_varint(const uint8_t*& p, const uint8_t* end) {
  // Fast path: one byte (most tags, lengths and small ids).
  if (p < end && *p < 0x80) return *p++;
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) throw DecodeError{"varint runs past the end of the record", p};
    uint8_t b = *p++;
    v |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) return v;
  }
  throw DecodeError{"varint longer than 10 bytes", p};
}

inline uint32_t read_fixed32(const uint8_t*& p, const uint8_t* end) {
  if (end - p < 4) throw DecodeError{"fixed32 value runs past the end of the record", p};
  uint32_t v;
  std::memcpy(&v, p, 4);  // wire and host are little-endian (x86-64, wasm32)
  p += 4;
  return v;
}

inline uint64_t read_fixed64(const uint8_t*& p, const uint8_t* end) {
  if (end - p < 8) throw DecodeError{"fixed64 value runs past the end of the record", p};
  uint64_t v;
  std::memcpy(&v, p, 8);
  p += 8;
  return v;
}

// Reads a length prefix and returns the payload; p moves past it.
inline std::string_view read_len(const uint8_t*& p, const uint8_t* end) {
  uint64_t n = read_varint(p, end);
  if (n > static_cast<uint64_t>(end - p))
    throw DecodeError{"length-delimited field runs past the end of its message", p};
  std::string_view s(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  p += n;
  return s;
}

// Skips one field's value (the tag is already read). Groups are skipped with their nested
// content, as protobuf parsers do for unknown fields.
inline void skip_value(uint32_t wire_type, uint32_t field, const uint8_t*& p, const uint8_t* end, int depth = 0) {
  switch (wire_type) {
    case kVarint: read_varint(p, end); return;
    case kI64: read_fixed64(p, end); return;
    case kLen: read_len(p, end); return;
    case kI32: read_fixed32(p, end); return;
    case kStartGroup:
      if (depth > 64) throw DecodeError{"groups nested too deeply", p};
      for (;;) {
        const uint8_t* at = p;
        uint64_t key = read_varint(p, end);
        uint32_t wt = static_cast<uint32_t>(key & 7);
        if (wt == kEndGroup) {
          if ((key >> 3) != field) throw DecodeError{"mismatched end-group tag", at};
          return;
        }
        skip_value(wt, static_cast<uint32_t>(key >> 3), p, end, depth + 1);
      }
    case kEndGroup: throw DecodeError{"end-group tag without a start", p};
    default: throw DecodeError{"invalid wire type (not a protobuf message?)", p};
  }
}

inline uint32_t zigzag32(int32_t v) { return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31); }
inline uint64_t zigzag64(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int32_t unzigzag32(uint32_t v) { return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1)); }
inline int64_t unzigzag64(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

inline void put_tag(std::string& out, uint32_t field, WireType wt) { put_varint(out, (uint64_t{field} << 3) | wt); }

inline void put_fixed32(std::string& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

inline void put_fixed64(std::string& out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

inline void put_len(std::string& out, uint32_t field, std::string_view payload) {
  put_tag(out, field, kLen);
  put_varint(out, payload.size());
  out.append(payload);
}

}  // namespace chakra::wire
