"""The release x record type x version matrix of docs/downgrade.md, from the releases themselves.

Each cell is what one release's coordinator does with a partition holding a single record of
that type, value version and layout (every field at its schema default, group ``g``, member
``m``, topic ``t``), or its tombstone: ``loads``, ``skipped`` (unknown type: WARN and skip),
``fails: read`` (its serde throws: unknown version, a layout it misreads) or ``fails: replay``
(its replay throws, e.g. a record that needs a group that does not exist yet). A version one
above the newest any release knows stands for a future writer.

    .venv/bin/python tests/differential/matrix.py --write docs/downgrade.md    # from the oracle

rewrites the table between the markers in the doc from oracle runs; ``test_differential.py``
checks that the audit's model renders the same table and that the doc holds it.
"""

from __future__ import annotations

import argparse
import struct
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from decoders.codec import encode_key, encode_value  # noqa: E402
from decoders.log.writer import encode_batch, write_segment  # noqa: E402
from decoders.records_catalog import RECORD_TYPES  # noqa: E402
from differential.harness import audit_verdict  # noqa: E402
from jobs.audits.java_releases import RELEASES  # noqa: E402

BEGIN, END = "<!-- matrix:begin (tests/differential/matrix.py) -->", "<!-- matrix:end -->"
UNKNOWN_TYPE = 25
_KEY_VALUES = {"group": "g", "groupId": "g", "memberId": "m", "topic": "t", "regularExpression": "t.*"}


def rows() -> list[tuple[str, bytes, bytes | None]]:
    """``(label, key, value)`` of every cell row."""
    out = []
    for t, rt in sorted(RECORD_TYPES.items()):
        key = encode_key(t, {k: _KEY_VALUES.get(k, v) for k, v in rt.key.default_dict(0).items()})
        for v in rt.versions:
            for layout in rt.layouts():
                value = encode_value(t, v, layout.value.default_dict(v), layout=layout.name)
                suffix = "" if layout.name == rt.default_layout else f" ({layout.name} layout)"
                out.append((f"{t} {rt.name} v{v}{suffix}", key, value))
        top = max(rt.versions)
        future = encode_value(t, top, rt.value.default_dict(top))
        out.append((f"{t} {rt.name} v{top + 1} (future)", key, struct.pack(">h", top + 1) + future[2:]))
        out.append((f"{t} {rt.name} tombstone", key, None))
    out.append((f"{UNKNOWN_TYPE} (a type no release knows)", struct.pack(">h", UNKNOWN_TYPE) + b"\x00\x01g",
                b"\x00\x00\x00"))
    return out


def write_row(directory: Path, key: bytes, value: bytes | None) -> Path:
    part = directory / "__consumer_offsets-0"
    part.mkdir(parents=True, exist_ok=True)
    write_segment(part / f"{0:020d}.log", [encode_batch([(key, value, 1_700_000_000_000)], base_offset=0)])
    return part


def cell(verdict: dict) -> str:
    if not verdict["loaded"]:
        return "fails: read" if verdict["failure_stage"] == "deserialize" else "fails: replay"
    return "skipped" if verdict["skipped"] else "loads"


def model_matrix(scratch: Path) -> dict[str, dict[str, str]]:
    out = {}
    for i, (label, key, value) in enumerate(rows()):
        part = write_row(scratch / f"m{i}", key, value)
        out[label] = {v: cell(audit_verdict(part, r)) for v, r in RELEASES.items()}
    return out


def oracle_matrix(scratch: Path) -> dict[str, dict[str, str]]:
    from differential.harness import oracle_verdict
    from oracle.runner import Oracle

    dirs = [(label, write_row(scratch / f"o{i}", key, value)) for i, (label, key, value) in enumerate(rows())]
    out: dict[str, dict[str, str]] = {label: {} for label, _ in dirs}
    for version in RELEASES:
        with Oracle(version) as oracle:
            for label, part in dirs:
                out[label][version] = cell(oracle_verdict(oracle.load(part)["partitions"][0]))
    return out


def render(matrix: dict[str, dict[str, str]]) -> str:
    releases = list(RELEASES)
    lines = [BEGIN, "", "| record (type, value version, layout) | " + " | ".join(releases) + " |",
             "|---|" + "---|" * len(releases)]
    lines += [f"| {label} | " + " | ".join(cells[r] for r in releases) + " |"
              for label, cells in matrix.items()]
    return "\n".join([*lines, "", END])


def table_in(doc: str) -> str:
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    return doc[start:end]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", metavar="DOC", help="replace the table between the markers in DOC")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        table = render(oracle_matrix(Path(tmp)))
    if not args.write:
        print(table)
        return 0
    doc = Path(args.write).read_text()
    Path(args.write).write_text(doc.replace(table_in(doc), table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
