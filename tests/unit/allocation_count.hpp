#pragma once
// Heap allocations made so far by the calling thread. The unit test binary replaces the
// global operator new to count them (NOTE [ counted allocations ], tests/unit/test_dims.cpp),
// so that a test can say a call path allocates nothing, or exactly what.
namespace kernc_test {
int thread_allocations() noexcept;
}  // namespace kernc_test
