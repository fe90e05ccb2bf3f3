#!/usr/bin/env python3
"""Puts kernc_bench's and cupy_bench.py's JSON rows side by side, checks issue 14's targets,
prints one table and writes one combined JSON file.

Usage: python3 tools/bench/report.py KERNC.json [CUPY.json] [--json OUT.json] [--device TEXT]
A missing or empty CUPY.json leaves CuPy's columns empty.
"""
import argparse
import json
import sys

# CuPy's label where it differs from kernc's for the same measure.
CUPY_LABEL = {
    "elementwise saxpy float32 (3 arrays)": "ElementwiseKernel saxpy",
    "reduction sum of squares float32 (read)": "ReductionKernel sum of squares",
    "elementwise call, host time per call": "ElementwiseKernel call, host time per call",
}

# Issue 14's targets, as (kind, number): "min" ratio to the floor, "max" ratio to the floor
# (times), "cub" ratio to CuPy's cupy.sum (CUB), "ms" an absolute bound, "like" within 5% of
# the float32 row named.
TARGETS = {
    "elementwise saxpy float32 (3 arrays)": ("min", 0.95),
    "saxpy broadcast row (y[None, :])": ("min", 0.90),
    "saxpy broadcast column (y[:, None])": ("min", 0.90),
    "saxpy all Fortran-ordered (x.T, y.T, z.T)": ("min", 0.93),
    "saxpy one operand transposed (x.T)": ("min", 0.75),
    "reduction sum of squares float32 (read)": ("cub", 0.97),
    "reduction axis=1 of a square (inner)": ("min", 0.92),
    "reduction axis=0 of a square (outer)": ("min", 0.92),
    "elementwise launch_into of a kept plan, per call": ("max", 1.15),
    # Issue 33: reductions keep pre-packed plans as elementwise calls do.
    "reduction launch_into of a kept plan, per call": ("max", 1.15),
    # Issue 32: the device check on raw addresses (looked up once, then a memo compare).
    "elementwise launch_into of a kept plan, raw-address ArrayRefs, per call": ("max", 1.15),
    "elementwise call, host time per call": ("max", 1.5),
    # The same source compiled by kernc and by NVRTC called directly (tools/bench/bare_nvrtc.hpp).
    # "compile of generated saxpy (NVRTC only)" against a hand-written one-line saxpy is
    # printed too, without a target: it measures the template's extra code, not kernc.
    "compile of generated saxpy, kernc / bare NVRTC": ("max", 1.2),
    "compile of a reduction, kernc / bare NVRTC": ("max", 1.2),
    "warm-disk first call, fresh process (median of 7)": ("ms", 0.3),
    "cold first call of a reduction": ("ms", 150),
}
for name in ("float16", "float64"):
    TARGETS[f"elementwise saxpy {name} (3 arrays)"] = ("like", "elementwise saxpy float32 (3 arrays)")
    TARGETS[f"reduction sum of squares {name} (read)"] = ("like", "reduction sum of squares float32 (read)")
    TARGETS[f"reduction {name} axis=1 (inner)"] = ("like", "reduction axis=1 of a square (inner)")
    TARGETS[f"reduction {name} axis=0 (outer)"] = ("like", "reduction axis=0 of a square (outer)")

# Rows divided by a row of their own rather than their unit's floor.
ROW_FLOOR = {
    "elementwise call, host cost of a burst of 200": "raw cuLaunchKernel, host cost of a burst of 200",
    "kept plan, host cost of a burst of 200": "raw cuLaunchKernel, host cost of a burst of 200",
    "RawKernel call, host cost of a burst of 200": "raw cuLaunchKernel, host cost of a burst of 200",
    "raw cuLaunchKernel, host cost of a burst of 200": "raw cuLaunchKernel, host cost of a burst of 200",
    "compile of generated saxpy (NVRTC only)": "compile of raw saxpy (NVRTC only)",
    "compile of generated saxpy, kernc / bare NVRTC": "compile of generated saxpy, bare NVRTC",
    "compile of a reduction, kernc / bare NVRTC": "compile of a reduction, bare NVRTC",
}

# How far below CuPy's bandwidth a row may be before it counts as below CuPy: the spread
# of one operation (the device copy) timed by kernc_bench and cupy_bench.py in one run.
CUPY_NOISE = 0.01

# The reference each unit is divided by.
FLOOR = {"TB/s": "device copy (read+write)", "us": "raw cuLaunchKernel per call (same driver)"}


