// NOTE [ inline dims ] (kernc/dims.hpp): Dims behaves as a std::vector<int64_t> on both
// sides of its inline capacity, and an ArrayRef of up to kInline axes copies without
// allocating.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "allocation_count.hpp"
#include "kernc/array_ref.hpp"
#include "kernc/call.hpp"
#include "kernc/dims.hpp"

using kernc::Dims;

namespace {

std::vector<std::int64_t> as_vector(const Dims& dims) { return {dims.begin(), dims.end()}; }

}  // namespace

TEST_CASE("Dims follows std::vector through random edits across the inline capacity") {
  std::mt19937 random(20261125);
  for (int round = 0; round < 200; ++round) {
    Dims dims;
    std::vector<std::int64_t> model;
    for (int step = 0; step < 60; ++step) {
      const std::int64_t value = static_cast<std::int64_t>(random() % 1000) - 500;
      switch (random() % 6) {
        case 0:
        case 1:
          dims.push_back(value);
          model.push_back(value);
          break;
        case 2:
          if (!model.empty()) {
            dims.pop_back();
            model.pop_back();
          }
          break;
        case 3: {
          const std::size_t at = random() % (model.size() + 1);
          CHECK(*dims.insert(dims.begin() + at, value) == value);
          model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), value);
          break;
        }
        case 4:
          if (!model.empty()) {
            const std::size_t at = random() % model.size();
            dims.erase(dims.begin() + at);
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        default: {
          const std::size_t count = random() % 20;
          dims.resize(count, value);
          model.resize(count, value);
        }
      }
      REQUIRE(dims.size() == model.size());
      REQUIRE(as_vector(dims) == model);
      const Dims copy = dims;  // a copy on either side of kInline is equal and independent
      REQUIRE(copy == dims);
      // Assigned over a list of another length (either side of kInline), copied and moved.
      Dims assigned(static_cast<std::size_t>(random() % 20), 9);
      assigned = dims;
      REQUIRE(assigned == dims);
      Dims moved_into(static_cast<std::size_t>(random() % 20), 9);
      Dims source = dims;
      moved_into = std::move(source);
      REQUIRE(moved_into == dims);
      Dims constructed(std::move(moved_into));
      REQUIRE(constructed == dims);
      if (!model.empty()) {
        dims[0] += 1;
        CHECK(copy != dims);
        dims[0] -= 1;
      }
    }
  }
}

TEST_CASE("Dims converts to and from std::vector and compares with one") {
  const std::vector<std::int64_t> long_shape = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Dims from_vector = long_shape;
  CHECK(from_vector.size() == 11);
  CHECK(from_vector == long_shape);
  CHECK(long_shape == from_vector);
  const std::vector<std::int64_t> back = from_vector;
  CHECK(back == long_shape);
  Dims moved = std::move(from_vector);
  CHECK(moved == long_shape);
  CHECK(Dims{4, 5}.size() == 2);
  CHECK(Dims(3, 7) == std::vector<std::int64_t>{7, 7, 7});
  CHECK(Dims{} == std::vector<std::int64_t>{});
  CHECK(Dims{1, 2} != Dims{1, 2, 0});
  CHECK(Dims{1, 2}.back() == 2);
}

// NOTE [ counted allocations ]
// The unit test binary replaces every non-aligned global operator new and delete (plain,
// array, sized, nothrow) with malloc and free, counting this thread's allocations. All of
// them, so that no memory passes between the replaced pair and the default one: under
// AddressSanitizer, a nothrow new left to the runtime (LLVM, inside HIPRTC, uses it) and
// freed through the replaced delete is an alloc-dealloc mismatch. Aligned new and delete
// stay the runtime's, as a pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
// This thread's allocations: other tests' threads (in the same binary) may still run.
thread_local int allocations = 0;

void* counted_malloc(std::size_t size) noexcept {
  ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

int kernc_test::thread_allocations() noexcept { return allocations; }

void* operator new(std::size_t size) {
  if (void* memory = counted_malloc(size)) return memory;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* memory = counted_malloc(size)) return memory;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }

TEST_CASE("an ArrayRef of up to 8 axes is copied into an Arg without allocating") {
  const kernc::ArrayRef eight =
      kernc::ArrayRef::contiguous(std::uint64_t{4096}, kernc::DType::float32, {2, 2, 2, 2, 2, 2, 2, 2});
  const kernc::ArrayRef nine =
      kernc::ArrayRef::contiguous(std::uint64_t{4096}, kernc::DType::float32, {2, 2, 2, 2, 2, 2, 2, 2, 2});
  int before = allocations;
  kernc::Arg argument(eight);
  kernc::ArrayRef copy = eight;
  CHECK(allocations == before);
  CHECK(argument.array().strides == copy.strides);
  CHECK(copy.strides[0] == 4 * 128);
  before = allocations;
  kernc::ArrayRef long_copy = nine;  // past kInline: the heap, shape and strides
  CHECK(allocations == before + 2);
  CHECK(long_copy.shape == nine.shape);
  CHECK(long_copy.strides[0] == 4 * 256);
}

TEST_CASE("element_count: the product of the extents, 1 for 0-d; ArrayRef::size is it") {
  using Shape = std::vector<std::int64_t>;
  CHECK(kernc::element_count(Shape{}) == 1);
  CHECK(kernc::element_count(Shape{3, 0, 5}) == 0);
  CHECK(kernc::element_count(Shape{2, 3, 4}) == 24);
  CHECK(kernc::element_count(Dims{7}) == 7);
  CHECK(kernc::ArrayRef::contiguous(std::uint64_t{0}, kernc::DType::float32, {2, 3, 4}).size() == 24);
}
