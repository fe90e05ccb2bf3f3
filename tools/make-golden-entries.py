#!/usr/bin/env python3
"""Writes cache/golden/*.kce from cache/FORMAT.md, independently of kernc's C++ writer.

The valid entry holds a small hand-written PTX payload; the others damage it in the ways
the format says a reader must reject. tests/unit/test_cache_golden.cpp reads them.
"""
import hashlib
import json
import os
import struct

KEY = "0123456789abcdef" * 4 + "-fedcba9876543210"  # format 2: <program>-<compiler>
KEY_V1 = "0123456789abcdef" * 4  # format 1: a bare SHA-256
PAYLOAD = b""".version 9.0
.target sm_90
.address_size 64

.visible .entry golden_kernel(.param .u64 golden_kernel_param_0)
{
\tret;
}
"""
METADATA = {
    "key": KEY,
    "backend": "cuda",
    "target": "compute_90",
    "binary_kind": "ptx",
    "compiler": "nvrtc 13.0",
    "compiler_library": "/usr/local/cuda/lib64/libnvrtc.so.13",
    "compiler_reported": "nvrtc 13.0 sm_75 sm_80 sm_90",
    "compiler_tag": "fedcba9876543210",
    "flags": ["-arch=compute_90", "-std=c++17"],
    "lowered_names": {"golden_kernel<float>": "_Z13golden_kernelIfEvPT_"},
    "log": "golden log line",
    "compile_ms": 12.5,
    "created": "2026-11-22T00:00:00Z",
}


# Format 1's metadata named the compiler by a hash of its library file.
METADATA_V1 = {k: v for k, v in METADATA.items() if k not in ("compiler_reported", "compiler_tag")}
METADATA_V1["key"] = KEY_V1
METADATA_V1["compiler_library_sha256"] = "ab" * 32


def entry(version=2, magic=b"KERNCENT", metadata=METADATA, payload=PAYLOAD):
    meta = json.dumps(metadata, sort_keys=True).encode()
    body = meta + payload
    header = magic + struct.pack("<IIQ", version, len(meta), len(payload)) + hashlib.sha256(body).digest()
    assert len(header) == 56
    return header + body


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cache", "golden")
    os.makedirs(out, exist_ok=True)
    valid = entry()
    flipped = bytearray(valid)
    flipped[-20] ^= 0x01
    valid_v1 = entry(version=1, metadata=METADATA_V1)
    flipped_v1 = bytearray(valid_v1)
    flipped_v1[-20] ^= 0x01
    files = {
        "v2_valid.kce": valid,
        "v2_truncated.kce": valid[:-7],
        "v2_flipped_payload.kce": bytes(flipped),
        "v3_future_version.kce": entry(version=3),
        "foreign_magic.kce": entry(magic=b"NOTKERNC"),
        # Entries of format 1, which a format 2 reader must refuse by their version.
        "v1_valid.kce": valid_v1,
        "v1_truncated.kce": valid_v1[:-7],
        "v1_flipped_payload.kce": bytes(flipped_v1),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} golden entries to {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
