// DLPack on a GPU: export and import round trips (contiguous and strided), tensors built
// by hand (the deleter runs exactly once, when the last DeviceArray copy goes), and the
// tensors kernc must refuse. Built only where the library has DLPack (KERNC_WITH_DLPACK).

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

#ifdef KERNC_WITH_DLPACK

#include <dlpack/dlpack.h>

namespace kernc::gpu_test {
namespace {

using Shape = std::vector<std::int64_t>;

// Checks that `tensor` describes `view` (DLPack strides are in elements).
void check_describes(const DLManagedTensor& tensor, const ArrayRef& view, std::uint8_t code, std::uint8_t bits) {
  const DLTensor& t = tensor.dl_tensor;
  CHECK(reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset == view.data);
  CHECK(t.device.device_type == (device().backend() == Backend::cpu ? kDLCPU : kDLCUDA));
  CHECK(t.device.device_id == device().ordinal());
  CHECK(t.dtype.code == code);
  CHECK(t.dtype.bits == bits);
  CHECK(t.dtype.lanes == 1);
  REQUIRE(t.ndim == view.ndim());
  const auto item = static_cast<std::int64_t>(itemsize(view.dtype));
  for (int d = 0; d < t.ndim; ++d) {
    CAPTURE(d);
    CHECK(t.shape[d] == view.shape[static_cast<std::size_t>(d)]);
    REQUIRE(t.strides != nullptr);
    CHECK(t.strides[d] * item == view.strides[static_cast<std::size_t>(d)]);
  }
}

// A tensor made the way another framework would: its own memory, shape and strides, and
// a deleter that counts its calls.
struct HandMade {
  DLManagedTensor tensor{};
  std::int64_t shape[2] = {3, 5};
  std::int64_t strides[2] = {1, 3};  // column-major (Fortran order), in elements
  DeviceBuffer memory;
  int* deleted = nullptr;

  static void deleter(DLManagedTensor* self) {
    auto* made = static_cast<HandMade*>(self->manager_ctx);
    ++*made->deleted;
    delete made;
  }
};

// The device type of the run's device: host memory on the host backend.
DLDeviceType own_type() { return device().backend() == Backend::cpu ? kDLCPU : kDLCUDA; }

HandMade* hand_made(int* deleted, DLDeviceType device_type = own_type()) {
  auto* made = new HandMade;
  made->deleted = deleted;
  made->memory = device().allocate(64 * sizeof(float));
  DLTensor& t = made->tensor.dl_tensor;
  t.data = made->memory.data();
  t.device = {device_type, device().ordinal()};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = made->shape;
  t.strides = made->strides;
  t.byte_offset = 4 * sizeof(float);  // the tensor starts at element 4 of the buffer
  made->tensor.manager_ctx = made;
  made->tensor.deleter = &HandMade::deleter;
  return made;
}

}  // namespace

TEST_CASE("DeviceArray::to_dlpack and from_dlpack round-trip a contiguous array without copying") {
  KERNC_GPU_RANDOM(random, "dlpack round trip");
  const Shape shape = {37, 11};
  const auto x = random.uniform<float>(element_count(shape));
  DeviceArray a = upload(DType::float32, shape, x);
  const ArrayRef original = a.ref();

  DLManagedTensor* tensor = a.to_dlpack();
  REQUIRE(tensor != nullptr);
  check_describes(*tensor, original, kDLFloat, 32);
  a = DeviceArray();  // the tensor alone keeps the memory alive now

  DeviceArray b = DeviceArray::from_dlpack(tensor);
  CHECK(b.ref().data == original.data);
  CHECK(b.shape() == original.shape);
  CHECK(b.ref().strides == original.strides);
  CHECK(b.dtype() == DType::float32);
  CHECK(b.owns_memory());
  CHECK(b.device().ordinal() == device().ordinal());
  expect_equal(download<float>(b), x, "data read back through the imported array");

  // The imported array is an ordinary kernel argument.
  const ElementwiseKernel twice("T x", "T y", "y = x * 2", "gpu_dlpack_twice");
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i] * 2;
  expect_equal(download<float>(twice({b})[0]), want, "2 x through the imported array");

