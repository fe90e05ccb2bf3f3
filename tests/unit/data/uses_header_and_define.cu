// Needs the extra header "kernc_test_header.cuh" and the define KERNC_TEST_VALUE=42.
#include "kernc_test_header.cuh"
#ifndef KERNC_TEST_VALUE
#error "KERNC_TEST_VALUE is not defined"
#endif
static_assert(KERNC_TEST_VALUE == 42, "KERNC_TEST_VALUE must be 42");
static_assert(kernc_test_header_value() == 7, "the extra header was not the one given");

extern "C" __global__ void fill(int* out) { out[threadIdx.x] = KERNC_TEST_VALUE + kernc_test_header_value(); }
