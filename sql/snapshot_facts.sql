-- One row per snapshot: how many records, of which kind, from which partitions and time range,
-- and how they reconcile (raw data records = decoded records + decode quarantine).
with raw_facts as (
    select
        snapshot_id,
        count(*) as raw_record_count,
        count_if(is_control) as control_record_count,
        count_if(not is_control) as data_record_count,
        count(distinct partition) as partition_count,
        count(distinct source_file) as source_file_count,
        min(case when timestamp >= 0 then timestamp end) as first_ms,
        max(timestamp) as last_ms
    from raw_records
    group by snapshot_id
),

record_facts as (
    select snapshot_id, count(*) as decoded_record_count, count(distinct group_id) as group_id_count
    from records
    group by snapshot_id
),

quarantine_facts as (
    select
        snapshot_id,
        count_if(stage = 'decode') as decode_quarantine_count,
        count_if(stage <> 'decode') as unreadable_unit_count
    from quarantine
    group by snapshot_id
)

select
    r.snapshot_id,
    r.raw_record_count,
    r.data_record_count,
    r.control_record_count,
    coalesce(d.decoded_record_count, 0) as decoded_record_count,
    coalesce(q.decode_quarantine_count, 0) as decode_quarantine_count,
    coalesce(q.unreadable_unit_count, 0) as unreadable_unit_count,
    coalesce(d.group_id_count, 0) as group_id_count,
    r.partition_count,
    r.source_file_count,
    timestamp_millis(r.first_ms) as first_record_at,
    timestamp_millis(r.last_ms) as last_record_at,
    r.data_record_count = coalesce(d.decoded_record_count, 0) + coalesce(q.decode_quarantine_count, 0)
        as is_reconciled
from raw_facts as r
left join record_facts as d on r.snapshot_id = d.snapshot_id
left join quarantine_facts as q on r.snapshot_id = q.snapshot_id
