#!/usr/bin/env python3
"""The NumPy side of tools/bench/host-run, and its report.

  host_bench.py numpy [--repeat R] [--scale S]   times NumPy, prints one JSON object
  host_bench.py merge FILE.json...                   the per-key medians of several rounds
  host_bench.py report ONE.json ALL.json NUMPY.json   one table, the targets checked

What NumPy runs (single-threaded: its ufuncs and reductions are; the BLAS/OpenMP pools are
set to one thread anyway), each the median of R runs after one untimed run:
  saxpy    np.multiply(x, a, out=z); np.add(z, y, out=z)   (float32, z preallocated)
  sum      m.sum(), m.sum(axis=0), m.sum(axis=1)           (float32 8192^2, pairwise sums)
tools/bench/host-run takes turns, round after round (kernc 1 worker, all workers, NumPy):
the lent machines are shared, and a neighbour's load moves a one-core time by 30% from
minute to minute, so the table gives the median of the rounds' medians and the spread of
the one-core ratio to NumPy over the rounds.
A case whose workers do not scale in proportion is judged against what the memory gives:
the "plain threads" rows, STREAM-style loops at the same worker count over the same bytes.
"""
import json
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def median_ms(repeat, body):
    body()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        body()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return samples[len(samples) // 2]


def numpy_main(args):
    import numpy as np
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 7
    scale = int(args[args.index("--scale") + 1]) if "--scale" in args else 1
    n = (1 << 26) // scale
    side = 8192 // (8 if scale > 1 else 1)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = x.copy()
    z = np.empty_like(x)
    a = np.float32(2.0)
    m = rng.uniform(-1, 1, (side, side)).astype(np.float32)

    def saxpy():
        np.multiply(x, a, out=z)
        np.add(z, y, out=z)

    print(json.dumps({
        "numpy": np.__version__, "repeat": repeat, "n": n, "side": side,
        "saxpy_ms": median_ms(repeat, saxpy),
        "sum_full_ms": median_ms(repeat, lambda: m.sum()),
        "sum_axis0_ms": median_ms(repeat, lambda: m.sum(axis=0)),
        "sum_axis1_ms": median_ms(repeat, lambda: m.sum(axis=1)),
    }))


def merge_main(paths):
    rounds = [json.load(open(path)) for path in paths]
    merged = dict(rounds[0])
    for key, value in rounds[0].items():
        if isinstance(value, float):
            values = sorted(r[key] for r in rounds)
            merged[key] = values[len(values) // 2]
    merged["rounds"] = rounds
    print(json.dumps(merged))


def round_ratios(numpy, one, key):
    pairs = zip(numpy.get("rounds", [numpy]), one.get("rounds", [one]))
    return [n[key] / o[key] for n, o in pairs]


def report_main(args):
    one, every, numpy = (json.load(open(path)) for path in args[:3])
    workers = every["workers"]
    rounds = len(one.get("rounds", [one]))
    print(f"host backend, {one['target']}; kernc 1 worker vs {workers} workers vs NumPy {numpy['numpy']} "
          f"(medians of {one['repeat']}, median of {rounds} rounds taken in turn; float32)")
    header = f"{'case':<34}{'kernc 1T ms':>12}{f'kernc {workers}T ms':>13}{'NumPy ms':>10}" \
             f"{'NumPy/1T':>10}{'NumPy/allT':>11}  target"
    print(header)
    print("-" * len(header))
    met_all = True
    for key, label, stream, mb in (
            ("saxpy_ms", f"saxpy 2^{one['n'].bit_length() - 1}", "stream_triad_ms", 12 * one["n"] / 1e6),
            ("sum_full_ms", f"sum {one['side']}^2 full", "stream_read_ms", 4 * one["side"] ** 2 / 1e6),
            ("sum_axis0_ms", f"sum {one['side']}^2 axis 0", "stream_read_ms", 4 * one["side"] ** 2 / 1e6),
            ("sum_axis1_ms", f"sum {one['side']}^2 axis 1", "stream_read_ms", 4 * one["side"] ** 2 / 1e6)):
        k1, kn, np_ms = one[key], every[key], numpy[key]
        speed1, speedn = np_ms / k1, np_ms / kn
        # 1 worker at least NumPy's speed; all workers faster in proportion: 0.8 per worker,
        # or, where the memory cannot give that, at least 0.8 of what a STREAM loop on plain
        # threads moves at the same worker count over the same bytes (host_stream.hpp).
        memory_share = every[stream] / kn
        proportional = workers == 1 or k1 / kn >= 0.8 * workers
        ok = speed1 >= 1.0 and speedn >= 1.0 and (proportional or memory_share >= 0.8)
        met_all &= ok
        why = f"{workers}T {k1 / kn:.2f}x 1T" if proportional else \
            f"{workers}T {k1 / kn:.2f}x 1T; {mb / kn:.0f} GB/s, {memory_share:.2f} of {stream[:-3]}"
        ratios = round_ratios(numpy, one, key)
        spread = f"; NumPy/1T over the rounds {min(ratios):.2f}-{max(ratios):.2f}x" if len(ratios) > 1 else ""
        print(f"{label:<34}{k1:>12.2f}{kn:>13.2f}{np_ms:>10.2f}{speed1:>10.2f}x{speedn:>10.2f}x  "
              f"{'met' if ok else 'MISSED'} ({why}{spread})")
    for stream, mb in (("stream_read_ms", 4 * one["side"] ** 2 / 1e6), ("stream_triad_ms", 12 * one["n"] / 1e6)):
        label = f"plain threads: {stream[7:-3]}"
        print(f"{label:<34}{one[stream]:>12.2f}{every[stream]:>13.2f}{'':>10}{'':>10}{'':>11}  "
              f"{mb / one[stream]:.0f} / {mb / every[stream]:.0f} GB/s ({one[stream] / every[stream]:.2f}x)")
    label = "a launch's own cost (1 block/worker)"
    print(f"{label:<34}{one['tiny_launch_ms'] * 1e3:>10.1f}us{every['tiny_launch_ms'] * 1e3:>11.1f}us")
    ratio = one["raw_block_sum_ms"] / one["raw_as_reduction_ms"]
    raw_label = f"raw __syncthreads sum 2^{one['raw_n'].bit_length() - 1}"
    ok = ratio <= 100
    met_all &= ok
    print(f"{raw_label:<34}"
          f"{one['raw_block_sum_ms']:>12.2f}{every['raw_block_sum_ms']:>13.2f}{'':>10}{'':>10}{'':>11}  "
          f"{'met' if ok else 'MISSED'} ({ratio:.1f}x the ReductionKernel's "
          f"{one['raw_as_reduction_ms']:.2f} ms; target <= 100x)")
    for what in ("saxpy", "sum"):
        host, nvrtc = one[f"host_compile_{what}_ms"], one[f"nvrtc_compile_{what}_ms"]
        versus = f"NVRTC sm_90 {nvrtc:.0f} ms ({host / nvrtc:.1f}x)" if nvrtc > 0 else "NVRTC unavailable"
        print(f"{f'first-call compile, {what}':<34}{host:>12.0f}{'':>13}{'':>10}{'':>10}{'':>11}  g++ vs {versus}")
    print("all targets met" if met_all else "some targets MISSED")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "numpy":
        numpy_main(sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == "merge":
        merge_main(sys.argv[2:])
    elif len(sys.argv) > 4 and sys.argv[1] == "report":
        sys.exit(report_main(sys.argv[2:]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
