-- Every epoch change in log order, numbered per group, kind and member, with the time since the
-- previous step of the same line.
with steps as (
    select
        snapshot_id,
        group_id,
        member_id,
        epoch_kind,
        epoch,
        previous_epoch,
        log_partition,
        log_offset,
        log_timestamp,
        row_number() over (
            partition by snapshot_id, group_id, epoch_kind, member_id order by log_offset
        ) as step,
        lag(log_timestamp) over (
            partition by snapshot_id, group_id, epoch_kind, member_id order by log_offset
        ) as previous_ms
    from epochs
)

select
    snapshot_id,
    group_id,
    member_id,
    epoch_kind,
    step,
    epoch,
    previous_epoch,
    timestamp_millis(log_timestamp) as changed_at,
    log_timestamp - previous_ms as ms_since_previous_step,
    coalesce(epoch < previous_epoch, false) as is_decrease,
    log_partition,
    log_offset
from steps
