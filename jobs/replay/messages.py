"""The words of the violations both replays report: the pure replay (:mod:`jobs.replay.offsets`)
fills them with ``str.format``, the SQL offset replay (:mod:`jobs.stages.offsets`) with
:func:`jobs.stages.frames.format_columns`, so the two cannot drift apart."""

from __future__ import annotations

TX_FLAG = ("producer id {producer_id} with is_transactional={is_transactional}; replayed by "
           "producer id as the coordinator does")
TX_02 = ("COMMIT of producer {producer_id} skips {topic}-{partition}: pending record at offset "
         "{pending} is older than the installed one at {installed}")
