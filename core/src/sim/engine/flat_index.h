// Ids by key in one open-addressing array: linear probing, at most half full, deletion by
// shifting back the entries that probed past the freed slot (no tombstones). No allocation per
// entry and a lookup touches a cache line or two: the simulator looks keys up per message and
// per event, and makes and drops them nearly as often.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chakra::sim {

// `Hash` must spread keys over the low bits (they pick the slot).
template <class Key, class Hash>
class FlatIndex {
 public:
  // The id stored for `k`, or null.
  const uint32_t* find(const Key& k) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(k)&mask;; i = (i + 1) & mask) {
      if (slots_[i].id == kEmpty) return nullptr;
      if (slots_[i].key == k) return &slots_[i].id;
    }
  }
  // The id stored for `k`; when `k` has none (`added`), a new entry whose id the caller sets at
  // once (to anything but UINT32_MAX). The reference is valid until the next call.
  uint32_t& slot_for(const Key& k, bool& added) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(k)&mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id == kEmpty) {
        s.key = k;
        ++used_;
        added = true;
        return s.id;
      }
      if (s.key == k) {
        added = false;
        return s.id;
      }
    }
  }
  void erase(const Key& k) {
    const size_t mask = slots_.size() - 1;
    size_t i = Hash{}(k)&mask;
    for (;; i = (i + 1) & mask) {
      if (slots_[i].id == kEmpty) return;
      if (slots_[i].key == k) break;
    }
    for (size_t j = (i + 1) & mask; slots_[j].id != kEmpty; j = (j + 1) & mask) {
      const size_t home = Hash{}(slots_[j].key) & mask;
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].id = kEmpty;
    --used_;
  }
  size_t size() const { return used_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    Key key{};
    uint32_t id = kEmpty;
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id == kEmpty) continue;
      size_t i = Hash{}(s.key) & mask;
      while (slots_[i].id != kEmpty) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_ = std::vector<Slot>(64);  // a power of two
  size_t used_ = 0;
};

// A 64-bit mixer (the finaliser of SplitMix64) for keys built from integers.
inline uint64_t mix64(uint64_t h) {
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

// The Hash of a FlatIndex keyed by one integer (an event time, a link key).
struct IntegerHash {
  size_t operator()(uint64_t k) const { return static_cast<size_t>(mix64(k)); }
};

}  // namespace chakra::sim
