// Scalar (include/kernc/scalar.hpp, src/core/scalar.cpp): its bytes, written by convert_to
// and read back by from_bytes, for every dtype.

#include <complex>
#include <cstring>
#include <string>

#include <doctest/doctest.h>

#include "kernc/dtype.hpp"
#include "kernc/scalar.hpp"

using kernc::DType;
using kernc::Scalar;

TEST_CASE("Scalar::from_bytes reads back what convert_to writes, for every dtype") {
  std::size_t count = 0;
  const DType* all = kernc::all_dtypes(&count);
  for (std::size_t k = 0; k < count; ++k) {
    const DType dtype = all[k];
    const std::string name = kernc::to_string(dtype);
    CAPTURE(name);
    unsigned char bytes[16] = {};
    Scalar(std::complex<double>(-3, 2)).convert_to(dtype, bytes);
    const Scalar back = Scalar::from_bytes(dtype, bytes);
    CHECK(back.dtype == dtype);
    const long double expected = dtype == DType::bool_ ? 1 : kernc::is_unsigned(dtype) ? 0 : -3;  // -3 saturates to 0
    CHECK(back.real == expected);
    CHECK(back.imag == (kernc::is_complex(dtype) ? 2 : 0));
    unsigned char again[16] = {};
    back.convert_to(dtype, again);
    CHECK(std::memcmp(bytes, again, kernc::itemsize(dtype)) == 0);
  }
}
