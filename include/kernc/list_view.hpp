#pragma once
/// \file
/// ListView: the argument lists of a kernel call, read where they are.
///
/// NOTE [ argument lists ]
/// A call's inputs and outputs are read during the call and never kept, so the call takes
/// a view of them: a braced list (`saxpy.launch(plan, {2.0f, x, y}, {z})`) builds its
/// elements once, in place, and lives to the end of the caller's full expression; a
/// std::vector is read where it is. As `const std::vector<Arg>&` parameters, the same
/// braced lists were copied into two heap-allocated vectors on every call (a kept plan's
/// launch: tools/bench/NOTES.md, callpath).
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace kernc {

template <class T>
class ListView {
 public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = const T*;

  ListView() noexcept = default;
  // The braced list outlives the call it is written in (NOTE [ argument lists ]); GCC
  // warns of any pointer kept from an initializer_list.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ListView(std::initializer_list<T> list) noexcept : data_(list.begin()), size_(list.size()) {}  // NOLINT: implicit
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ListView(const std::vector<T>& list) noexcept : data_(list.data()), size_(list.size()) {}     // NOLINT: implicit

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const T* data() const noexcept { return data_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  const T& operator[](std::size_t k) const noexcept { return data_[k]; }
  const T& front() const noexcept { return data_[0]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  /// A copy, for what must outlive the call.
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernc
