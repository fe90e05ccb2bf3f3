#include "kernc/dtype.hpp"

#include <utility>

namespace kernc {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  const char* device;
};

constexpr DTypeInfo kInfo[] = {
    {DType::bool_, "bool", 1, "bool"},
    {DType::int8, "int8", 1, "signed char"},
    {DType::int16, "int16", 2, "short"},
    {DType::int32, "int32", 4, "int"},
    {DType::int64, "int64", 8, "long long"},
    {DType::uint8, "uint8", 1, "unsigned char"},
    {DType::uint16, "uint16", 2, "unsigned short"},
    {DType::uint32, "uint32", 4, "unsigned int"},
    {DType::uint64, "uint64", 8, "unsigned long long"},
    {DType::float8_e4m3fn, "float8_e4m3fn", 1, "kernc::float8_e4m3fn"},
    {DType::float8_e5m2, "float8_e5m2", 1, "kernc::float8_e5m2"},
    {DType::float16, "float16", 2, "kernc::float16"},
    {DType::bfloat16, "bfloat16", 2, "kernc::bfloat16"},
    {DType::float32, "float32", 4, "float"},
    {DType::float64, "float64", 8, "double"},
    {DType::complex64, "complex64", 8, "kernc::complex<float>"},
    {DType::complex128, "complex128", 16, "kernc::complex<double>"},
};

constexpr DType kAll[] = {DType::bool_,         DType::int8,        DType::int16,    DType::int32,
                          DType::int64,         DType::uint8,       DType::uint16,   DType::uint32,
                          DType::uint64,        DType::float8_e4m3fn, DType::float8_e5m2, DType::float16,
                          DType::bfloat16,      DType::float32,     DType::float64,  DType::complex64,
                          DType::complex128};

// NumPy's aliases on a 64-bit Linux (int and long are int64, intc is int32).
const std::pair<std::string_view, DType> kAliases[] = {
    {"bool_", DType::bool_},       {"b1", DType::bool_},         {"?", DType::bool_},
    {"i1", DType::int8},           {"byte", DType::int8},        {"i2", DType::int16},
    {"short", DType::int16},       {"i4", DType::int32},         {"intc", DType::int32},
    {"i8", DType::int64},          {"int", DType::int64},        {"long", DType::int64},
    {"longlong", DType::int64},    {"intp", DType::int64},       {"u1", DType::uint8},
    {"ubyte", DType::uint8},       {"u2", DType::uint16},        {"ushort", DType::uint16},
    {"u4", DType::uint32},         {"uintc", DType::uint32},     {"u8", DType::uint64},
    {"uint", DType::uint64},       {"ulong", DType::uint64},     {"ulonglong", DType::uint64},
    {"uintp", DType::uint64},      {"f2", DType::float16},       {"half", DType::float16},
    {"f4", DType::float32},        {"single", DType::float32},   {"f8", DType::float64},
    {"float", DType::float64},     {"double", DType::float64},   {"c8", DType::complex64},
    {"csingle", DType::complex64}, {"c16", DType::complex128},   {"complex", DType::complex128},
    {"cdouble", DType::complex128},
};

const DTypeInfo& info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }
}  // namespace

const char* to_string(DType dtype) noexcept { return info(dtype).name; }
std::size_t itemsize(DType dtype) noexcept { return info(dtype).size; }
const char* device_type(DType dtype) noexcept { return info(dtype).device; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& entry : kInfo) {
    if (name == entry.name) return entry.dtype;
  }
  for (const auto& [alias, dtype] : kAliases) {
    if (name == alias) return dtype;
  }
  return std::nullopt;
}

const DType* all_dtypes(std::size_t* count) noexcept {
  *count = sizeof kAll / sizeof kAll[0];
  return kAll;
}

bool is_integer(DType d) noexcept { return d >= DType::int8 && d <= DType::uint64; }
bool is_unsigned(DType d) noexcept { return d >= DType::uint8 && d <= DType::uint64; }
bool is_floating(DType d) noexcept { return d >= DType::float8_e4m3fn && d <= DType::float64; }
bool is_complex(DType d) noexcept { return d == DType::complex64 || d == DType::complex128; }

}  // namespace kernc
