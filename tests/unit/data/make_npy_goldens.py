#!/usr/bin/env python3
"""Writes the golden .npy files of tests/unit/test_npy.cpp into tests/unit/data/npy/.

The files are committed; run this again only to change them (any NumPy >= 1.17 writes the
same bytes). test_npy.cpp restates each formula below in C++ and checks every element, so
keep the two in step.

    /usr/bin/python3 tests/unit/data/make_npy_goldens.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")


def save(name, array, version=None):
    path = os.path.join(OUT, name)
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)
    print(f"{name}: {array.dtype.str} {array.shape} fortran={np.isfortran(array)} version={version or 'auto'}")


def main():
    os.makedirs(OUT, exist_ok=True)
    # float32, C order: k * 0.5 - 1 for the flat index k.
    save("float32_c_3x4.npy", (np.arange(12, dtype=np.float32) * 0.5 - 1).reshape(3, 4))
    # int16, Fortran order: element (i, j) is (4 i + j) * 7 - 40.
    save("int16_fortran_3x4.npy", np.asfortranarray(((np.arange(12) * 7 - 40).astype(np.int16)).reshape(3, 4)))
    # int32 2x3x4 in Fortran order: element (i, j, k) is 12 i + 4 j + k - 5.
    save("int32_fortran_2x3x4.npy", np.asfortranarray((np.arange(24, dtype=np.int32) - 5).reshape(2, 3, 4)))
    # complex64: k - 2k i.
    save("complex64_5.npy", (np.arange(5) - 2j * np.arange(5)).astype(np.complex64))
    # bool: k % 3 == 0.
    save("bool_7.npy", np.arange(7) % 3 == 0)
    # float64, big-endian: k / 4.
    save("float64_big_endian_6.npy", (np.arange(6) / 4).astype(">f8"))
    # int32 in a version 2.0 header: 3 k - 5.
    save("int32_v2_10.npy", np.arange(10, dtype=np.int32) * 3 - 5, version=(2, 0))
    # uint16 in a version 3.0 header: 1000 k.
    save("uint16_v3_4.npy", (np.arange(4) * 1000).astype(np.uint16), version=(3, 0))
    # float16: k / 8.
    save("float16_5.npy", np.arange(5, dtype=np.float16) / np.float16(8))
    # A 0-d float64: 2.5.
    save("float64_0d.npy", np.array(2.5))
    # An empty uint8 array of shape (0,).
    save("uint8_empty.npy", np.zeros(0, dtype=np.uint8))


if __name__ == "__main__":
    main()
