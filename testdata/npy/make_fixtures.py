#!/usr/bin/env python3
"""Writes the .npy fixtures of //tests/tools:npy_test with real numpy (np.save / write_array).

Run from anywhere: python3 testdata/npy/make_fixtures.py. The output is deterministic for a given
numpy version (the committed files were made with numpy 1.24.2). The values match kFixtureValues in
tests/tools/npy_test.cc: every dtype holds six elements of shape (2, 3).
"""
import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

FLOAT_VALUES = [-1.5, 0.0, 0.25, 2.0, 1000.0, -3.75]
BOOL_VALUES = [True, False, True, True, False, False]


def values(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return FLOAT_VALUES
    if dtype.kind == "b":
        return BOOL_VALUES
    info = np.iinfo(dtype)
    if dtype.kind == "i":
        return [info.min, -1, 0, 1, 100, info.max]
    return [0, 1, 2, 100, info.max - 1, info.max]


def save(name, array):
    np.save(os.path.join(HERE, name), array, allow_pickle=False)


def write_version(name, array, version):
    with open(os.path.join(HERE, name), "wb") as f:
        np.lib.format.write_array(f, array, version=version, allow_pickle=False)


def main():
    for dtype in ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
                  "uint8", "uint16", "uint32", "uint64", "bool"]:
        save(dtype + ".npy", np.array(values(dtype), dtype=dtype).reshape(2, 3))
    save("scalar_float64.npy", np.array(3.25, dtype="float64"))
    save("vector_int32.npy", np.arange(5, dtype="int32"))
    save("empty_float32.npy", np.zeros((0, 3), dtype="float32"))
    save("rank5_uint8.npy", np.arange(6, dtype="uint8").reshape(1, 2, 1, 3, 1))
    a = np.arange(6, dtype="float32").reshape(2, 3)
    write_version("v2_float32.npy", a, (2, 0))
    write_version("v3_float32.npy", a, (3, 0))
    save("fortran_float32.npy", np.asfortranarray(a))
    save("bigendian_float32.npy", a.astype(">f4"))
    save("complex64.npy", a.astype("complex64"))
    save("structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))


if __name__ == "__main__":
    main()
