"""Fuzz: mutated keys/values only ever raise DecodeError subclasses, never hang, never allocate
more than linearly in the input size, and decoded records re-encode canonically.

``OFFSETLAKE_FUZZ_N`` sets the number of inputs (default 20000; the release check runs 1,000,000
via ``python bench/fuzz_codec.py 1000000``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "fuzz_codec", Path(__file__).resolve().parents[1] / "bench" / "fuzz_codec.py")
fuzz_codec = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fuzz_codec)


def test_fuzz_mutated_inputs():
    n = int(os.environ.get("OFFSETLAKE_FUZZ_N", "20000"))
    stats = fuzz_codec.run(n, seed=int(os.environ.get("OFFSETLAKE_FUZZ_SEED", "1")))
    assert stats["inputs"] == n
    # the mutations must reach both outcomes, or the fuzzer is not exercising the decoder
    assert stats["decoded"] > n // 20 and sum(stats["errors"].values()) > n // 4
    assert {"TruncatedError", "InvalidLengthError"} <= set(stats["errors"])
