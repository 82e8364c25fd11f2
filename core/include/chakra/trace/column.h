// Growable array of trivially copyable values, the storage of every trace column.
//
// Unlike std::vector it never copies a large column to grow it: on Linux, blocks of a megabyte
// and more are their own mappings, grown with mremap (the kernel moves page tables, not bytes),
// sized in whole 2 MiB pages and marked for transparent huge pages: on virtual machines each
// first touch of a 4 KiB page costs microseconds. Loading a million-node trace grows dozens of
// columns to hundreds of megabytes; with std::vector half of the load time went into copying
// and first-touch page faults. Elsewhere (wasm) it is plain realloc().
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace chakra {

namespace detail {
// The size a block of at least `bytes` gets: mapped blocks come in whole 2 MiB pages, all of
// which the caller may use. Sizes given to the two functions below are ones block_bytes
// returned, or less by less than an element.
size_t block_bytes(size_t bytes);
// Grows a block from `old_bytes` to `new_bytes` >= old_bytes (old may be 0), keeping its
// contents; null when memory is exhausted (the old block is then untouched).
void* resize_block(void* data, size_t old_bytes, size_t new_bytes);
void free_block(void* data, size_t bytes);
}  // namespace detail

template <class T>
class Column {
  static_assert(std::is_trivially_copyable_v<T>, "Column holds plain values only");

 public:
  Column() = default;
  Column(std::initializer_list<T> values) { append(std::span<const T>(values.begin(), values.size())); }
  Column(Column&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  Column& operator=(Column&& other) noexcept {
    if (this != &other) {
      detail::free_block(data_, capacity_ * sizeof(T));
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;
  ~Column() { detail::free_block(data_, capacity_ * sizeof(T)); }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = v;
  }
  void append(std::span<const T> values) {
    if (values.empty()) return;
    if (size_ + values.size() > capacity_) grow(size_ + values.size());
    std::memcpy(static_cast<void*>(data_ + size_), values.data(), values.size() * sizeof(T));
    size_ += values.size();
  }
  void resize(size_t n, const T& fill = T{}) {
    if (n > capacity_) grow(n);
    for (size_t i = size_; i < n; ++i) data_[i] = fill;
    size_ = n;
  }
  void assign(size_t n, const T& fill) {
    size_ = 0;
    resize(n, fill);
  }
  void reserve(size_t n) {
    if (n > capacity_) reallocate(n);
  }
  void clear() { size_ = 0; }

 private:
  void grow(size_t needed) {
    size_t next = capacity_ < 16 ? 16 : capacity_ + capacity_ / 2;
    reallocate(next < needed ? needed : next);
  }
  void reallocate(size_t capacity) {
    if (capacity > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = detail::block_bytes(capacity * sizeof(T));
    void* p = detail::resize_block(data_, capacity_ * sizeof(T), bytes);
    if (!p) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = bytes / sizeof(T);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace chakra
