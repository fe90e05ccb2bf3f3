// DLPack import and export (Debian's libdlpack-dev); without its header at configure
// time both functions report that this build has no DLPack.

#include <fmt/format.h>

#include "kernc/array.hpp"
#include "kernc/error.hpp"

#ifdef KERNC_WITH_DLPACK
#include <dlpack/dlpack.h>
// DLPack 1.x numbers its versions by major and minor; 0.x by DLPACK_VERSION (60 is 0.6).
#if defined(DLPACK_MAJOR_VERSION) && (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
#define KERNC_DLPACK_HAS_FLOAT8 1
#else
#define KERNC_DLPACK_HAS_FLOAT8 0
#endif
#if defined(DLPACK_MAJOR_VERSION)
#define KERNC_DLPACK_VERSION_TEXT fmt::format("{}.{}", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)
#else
#define KERNC_DLPACK_VERSION_TEXT fmt::format("{}.{}", DLPACK_VERSION / 100, DLPACK_VERSION / 10 % 10)
#endif
#endif

namespace kernc {

#ifdef KERNC_WITH_DLPACK

namespace {

struct DLTypeMap {
  DType dtype;
  std::uint8_t code;
  std::uint8_t bits;
};

constexpr DLTypeMap kTypes[] = {
    {DType::bool_, kDLUInt, 8},      // DLPack 0.6 has no kDLBool; bool travels as uint8... see from_dlpack
    {DType::int8, kDLInt, 8},        {DType::int16, kDLInt, 16},     {DType::int32, kDLInt, 32},
    {DType::int64, kDLInt, 64},      {DType::uint8, kDLUInt, 8},     {DType::uint16, kDLUInt, 16},
    {DType::uint32, kDLUInt, 32},    {DType::uint64, kDLUInt, 64},   {DType::float16, kDLFloat, 16},
    {DType::bfloat16, kDLBfloat, 16}, {DType::float32, kDLFloat, 32}, {DType::float64, kDLFloat, 64},
    {DType::complex64, kDLComplex, 64}, {DType::complex128, kDLComplex, 128},
#if KERNC_DLPACK_HAS_FLOAT8
    {DType::float8_e4m3fn, kDLFloat8_e4m3fn, 8}, {DType::float8_e5m2, kDLFloat8_e5m2, 8},
#endif
};

// NOTE [ float8 over DLPack ]
// DLPack has float8 type codes from 1.1 (kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12);
// Debian 12's dlpack.h is 0.6, which has none. Built against such a header, kernc refuses
// to export a float8 array and to import a tensor with those codes, saying so, rather than
// send or read codes its header does not define.
#if !KERNC_DLPACK_HAS_FLOAT8
std::string no_float8_code(const char* what) {
  return fmt::format("{}: this build's dlpack.h (DLPack {}) has no float8 type codes (kDLFloat8_e4m3fn and "
                     "kDLFloat8_e5m2 came in DLPack 1.1); pass the bytes as a uint8 tensor and view them as "
                     "float8 (ArrayRef with dtype float8_e4m3fn or float8_e5m2)",
                     what, KERNC_DLPACK_VERSION_TEXT);
}
#endif

// What a DLManagedTensor exported by kernc carries besides the tensor itself.
struct Exported {
  DLManagedTensor tensor{};
  DeviceArray array;  // keeps the memory alive
  std::vector<std::int64_t> shape, strides;
};

}  // namespace

DLManagedTensor* DeviceArray::to_dlpack() const {
  if (view_.dtype == DType::bool_) {
    throw Error(ErrorCode::invalid_argument, "DLPack 0.6 has no boolean type: convert the array to uint8 first");
  }
#if !KERNC_DLPACK_HAS_FLOAT8
  if (view_.dtype == DType::float8_e4m3fn || view_.dtype == DType::float8_e5m2) {
    throw Error(ErrorCode::invalid_argument,
                no_float8_code(fmt::format("to_dlpack of a {} array", to_string(view_.dtype)).c_str()));
  }
#endif
  auto exported = std::make_unique<Exported>();
  exported->array = *this;
  exported->shape = view_.shape;
  const auto item = static_cast<std::int64_t>(itemsize(view_.dtype));
  for (auto stride : view_.strides) {
    if (stride % item != 0) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("cannot export to DLPack: byte stride {} is not a multiple of the item size {}", stride, item));
    }
    exported->strides.push_back(stride / item);
  }
  DLTensor& t = exported->tensor.dl_tensor;
  t.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(view_.data));
  switch (device_.backend()) {
    case Backend::cuda: t.device = {kDLCUDA, device_.ordinal()}; break;
    case Backend::hip: t.device = {kDLROCM, device_.ordinal()}; break;
    case Backend::cpu: t.device = {kDLCPU, 0}; break;
  }
  t.ndim = view_.ndim();
  for (const auto& entry : kTypes) {
    if (entry.dtype == view_.dtype) t.dtype = {entry.code, entry.bits, 1};
  }
  t.shape = exported->shape.data();
  t.strides = exported->strides.data();
  t.byte_offset = 0;
  exported->tensor.manager_ctx = exported.get();
  exported->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  return &exported.release()->tensor;
}