  // Other dtypes carry their DLPack codes both ways.
  struct Case {
    DType dtype;
    std::uint8_t code, bits;
  };
  for (const Case& c : {Case{DType::int8, kDLInt, 8}, Case{DType::uint16, kDLUInt, 16}, Case{DType::int64, kDLInt, 64},
                        Case{DType::float16, kDLFloat, 16}, Case{DType::bfloat16, kDLBfloat, 16},
                        Case{DType::float64, kDLFloat, 64}, Case{DType::complex64, kDLComplex, 64},
                        Case{DType::complex128, kDLComplex, 128}}) {
    CAPTURE(to_string(c.dtype));
    DeviceArray typed = DeviceArray::empty(device(), c.dtype, {4, 3});
    DLManagedTensor* t = typed.to_dlpack();
    check_describes(*t, typed.ref(), c.code, c.bits);
    DeviceArray back = DeviceArray::from_dlpack(t);
    CHECK(back.dtype() == c.dtype);
    CHECK(back.ref().data == typed.ref().data);
  }
}

TEST_CASE("DeviceArray::to_dlpack and from_dlpack keep the strides of transposed, sliced and reversed views") {
  KERNC_GPU_RANDOM(random, "dlpack strided");
  const Shape shape = {9, 14};
  const auto x = random.uniform<double>(element_count(shape));
  const DeviceArray a = upload(DType::float64, shape, x);
  struct Case {
    const char* name;
    ArrayRef view;
  };
  for (const Case& c : {Case{"transposed", a.ref().transposed()}, Case{"step 2 on axis 1", a.ref().sliced(1, 1, 14, 2)},
                        Case{"rows reversed", a.ref().sliced(0, 8, -10, -1)},
                        Case{"reversed and transposed", a.ref().sliced(1, 13, -15, -3).transposed()}}) {
    CAPTURE(c.name);
    const DeviceArray view = DeviceArray::wrap(device(), c.view);
    DLManagedTensor* tensor = view.to_dlpack();
    check_describes(*tensor, c.view, kDLFloat, 64);
    const DeviceArray back = DeviceArray::from_dlpack(tensor);
    CHECK(back.ref().data == c.view.data);
    CHECK(back.shape() == c.view.shape);
    CHECK(back.ref().strides == c.view.strides);
    expect_equal(download<double>(back), host_view(x, a.ref().data, c.view), std::string("elements of ") + c.name);
  }

  // A byte stride that is not a whole number of elements cannot be said in DLPack.
  ArrayRef odd = ArrayRef::contiguous(a.ref().data, DType::float32, {4});
  odd.strides = {6};
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "not a multiple of the item size",
                    DeviceArray::wrap(device(), odd).to_dlpack());
  const DeviceArray flags = DeviceArray::empty(device(), DType::bool_, {4});
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "boolean", flags.to_dlpack());
}

TEST_CASE("DeviceArray::from_dlpack imports a hand-made tensor and runs its deleter once, with the last copy") {
  KERNC_GPU_RANDOM(random, "dlpack hand made");
  int deleted = 0;
  HandMade* made = hand_made(&deleted);
  const auto buffer = random.uniform<float>(64);
  device().copy_to_device(made->memory.address(), buffer.data(), buffer.size() * sizeof(float));
  device().synchronize();
  const std::uint64_t base = made->memory.address();
  // Element (i, j) is buffer[4 + i + 3 j].
  std::vector<float> want;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) want.push_back(buffer[static_cast<std::size_t>(4 + i + 3 * j)]);
  }
  {
    DeviceArray a = DeviceArray::from_dlpack(&made->tensor);
    CHECK(deleted == 0);
    CHECK(a.ref().data == base + 4 * sizeof(float));
    CHECK(a.shape() == Shape{3, 5});
    CHECK(a.ref().strides == Shape{4, 12});
    CHECK(a.dtype() == DType::float32);
    DeviceArray b = a;
    {
      DeviceArray c = b;
      CHECK(deleted == 0);
    }
    a = DeviceArray();
    CHECK(deleted == 0);
    expect_equal(download<float>(b), want, "the column-major tensor in C order");
    const ElementwiseKernel plus_one("T x", "T y", "y = x + 1", "gpu_dlpack_plus_one");
    std::vector<float> plus(want);
    for (auto& v : plus) v += 1.0f;
    expect_equal(download<float>(plus_one({b})[0]), plus, "x + 1 on the imported tensor");
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);

  // Without strides, a tensor is C-contiguous.
  int deleted_plain = 0;
  HandMade* plain = hand_made(&deleted_plain);
  plain->tensor.dl_tensor.strides = nullptr;
  plain->tensor.dl_tensor.byte_offset = 0;
  device().copy_to_device(plain->memory.address(), buffer.data(), buffer.size() * sizeof(float));
  device().synchronize();
  {
    const DeviceArray a = DeviceArray::from_dlpack(&plain->tensor);
    CHECK(a.ref().c_contiguous());
    expect_equal(download<float>(a), std::vector<float>(buffer.begin(), buffer.begin() + 15), "C-contiguous tensor");
  }
  CHECK(deleted_plain == 1);
}

