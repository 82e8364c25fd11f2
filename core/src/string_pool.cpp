#include "chakra/string_pool.h"

#include <cstring>

namespace chakra {
namespace {

// Word-at-a-time multiplicative hash; strings here are names and Python-repr operand lists.
uint32_t hash_bytes(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x51ED27u ^ (s.size() * kMul);
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  if (n) std::memcpy(&tail, p, n);  // an empty view's data() may be null, which memcpy may not take
  h = (h ^ tail) * kMul;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<uint32_t>(h);
}

}  // namespace

StringPool::StringPool() {
  offsets_ = {0, 0};
  hashes_ = {hash_bytes({})};
  table_.assign(1024, 0);
  table_[slot_of({}, hashes_[0])] = 1;
}

size_t StringPool::slot_of(std::string_view s, uint32_t hash) const {
  const size_t mask = table_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    uint32_t e = table_[i];
    if (e == 0) return i;
    StrId id = e - 1;
    if (hashes_[id] == hash && view(id) == s) return i;
  }
}

bool StringPool::find(std::string_view s, StrId* id) const {
  uint32_t e = table_[slot_of(s, hash_bytes(s))];
  if (e == 0) return false;
  *id = e - 1;
  return true;
}

StrId StringPool::intern(std::string_view s) {
  const uint32_t h = hash_bytes(s);
  size_t slot = slot_of(s, h);
  if (table_[slot] != 0) return table_[slot] - 1;

  const StrId id = static_cast<StrId>(size());
  chars_.append(std::span(s.data(), s.size()));
  offsets_.push_back(chars_.size());
  hashes_.push_back(h);
  table_[slot] = id + 1;
  if (size() * 2 > table_.size()) grow_table();
  return id;
}

void StringPool::grow_table() {
  std::vector<uint32_t> old;
  old.swap(table_);
  table_.assign(old.size() * 2, 0);
  const size_t mask = table_.size() - 1;
  for (uint32_t e : old) {
    if (e == 0) continue;
    size_t i = hashes_[e - 1] & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = e;
  }
}

size_t StringPool::memory_bytes() const {
  return chars_.capacity() + offsets_.capacity() * sizeof(uint64_t) +
         hashes_.capacity() * sizeof(uint32_t) + table_.capacity() * sizeof(uint32_t);
}

}  // namespace chakra
