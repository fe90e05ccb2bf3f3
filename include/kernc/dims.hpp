#pragma once
/// \file
/// Dims: the shape or the strides of an ArrayRef. A list of int64 like std::vector (and
/// convertible to and from one), with room for kInline values in the object itself.
///
/// NOTE [ inline dims ]
/// An ArrayRef is copied on every call: into an Arg, into the call's argument vectors,
/// into the plan and the returned DeviceArray. With std::vector shape and strides each
/// copy allocated twice, so a kept plan's launch made 14 allocations in its caller's
/// argument lists alone (tools/bench/NOTES.md, callpath) for arrays of a handful of axes.
/// Dims keeps up to kInline values in place and moves to the heap only past that, so an
/// array of up to 8 axes is copied without allocating; any rank still works.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace kernc {

class Dims {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;

  static constexpr std::size_t kInline = 8;

  Dims() noexcept = default;
  Dims(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }
  Dims(const std::vector<std::int64_t>& values) { assign(values.begin(), values.end()); }  // NOLINT: implicit, as a vector
  template <class It, class = decltype(*std::declval<It&>()), class = decltype(++std::declval<It&>())>
  Dims(It first, It last) {
    assign(first, last);
  }
  /// `count` copies of `value`, as std::vector(count, value).
  explicit Dims(std::size_t count, std::int64_t value = 0) { assign(count, value); }
  // Copies and moves touch the values in use only (a copy is on every call's path: NOTE
  // [ inline dims ]); the heap only past kInline.
  Dims(const Dims& other) : size_(other.size_) {
    if (size_ <= kInline) {
      std::copy_n(other.inline_.data(), size_, inline_.data());
    } else {
      heap_ = other.heap_;
    }
  }
  Dims(Dims&& other) noexcept : size_(other.size_), heap_(std::move(other.heap_)) {
    if (size_ <= kInline) std::copy_n(other.inline_.data(), size_, inline_.data());
    other.size_ = 0;
    other.heap_.clear();
  }
  Dims& operator=(const Dims& other) {
    if (this == &other) return *this;
    if (other.size_ <= kInline) {
      std::copy_n(other.inline_.data(), other.size_, inline_.data());
      heap_.clear();
    } else {
      heap_ = other.heap_;
    }
    size_ = other.size_;
    return *this;
  }
  Dims& operator=(Dims&& other) noexcept {
    if (this == &other) return *this;
    if (other.size_ <= kInline) {
      std::copy_n(other.inline_.data(), other.size_, inline_.data());
      heap_.clear();
    } else {
      heap_ = std::move(other.heap_);
    }
    size_ = other.size_;
    other.size_ = 0;
    other.heap_.clear();
    return *this;
  }
  ~Dims() = default;

  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit, as a vector

  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(static_cast<std::int64_t>(*first));
  }
  void assign(std::size_t count, std::int64_t value) {
    clear();
    for (std::size_t k = 0; k < count; ++k) push_back(value);
  }
  void assign(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::int64_t* data() noexcept { return size_ <= kInline ? inline_.data() : heap_.data(); }
  const std::int64_t* data() const noexcept { return size_ <= kInline ? inline_.data() : heap_.data(); }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  std::int64_t& operator[](std::size_t k) noexcept { return data()[k]; }
  const std::int64_t& operator[](std::size_t k) const noexcept { return data()[k]; }
  std::int64_t& front() noexcept { return data()[0]; }
  const std::int64_t& front() const noexcept { return data()[0]; }
  std::int64_t& back() noexcept { return data()[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data()[size_ - 1]; }

  void clear() noexcept {
    size_ = 0;
    heap_.clear();
  }
  void push_back(std::int64_t value) {
    if (size_ < kInline) {
      inline_[size_] = value;
    } else {
      if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(value);
    }
    ++size_;
  }
  void pop_back() noexcept {
    if (size_ == kInline + 1) {
      std::copy(heap_.begin(), heap_.begin() + kInline, inline_.begin());
      heap_.clear();
    } else if (size_ > kInline) {
      heap_.pop_back();
    }
    --size_;
  }
  void resize(std::size_t count, std::int64_t value = 0) {
    while (size_ > count) pop_back();
    while (size_ < count) push_back(value);
  }
  iterator insert(const_iterator position, std::int64_t value) {
    const std::size_t at = static_cast<std::size_t>(position - begin());
    push_back(value);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  iterator erase(const_iterator position) {
    const std::size_t at = static_cast<std::size_t>(position - begin());
    std::rotate(begin() + at, begin() + at + 1, end());
    pop_back();
    return begin() + at;
  }

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Dims& a, const Dims& b) noexcept { return !(a == b); }

 private:
  // Values live in inline_ while there are at most kInline of them, else all in heap_.
  std::size_t size_ = 0;
  std::array<std::int64_t, kInline> inline_{};
  std::vector<std::int64_t> heap_;
};

/// The element count of a shape: the product of its extents, 1 for 0-d. Unchecked: a shape
/// whose product passes 2^63 is refused by ArrayRef::validate before it gets here.
inline std::int64_t element_count(const Dims& shape) noexcept {
  std::int64_t count = 1;
  for (auto extent : shape) count *= extent;
  return count;
}

}  // namespace kernc
