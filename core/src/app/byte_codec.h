// The byte layout of messages between two ends of one chakrakit build (the page and its Web
// Workers): fixed-width little-endian fields (wasm32 and x86-64 are both little-endian) after an
// 8-byte magic. Reading checks every length and count against the bytes left, so a damaged
// message is an error naming it, never an out-of-bounds read. Private to core/src/app.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/support/error.h"

namespace chakra::codec {

class Writer {
 public:
  explicit Writer(const char (&magic)[8]) { out.append(magic, 8); }
  template <class T>
  void raw(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void u64(uint64_t v) { raw(v); }
  void f64(double v) { raw(v); }
  void str(std::string_view s) {
    u64(s.size());
    out.append(s);
  }
  std::string out;
};

class Reader {
 public:
  Reader(std::string_view bytes, const char (&magic)[8], const char* what) : in_(bytes), what_(what) {
    if (in_.size() < 8 || std::memcmp(in_.data(), magic, 8) != 0) fail("not produced by this version of chakrakit");
    in_.remove_prefix(8);
  }
  template <class T>
  T raw() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  uint64_t u64() { return raw<uint64_t>(); }
  double f64() { return raw<double>(); }
  // A count of items that take at least `min_item_bytes` each: bounded by what is left, so a
  // damaged count cannot make the caller reserve gigabytes.
  uint64_t count(uint64_t min_item_bytes) {
    uint64_t n = u64();
    if (n > in_.size() / min_item_bytes) fail("a count of " + std::to_string(n) + " exceeds the bytes left");
    return n;
  }
  std::string_view str() {
    uint64_t n = count(1);
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  void end() {
    if (!in_.empty()) fail(std::to_string(in_.size()) + " unexpected bytes after the end");
  }
  [[noreturn]] void fail(const std::string& why) const { throw Error(std::string(what_) + ": " + why); }

 private:
  void take(void* dst, size_t n) {
    if (in_.size() < n) fail("truncated");
    std::memcpy(dst, in_.data(), n);
    in_.remove_prefix(n);
  }
  std::string_view in_;
  const char* what_;
};

// Communicator groups: their count, then each one's id and members.
inline void write_groups(Writer& w, const astra::CommGroups& groups) {
  w.u64(groups.size());
  for (const auto& [id, members] : groups) {
    w.raw<int64_t>(id);
    w.u64(members.size());
    for (uint32_t m : members) w.raw(m);
  }
}
inline astra::CommGroups read_groups(Reader& r) {
  astra::CommGroups groups;
  for (uint64_t g = r.count(16); g > 0; --g) {
    std::vector<uint32_t>& members = groups[static_cast<int>(r.raw<int64_t>())];
    members.resize(r.count(4));
    for (uint32_t& m : members) m = r.raw<uint32_t>();
  }
  return groups;
}

}  // namespace chakra::codec
