// kernc::Arg, the argument type of every kernel call: what converts to it and what must not.

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernc/call.hpp"

TEST_CASE("kernels::Arg takes arrays and scalars, and refuses raw pointers at compile time") {
  // A pointer once became the bool scalar `true` through Scalar(bool).
  static_assert(!std::is_constructible_v<kernc::Arg, float*>);
  static_assert(!std::is_constructible_v<kernc::Arg, const double*>);
  static_assert(!std::is_constructible_v<kernc::Arg, const char*>);
  static_assert(!std::is_constructible_v<kernc::Arg, void*>);
  static_assert(std::is_constructible_v<kernc::Arg, float>);
  static_assert(std::is_constructible_v<kernc::Arg, std::uint64_t>);
  const kernc::Arg address(std::uint64_t{0x7f0000001000});
  CHECK_FALSE(address.is_array());
  CHECK(address.scalar().dtype == kernc::DType::uint64);
  float host[4] = {};
  const kernc::Arg array(kernc::ArrayRef::contiguous(host, kernc::DType::float32, {4}));
  CHECK(array.is_array());
  CHECK(array.array().shape == std::vector<std::int64_t>{4});
}
