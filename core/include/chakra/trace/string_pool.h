// Interned byte strings. Every distinct string is stored once; callers keep 32-bit ids.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "chakra/trace/column.h"

namespace chakra {

using StrId = uint32_t;

class StringPool {
 public:
  static constexpr StrId kEmpty = 0;  // id of "", always present

  StringPool();

  // Returns the id of `s`, adding it if new. Strings may hold any bytes, including NUL.
  StrId intern(std::string_view s);
  // intern(s) for a caller that interns the same strings in the same places over and over (an
  // attribute's name at its position in a node): `hint` is the id it got there the last time
  // (it is checked, so a stale one, even from another pool, costs nothing but the check) and is
  // updated.
  StrId intern(std::string_view s, StrId& hint) {
    if (hint < size() && view(hint) == s) return hint;
    return hint = intern(s);
  }
  // The id of `s` if it was interned before.
  bool find(std::string_view s, StrId* id) const;
  // Valid until the next intern() (the backing buffer may move).
  std::string_view view(StrId id) const {
    return {chars_.data() + offsets_[id], static_cast<size_t>(offsets_[id + 1] - offsets_[id])};
  }

  size_t size() const { return offsets_.size() - 1; }
  size_t memory_bytes() const;

 private:
  void grow_table();
  size_t slot_of(std::string_view s, uint32_t hash) const;

  Column<char> chars_;
  Column<uint64_t> offsets_;  // string i is chars_[offsets_[i], offsets_[i+1])
  // Open addressing; 0 = empty slot, else (id + 1) | hash << 32. The hash sits in the slot so
  // that a probe touches one cache line before comparing bytes.
  std::vector<uint64_t> table_;
};

}  // namespace chakra
