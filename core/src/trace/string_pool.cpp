#include "chakra/trace/string_pool.h"

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

// Table slots: 0 when empty, else (id + 1) | hash << 32.
uint64_t slot_entry(StrId id, uint32_t hash) { return (uint64_t{hash} << 32) | (uint64_t{id} + 1); }
StrId entry_id(uint64_t e) { return static_cast<StrId>(static_cast<uint32_t>(e) - 1); }
uint32_t entry_hash(uint64_t e) { return static_cast<uint32_t>(e >> 32); }
}  // namespace

StringPool::StringPool() {
  offsets_ = {0, 0};
  table_.assign(64, 0);  // small: a simulation holds two pools per NPU, 65,536 NPUs and more
  const uint32_t h = hash_bytes({});
  table_[slot_of({}, h)] = slot_entry(kEmpty, h);
}

size_t StringPool::slot_of(std::string_view s, uint32_t hash) const {
  const size_t mask = table_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    uint64_t e = table_[i];
    if (e == 0) return i;
    if (entry_hash(e) == hash && view(entry_id(e)) == s) return i;
  }
}

bool StringPool::find(std::string_view s, StrId* id) const {
  uint64_t e = table_[slot_of(s, hash_bytes(s))];
  if (e == 0) return false;
  *id = entry_id(e);
  return true;
}

StrId StringPool::intern(std::string_view s) {
  const uint32_t h = hash_bytes(s);
  size_t slot = slot_of(s, h);
  if (table_[slot] != 0) return entry_id(table_[slot]);

  const StrId id = static_cast<StrId>(size());
  chars_.append(std::span(s.data(), s.size()));
  offsets_.push_back(chars_.size());
  table_[slot] = slot_entry(id, h);
  if (size() * 2 > table_.size()) grow_table();
  return id;
}

void StringPool::grow_table() {
  std::vector<uint64_t> old;
  old.swap(table_);
  table_.assign(old.size() * 2, 0);
  const size_t mask = table_.size() - 1;
  for (uint64_t e : old) {
    if (e == 0) continue;
    size_t i = entry_hash(e) & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = e;
  }
}

size_t StringPool::memory_bytes() const {
  return chars_.capacity() + offsets_.capacity() * sizeof(uint64_t) + table_.capacity() * sizeof(uint64_t);
}

}  // namespace chakra
