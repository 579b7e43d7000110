#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the small tensor files under tests/data/tensors used by tst_tensor.

Run with Debian's /usr/bin/python3 (torch 1.13, numpy):
    /usr/bin/python3 tests/data/gen/make_tensors.py

Besides the .pt/.npy files it writes expected.txt, one line per file, so the C++ test
compares against Python's own view of each tensor rather than against itself:

    name|torch dtype|shape (comma separated, empty for 0-d)|C-order little-endian bytes (hex)|values

values are Python float reprs (or int reprs for integer dtypes), comma separated, which
strtod reads back exactly ("nan", "inf", "-inf", "-0.0" included).
"""
import os
import sys

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensors")

lines = []


def bits16(values):
    return torch.tensor(values, dtype=torch.int16)


def c_bytes(t):
    """Raw C-order little-endian bytes as torch holds them."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def values_text(t):
    flat = t.contiguous().reshape(-1)
    if t.dtype.is_floating_point:
        return ",".join(repr(float(v)) for v in flat.tolist())
    if t.dtype == torch.bool:
        return ",".join("1" if v else "0" for v in flat.tolist())
    return ",".join(repr(int(v)) for v in flat.tolist())


def record(name, t):
    shape = ",".join(str(d) for d in t.shape)
    lines.append("|".join([name, str(t.dtype), shape, c_bytes(t).hex(), values_text(t)]))


def save_pt(name, t):
    torch.save(t, os.path.join(OUT, name))
    record(name, t)


def save_npy(name, array, version=None):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version, allow_pickle=False)
    # np.ascontiguousarray would turn a 0-d array into shape (1,), so copy instead.
    record(name, torch.from_numpy(array.astype(array.dtype.newbyteorder("="), order="C", copy=True)))


def main():
    os.makedirs(OUT, exist_ok=True)
    for entry in os.listdir(OUT):
        os.remove(os.path.join(OUT, entry))

    # float16 / bfloat16: zeros of both signs, smallest and largest subnormal, smallest normal,
    # max finite, infinities, a quiet NaN and one with a payload, and ordinary values.
    half_bits = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x3C00, 0xC000,
                 0x3555]
    bf16_bits = [0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x3F80, 0xC000,
                 0x3EAB]
    save_pt("f16.pt", bits16([b - 0x10000 if b >= 0x8000 else b for b in half_bits]).view(torch.float16))
    save_pt("bf16.pt", bits16([b - 0x10000 if b >= 0x8000 else b for b in bf16_bits]).view(torch.bfloat16))
    save_pt("f32.pt", torch.tensor([[1.5, -2.25, 3.0e-39], [float("inf"), -0.0, 123456.789]], dtype=torch.float32))
    save_pt("f64.pt", torch.tensor([0.1, -1e300, 5e-324, float("-inf")], dtype=torch.float64))
    save_pt("bool.pt", torch.tensor([True, False, True, True, False]))
    save_pt("u8.pt", torch.tensor([0, 1, 127, 128, 255], dtype=torch.uint8))
    save_pt("i8.pt", torch.tensor([-128, -1, 0, 1, 127], dtype=torch.int8))
    save_pt("i16.pt", torch.tensor([-32768, -2, 0, 300, 32767], dtype=torch.int16))
    save_pt("i32.pt", torch.tensor([[-2147483648, 2147483647], [7, -7]], dtype=torch.int32))
    save_pt("i64.pt", torch.tensor([-(2 ** 53), 2 ** 53, 0, 8, -9223372036854775808], dtype=torch.int64))
    # A transposed view: torch.save keeps its strides (1, 3), so the reader must make it contiguous.
    save_pt("transposed.pt", torch.arange(6, dtype=torch.float32).reshape(2, 3).t())
    # A slice with a storage offset and a step.
    save_pt("sliced.pt", torch.arange(12, dtype=torch.int32).reshape(3, 4)[1:, ::2])
    save_pt("scalar.pt", torch.tensor(2.5, dtype=torch.float32))
    save_pt("empty.pt", torch.zeros(0, 3, dtype=torch.float32))
    # Not a tensor: a dict of tensors, and the legacy (pre-1.6) non-zip format.
    # Two entries, because LibTorch 1.13 cannot unpickle the SETITEM opcode Python uses for one.
    torch.save({"a": torch.ones(2), "b": torch.zeros(1)}, os.path.join(OUT, "dict.pt"))
    torch.save(torch.ones(2), os.path.join(OUT, "legacy.pt"), _use_new_zipfile_serialization=False)

    save_npy("f32.npy", np.array([[1.5, -2.25, 3.0e-39], [np.inf, -0.0, np.nan]], dtype="<f4"))
    save_npy("f16.npy", np.array(half_bits, dtype="<u2").view("<f2"))
    save_npy("f64.npy", np.array([0.1, -1e300, 5e-324], dtype="<f8"))
    save_npy("bool.npy", np.array([True, False, True]))
    save_npy("u8.npy", np.array([0, 200, 255], dtype="u1"))
    save_npy("i8.npy", np.array([-128, 5, 127], dtype="i1"))
    save_npy("i16.npy", np.array([-32768, 300, 32767], dtype="<i2"))
    save_npy("i32.npy", np.array([-2147483648, 1, 2147483647], dtype="<i4"))
    save_npy("i64.npy", np.array([-9223372036854775808, 1, 9223372036854775807], dtype="<i8"))
    save_npy("f32_be.npy", np.array([[1.0, -2.5], [1e-40, np.inf]], dtype=">f4"))
    save_npy("i64_be.npy", np.array([1, -2, 2 ** 40], dtype=">i8"))
    save_npy("f16_be.npy", np.array([0x3C00, 0x8001, 0x7BFF], dtype="<u2").view("<f2").astype(">f2"))
    save_npy("fortran.npy", np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)))
    save_npy("scalar.npy", np.array(7.25, dtype="<f8"))
    save_npy("empty.npy", np.zeros((2, 0), dtype="<f4"))
    save_npy("v2.npy", np.array([1, 2, 3], dtype="<i2"), version=(2, 0))
    save_npy("v3.npy", np.array([4.0, 5.0], dtype="<f4"), version=(3, 0))
    # Unsupported element type (complex), for the error path.
    np.save(os.path.join(OUT, "complex.npy"), np.array([1 + 2j], dtype="<c8"))

    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(os.path.join(OUT, e)) for e in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
