-- "Now" of each snapshot, as the views that forecast or measure idleness count it: the newest
-- record timestamp of its log (`raw_records`, control records included). One row per snapshot.
-- offset_expiry and ghost_groups read it; the audit and the report hold it computed once
-- (jobs.lake.views.MATERIALIZED).
select snapshot_id, max(timestamp) as snapshot_ms
from raw_records
group by snapshot_id
