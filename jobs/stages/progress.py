"""Progress of a long run on stderr: stage, records done, records/s, ETA; silent off a terminal.

Spark reports progress in tasks, not records, so records done is an estimate: the snapshot's
record count times the share of tasks finished in the stage's Spark jobs. A daemon thread polls
Spark's status tracker once a second and rewrites one line (``\\r``); logs and pipes get nothing.
"""

from __future__ import annotations

import threading
import time

POLL_SECONDS = 1.0


class Progress:
    def __init__(self, spark, stream, *, enabled: bool | None = None):
        self.spark, self.stream = spark, stream
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self.total = 0
        self.label, self.started, self.first_job = "", time.monotonic(), 0
        self.shown = 0.0   # the stage's largest fraction so far: a line never counts backwards
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def stage(self, label: str) -> None:
        """A new pipeline stage begins: its Spark jobs are the ones started from now on."""
        self.label, self.started, self.shown = label, time.monotonic(), 0.0
        if self.enabled:
            jobs = self.spark.sparkContext.statusTracker().getJobIdsForGroup(None)
            self.first_job = max(jobs, default=-1) + 1

    def line(self, done_fraction: float) -> str:
        """The progress line for ``done_fraction`` of the stage's tasks finished. A stage's jobs
        start one after another, each adding tasks, so the fraction can fall; the line keeps the
        largest one shown since the stage began."""
        self.shown = max(self.shown, done_fraction)
        elapsed = max(time.monotonic() - self.started, 1e-9)
        done = int(self.total * self.shown)
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 else None
        eta_text = "?" if eta is None else f"{eta:.0f}s"
        return (f"{self.label}: {done:,}/{self.total:,} records, {rate:,.0f} records/s, "
                f"ETA {eta_text}")

    def _fraction(self) -> float:
        tracker = self.spark.sparkContext.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(None):
            if job_id < self.first_job:
                continue
            job = tracker.getJobInfo(job_id)
            for stage_id in (job.stageIds if job else ()):
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done, total = done + info.numCompletedTasks, total + info.numTasks
        return done / total if total else 0.0

    def _loop(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                text = self.line(self._fraction())
            except Exception:  # the session may be stopping; progress is best effort
                continue
            self.stream.write("\r\x1b[K" + text)
            self.stream.flush()