DeviceArray DeviceArray::from_dlpack(DLManagedTensor* tensor) {
  if (!tensor) throw Error(ErrorCode::invalid_argument, "from_dlpack: null tensor");
  // Own the tensor from here on, whatever happens below.
  std::shared_ptr<DLManagedTensor> owner(tensor, [](DLManagedTensor* t) {
    if (t->deleter) t->deleter(t);
  });
  const DLTensor& t = tensor->dl_tensor;
  // Host memory (kDLCPU, and pinned kDLCUDAHost) is the cpu backend's device memory.
  const bool host = t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
  if (t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged && !host) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("from_dlpack: the tensor is on device type {}, neither a CUDA device nor host memory",
                            static_cast<int>(t.device.device_type)));
  }
  if (t.dtype.lanes != 1) throw Error(ErrorCode::invalid_argument, "from_dlpack: vector dtypes (lanes != 1) are not supported");
  std::optional<DType> dtype;
  for (const auto& entry : kTypes) {
    if (entry.dtype != DType::bool_ && entry.code == t.dtype.code && entry.bits == t.dtype.bits) dtype = entry.dtype;
  }
  // DLPack 1.1's kDLFloat8_e4m3fn (10) and kDLFloat8_e5m2 (12), by number: NOTE [ float8 over DLPack ].
#if !KERNC_DLPACK_HAS_FLOAT8
  if (!dtype && (t.dtype.code == 10 || t.dtype.code == 12) && t.dtype.bits == 8) {
    throw Error(ErrorCode::invalid_argument,
                no_float8_code(fmt::format("from_dlpack of a tensor with type code {} ({})", static_cast<int>(t.dtype.code),
                                           t.dtype.code == 10 ? "kDLFloat8_e4m3fn" : "kDLFloat8_e5m2")
                                   .c_str()));
  }
#endif
  if (!dtype) {
    throw Error(ErrorCode::invalid_argument, fmt::format("from_dlpack: no kernc dtype for DLPack type code {} with {} bits",
                                                         static_cast<int>(t.dtype.code), static_cast<int>(t.dtype.bits)));
  }
  // The tensor comes from another library: its rank, shape and strides are checked here,
  // before anything is read through them.
  if (t.ndim < 0) throw Error(ErrorCode::invalid_argument, fmt::format("from_dlpack: negative ndim {}", t.ndim));
  if (t.ndim > 0 && !t.shape) {
    throw Error(ErrorCode::invalid_argument, fmt::format("from_dlpack: a tensor of {} dimensions has no shape", t.ndim));
  }
  ArrayRef view;
  view.dtype = *dtype;
  view.data = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
  view.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides) {
    const auto item = static_cast<std::int64_t>(itemsize(*dtype));
    for (int k = 0; k < t.ndim; ++k) {
      std::int64_t bytes = 0;
      if (__builtin_mul_overflow(t.strides[k], item, &bytes)) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("from_dlpack: stride {} of axis {} (in elements of {} bytes) passes 2^63 bytes",
                                t.strides[k], k, item));
      }
      view.strides.push_back(bytes);
    }
  } else {
    view = ArrayRef::contiguous(view.data, view.dtype, view.shape);
  }
  view.validate_description("from_dlpack");
  DeviceArray array;
  array.device_ = host ? Device::get(0, "", Backend::cpu) : Device::get(t.device.device_id);
  // Where the memory lives, for the call's device check (NOTE [ arrays know their device ]):
  // managed and page-locked host memory can be addressed by every GPU.
  switch (t.device.device_type) {
    case kDLCUDA: view.device = {Backend::cuda, t.device.device_id}; break;
    case kDLCUDAManaged:
    case kDLCUDAHost: view.device = DeviceId::shared(Backend::cuda); break;
    default: view.device = {Backend::cpu, 0}; break;
  }
  array.view_ = std::move(view);
  array.buffer_ = std::shared_ptr<void>(owner, tensor);
  return array;
}

#else

DLManagedTensor* DeviceArray::to_dlpack() const {
  throw Error(ErrorCode::backend_disabled, "this build of kernc has no DLPack support (install libdlpack-dev and re-run cmake)");
}

DeviceArray DeviceArray::from_dlpack(DLManagedTensor*) {
  throw Error(ErrorCode::backend_disabled, "this build of kernc has no DLPack support (install libdlpack-dev and re-run cmake)");
}

#endif

}  // namespace kernc
