// Host copies check the host element type against the array's dtype (issue 15, item 4):
// to_host_vector<float> of a float64 array would write 8 bytes per 4-byte float.

#include <cstdint>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("DeviceArray::to_host_vector refuses a host type of another size, naming both") {
  Random random("to_host_vector sizes");
  const std::vector<double> values = random.uniform<double>(1001);
  DeviceArray array = upload(DType::float64, {1001}, values);
  try {
    (void)array.to_host_vector<float>();
    FAIL("to_host_vector<float> of a float64 array was accepted");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "the array holds float64 (8-byte elements) but the host element type has 4 bytes"));
  }
  CHECK_THROWS_AS((void)array.to_host_vector<std::int16_t>(), Error);
  // The right size works, for the same type and for one of the same width.
  CHECK(array.to_host_vector<double>() == values);
  CHECK(array.to_host_vector<std::uint64_t>().size() == values.size());
  DeviceArray floats = upload(DType::float32, {3}, std::vector<float>{1.5f, -2.0f, 4.25f});
  CHECK_THROWS_AS((void)floats.to_host_vector<double>(), Error);
  CHECK(floats.to_host_vector<float>() == std::vector<float>{1.5f, -2.0f, 4.25f});
}

}  // namespace kernc::gpu_test