def load(path):
    if not path:
        return []
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernc")
    parser.add_argument("cupy", nargs="?")
    parser.add_argument("--json", help="write the combined rows here")
    parser.add_argument("--device", default="")
    args = parser.parse_args()
    kernc_rows = load(args.kernc)
    if not kernc_rows:
        sys.exit(f"report.py: no kernc rows in {args.kernc}")
    cupy = {row["case"]: row for row in load(args.cupy)}
    kernc = {row["case"]: row for row in kernc_rows}

    def ratio(rows, case, floor_case):
        if case not in rows or floor_case not in rows or rows[floor_case]["value"] == 0:
            return None
        return rows[case]["value"] / rows[floor_case]["value"]

    ratios = {}
    for row in kernc_rows:
        case, unit = row["case"], row["unit"]
        if case in ROW_FLOOR:
            ratios[case] = ratio(kernc, case, ROW_FLOOR[case])
        elif unit in FLOOR:
            ratios[case] = ratio(kernc, case, FLOOR[unit])
        else:
            ratios[case] = None

    combined, failures = [], []
    header = f"{'case':50s} {'kernc':>10s} {'ratio':>7s} {'CuPy':>10s} {'ratio':>7s}  {'target':16s}"
    print(f"kernc vs CuPy{' on ' + args.device if args.device else ''}: TB/s against a device copy, "
          "us against a raw cuLaunchKernel, ms as measured")
    print(header)
    print("-" * len(header))
    for row in kernc_rows:
        case, unit, value = row["case"], row["unit"], row["value"]
        k_ratio = ratios[case]
        c_row = cupy.get(CUPY_LABEL.get(case, case))
        c_value = c_row["value"] if c_row else None
        c_ratio = None
        if c_row and unit in FLOOR and case not in ROW_FLOOR:
            c_ratio = ratio(cupy, CUPY_LABEL.get(case, case), FLOOR[unit]) if unit == "TB/s" else None
            if unit == "us" and "raw cuLaunchKernel per call (same driver)" in kernc:
                c_ratio = c_value / kernc["raw cuLaunchKernel per call (same driver)"]["value"]
        target_text, met = "", True
        kind, bound = TARGETS.get(case, (None, None))
        if kind == "min" and k_ratio is not None:
            target_text, met = f">= {bound:.2f}x copy", k_ratio >= bound
        elif kind == "max" and k_ratio is not None:
            target_text, met = f"<= {bound:.2f}x ref", k_ratio <= bound
        elif kind == "ms":
            target_text, met = f"<= {bound} ms", value <= bound
        elif kind == "cub" and "cupy.sum (CUB)" in cupy:
            vs_cub = value / cupy["cupy.sum (CUB)"]["value"]
            target_text, met = f">= {bound:.2f}x CUB ({vs_cub:.3f})", vs_cub >= bound
        elif kind == "like" and ratios.get(bound) and k_ratio is not None:
            target_text, met = f"f32's {ratios[bound]:.2f}x -5%", k_ratio >= 0.95 * ratios[bound]
        # Never below CuPy: higher is better for TB/s, lower for times. Floors (the device
        # copy) are not compared, and a bandwidth counts as below only by more than
        # CUPY_NOISE: the same device copy, timed by both processes in one run, differed by
        # 0.2-0.8% (tools/bench/NOTES.md v22).
        if c_value is not None and unit == "TB/s" and case != FLOOR[unit] and value < c_value * (1 - CUPY_NOISE):
            met = False
            target_text = (target_text + " <CuPy").strip()
        if c_value is not None and unit == "us" and value > c_value:
            met = False
            target_text = (target_text + " >CuPy").strip()
        mark = "" if met else "MISS"
        if not met:
            failures.append(case)
        fmt = "{:10.3f}" if unit != "us" else "{:10.2f}"
        print(f"{case:50s} {fmt.format(value)} {'' if k_ratio is None else f'{k_ratio:6.2f}x':>7s} "
              f"{'' if c_value is None else fmt.format(c_value):>10s} {'' if c_ratio is None else f'{c_ratio:6.2f}x':>7s}  "
              f"{target_text:16s} {mark} {unit}")
        combined.append({"case": case, "unit": unit, "kernc": value, "kernc_ratio": k_ratio, "cupy": c_value,
                         "cupy_ratio": c_ratio, "target": target_text, "met": met})
    extra = [row for label, row in cupy.items() if label == "cupy.sum (CUB)"]
    for row in extra:
        print(f"{'CuPy cupy.sum (CUB): the full reduction floor':44s} {'':>10s} {'':>7s} {row['value']:10.3f}")
        combined.append({"case": "cupy.sum (CUB)", "unit": "TB/s", "cupy": row["value"]})
    print(f"\n{len(failures)} case(s) miss a target or fall below CuPy" + (": " + "; ".join(failures) if failures else ""))
    if not cupy:
        print("(CuPy not measured: its columns are empty)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "rows": combined, "kernc_raw": kernc_rows, "cupy_raw": list(cupy.values())},
                      f, indent=1)


if __name__ == "__main__":
    main()
