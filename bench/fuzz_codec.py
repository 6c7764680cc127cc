"""Mutation fuzzer for the record codec: corrupt input must only ever raise DecodeError.

Corpus: one seeded random valid record per (type, version, layout) plus a few hand-picked
shapes; each input gets 1-4 mutations (bit flips, boundary bytes, forged lengths, inserts,
deletes, truncation, splices). Checks per input:

* decode raises nothing but ``DecodeError`` subclasses;
* no single decode takes longer than ``HANG_SECONDS``;
* a decoded record re-encodes, and the re-encoding decodes to the same fields (canonical form);
* on a sample, peak Python allocation stays linear in the input size (no length-driven allocation).

Usage: ``python bench/fuzz_codec.py [N] [SEED]`` (N defaults to ``OFFSETLAKE_FUZZ_N`` or 20000).
"""

from __future__ import annotations

import os
import random
import struct
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decoders import DecodeError, decode_record, encode_key, encode_record, encode_value  # noqa: E402
from decoders.kafka_json import key_json, value_json  # noqa: E402
from decoders.records_catalog import RECORD_TYPES  # noqa: E402
from decoders.schema import Field, Struct  # noqa: E402

HANG_SECONDS = 1.0  # generous: CI boxes stall; a real hang (unbounded loop) is far beyond
ALLOC_SAMPLE = 3000
ALLOC_PER_BYTE = 400  # a dict per 4-byte array element is the worst ratio the schemas allow
ALLOC_SLACK = 64 * 1024
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def random_field(f: Field, version: int, rng: random.Random, elem: bool = False):
    if not elem and version in f.nullable and rng.random() < 0.2:
        return None
    if f.is_array and not elem:
        return [random_field(f, version, rng, True) for _ in range(rng.randrange(3))]
    if f.struct is not None:
        return random_struct(f.struct, version, rng)
    kind = f.elem_type
    if kind in _BITS:
        b = _BITS[kind]
        return rng.choice([0, -1, 1, rng.randrange(-(1 << (b - 1)), 1 << (b - 1))])
    if kind in ("uint16", "uint32"):
        return rng.randrange(1 << (16 if kind == "uint16" else 32))
    if kind == "string":
        return rng.choice(["", "g", "consumer", "grüppe", "range", "t" * rng.randrange(20)])
    if kind == "bytes":
        return rng.randbytes(rng.randrange(6))
    if kind == "uuid":
        return uuid.UUID(int=rng.getrandbits(128)) if rng.random() < 0.7 else uuid.UUID(int=0)
    if kind == "bool":
        return rng.random() < 0.5
    return rng.random()


def random_struct(s: Struct, version: int, rng: random.Random) -> dict:
    return {f.json_name: random_field(f, version, rng) for f in s.fields_at(version)}


