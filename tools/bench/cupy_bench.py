#!/usr/bin/env python3
"""The same measures as kernc_bench, with CuPy, for comparison in the same run.

Usage: python3 tools/bench/cupy_bench.py [--size N] [--repeat R] [--json FILE]
Rows carry the same labels as kernc_bench's where they measure the same thing, so that
tools/bench/report.py can put them side by side.
"""
import argparse
import json
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
    parser.add_argument("--json", help="also write every row to this file as JSON")
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

    # float16 and float64 as kernc_bench: the same bytes per array, fresh random data.
    typed_rows = []
    for dtype, name in ((cp.float16, "float16"), (cp.float64, "float64")):
        count = int(nbytes) // cp.dtype(dtype).itemsize
        xt = cp.random.uniform(-0.5, 0.5, count).astype(dtype)
        yt = cp.random.uniform(-0.5, 0.5, count).astype(dtype)
        zt = cp.empty_like(xt)
        bytes_t = count * cp.dtype(dtype).itemsize
        ms = median_ms(lambda: saxpy(dtype(2.0), xt, yt, zt), args.repeat)
        typed_rows.append((f"elementwise saxpy {name} (3 arrays)", 3 * bytes_t / ms / 1e9))
        ms = median_ms(lambda: sum_sq(xt), args.repeat)
        typed_rows.append((f"reduction sum of squares {name} (read)", bytes_t / ms / 1e9))
        cols = 2 * side if dtype == cp.float16 else side // 2
        view = xt[: side * cols].reshape(side, cols)
        for axis, where in ((1, "inner"), (0, "outer")):
            ms = median_ms(lambda: sum_sq(view, axis=axis), args.repeat)
            typed_rows.append((f"reduction {name} axis={axis} ({where})", side * cols * cp.dtype(dtype).itemsize / ms / 1e9))
        del xt, yt, zt, view

    rows = [("device copy (read+write)", copy_tbs, "TB/s"),
            ("ElementwiseKernel saxpy", 3 * nbytes / saxpy_ms / 1e9, "TB/s"),
            ("ReductionKernel sum of squares", nbytes / reduce_ms / 1e9, "TB/s"),
            ("cupy.sum (CUB)", nbytes / cub_ms / 1e9, "TB/s")]
    rows += [(label, tbs, "TB/s") for label, tbs in layout_rows + shape_rows + typed_rows]
    rows.append(("ElementwiseKernel call, host time per call", call_us, "us"))

    print(f"cupy {cp.__version__}, {n} float32")
    print(f"{'measure':44s} {'value':>12s} {'vs copy':>9s}")
    for label, value, unit in rows:
        ratio = f"{value / copy_tbs:8.2f}x" if unit == "TB/s" else ""
        print(f"{label:44s} {value:9.3f} {unit} {ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"implementation": "cupy", "case": label, "value": value, "unit": unit}
                       for label, value, unit in rows], f, indent=1)


if __name__ == "__main__":
    main()