TEST_CASE("DeviceArray::from_dlpack rejects other devices' tensors and vector dtypes with invalid_argument, and still deletes them") {
  KERNC_GPU_RANDOM(random, "dlpack rejected");
  // Host memory (kDLCPU) is the cpu backend's (tests/unit/test_host_api.cpp); a Vulkan
  // buffer is no kernc device's.
  int deleted = 0;
  HandMade* vulkan = hand_made(&deleted, kDLVulkan);
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "neither a CUDA device nor host memory",
                    DeviceArray::from_dlpack(&vulkan->tensor));
  CHECK(deleted == 1);

  int deleted_lanes = 0;
  HandMade* lanes = hand_made(&deleted_lanes);
  lanes->tensor.dl_tensor.dtype.lanes = 2;
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "lanes", DeviceArray::from_dlpack(&lanes->tensor));
  CHECK(deleted_lanes == 1);

  int deleted_type = 0;
  HandMade* unknown = hand_made(&deleted_type);
  unknown->tensor.dl_tensor.dtype = {kDLFloat, 8, 1};
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "no kernc dtype", DeviceArray::from_dlpack(&unknown->tensor));
  CHECK(deleted_type == 1);

  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "null tensor", DeviceArray::from_dlpack(nullptr));
}

TEST_CASE("DLPack: float8 arrays and kDLFloat8 tensors need DLPack 1.1's codes, which a DLPack 0.6 build refuses") {
  KERNC_GPU_RANDOM(random, "dlpack float8");
  // NOTE [ float8 over DLPack ] (src/runtime/dlpack.cpp): DLPack 1.1 numbers kDLFloat8_e4m3fn
  // 10 and kDLFloat8_e5m2 12.
#if defined(DLPACK_MAJOR_VERSION) && (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
  const std::vector<std::uint8_t> codes = {0x38, 0xb8, 0x7e, 0x01};
  const DeviceArray a = upload(DType::float8_e4m3fn, {4}, codes);
  DLManagedTensor* exported = a.to_dlpack();
  CHECK(exported->dl_tensor.dtype.code == kDLFloat8_e4m3fn);
  CHECK(exported->dl_tensor.dtype.bits == 8);
  const DeviceArray back = DeviceArray::from_dlpack(exported);
  CHECK(back.dtype() == DType::float8_e4m3fn);
  CHECK(download<std::uint8_t>(back) == codes);
#else
  for (DType dtype : {DType::float8_e4m3fn, DType::float8_e5m2}) {
    const DeviceArray a = DeviceArray::empty(device(), dtype, {4});
    KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "no float8 type codes", a.to_dlpack());
  }
  for (std::uint8_t code : {10, 12}) {
    int deleted = 0;
    HandMade* made = hand_made(&deleted);
    made->tensor.dl_tensor.dtype = {code, 8, 1};
    KERNC_CHECK_ERROR(ErrorCode::invalid_argument, code == 10 ? "kDLFloat8_e4m3fn" : "kDLFloat8_e5m2",
                      DeviceArray::from_dlpack(&made->tensor));
    CHECK(deleted == 1);
  }
#endif
}

}  // namespace kernc::gpu_test

#else  // KERNC_WITH_DLPACK

namespace kernc::gpu_test {

TEST_CASE("DeviceArray::to_dlpack reports backend_disabled in a build without DLPack") {
  KERNC_GPU_RANDOM(random, "dlpack disabled");
  const DeviceArray a = DeviceArray::empty(device(), DType::float32, {4});
  KERNC_CHECK_ERROR(ErrorCode::backend_disabled, "DLPack", a.to_dlpack());
  KERNC_CHECK_ERROR(ErrorCode::backend_disabled, "DLPack", DeviceArray::from_dlpack(nullptr));
}

}  // namespace kernc::gpu_test

#endif  // KERNC_WITH_DLPACK
