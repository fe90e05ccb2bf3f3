#!/usr/bin/env python3
"""The same measures as kernc_bench, with CuPy, for comparison in the same run.

Usage: python3 tools/bench/cupy_bench.py [--size N] [--repeat R]
"""
import argparse
import time

import cupy as cp


def median_ms(fn, repeat):
    fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1 << 28)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    n = args.size
    x = cp.random.uniform(-0.5, 0.5, n, dtype=cp.float32)
    y = cp.random.uniform(-0.5, 0.5, n, dtype=cp.float32)
    z = cp.empty_like(x)
    nbytes = n * 4.0

    copy_ms = median_ms(lambda: z.__setitem__(Ellipsis, x), args.repeat)
    saxpy = cp.ElementwiseKernel("T a, T x, T y", "T z", "z = a * x + y", "saxpy")
    saxpy_ms = median_ms(lambda: saxpy(cp.float32(2.0), x, y, z), args.repeat)
    sum_sq = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_sq")
    reduce_ms = median_ms(lambda: sum_sq(x), args.repeat)
    cub_ms = median_ms(lambda: cp.sum(x), args.repeat)

    # saxpy on other layouts, as tools/bench/bench.cpp: bytes of every element read and written.
    side = 1
    while (side * 2) * (side * 2) <= n:
        side *= 2
    sq = side * side
    xs, ys, zs = x[:sq].reshape(side, side), y[:sq].reshape(side, side), z[:sq].reshape(side, side)
    a = cp.float32(2.0)
    layout_cases = [
        ("saxpy broadcast row (y[None, :])", lambda: saxpy(a, xs, y[:side][None, :], zs), 2 * sq * 4.0),
        ("saxpy broadcast column (y[:, None])", lambda: saxpy(a, xs, y[:side][:, None], zs), 2 * sq * 4.0),
        ("saxpy all Fortran-ordered (x.T, y.T, z.T)", lambda: saxpy(a, xs.T, ys.T, zs.T), 3 * sq * 4.0),
        ("saxpy one operand transposed (x.T)", lambda: saxpy(a, xs.T, ys, zs), 3 * sq * 4.0),
        ("saxpy every second element (x[::2], y[::2])", lambda: saxpy(a, x[::2], y[::2], z[: n // 2]),
         3 * (n // 2) * 4.0),
    ]
    layout_rows = [(label, nbytes_case / median_ms(fn, args.repeat) / 1e9) for label, fn, nbytes_case in layout_cases]

    # The same reduction by shape as tools/bench/bench.cpp: inner, outer and middle axes,
    # rows of 32 (`side` as above).
    shape_cases = [
        ("reduction axis=1 of a square (inner)", (side, side), 1),
        ("reduction axis=0 of a square (outer)", (side, side), 0),
        ("reduction axis=1 of a cube (middle)", (n // (side * 64), 64, side), 1),
        ("reduction axis=1 of rows of 32 (segments)", (n // 32, 32), 1),
    ]
    shape_rows = []
    for label, shape, axis in shape_cases:
        count = 1
        for extent in shape:
            count *= extent
        view = x[:count].reshape(shape)
        ms = median_ms(lambda: sum_sq(view, axis=axis), args.repeat)
        shape_rows.append((label, count * 4.0 / ms / 1e9))

    small_x = cp.random.uniform(-0.5, 0.5, 1024, dtype=cp.float32)
    small_z = cp.empty_like(small_x)
    calls = 20000
    saxpy(cp.float32(2.0), small_x, small_x, small_z)
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        saxpy(cp.float32(2.0), small_x, small_x, small_z)
    cp.cuda.Device().synchronize()
    call_us = (time.perf_counter() - start) / calls * 1e6

    copy_tbs = 2 * nbytes / copy_ms / 1e9
    print(f"cupy {cp.__version__}, {n} float32")
    print(f"{'measure':44s} {'value':>12s} {'vs copy':>9s}")
    print(f"{'device copy (read+write)':44s} {copy_tbs:9.3f} TB/s {1.0:8.2f}x")
    print(f"{'ElementwiseKernel saxpy':44s} {3 * nbytes / saxpy_ms / 1e9:9.3f} TB/s {3 * nbytes / saxpy_ms / 1e9 / copy_tbs:8.2f}x")
    print(f"{'ReductionKernel sum of squares':44s} {nbytes / reduce_ms / 1e9:9.3f} TB/s {nbytes / reduce_ms / 1e9 / copy_tbs:8.2f}x")
    print(f"{'cupy.sum (CUB)':44s} {nbytes / cub_ms / 1e9:9.3f} TB/s {nbytes / cub_ms / 1e9 / copy_tbs:8.2f}x")
    for label, tbs in layout_rows + shape_rows:
        print(f"{label:44s} {tbs:9.3f} TB/s {tbs / copy_tbs:8.2f}x")
    print(f"{'ElementwiseKernel call, host time per call':44s} {call_us:9.2f} us")


if __name__ == "__main__":
    main()
