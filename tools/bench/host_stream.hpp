#pragma once
// What the machine's memory gives: STREAM-style read and triad loops on plain std::threads,
// for kernc_host_bench to bound each host-backend row by. A memory-bound row cannot scale
// past what the memory gives its worker count, so tools/bench/host_bench.py judges the
// row's multi-worker time against these loops at the same count, on the same buffers.

#include <cstdint>

namespace bench {

/// Milliseconds (median of `repeat`, after one untimed run) for `threads` threads to sum
/// the `n` floats at `x`, each a contiguous share: the read stream of a full sum.
double stream_read_ms(const float* x, std::int64_t n, int threads, int repeat);

/// The same for z = a * x + y over `n` floats (saxpy's traffic: two reads, one write).
double stream_triad_ms(float* z, const float* x, const float* y, std::int64_t n, int threads, int repeat);

}  // namespace bench
