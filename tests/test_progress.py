"""Progress lines of long runs: stage, records done, rate and ETA; nothing off a terminal."""

from __future__ import annotations

import io
import re

from jobs.stages.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_the_stream_is_not_a_terminal():
    stream = io.StringIO()
    with Progress(None, stream) as progress:
        progress.stage("decode")
    assert not progress.enabled and stream.getvalue() == ""


def test_enabled_on_a_terminal_and_the_line_names_stage_records_rate_and_eta():
    progress = Progress(None, _Terminal(), enabled=None)
    progress.total = 2_000_000
    progress.label = "replay: offsets (SQL)"
    progress.started -= 10  # ten seconds into the stage
    line = progress.line(0.25)
    assert progress.enabled
    assert line.startswith("replay: offsets (SQL): 500,000/2,000,000 records, ")
    rate = int(re.search(r"([\d,]+) records/s", line).group(1).replace(",", ""))
    eta = int(re.search(r"ETA (\d+)s", line).group(1))
    assert 45_000 <= rate <= 50_000 and 29 <= eta <= 34


def test_records_done_never_go_back_within_a_stage_and_start_again_with_the_next():
    progress = Progress(None, io.StringIO(), enabled=False)
    progress.total = 182

    def done(line: str) -> int:
        return int(re.match(r"[^:]+(?:: [^:]+)?: (\d+)/182", line).group(1))

    progress.stage("replay: offsets (SQL)")
    # a second job of the stage starts: more tasks, a smaller share of them finished
    assert [done(progress.line(f)) for f in (0.5, 1.0, 0.8, 0.6, 0.9)] == [91, 182, 182, 182, 182]
    progress.stage("replay: writing tables")
    assert done(progress.line(0.25)) == 45