def corpus(rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    items = []
    for rid, rt in RECORD_TYPES.items():
        for v in rt.versions:
            for lay in rt.layouts():
                for _ in range(3):
                    key = encode_key(rid, random_struct(rt.key, 0, rng))
                    items.append((key, encode_value(rid, v, random_struct(lay.value, v, rng), layout=lay.name)))
    sub = bytes.fromhex("000300000001" "0003666f6f" "ffffffff" "00000001" "0003666f6f" "0000000100000000"
                        "00000000" "00047261636b")
    member = {"memberId": "m", "groupInstanceId": None, "clientId": "c", "clientHost": "h",
              "rebalanceTimeout": 1, "sessionTimeout": 2, "subscription": sub, "assignment": sub}
    for v in range(5):
        items.append((encode_key(2, {"group": "g"}), encode_value(2, v, {
            "protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m",
            "members": [member, member]})))
    return items


def mutate(data: bytes, rng: random.Random, pool: list) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[rng.randrange(len(b))] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF])
        elif op == 2:
            b[pos:pos] = rng.choice([struct.pack(">i", rng.choice([-2, -1, 0x7FFFFFFF, 1 << 20])),
                                     struct.pack(">h", rng.choice([-2, -1, 0x7FFF])),
                                     b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x80", rng.randbytes(3)])
        elif op == 3 and b:
            del b[pos:pos + rng.randint(1, 8)]
        elif op == 4:
            del b[pos:]
        elif op == 5:
            other = rng.choice(pool)[1] or b""
            start = rng.randrange(len(other) + 1)
            b[pos:pos] = other[start:start + rng.randint(1, 16)]
        elif op == 6 and len(b) > 2:
            b[pos:pos] = b[rng.randrange(len(b)):][:rng.randint(1, 8)]
        else:
            b = bytearray(rng.randbytes(rng.randrange(40)))
    return bytes(b)


def check_one(key: bytes, value: bytes | None, stats: dict) -> None:
    start = time.perf_counter()
    try:
        rec = decode_record(key, value)
    except DecodeError as e:
        stats["errors"][type(e).__name__] = stats["errors"].get(type(e).__name__, 0) + 1
        return
    finally:
        elapsed = time.perf_counter() - start
        stats["max_seconds"] = max(stats["max_seconds"], elapsed)
        if elapsed > HANG_SECONDS:
            raise AssertionError(f"decode took {elapsed:.3f}s: {key.hex()} {value and value.hex()}")
    stats["decoded"] += 1
    k2, v2 = encode_record(rec)
    key_json(rec), value_json(rec)
    again = decode_record(k2, v2)
    if hasattr(rec, "value_version"):
        same = (again.key, again.value, again.unknown_tags, again.layout) == (
            rec.key, rec.value, rec.unknown_tags, rec.layout)
        # An older layout's canonical bytes may also be a valid current-layout value (the ids were
        # reused), and a current read with trailing bytes re-encodes without them, which may then
        # fit an older layout exactly; only then may the layout change.
        ambiguous = rec.layout.startswith("historical/") or rec.trailing_bytes > 0
        shadowed = ambiguous and again.layout != rec.layout
        if not same and not shadowed:
            raise AssertionError(f"re-encoding changed the record: {key.hex()} {value and value.hex()}")


def run(n: int, seed: int = 1) -> dict:
    rng = random.Random(seed)
    pool = corpus(rng)
    stats = {"inputs": 0, "decoded": 0, "errors": {}, "max_seconds": 0.0, "max_alloc_ratio": 0.0}
    for key, value in pool:  # warm caches (struct formats, lazily built objects) before measuring
        check_one(key, value, stats)
    for i in range(n):
        key, value = rng.choice(pool)
        r = rng.random()
        if r < 0.15:
            key = mutate(key, rng, pool)
        elif r < 0.2:
            value = None
        else:
            value = mutate(value, rng, pool)
        sample = i < ALLOC_SAMPLE
        if sample:
            tracemalloc.start()
            tracemalloc.reset_peak()
        try:
            check_one(key, value, stats)
        except DecodeError:
            pass
        except AssertionError:
            raise
        except Exception as e:  # the point of the fuzzer: anything else is a bug
            raise AssertionError(f"{type(e).__name__}: {e} on key={key.hex()} value={value and value.hex()}") from e
        if sample:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            size = len(key) + len(value or b"")
            stats["max_alloc_peak"] = max(stats.get("max_alloc_peak", 0), peak)
            stats["max_alloc_ratio"] = max(stats["max_alloc_ratio"], peak / max(size, 1))
            if peak > ALLOC_PER_BYTE * size + ALLOC_SLACK:
                raise AssertionError(f"allocated {peak} bytes for a {size}-byte input: {value and value.hex()}")
        stats["inputs"] += 1
    return stats


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("OFFSETLAKE_FUZZ_N", "20000"))
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    start = time.perf_counter()
    stats = run(n, seed)
    stats["wall_seconds"] = round(time.perf_counter() - start, 1)
    print(stats)


if __name__ == "__main__":
    main()
