// Views whose element count or byte span does not fit in 64 bits are refused with a clear
// error before anything multiplies them (ArrayRef::validate_description, which every call
// and plan runs on its arrays), and so are DLPack tensors with a negative rank, no shape or
// strides past 2^63 bytes (DeviceArray::from_dlpack checks before it opens a device, so
// no GPU is needed here; tests/gpu/test_gpu_dlpack.cpp imports real ones).

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernc/array.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"

#if KERNC_WITH_DLPACK
#include <dlpack/dlpack.h>
#endif

using kernc::ArrayRef;
using kernc::DType;
using kernc::Error;
using kernc::ErrorCode;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

ArrayRef view(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
  ArrayRef ref;
  ref.data = 0x10000;
  ref.dtype = DType::float32;
  ref.shape = std::move(shape);
  ref.strides = std::move(strides);
  return ref;
}

}  // namespace

TEST_CASE("ArrayRef::validate refuses element counts and byte spans past 2^63, naming the view") {
  // 2^40 x 2^40 elements: each extent is fine, their product is not.
  CHECK_THROWS_WITH_AS(view({std::int64_t{1} << 40, std::int64_t{1} << 40}, {4, 4}).validate("x"),
                       doctest::Contains("x: shape [1099511627776, 1099511627776] has more than 2^63 elements"), Error);
  // Twelve elements, but the first axis's stride times its extent passes 2^63 bytes.
  CHECK_THROWS_WITH_AS(view({3, 4}, {std::int64_t{1} << 62, 4}).validate("x"),
                       doctest::Contains("the byte strides [4611686018427387904, 4] of shape [3, 4] reach past 2^63"),
                       Error);
  // Two axes each within 2^63 whose spans add past it, negative strides counted by size.
  CHECK_THROWS_WITH_AS(view({2, 2}, {-(kMax / 2 + 1), kMax / 2 + 1}).validate("x"),
                       doctest::Contains("reach past 2^63 bytes"), Error);
  // The one stride whose size has no int64: -2^63.
  CHECK_THROWS_WITH_AS(view({2}, {kMin}).validate("x"), doctest::Contains("reach past 2^63 bytes"), Error);

  // What still passes: a zero extent makes every stride irrelevant; an extent of 1 never
  // steps; a span of exactly 2^63 - 1 bytes fits.
  CHECK_NOTHROW(view({0, std::int64_t{1} << 40, std::int64_t{1} << 40}, {kMin, kMax, kMax}).validate("x"));
  CHECK_NOTHROW(view({1, 5}, {kMax, 4}).validate("x"));
  CHECK_NOTHROW(view({2}, {kMax}).validate("x"));
  const ArrayRef fits = view({2}, {kMax});
  CHECK(fits.byte_range().second - fits.byte_range().first == static_cast<std::uint64_t>(kMax) + 4);
}

TEST_CASE("a kernel's plan refuses an overflowing view with the kernel's name") {
  const kernc::ElementwiseKernel twice("T x", "T y", "y = x * 2", "checks_twice");
  ArrayRef x = view({3, 4}, {std::int64_t{1} << 62, 4});
  x.data = 0;  // a description
  CHECK_THROWS_WITH_AS(twice.plan({x}, {}), doctest::Contains("checks_twice: the byte strides"), Error);
  const kernc::ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "checks_sum");
  ArrayRef big = view({std::int64_t{1} << 40, std::int64_t{1} << 40}, {4, 4});
  big.data = 0;
  kernc::CallOptions over_axis_1;
  over_axis_1.axes = std::vector<int>{1};
  CHECK_THROWS_WITH_AS(sum.plan({big}, {}, over_axis_1), doctest::Contains("checks_sum: shape"), Error);
}

#if KERNC_WITH_DLPACK

namespace {

// A host-made CUDA tensor whose deleter counts its calls: from_dlpack owns what it is given,
// refused or not.
struct Made {
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor tensor{};
  int deleted = 0;

  Made(std::vector<std::int64_t> shape_, std::vector<std::int64_t> strides_)
      : shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = tensor.dl_tensor;
    t.data = reinterpret_cast<void*>(0x10000);
    t.device = {kDLCUDA, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    tensor.manager_ctx = this;
    tensor.deleter = [](DLManagedTensor* self) { ++static_cast<Made*>(self->manager_ctx)->deleted; };
  }
};

std::string import_error(Made& made) {
  try {
    kernc::DeviceArray::from_dlpack(&made.tensor);
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("DeviceArray::from_dlpack refuses a foreign tensor's bad rank, shape and strides, and deletes it") {
  {
    Made made({4}, {});
    made.tensor.dl_tensor.ndim = -1;
    CHECK(import_error(made) == "from_dlpack: negative ndim -1");
    CHECK(made.deleted == 1);
  }
  {
    Made made({4, 4}, {});
    made.tensor.dl_tensor.shape = nullptr;
    CHECK(import_error(made) == "from_dlpack: a tensor of 2 dimensions has no shape");
    CHECK(made.deleted == 1);
  }
  {  // strides count elements: 2^62 of them is 2^64 bytes of float32
    Made made({3, 4}, {std::int64_t{1} << 62, 1});
    CHECK(import_error(made) ==
          "from_dlpack: stride 4611686018427387904 of axis 0 (in elements of 4 bytes) passes 2^63 bytes");
    CHECK(made.deleted == 1);
  }
  {
    Made made({3, 4}, {std::int64_t{1} << 60, 1});
    CHECK(import_error(made) ==
          "from_dlpack: the byte strides [4611686018427387904, 4] of shape [3, 4] reach past 2^63 bytes");
    CHECK(made.deleted == 1);
  }
  {
    Made made({std::int64_t{1} << 40, std::int64_t{1} << 40}, {});
    // C-order strides of 2^42 bytes on axis 0: its span passes 2^63 before the count does.
    CHECK(import_error(made) == "from_dlpack: the byte strides [4398046511104, 4] of shape [1099511627776, "
                                "1099511627776] reach past 2^63 bytes");
    CHECK(made.deleted == 1);
  }
  {
    Made made({3, -4}, {4, 1});
    CHECK(import_error(made) == "from_dlpack: negative extent in shape [3, -4]");
    CHECK(made.deleted == 1);
  }
}

#endif
